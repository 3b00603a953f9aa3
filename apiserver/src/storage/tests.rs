//! Tests of the storage layer against a real etcd (see `test_etcd`).

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;

use super::compactor::CompactorState;
use super::test_etcd::{free_port, TestEtcd};
use super::*;

fn opts(timeout: Duration) -> EtcdOptions {
    EtcdOptions {
        request_timeout: timeout,
        dial_timeout: Duration::from_secs(1),
        ..EtcdOptions::default()
    }
}

async fn storage_for(etcd: &TestEtcd) -> EtcdStorage {
    EtcdStorage::connect(&[etcd.endpoint()], opts(Duration::from_secs(5)))
        .await
        .unwrap()
}

fn b(s: &str) -> Bytes {
    Bytes::from(s.to_string())
}

/// Next stream item within 10 s (a hung watch fails the test instead of
/// blocking it).
async fn next_item(stream: &mut WatchStream) -> Option<Result<WatchEvent, StorageError>> {
    tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("watch produced nothing within 10s")
}

#[tokio::test]
async fn create_get_and_already_exists() {
    let etcd = TestEtcd::start();
    let s = storage_for(&etcd).await;
    let rev = s.create("/registry/cm/default/a", b("v1")).await.unwrap();
    assert!(rev > 0);
    let kv = s.get("/registry/cm/default/a").await.unwrap().unwrap();
    assert_eq!(kv.key, "/registry/cm/default/a");
    assert_eq!(kv.value, b("v1"));
    assert_eq!((kv.mod_revision, kv.create_revision), (rev, rev));
    assert!(matches!(
        s.create("/registry/cm/default/a", b("v2")).await,
        Err(StorageError::AlreadyExists)
    ));
    assert_eq!(s.get("/registry/cm/default/missing").await.unwrap(), None);
    assert_eq!(s.current_revision().await.unwrap(), rev);
}

#[tokio::test]
async fn update_conflict_carries_current() {
    let etcd = TestEtcd::start();
    let s = storage_for(&etcd).await;
    let r1 = s.create("/registry/cm/ns/u", b("v1")).await.unwrap();
    let r2 = s.update("/registry/cm/ns/u", r1, b("v2")).await.unwrap();
    assert!(r2 > r1);
    match s.update("/registry/cm/ns/u", r1, b("v3")).await {
        Err(StorageError::Conflict { current: Some(cur) }) => {
            assert_eq!(cur.value, b("v2"));
            assert_eq!(cur.mod_revision, r2);
            assert_eq!(cur.create_revision, r1);
        }
        other => panic!("expected conflict, got {other:?}"),
    }
    let kv = s.get("/registry/cm/ns/u").await.unwrap().unwrap();
    assert_eq!((kv.value, kv.mod_revision), (b("v2"), r2));
    // Updating a key that does not exist is a conflict with no current value.
    assert!(matches!(
        s.update("/registry/cm/ns/missing", 5, b("x")).await,
        Err(StorageError::Conflict { current: None })
    ));
}

#[tokio::test]
async fn delete_with_preconditions() {
    let etcd = TestEtcd::start();
    let s = storage_for(&etcd).await;
    let r1 = s.create("/registry/cm/ns/d", b("v1")).await.unwrap();
    let r2 = s.update("/registry/cm/ns/d", r1, b("v2")).await.unwrap();
    match s.delete("/registry/cm/ns/d", Some(r1)).await {
        Err(StorageError::Conflict { current: Some(cur) }) => assert_eq!(cur.mod_revision, r2),
        other => panic!("expected conflict, got {other:?}"),
    }
    let (deleted, drev) = s.delete("/registry/cm/ns/d", Some(r2)).await.unwrap();
    assert_eq!(deleted.value, b("v2"));
    assert_eq!(deleted.mod_revision, r2);
    assert_eq!(deleted.create_revision, r1);
    assert!(drev > r2);
    assert_eq!(s.get("/registry/cm/ns/d").await.unwrap(), None);
    assert!(matches!(
        s.delete("/registry/cm/ns/d", None).await,
        Err(StorageError::NotFound)
    ));
    assert!(matches!(
        s.delete("/registry/cm/ns/d", Some(r2)).await,
        Err(StorageError::NotFound)
    ));
    // Unconditional delete.
    let r3 = s.create("/registry/cm/ns/e", b("e")).await.unwrap();
    let (deleted, drev) = s.delete("/registry/cm/ns/e", None).await.unwrap();
    assert_eq!((deleted.value, deleted.mod_revision), (b("e"), r3));
    assert_eq!(s.current_revision().await.unwrap(), drev);
}

#[tokio::test]
async fn list_paginates_at_a_fixed_revision() {
    let etcd = TestEtcd::start();
    let s = storage_for(&etcd).await;
    let prefix = "/registry/things/";
    for name in ["a", "b", "c", "d", "e"] {
        s.create(&format!("{prefix}ns/{name}"), b(name))
            .await
            .unwrap();
    }
    // Keys that share a textual prefix but are outside the collection.
    s.create("/registry/thingsX/ns/z", b("z")).await.unwrap();
    s.create("/registry/things", b("bare")).await.unwrap();
    let rev0 = s.current_revision().await.unwrap();

    let page1 = s
        .list(&ListRequest {
            prefix: "/registry/things".to_string(), // trailing slash added
            limit: Some(2),
            ..Default::default()
        })
        .await
        .unwrap();
    let keys = |r: &ListResponse| r.items.iter().map(|kv| kv.key.clone()).collect::<Vec<_>>();
    assert_eq!(
        keys(&page1),
        [format!("{prefix}ns/a"), format!("{prefix}ns/b")]
    );
    assert!(page1.more);
    assert_eq!(page1.remaining, 3);
    assert_eq!(page1.revision, rev0);

    // A write between pages must not show up in later pages.
    s.create(&format!("{prefix}ns/bb"), b("late"))
        .await
        .unwrap();
    s.update(&format!("{prefix}ns/c"), 0, b("x"))
        .await
        .unwrap_err();

    let token = page1.continue_token(prefix).unwrap().unwrap();
    let (rv, start) = decode_continue(&token, prefix).unwrap();
    assert_eq!(rv, rev0);
    let page2 = s
        .list(&ListRequest {
            prefix: prefix.to_string(),
            start_key: Some(start),
            revision: Some(rv),
            limit: Some(2),
        })
        .await
        .unwrap();
    assert_eq!(
        keys(&page2),
        [format!("{prefix}ns/c"), format!("{prefix}ns/d")]
    );
    assert!(page2.more);
    assert_eq!(page2.remaining, 1);
    assert_eq!(page2.revision, rev0);

    let (rv, start) =
        decode_continue(&page2.continue_token(prefix).unwrap().unwrap(), prefix).unwrap();
    let page3 = s
        .list(&ListRequest {
            prefix: prefix.to_string(),
            start_key: Some(start),
            revision: Some(rv),
            limit: Some(2),
        })
        .await
        .unwrap();
    assert_eq!(keys(&page3), [format!("{prefix}ns/e")]);
    assert!(!page3.more);
    assert_eq!(page3.remaining, 0);
    assert_eq!(page3.continue_token(prefix).unwrap(), None);

    // Unpaginated latest read sees the late key.
    let all = s
        .list(&ListRequest {
            prefix: prefix.to_string(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(all.items.len(), 6);
    assert!(!all.more);
    assert_eq!(all.revision, s.current_revision().await.unwrap());

    // A start key outside the prefix is refused.
    assert!(matches!(
        s.list(&ListRequest {
            prefix: prefix.to_string(),
            start_key: Some("/registry/a".to_string()),
            ..Default::default()
        })
        .await,
        Err(StorageError::Internal(_))
    ));
}

#[tokio::test]
async fn list_at_compacted_revision_is_expired() {
    let etcd = TestEtcd::start();
    let s = storage_for(&etcd).await;
    let r1 = s.create("/registry/x/a", b("1")).await.unwrap();
    let r2 = s.update("/registry/x/a", r1, b("2")).await.unwrap();
    let r3 = s.update("/registry/x/a", r2, b("3")).await.unwrap();
    // Reading at an old revision works before compaction.
    let old = s
        .list(&ListRequest {
            prefix: "/registry/x/".to_string(),
            revision: Some(r1),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(old.items[0].value, b("1"));
    s.compact(r3).await.unwrap();
    // Compacting again (or lower) is a no-op.
    s.compact(r2).await.unwrap();
    match s
        .list(&ListRequest {
            prefix: "/registry/x/".to_string(),
            revision: Some(r1),
            ..Default::default()
        })
        .await
    {
        Err(StorageError::Expired {
            requested,
            compacted,
        }) => {
            assert_eq!(requested, r1);
            assert_eq!(compacted, r3);
        }
        other => panic!("expected expired, got {other:?}"),
    }
    // The compaction revision itself and latest reads still work.
    let at = s
        .list(&ListRequest {
            prefix: "/registry/x/".to_string(),
            revision: Some(r3),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(at.items[0].value, b("3"));
    // A future revision is an internal error, not a hang.
    assert!(matches!(
        s.list(&ListRequest {
            prefix: "/registry/x/".to_string(),
            revision: Some(r3 + 100),
            ..Default::default()
        })
        .await,
        Err(StorageError::Internal(_))
    ));
}

#[tokio::test]
async fn watch_delivers_events_in_order_with_prev_values() {
    let etcd = TestEtcd::start();
    let s = storage_for(&etcd).await;
    let p = "/registry/w/";
    let r1 = s.create(&format!("{p}ns/a"), b("a1")).await.unwrap();
    let r2 = s.update(&format!("{p}ns/a"), r1, b("a2")).await.unwrap();
    let r3 = s.create(&format!("{p}ns/b"), b("b1")).await.unwrap();
    s.create("/registry/wX/ns/z", b("outside")).await.unwrap();
    let (_, r4) = s.delete(&format!("{p}ns/a"), None).await.unwrap();

    let mut w = s.watch("/registry/w", true, r1).await.unwrap();
    assert_eq!(w.last_revision(), r1 - 1);

    let e = next_item(&mut w).await.unwrap().unwrap();
    assert_eq!(e.kind, WatchEventKind::Added);
    assert_eq!((e.kv.value.clone(), e.kv.mod_revision), (b("a1"), r1));
    assert_eq!(e.prev, None);

    let e = next_item(&mut w).await.unwrap().unwrap();
    assert_eq!(e.kind, WatchEventKind::Modified);
    assert_eq!((e.kv.value.clone(), e.kv.mod_revision), (b("a2"), r2));
    let prev = e.prev.unwrap();
    assert_eq!((prev.value, prev.mod_revision), (b("a1"), r1));

    let e = next_item(&mut w).await.unwrap().unwrap();
    assert_eq!(e.kind, WatchEventKind::Added);
    assert_eq!(
        (e.kv.key.as_str(), e.kv.mod_revision),
        ("/registry/w/ns/b", r3)
    );

    let e = next_item(&mut w).await.unwrap().unwrap();
    assert_eq!(e.kind, WatchEventKind::Deleted);
    assert_eq!(e.kv.key, format!("{p}ns/a"));
    assert_eq!(e.kv.value, b("a2"));
    assert_eq!(e.kv.mod_revision, r4);
    assert_eq!(e.kv.create_revision, r1);
    let prev = e.prev.unwrap();
    assert_eq!((prev.value, prev.mod_revision), (b("a2"), r2));
    assert_eq!(w.last_revision(), r4);

    // Live events after the catch-up.
    let r5 = s.update(&format!("{p}ns/b"), r3, b("b2")).await.unwrap();
    let e = next_item(&mut w).await.unwrap().unwrap();
    assert_eq!((e.kind, e.kv.mod_revision), (WatchEventKind::Modified, r5));

    // A progress request advances last_revision past unrelated writes.
    let r6 = s.create("/registry/other/k", b("o")).await.unwrap();
    w.request_progress().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while w.last_revision() < r6 && Instant::now() < deadline {
        let _ = tokio::time::timeout(Duration::from_millis(200), w.next()).await;
    }
    assert_eq!(w.last_revision(), r6);

    // A single-key watch from "now" only sees that key.
    let mut single = s.watch(&format!("{p}ns/b"), false, 0).await.unwrap();
    s.create(&format!("{p}ns/b2"), b("no")).await.unwrap();
    let r7 = s.update(&format!("{p}ns/b"), r5, b("b3")).await.unwrap();
    let e = next_item(&mut single).await.unwrap().unwrap();
    assert_eq!(
        (e.kv.key.as_str(), e.kv.mod_revision),
        ("/registry/w/ns/b", r7)
    );
}

#[tokio::test]
async fn dropping_a_watch_cancels_it_in_etcd() {
    let etcd = TestEtcd::start();
    let s = storage_for(&etcd).await;
    let watchers = || etcd.metric("etcd_debugging_mvcc_watcher_total");
    assert_eq!(watchers(), Some(0.0));
    let w1 = s.watch("/registry/d/", true, 0).await.unwrap();
    let w2 = s.watch("/registry/d/x", false, 0).await.unwrap();
    assert_eq!(watchers(), Some(2.0));
    drop(w1);
    drop(w2);
    let deadline = Instant::now() + Duration::from_secs(10);
    while watchers() != Some(0.0) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(watchers(), Some(0.0));
}

#[tokio::test]
async fn watch_from_compacted_revision_is_expired() {
    let etcd = TestEtcd::start();
    let s = storage_for(&etcd).await;
    let r1 = s.create("/registry/c/a", b("1")).await.unwrap();
    let r2 = s.update("/registry/c/a", r1, b("2")).await.unwrap();
    s.compact(r2).await.unwrap();
    let mut w = s.watch("/registry/c/", true, r1).await.unwrap();
    match next_item(&mut w).await {
        Some(Err(StorageError::Expired {
            requested,
            compacted,
        })) => {
            assert_eq!(requested, r1);
            assert_eq!(compacted, r2);
        }
        other => panic!("expected expired, got {other:?}"),
    }
    assert!(next_item(&mut w).await.is_none());
    // Watching from the compaction revision itself works.
    let mut w = s.watch("/registry/c/", true, r2).await.unwrap();
    let e = next_item(&mut w).await.unwrap().unwrap();
    assert_eq!(e.kv.mod_revision, r2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unavailable_while_down_and_recovers_after_restart() {
    let mut etcd = TestEtcd::start();
    let timeout = Duration::from_secs(2);
    let s = EtcdStorage::connect(&[etcd.endpoint()], opts(timeout))
        .await
        .unwrap();
    let r1 = s.create("/registry/r/a", b("1")).await.unwrap();
    let mut w = s.watch("/registry/r/", true, r1 + 1).await.unwrap();

    etcd.stop();

    // An established watch ends with Unavailable.
    match next_item(&mut w).await {
        Some(Err(StorageError::Unavailable(_))) => {}
        other => panic!("expected unavailable on the watch, got {other:?}"),
    }
    assert!(next_item(&mut w).await.is_none());

    // Every kind of call fails with Unavailable within the timeout.
    let bound = timeout + Duration::from_millis(500);
    let started = Instant::now();
    let err = s.get("/registry/r/a").await.unwrap_err();
    eprintln!("get while down ({:?}): {err}", started.elapsed());
    assert!(err.is_unavailable());
    assert!(
        started.elapsed() < bound,
        "get took {:?}",
        started.elapsed()
    );
    let started = Instant::now();
    assert!(s
        .create("/registry/r/b", b("2"))
        .await
        .unwrap_err()
        .is_unavailable());
    assert!(s
        .list(&ListRequest {
            prefix: "/registry/r/".to_string(),
            ..Default::default()
        })
        .await
        .unwrap_err()
        .is_unavailable());
    assert!(s
        .watch("/registry/r/", true, 0)
        .await
        .unwrap_err()
        .is_unavailable());
    assert!(s.current_revision().await.unwrap_err().is_unavailable());
    assert!(
        started.elapsed() < bound * 4,
        "calls took {:?}",
        started.elapsed()
    );

    etcd.restart();

    // The same storage works again without any manual reconnect.
    let started = Instant::now();
    let mut attempts = 0;
    let kv = loop {
        attempts += 1;
        match s.get("/registry/r/a").await {
            Ok(kv) => break kv,
            Err(e) if started.elapsed() < Duration::from_secs(15) => {
                eprintln!("attempt {attempts} after restart: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("storage did not recover: {e}"),
        }
    };
    eprintln!(
        "recovered after {attempts} attempt(s) in {:?}",
        started.elapsed()
    );
    assert_eq!(kv.unwrap().value, b("1"));
    assert!(attempts <= 2, "took {attempts} attempts to recover");
    let r2 = s.create("/registry/r/b", b("2")).await.unwrap();
    let mut w = s.watch("/registry/r/", true, r2).await.unwrap();
    let e = next_item(&mut w).await.unwrap().unwrap();
    assert_eq!(e.kv.mod_revision, r2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hung_etcd_times_out_and_recovers() {
    let etcd = TestEtcd::start();
    let timeout = Duration::from_secs(1);
    let s = EtcdStorage::connect(
        &[etcd.endpoint()],
        EtcdOptions {
            // etcd's default --grpc-keepalive-min-time is 5s: pinging more
            // often makes it drop the connection.
            keepalive_interval: Duration::from_secs(5),
            keepalive_timeout: Duration::from_secs(2),
            ..opts(timeout)
        },
    )
    .await
    .unwrap();
    let r1 = s.create("/registry/h/a", b("1")).await.unwrap();
    let mut w = s.watch("/registry/h/", true, r1 + 1).await.unwrap();

    etcd.pause();
    for _ in 0..3 {
        let started = Instant::now();
        let err = s.get("/registry/h/a").await.unwrap_err();
        assert!(err.is_unavailable(), "{err}");
        assert!(started.elapsed() < timeout + Duration::from_millis(500));
    }
    // The watch notices the dead connection through keep-alive pings.
    let started = Instant::now();
    match tokio::time::timeout(Duration::from_secs(15), w.next()).await {
        Ok(Some(Err(StorageError::Unavailable(msg)))) => {
            eprintln!("watch ended after {:?}: {msg}", started.elapsed())
        }
        other => panic!("expected the watch to end with unavailable, got {other:?}"),
    }
    etcd.resume();

    let started = Instant::now();
    let mut attempts = 0;
    loop {
        attempts += 1;
        match s.get("/registry/h/a").await {
            Ok(kv) => {
                assert_eq!(kv.unwrap().value, b("1"));
                break;
            }
            Err(e) if started.elapsed() < Duration::from_secs(15) => {
                eprintln!("attempt {attempts} after resume: {e}");
            }
            Err(e) => panic!("storage did not recover: {e}"),
        }
    }
    eprintln!(
        "recovered after {attempts} attempt(s) in {:?}",
        started.elapsed()
    );
    assert!(attempts <= 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_succeeds_while_etcd_is_down() {
    let port = free_port();
    let s = EtcdStorage::connect(
        &[format!("http://127.0.0.1:{port}")],
        opts(Duration::from_secs(2)),
    )
    .await
    .unwrap();
    assert!(s.get("/registry/k").await.unwrap_err().is_unavailable());
    let _etcd = TestEtcd::start_on(port);
    let started = Instant::now();
    loop {
        match s.create("/registry/k", b("v")).await {
            Ok(_) => break,
            Err(e) if started.elapsed() < Duration::from_secs(15) => {
                assert!(e.is_unavailable(), "{e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("never connected: {e}"),
        }
    }
    assert!(s.get("/registry/k").await.unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hung_endpoint_times_out() {
    // Accepts TCP connections but never speaks HTTP/2.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let timeout = Duration::from_millis(800);
    let s = EtcdStorage::connect(&[format!("127.0.0.1:{port}")], opts(timeout))
        .await
        .unwrap();
    for _ in 0..2 {
        let started = Instant::now();
        let err = s.get("/registry/k").await.unwrap_err();
        assert!(err.is_unavailable(), "{err}");
        assert!(started.elapsed() < timeout + Duration::from_millis(500));
    }
    assert!(s
        .watch("/registry/", true, 0)
        .await
        .unwrap_err()
        .is_unavailable());
    drop(listener);
}

#[tokio::test]
async fn connect_rejects_bad_endpoints() {
    assert!(matches!(
        EtcdStorage::connect(&[], EtcdOptions::default()).await,
        Err(StorageError::Internal(_))
    ));
    assert!(matches!(
        EtcdStorage::connect(&["http://bad host:1".to_string()], EtcdOptions::default()).await,
        Err(StorageError::Internal(_))
    ));
}

#[tokio::test]
async fn compactor_protocol_lets_one_apiserver_compact() {
    let etcd = TestEtcd::start();
    let a = storage_for(&etcd).await;
    let b_ = storage_for(&etcd).await;
    let (mut sa, mut sb) = (CompactorState::default(), CompactorState::default());

    a.create("/registry/k/1", b("1")).await.unwrap();
    // A wins the first round (no compaction yet: no previous revision).
    assert_eq!(a.compact_tick(&mut sa).await.unwrap(), None);
    assert_eq!(sa.compact_time, 1);
    let ra = sa.revision;
    // B loses and adopts A's clock.
    assert_eq!(b_.compact_tick(&mut sb).await.unwrap(), None);
    assert_eq!(sb.compact_time, 1);

    a.create("/registry/k/2", b("2")).await.unwrap();
    // A's next round compacts to the revision it saw last round.
    assert_eq!(a.compact_tick(&mut sa).await.unwrap(), Some(ra));
    // B's round now loses again (A moved the clock).
    assert_eq!(b_.compact_tick(&mut sb).await.unwrap(), None);
    assert_eq!(sb.compact_time, 2);
    assert!(b_.known_compacted_revision() >= ra - 1);
    assert!(matches!(
        a.list(&ListRequest {
            prefix: "/registry/k/".to_string(),
            revision: Some(ra - 1),
            ..Default::default()
        })
        .await,
        Err(StorageError::Expired { .. })
    ));
    // If A stops, B takes over on its next round, compacting to the revision
    // it saw in its previous round.
    let rb = sb.revision;
    assert_eq!(b_.compact_tick(&mut sb).await.unwrap(), Some(rb));
    assert_eq!(sb.compact_time, 3);
}

#[tokio::test]
async fn spawned_compactor_compacts_periodically() {
    let etcd = TestEtcd::start();
    let s = storage_for(&etcd).await;
    let r1 = s.create("/registry/p/a", b("1")).await.unwrap();
    s.update("/registry/p/a", r1, b("2")).await.unwrap();
    let handle = s.spawn_compactor(Duration::from_millis(300));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let res = s
            .list(&ListRequest {
                prefix: "/registry/p/".to_string(),
                revision: Some(r1),
                ..Default::default()
            })
            .await;
        match res {
            Err(StorageError::Expired { .. }) => break,
            Ok(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            other => panic!("compactor did not compact: {other:?}"),
        }
    }
    assert!(!handle.is_finished());
    handle.abort();
    assert!(s.spawn_compactor(Duration::ZERO).await.is_ok());
}

#[test]
fn handles_can_move_between_tasks() {
    fn send_sync<T: Send + Sync + 'static>() {}
    fn send_unpin<T: Send + Unpin + 'static>() {}
    send_sync::<EtcdStorage>();
    send_sync::<StorageError>();
    send_unpin::<WatchStream>();
}

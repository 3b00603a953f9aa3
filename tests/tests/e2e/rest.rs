//! The REST semantics through kube-rs: CRUD of several kinds, optimistic
//! concurrency, patches, finalizers, dry runs, generateName, selectors, paging.

use crate::harness::{expect_code, expect_status, Auth, SendExt, TestCluster};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod, Secret};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(
        json!({"metadata": {"name": name, "labels": {"app": "x"}}, "data": {"k": "v"}}),
    )
    .expect("cm")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crud_namespaces_configmaps_secrets_pods() {
    let c = TestCluster::start().await;
    let client = c.client().await;

    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "rest"}})).expect("ns"),
        )
        .await
        .expect("create ns");
    assert_eq!(ns.status.and_then(|s| s.phase).as_deref(), Some("Active"));
    assert!(ns.metadata.uid.is_some() && ns.metadata.creation_timestamp.is_some());

    // ConfigMaps: create, get, list, replace, conflict, patches, delete.
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "rest");
    let created = cms
        .create(&PostParams::default(), &cm("one"))
        .await
        .expect("create");
    let rv1 = created.metadata.resource_version.clone().expect("rv");
    let fetched = cms.get("one").await.expect("get");
    assert_eq!(fetched.metadata.uid, created.metadata.uid);
    assert_eq!(
        fetched.metadata.resource_version.as_deref(),
        Some(rv1.as_str())
    );
    let mut changed = fetched.clone();
    changed.data = Some([("k".to_string(), "v2".to_string())].into());
    let replaced = cms
        .replace("one", &PostParams::default(), &changed)
        .await
        .expect("replace");
    assert_ne!(
        replaced.metadata.resource_version.as_deref(),
        Some(rv1.as_str())
    );
    // A stale resourceVersion is a 409 Conflict.
    let err = cms
        .replace("one", &PostParams::default(), &changed)
        .await
        .expect_err("stale update");
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 409);
            assert_eq!(s.reason, "Conflict");
        }
        other => panic!("unexpected {other}"),
    }
    let merged = cms
        .patch(
            "one",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"m": "1"}})),
        )
        .await
        .expect("merge patch");
    assert_eq!(
        merged
            .data
            .as_ref()
            .and_then(|d| d.get("m"))
            .map(String::as_str),
        Some("1")
    );
    let resp = c
        .http(Auth::AdminCert)
        .patch(c.url("/api/v1/namespaces/rest/configmaps/one"))
        .header("content-type", "application/json-patch+json")
        .body(r#"[{"op": "replace", "path": "/data/k", "value": "v3"}]"#)
        .sent()
        .await;
    assert_eq!(resp.status(), 200);
    let patched: ConfigMap = resp.json().await.expect("patched");
    assert_eq!(
        patched
            .data
            .as_ref()
            .and_then(|d| d.get("k"))
            .map(String::as_str),
        Some("v3")
    );
    assert_eq!(patched.metadata.uid, created.metadata.uid, "uid is stable");
    assert_eq!(
        patched.metadata.creation_timestamp,
        created.metadata.creation_timestamp
    );
    let list = cms.list(&ListParams::default()).await.expect("list");
    assert_eq!(list.items.len(), 1);
    assert!(list.metadata.resource_version.is_some());
    cms.delete("one", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(matches!(cms.get("one").await, Err(kube::Error::Api(s)) if s.code == 404));

    // Secrets: type defaults to Opaque, data round-trips.
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "rest");
    let s: Secret = serde_json::from_value(
        json!({"metadata": {"name": "s"}, "stringData": {"p": "w"}, "data": {"d": "eA=="}}),
    )
    .expect("secret");
    let s = secrets
        .create(&PostParams::default(), &s)
        .await
        .expect("create secret");
    assert_eq!(s.type_.as_deref(), Some("Opaque"));
    secrets
        .delete("s", &DeleteParams::default())
        .await
        .expect("delete secret");

    c.wait_for_default_service_account("rest").await;
    // Pods: status is owned by the server; writes to /status change only status;
    // generation tracks spec changes.
    let pods: Api<Pod> = Api::namespaced(client.clone(), "rest");
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": "Running"},
    }))
    .expect("pod");
    let pod = pods
        .create(&PostParams::default(), &pod)
        .await
        .expect("create pod");
    let status = pod.status.clone().expect("status");
    assert_eq!(
        status.phase.as_deref(),
        Some("Pending"),
        "status from the client is ignored on create"
    );
    assert_eq!(status.qos_class.as_deref(), Some("BestEffort"));
    let updated = pods
        .patch_status(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Running"}, "spec": {"nodeName": "ignored"}})),
        )
        .await
        .expect("patch status");
    assert_eq!(
        updated.status.and_then(|s| s.phase).as_deref(),
        Some("Running")
    );
    assert!(
        updated.spec.and_then(|s| s.node_name).is_none(),
        "a status write does not change spec"
    );
    let main = pods
        .patch(
            "p",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"status": {"phase": "Failed"}, "metadata": {"labels": {"l": "1"}}}),
            ),
        )
        .await
        .expect("patch pod");
    assert_eq!(
        main.status.and_then(|s| s.phase).as_deref(),
        Some("Running"),
        "a main-resource write does not change status"
    );
    // An unscheduled pod is deleted at once, and DELETE returns the pod.
    let deleted = pods
        .delete("p", &DeleteParams::default())
        .await
        .expect("delete pod");
    assert!(
        deleted.left().is_some(),
        "pods answer DELETE with the object"
    );
    assert!(matches!(pods.get("p").await, Err(kube::Error::Api(s)) if s.code == 404));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finalizers_dry_run_generate_name_and_paging() {
    let c = TestCluster::start().await;
    let client = c.client().await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");

    // Finalizers: delete marks, the update removing the last finalizer deletes.
    let mut f = cm("fin");
    f.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    cms.create(&PostParams::default(), &f)
        .await
        .expect("create");
    cms.delete("fin", &DeleteParams::default())
        .await
        .expect("delete");
    let marked = cms.get("fin").await.expect("still there");
    assert!(marked.metadata.deletion_timestamp.is_some());
    cms.patch(
        "fin",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("remove finalizer");
    assert!(matches!(cms.get("fin").await, Err(kube::Error::Api(s)) if s.code == 404));

    // Propagation policies become the garbage collector's finalizers: the
    // owner stays (deletionTimestamp set) until the collector is done.
    for (name, params, finalizer) in [
        ("fg", DeleteParams::foreground(), "foregroundDeletion"),
        ("orph", DeleteParams::orphan(), "orphan"),
    ] {
        cms.create(&PostParams::default(), &cm(name))
            .await
            .expect("create");
        cms.delete(name, &params).await.expect("delete");
        let held = cms.get(name).await.expect("held by the GC finalizer");
        assert!(held.metadata.deletion_timestamp.is_some(), "{name}");
        assert_eq!(
            held.metadata.finalizers.as_deref(),
            Some(&[finalizer.to_string()][..]),
            "{name}"
        );
    }
    // A background delete of an object held for the foreground drops the
    // finalizer, and with it the object.
    cms.delete("fg", &DeleteParams::background())
        .await
        .expect("background delete");
    assert!(matches!(cms.get("fg").await, Err(kube::Error::Api(s)) if s.code == 404));
    cms.patch(
        "orph",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("the collector's patch");
    assert!(matches!(cms.get("orph").await, Err(kube::Error::Api(s)) if s.code == 404));

    // Dry run writes nothing.
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let out = cms.create(&dry, &cm("dry")).await.expect("dry-run create");
    assert_eq!(out.metadata.name.as_deref(), Some("dry"));
    assert!(matches!(cms.get("dry").await, Err(kube::Error::Api(s)) if s.code == 404));

    // generateName.
    let mut g = cm("");
    g.metadata.name = None;
    g.metadata.generate_name = Some("gen-".into());
    let made = cms
        .create(&PostParams::default(), &g)
        .await
        .expect("generateName");
    let name = made.metadata.name.expect("name");
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");

    // Paging over five objects, with a selector and without.
    for i in 0..5 {
        cms.create(&PostParams::default(), &cm(&format!("page-{i}")))
            .await
            .expect("create");
    }
    let http = c.http(Auth::AdminCert);
    let first: serde_json::Value = http
        .get(c.url("/api/v1/namespaces/default/configmaps?limit=2"))
        .fetch_json()
        .await;
    assert_eq!(first["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(first["metadata"]["remainingItemCount"], 4, "{first}");
    let token = first["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_string();
    let mut seen = 2;
    let mut next = token;
    loop {
        let page: serde_json::Value = http
            .get(c.url(&format!(
                "/api/v1/namespaces/default/configmaps?limit=2&continue={next}"
            )))
            .fetch_json()
            .await;
        seen += page["items"].as_array().map(Vec::len).unwrap_or(0);
        assert_eq!(
            page["metadata"]["resourceVersion"], first["metadata"]["resourceVersion"],
            "pages share one snapshot"
        );
        match page["metadata"]["continue"].as_str() {
            Some(t) if !t.is_empty() => next = t.to_string(),
            _ => break,
        }
    }
    assert_eq!(seen, 6, "5 pages + the generated one");
    let lp = ListParams::default().labels("app=x").limit(2);
    let sel = cms.list(&lp).await.expect("selector page");
    assert_eq!(sel.items.len(), 2);
    assert!(
        sel.metadata.remaining_item_count.is_none(),
        "no remainingItemCount with a selector"
    );
    let fs = cms
        .list(&ListParams::default().fields("metadata.name=page-3"))
        .await
        .expect("field selector");
    assert_eq!(fs.items.len(), 1);
    let bad = http
        .get(c.url("/api/v1/namespaces/default/configmaps?fieldSelector=data.k%3Dv"))
        .sent()
        .await;
    let st = expect_status(bad, 400, "BadRequest").await;
    assert!(
        st["message"]
            .as_str()
            .unwrap_or("")
            .contains("field label not supported: data.k"),
        "{st}"
    );
}

/// DELETE answers as upstream's registry of each kind: the deleted object
/// for the kinds upstream returns it for (Services, ServiceAccounts, ...),
/// a Success Status for the others (ConfigMaps), and the object marked for
/// deletion while finalizers hold it; a dry-run DELETE answers the same and
/// deletes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_answers_per_kind_as_upstream() {
    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let ns = "/api/v1/namespaces/default";
    let create = |path: &str, body: serde_json::Value| {
        let url = c.url(&format!("{ns}/{path}"));
        let http = http.clone();
        async move {
            let r = http.post(url).json(&body).sent().await;
            expect_code(r, 201).await;
        }
    };
    create(
        "services",
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 80}]}}),
    )
    .await;
    create(
        "configmaps",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}),
    )
    .await;
    create(
        "serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}}),
    )
    .await;
    create(
        "persistentvolumeclaims",
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "claim"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
    )
    .await;
    let delete = |path: &str, query: &str| {
        let url = c.url(&format!("{ns}/{path}{query}"));
        let http = http.clone();
        async move {
            let r = http.delete(url).sent().await;
            let code = r.status().as_u16();
            let v: serde_json::Value = r.json().await.expect("json");
            (code, v)
        }
    };
    // Dry run first: the same answer, nothing deleted.
    let (code, v) = delete("services/web", "?dryRun=All").await;
    assert_eq!((code, v["kind"].as_str()), (200, Some("Service")), "{v}");
    let (code, v) = delete("services/web", "").await;
    assert_eq!((code, v["kind"].as_str()), (200, Some("Service")), "{v}");
    assert_eq!(v["metadata"]["name"], "web");
    let (code, v) = delete("serviceaccounts/sa", "").await;
    assert_eq!(
        (code, v["kind"].as_str()),
        (200, Some("ServiceAccount")),
        "{v}"
    );
    let (code, v) = delete("configmaps/cm", "?dryRun=All").await;
    assert_eq!(
        (code, v["kind"].as_str(), v["status"].as_str()),
        (200, Some("Status"), Some("Success")),
        "{v}"
    );
    let r = http.get(c.url(&format!("{ns}/configmaps/cm"))).sent().await;
    assert_eq!(r.status().as_u16(), 200, "a dry-run delete deleted");
    let (code, v) = delete("configmaps/cm", "").await;
    assert_eq!(
        (code, v["kind"].as_str(), v["status"].as_str()),
        (200, Some("Status"), Some("Success")),
        "{v}"
    );
    assert_eq!(v["details"]["name"], "cm", "{v}");
    // Held by its protection finalizer: the object, marked for deletion.
    let (code, v) = delete("persistentvolumeclaims/claim", "").await;
    assert_eq!(
        (code, v["kind"].as_str()),
        (200, Some("PersistentVolumeClaim")),
        "{v}"
    );
    assert!(v["metadata"]["deletionTimestamp"].is_string(), "{v}");
}

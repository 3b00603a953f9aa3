//! Connections that send nothing, or never finish their headers, are closed
//! after the header timeout (upstream's `ReadHeaderTimeout`, 32 s), and do
//! not keep other clients from being served meanwhile.

use crate::harness::{Auth, SendExt, TestCluster};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A TLS connection to the aggregator, trusting the cluster CA.
async fn connect(c: &TestCluster) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    let mut roots = rustls::RootCertStore::empty();
    let ca = std::fs::read(&c.cluster.pki().ca_cert).expect("ca");
    for cert in CertificateDer::pem_slice_iter(&ca) {
        roots.add(cert.expect("ca cert")).expect("root");
    }
    let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let url = c.url("");
    let addr = url
        .trim_start_matches("https://")
        .trim_end_matches('/')
        .to_string();
    let tcp = tokio::net::TcpStream::connect(&addr).await.expect("tcp");
    let name = ServerName::try_from("127.0.0.1").expect("name");
    tokio_rustls::TlsConnector::from(Arc::new(cfg))
        .connect(name, tcp)
        .await
        .expect("tls")
}

/// How long until the server closes `conn` (reads to its end), at most `max`.
async fn closed_after(
    mut conn: tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
    max: Duration,
) -> Option<Duration> {
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(max.saturating_sub(start.elapsed()), conn.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(start.elapsed()),
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_slowloris_connections_are_closed() {
    let c = TestCluster::start().await;
    let idle = connect(&c).await;
    let mut slow = connect(&c).await;
    slow.write_all(b"GET /version HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .expect("partial headers");
    let mut kept = connect(&c).await;
    kept.write_all(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .expect("request");
    let max = Duration::from_secs(50);
    let (idle, slow, kept, ()) = tokio::join!(
        closed_after(idle, max),
        closed_after(slow, max),
        closed_after(kept, max),
        async {
            // Meanwhile, everyone else is served.
            tokio::time::sleep(Duration::from_secs(2)).await;
            let r = c
                .http(Auth::AdminCert)
                .get(c.url("/api/v1/namespaces"))
                .sent()
                .await;
            assert_eq!(r.status(), 200);
        }
    );
    for (what, after) in [("idle", idle), ("slowloris", slow), ("kept alive", kept)] {
        let after =
            after.unwrap_or_else(|| panic!("the {what} connection is still open after {max:?}"));
        assert!(
            after >= Duration::from_secs(25),
            "the {what} connection was closed too early: {after:?}"
        );
    }
}

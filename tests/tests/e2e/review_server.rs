//! A small HTTPS server for the webhooks the tests write themselves
//! (admission and conversion reviews): one JSON request per connection,
//! answered by a function of the request path and the decoded body.

use std::sync::Arc;
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What a review server answers: the body and how long to wait first.
pub type Answer = (Vec<u8>, Duration);

/// Serves on 127.0.0.1 with the given certificate; returns the port.
pub async fn serve<F>(cert_pem: &[u8], key_pem: &[u8], answer: F) -> u16
where
    F: Fn(&str, &Value) -> Answer + Send + Sync + 'static,
{
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<_, _>>()
        .expect("certs");
    let key = PrivateKeyDer::from_pem_slice(key_pem).expect("key");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(cfg));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let (acceptor, answer) = (acceptor.clone(), answer.clone());
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Some((path, body)) = read_request(&mut tls).await else {
                    return;
                };
                let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let (out, delay) = answer(&path, &review);
                tokio::time::sleep(delay).await;
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    out.len()
                );
                let _ = tls.write_all(head.as_bytes()).await;
                let _ = tls.write_all(&out).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    port
}

/// The path (without the query) and the body of one HTTP/1.1 request.
async fn read_request(tls: &mut (impl AsyncReadExt + Unpin)) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16384];
    loop {
        let n = tls.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_string();
        let len: usize = head
            .to_ascii_lowercase()
            .lines()
            .find_map(|l| l.strip_prefix("content-length:").map(str::to_string))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if buf.len() >= end + 4 + len {
            let target = head.split_whitespace().nth(1).unwrap_or("/");
            let path = target.split('?').next().unwrap_or("/").to_string();
            return Some((path, buf[end + 4..end + 4 + len].to_vec()));
        }
    }
}

//! A client of a Kubernetes API server configured from a kubeconfig file
//! (or a pod's service account), for what servers built on this crate ask
//! the cluster: TokenReviews and SubjectAccessReviews (delegated
//! authentication and authorization), and plain JSON reads.
//!
//! Only what a server needs is read from the kubeconfig: the current
//! context's cluster (`server`, `certificate-authority[-data]`,
//! `insecure-skip-tls-verify`) and user (`client-certificate[-data]` with
//! `client-key[-data]`, `token`, `tokenFile`). Relative paths are relative
//! to the kubeconfig's directory, as kubectl reads them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use base64::Engine;
use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::authorization::delegating::ReviewClient;
use crate::proxy::Delegate;
use crate::transport::remote::{client_config, ServerTrust};

/// Deadline of one call.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Where a pod finds its service account credentials.
const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// A client of one API server.
#[derive(Clone)]
pub struct ApiClient {
    delegate: Delegate,
    token: Option<String>,
}

fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The entry of `list` (a kubeconfig `clusters`/`users`/`contexts` list)
/// called `name`, unwrapped from its `field`.
fn named<'a>(list: Option<&'a Value>, name: &str, field: &str) -> anyhow::Result<&'a Value> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|e| e.get("name").and_then(Value::as_str) == Some(name))
        .and_then(|e| e.get(field))
        .with_context(|| format!("the kubeconfig has no {field} named {name:?}"))
}

/// Inline base64 data (`<key>-data`) or the file named by `<key>`.
fn data_or_file(v: &Value, key: &str, dir: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    if let Some(data) = str_at(v, &format!("{key}-data")) {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .with_context(|| format!("{key}-data is not base64"))?;
        return Ok(Some(bytes));
    }
    match str_at(v, key) {
        Some(file) => {
            let path = dir.join(file);
            Ok(Some(
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?,
            ))
        }
        None => Ok(None),
    }
}

impl ApiClient {
    /// A client from the kubeconfig at `path`, using its current context.
    pub fn from_kubeconfig(path: &Path) -> anyhow::Result<Self> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let config: Value = serde_saphyr::from_str(&text)
            .with_context(|| format!("parsing {} as a kubeconfig", path.display()))?;
        let dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        Self::from_config(&config, &dir)
    }

    /// A client from a parsed kubeconfig whose relative paths start at `dir`.
    pub fn from_config(config: &Value, dir: &Path) -> anyhow::Result<Self> {
        let context_name =
            str_at(config, "current-context").context("the kubeconfig has no current-context")?;
        let context = named(config.get("contexts"), context_name, "context")?;
        let cluster = named(
            config.get("clusters"),
            str_at(context, "cluster").unwrap_or(""),
            "cluster",
        )?;
        let user = match str_at(context, "user") {
            Some(u) => named(config.get("users"), u, "user")?.clone(),
            None => Value::Null,
        };
        let server = str_at(cluster, "server").context("the kubeconfig's cluster has no server")?;
        let cert = data_or_file(&user, "client-certificate", dir)?;
        let key = data_or_file(&user, "client-key", dir)?;
        let client_cert = match (&cert, &key) {
            (Some(c), Some(k)) => Some((c.as_slice(), k.as_slice())),
            (None, None) => None,
            _ => bail!("the kubeconfig's user has a client certificate or key without the other"),
        };
        let token = match (str_at(&user, "token"), str_at(&user, "tokenFile")) {
            (Some(t), _) => Some(t.to_string()),
            (None, Some(f)) => {
                let path = dir.join(f);
                Some(
                    std::fs::read_to_string(&path)
                        .with_context(|| format!("reading {}", path.display()))?
                        .trim()
                        .to_string(),
                )
            }
            (None, None) => None,
        };
        let insecure = cluster
            .get("insecure-skip-tls-verify")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let tls = if insecure {
            client_config(ServerTrust::Insecure, client_cert)?
        } else {
            let ca = data_or_file(cluster, "certificate-authority", dir)?
                .context("the kubeconfig's cluster has no certificate-authority")?;
            crate::pki::client_config(&ca, client_cert)?
        };
        Ok(ApiClient {
            delegate: Delegate::new(server, tls)?,
            token,
        })
    }

    /// A client for a pod: `KUBERNETES_SERVICE_HOST`/`_PORT` with the pod's
    /// service account token and CA.
    pub fn in_cluster() -> anyhow::Result<Self> {
        let host = std::env::var("KUBERNETES_SERVICE_HOST")
            .context("KUBERNETES_SERVICE_HOST is not set: not running in a pod")?;
        let port = std::env::var("KUBERNETES_SERVICE_PORT").unwrap_or_else(|_| "443".into());
        let dir = Path::new(SERVICE_ACCOUNT_DIR);
        let host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host
        };
        let config = serde_json::json!({
            "current-context": "in-cluster",
            "contexts": [{"name": "in-cluster", "context": {"cluster": "c", "user": "u"}}],
            "clusters": [{"name": "c", "cluster": {"server": format!("https://{host}:{port}"), "certificate-authority": "ca.crt"}}],
            "users": [{"name": "u", "user": {"tokenFile": "token"}}],
        });
        Self::from_config(&config, dir)
    }

    /// The server's base URL.
    pub fn url(&self) -> String {
        self.delegate.url().to_string()
    }

    /// GETs `path`: status code and JSON body.
    pub async fn get_json(&self, path: &str) -> Result<(u16, Value), String> {
        self.delegate
            .call_json(
                http::Method::GET,
                path,
                None,
                None,
                self.token.as_deref(),
                CALL_TIMEOUT,
            )
            .await
    }
}

impl ApiClient {
    /// POSTs `body` of `content_type` to `path` under the server's URL (``
    /// for the URL itself), within `timeout`: status code and answer.
    pub async fn post(
        &self,
        path: &str,
        content_type: &str,
        body: bytes::Bytes,
        timeout: Duration,
    ) -> Result<(u16, bytes::Bytes), String> {
        self.delegate
            .call(
                http::Method::POST,
                path,
                Some((content_type, body)),
                None,
                self.token.as_deref(),
                timeout,
            )
            .await
    }
}

impl ReviewClient for ApiClient {
    fn post_json<'a>(
        &'a self,
        path: &'a str,
        body: &'a Value,
    ) -> BoxFuture<'a, Result<(u16, Value), String>> {
        Box::pin(self.delegate.call_json(
            http::Method::POST,
            path,
            Some(body),
            None,
            self.token.as_deref(),
            CALL_TIMEOUT,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_current_context() {
        let dir = std::env::temp_dir().join(format!("shared-client-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        std::fs::write(dir.join("ca.crt"), ca.cert.pem()).unwrap();
        let yaml = "apiVersion: v1\nkind: Config\ncurrent-context: b\n\
            contexts:\n- name: a\n  context: {cluster: none, user: none}\n\
            - name: b\n  context: {cluster: c, user: u}\n\
            clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n    certificate-authority: ca.crt\n\
            users:\n- name: u\n  user:\n    token: abc\n";
        std::fs::write(dir.join("kubeconfig"), yaml).unwrap();
        let c = ApiClient::from_kubeconfig(&dir.join("kubeconfig")).unwrap();
        assert_eq!(c.url(), "https://127.0.0.1:6443/");
        assert_eq!(c.token.as_deref(), Some("abc"));
        let bad = yaml.replace("current-context: b", "current-context: a");
        std::fs::write(dir.join("bad"), bad).unwrap();
        let err = ApiClient::from_kubeconfig(&dir.join("bad")).err().unwrap();
        assert!(
            err.to_string().contains("no cluster named \"none\""),
            "{err}"
        );
    }
}

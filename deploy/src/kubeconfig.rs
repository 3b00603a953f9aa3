//! Writes the admin kubeconfig (YAML with embedded certificate data).

use crate::pki::{write_file, Pki};
use anyhow::Context;
use base64::Engine as _;
use std::path::Path;

/// Name of the cluster entry in the kubeconfig.
pub const CLUSTER_NAME: &str = "local";
/// Name of the user entry in the kubeconfig.
pub const USER_NAME: &str = "admin";
/// Name of the (current) context in the kubeconfig.
pub const CONTEXT_NAME: &str = "local";

/// Writes a kubeconfig at `path` (mode 0600) pointing at `server` with
/// cluster `local`, user `admin` (client certificate and key embedded) and
/// the cluster CA embedded.
pub fn write_kubeconfig(path: &Path, pki: &Pki, server: &str) -> anyhow::Result<()> {
    let b64 = |p: &Path| -> anyhow::Result<String> {
        let bytes = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
        Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
    };
    let text = format!(
        "apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: {CLUSTER_NAME}\n\
        \x20 cluster:\n\
        \x20   server: {server}\n\
        \x20   certificate-authority-data: {ca}\n\
         users:\n\
         - name: {USER_NAME}\n\
        \x20 user:\n\
        \x20   client-certificate-data: {cert}\n\
        \x20   client-key-data: {key}\n\
         contexts:\n\
         - name: {CONTEXT_NAME}\n\
        \x20 context:\n\
        \x20   cluster: {CLUSTER_NAME}\n\
        \x20   user: {USER_NAME}\n\
         current-context: {CONTEXT_NAME}\n\
         preferences: {{}}\n",
        server = server,
        ca = b64(&pki.ca_cert)?,
        cert = b64(&pki.admin_cert)?,
        key = b64(&pki.admin_key)?,
    );
    write_file(path, text.as_bytes(), 0o600)
}

/// Extracts the `server:` URL from a kubeconfig written by [`write_kubeconfig`].
pub fn read_server(path: &Path) -> anyhow::Result<String> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("server:"))
        .map(|s| s.trim().trim_matches('"').to_string())
        .next()
        .with_context(|| format!("no server in {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn kubeconfig_embeds_pki_and_server() {
        let dir = tempfile::tempdir().unwrap();
        let pki = crate::pki::ensure(&dir.path().join("pki")).unwrap();
        let path = dir.path().join("kubeconfig");
        write_kubeconfig(&path, &pki, "https://127.0.0.1:6443").unwrap();

        let text = std::fs::read_to_string(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(read_server(&path).unwrap(), "https://127.0.0.1:6443");
        assert!(text.contains("current-context: local\n"));
        assert!(text.contains("\n  user:\n    client-certificate-data: "));
        assert!(text.contains("\n  context:\n    cluster: local\n    user: admin\n"));

        let field = |name: &str| -> Vec<u8> {
            let line = text
                .lines()
                .find_map(|l| l.trim().strip_prefix(&format!("{name}: ")))
                .unwrap();
            base64::engine::general_purpose::STANDARD
                .decode(line)
                .unwrap()
        };
        assert_eq!(
            field("certificate-authority-data"),
            std::fs::read(&pki.ca_cert).unwrap()
        );
        assert_eq!(
            field("client-certificate-data"),
            std::fs::read(&pki.admin_cert).unwrap()
        );
        assert_eq!(
            field("client-key-data"),
            std::fs::read(&pki.admin_key).unwrap()
        );
    }
}

//! `/version`: the Kubernetes API version this server implements.

use serde_json::{json, Value};

/// The upstream minor version whose API surface is served (k8s-openapi `v1_37`:
/// v1.36's default API plus the kinds v1.37 makes GA).
pub const KUBERNETES_MINOR: &str = "37";

/// The `version.Info` document.
pub fn version_info() -> Value {
    json!({
        "major": "1",
        "minor": KUBERNETES_MINOR,
        "gitVersion": format!("v1.{KUBERNETES_MINOR}.0"),
        "gitCommit": option_env!("GIT_COMMIT").unwrap_or("unknown"),
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "n/a (rust)",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, match std::env::consts::ARCH { "x86_64" => "amd64", "aarch64" => "arm64", other => other }),
    })
}

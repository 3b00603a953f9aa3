//! The CustomResourceDefinition resource (`apiextensions.k8s.io/v1`): its
//! declaration, validation of the CRD itself and its strategy (defaults,
//! `status.storedVersions`, the cleanup finalizer on delete).

pub mod conditions;
pub mod strategy;
pub mod validation;

use apiserver::registry::resource::ResourceDef;
use apiserver::registry::table::Column;
use serde_json::Value;

/// The finalizer that makes deleting a CRD delete its instances first.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// The CustomResourceDefinition resource.
pub fn definition() -> ResourceDef {
    ResourceDef::new(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
    )
    .cluster_scoped()
    .short_names(&["crd", "crds"])
    .categories(&["api-extensions"])
    .storage_path("apiextensions.k8s.io/customresourcedefinitions")
    .with_status()
    .columns(vec![Column::path(
        "Created At",
        "metadata.creationTimestamp",
    )])
    .strategy(strategy::CrdStrategy)
}

/// A string at a path of `spec` (`""` when absent).
pub fn spec_str<'a>(crd: &'a Value, path: &[&str]) -> &'a str {
    let mut v = crd.get("spec");
    for p in path {
        v = v.and_then(|x| x.get(*p));
    }
    v.and_then(Value::as_str).unwrap_or("")
}

/// `spec.versions`, empty when absent.
pub fn versions(crd: &Value) -> &[Value] {
    crd.get("spec")
        .and_then(|s| s.get("versions"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The name of the storage version, if exactly one is marked.
pub fn storage_version(crd: &Value) -> Option<&str> {
    let mut storage = versions(crd)
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true));
    let first = storage.next()?;
    if storage.next().is_some() {
        return None;
    }
    first.get("name").and_then(Value::as_str)
}

/// Kubernetes version priority (`v2` > `v1` > `v1beta2` > `v1beta1` >
/// `v1alpha1` > other, others alphabetically), as discovery orders versions.
pub fn version_priority(a: &str, b: &str) -> std::cmp::Ordering {
    fn parse(v: &str) -> Option<(u64, u8, u64)> {
        let rest = v.strip_prefix('v')?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let major: u64 = digits.parse().ok()?;
        let tail = &rest[digits.len()..];
        if tail.is_empty() {
            return Some((major, 2, 0));
        }
        let (level, n) = if let Some(n) = tail.strip_prefix("beta") {
            (1, n)
        } else if let Some(n) = tail.strip_prefix("alpha") {
            (0, n)
        } else {
            return None;
        };
        Some((major, level, n.parse().ok()?))
    }
    match (parse(a), parse(b)) {
        // Higher first: GA over beta over alpha, then higher numbers.
        (Some((ma, la, na)), Some((mb, lb, nb))) => (la, ma, na).cmp(&(lb, mb, nb)).reverse(),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_version_order() {
        let mut v = vec![
            "v1alpha1", "foo", "v1", "v2beta1", "v1beta2", "v2", "v1beta1",
        ];
        v.sort_by(|a, b| version_priority(a, b));
        assert_eq!(
            v,
            vec!["v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "foo"]
        );
    }
}

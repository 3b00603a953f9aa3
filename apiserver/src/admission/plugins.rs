//! Which admission plugins run, and in which order: upstream's names, order
//! and default-on set (`pkg/kubeapiserver/options/plugins.go`), selected by
//! `--enable-admission-plugins` / `--disable-admission-plugins`.

use std::sync::Arc;

use super::AdmissionPlugin;

/// Every plugin upstream knows, in the order upstream runs them. Webhooks,
/// ResourceQuota and AlwaysDeny always come last.
pub const ALL_ORDERED: &[&str] = &[
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "PodGroupProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    "PodTopologyLabels",
    "PodGroupWorkloadExists",
    "NodeDeclaredFeatureValidator",
    "JobValidation",
    "PodResizeValidator",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
];

/// The plugins upstream enables when no flag says otherwise.
pub const DEFAULT_ON: &[&str] = &[
    "NamespaceLifecycle",
    "LimitRanger",
    "ServiceAccount",
    "DefaultStorageClass",
    "PersistentVolumeClaimResize",
    "DefaultTolerationSeconds",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "StorageObjectInUseProtection",
    "PodGroupProtection",
    "Priority",
    "TaintNodesByCondition",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "PodSecurity",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "ValidatingAdmissionPolicy",
    "PodGroupWorkloadExists",
    "NodeDeclaredFeatureValidator",
    "JobValidation",
    "PodResizeValidator",
];

/// The `--enable-admission-plugins` / `--disable-admission-plugins` flags.
#[derive(clap::Args, Clone, Debug, Default)]
#[command(next_help_heading = "Admission flags")]
pub struct AdmissionOptions {
    /// Admission plugins to enable in addition to the default-on ones
    /// (comma-separated upstream names); order does not matter.
    #[arg(long = "enable-admission-plugins", value_delimiter = ',')]
    pub enable_admission_plugins: Vec<String>,
    /// Admission plugins to disable even though they are on by default.
    #[arg(long = "disable-admission-plugins", value_delimiter = ',')]
    pub disable_admission_plugins: Vec<String>,
    /// Upstream's `AdmissionConfiguration` file (`apiserver.config.k8s.io/v1`,
    /// YAML or JSON): each plugin's configuration, inline (`configuration`)
    /// or in a file of its own (`path`, relative to this file).
    #[arg(long = "admission-control-config-file")]
    pub admission_control_config_file: Option<std::path::PathBuf>,
}

/// Reads a YAML or JSON document.
fn read_document(path: &std::path::Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "unable to read admission control configuration from {:?} [{e}]",
            path
        )
    })?;
    serde_saphyr::from_str(&text).map_err(|e| {
        format!(
            "unable to read admission control configuration from {:?} [{e}]",
            path
        )
    })
}

impl AdmissionOptions {
    /// The configuration of plugin `name` from `--admission-control-config-file`
    /// (`None` when there is no file or it does not configure the plugin).
    pub fn plugin_config(&self, name: &str) -> Result<Option<serde_json::Value>, String> {
        let Some(file) = &self.admission_control_config_file else {
            return Ok(None);
        };
        let doc = read_document(file)?;
        let kind = doc
            .get("kind")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("");
        if kind != "AdmissionConfiguration" {
            return Err(format!(
                "unable to read admission control configuration from {file:?}: expected kind AdmissionConfiguration, got {kind:?}"
            ));
        }
        let Some(entry) = doc
            .get("plugins")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .find(|p| p.get("name").and_then(serde_json::Value::as_str) == Some(name))
        else {
            return Ok(None);
        };
        if let Some(c) = entry.get("configuration").filter(|c| !c.is_null()) {
            return Ok(Some(c.clone()));
        }
        match entry.get("path").and_then(serde_json::Value::as_str) {
            Some(p) if !p.is_empty() => {
                let path = std::path::Path::new(p);
                let path = if path.is_relative() {
                    file.parent()
                        .unwrap_or(std::path::Path::new("."))
                        .join(path)
                } else {
                    path.to_path_buf()
                };
                read_document(&path).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// The names of the plugins to run, in upstream's order; upstream's
    /// messages for unknown or overlapping names.
    pub fn enabled(&self) -> Result<Vec<&'static str>, String> {
        let clean = |v: &[String]| -> Vec<String> {
            v.iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        };
        let (enable, disable) = (
            clean(&self.enable_admission_plugins),
            clean(&self.disable_admission_plugins),
        );
        let mut errs = Vec::new();
        for (flag, names) in [
            ("enable-admission-plugins", &enable),
            ("disable-admission-plugins", &disable),
        ] {
            for n in names.iter() {
                if !ALL_ORDERED.contains(&n.as_str()) {
                    errs.push(format!("{flag} plugin {n:?} is unknown"));
                }
            }
        }
        let mut overlap: Vec<&String> = enable.iter().filter(|n| disable.contains(n)).collect();
        overlap.sort();
        overlap.dedup();
        if !overlap.is_empty() {
            errs.push(format!(
                "{overlap:?} in enable-admission-plugins and disable-admission-plugins overlapped"
            ));
        }
        if !errs.is_empty() {
            return Err(errs.join("; "));
        }
        Ok(ALL_ORDERED
            .iter()
            .copied()
            .filter(|n| {
                (DEFAULT_ON.contains(n) || enable.iter().any(|e| e == n))
                    && !disable.iter().any(|d| d == n)
            })
            .collect())
    }
}

/// A tier's plugins: the enabled plugins the tier implements, in upstream's
/// order. `available` holds the tier's plugins; the enabled ones it does not
/// implement are returned as the second value, so the caller can say so at
/// startup.
pub fn ordered(
    options: &AdmissionOptions,
    available: Vec<Arc<dyn AdmissionPlugin>>,
) -> Result<(Vec<Arc<dyn AdmissionPlugin>>, Vec<&'static str>), String> {
    let enabled = options.enabled()?;
    let mut chain = Vec::new();
    let mut missing = Vec::new();
    for name in enabled {
        match available.iter().find(|p| p.name() == name) {
            Some(p) => chain.push(p.clone()),
            None => missing.push(name),
        }
    }
    Ok((chain, missing))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(enable: &[&str], disable: &[&str]) -> AdmissionOptions {
        AdmissionOptions {
            enable_admission_plugins: enable.iter().map(|s| s.to_string()).collect(),
            disable_admission_plugins: disable.iter().map(|s| s.to_string()).collect(),
            admission_control_config_file: None,
        }
    }

    #[test]
    fn reads_plugin_configurations_inline_and_from_files() {
        let dir = std::env::temp_dir().join(format!("admission-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(
            dir.join("psa.yaml"),
            "apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\nexemptions:\n  namespaces: [kube-system]\n",
        )
        .expect("write");
        std::fs::write(
            dir.join("admission.yaml"),
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: psa.yaml\n- name: EventRateLimit\n  configuration: {limits: []}\n",
        )
        .expect("write");
        let mut o = opts(&[], &[]);
        o.admission_control_config_file = Some(dir.join("admission.yaml"));
        let psa = o
            .plugin_config("PodSecurity")
            .expect("read")
            .expect("configured");
        assert_eq!(psa["exemptions"]["namespaces"][0], "kube-system");
        assert_eq!(
            o.plugin_config("EventRateLimit")
                .expect("read")
                .expect("inline")["limits"],
            serde_json::json!([])
        );
        assert!(o.plugin_config("LimitRanger").expect("read").is_none());
        o.admission_control_config_file = Some(dir.join("missing.yaml"));
        assert!(o.plugin_config("PodSecurity").is_err());
    }

    #[test]
    fn default_on_plugins_in_upstream_order() {
        let on = opts(&[], &[]).enabled().unwrap();
        assert_eq!(on.len(), DEFAULT_ON.len());
        assert_eq!(on.first(), Some(&"NamespaceLifecycle"));
        assert_eq!(on.last(), Some(&"ResourceQuota"));
        let pos = |n| on.iter().position(|p| *p == n).unwrap();
        assert!(pos("MutatingAdmissionWebhook") < pos("ValidatingAdmissionPolicy"));
        assert!(pos("ValidatingAdmissionWebhook") < pos("ResourceQuota"));
        assert!(pos("LimitRanger") < pos("ServiceAccount"));
    }

    #[test]
    fn enable_and_disable() {
        let on = opts(&["NodeRestriction", "AlwaysPullImages"], &["LimitRanger"])
            .enabled()
            .unwrap();
        assert!(on.contains(&"NodeRestriction"));
        assert!(!on.contains(&"LimitRanger"));
        let pos = |n| on.iter().position(|p| *p == n).unwrap();
        assert!(pos("ServiceAccount") < pos("NodeRestriction"));
        assert!(pos("NodeRestriction") < pos("AlwaysPullImages"));
    }

    #[test]
    fn upstream_messages_for_bad_flags() {
        let e = opts(&["Nope"], &[]).enabled().unwrap_err();
        assert_eq!(e, "enable-admission-plugins plugin \"Nope\" is unknown");
        let e = opts(&["LimitRanger"], &["LimitRanger"])
            .enabled()
            .unwrap_err();
        assert!(e.contains("overlapped"), "{e}");
    }
}

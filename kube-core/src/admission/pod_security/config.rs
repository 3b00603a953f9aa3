//! The plugin's configuration, upstream's `PodSecurityConfiguration`
//! (`pod-security.admission.config.k8s.io/v1`, given through
//! `--admission-control-config-file`): the policy of namespaces without
//! labels, and the exemptions. Without one the plugin runs with upstream's
//! defaults: privileged, latest, for every mode, and no exemptions.

use super::policy::{Level, Policy};

/// Requests PodSecurity never evaluates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exemptions {
    /// Authenticated user names whose pod and controller writes are exempt.
    pub usernames: Vec<String>,
    /// Namespaces whose pods and controllers are exempt.
    pub namespaces: Vec<String>,
    /// Pods (and templates) naming one of these RuntimeClasses are exempt.
    pub runtime_classes: Vec<String>,
}

/// Defaults and exemptions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Configuration {
    /// The policy of a namespace that has no PodSecurity labels (a label
    /// overrides its mode).
    pub defaults: Policy,
    /// What is never evaluated.
    pub exemptions: Exemptions,
}

impl Configuration {
    /// Reads a `PodSecurityConfiguration`; the error says what is wrong,
    /// as upstream refuses to start with a bad one.
    pub fn from_json(v: &serde_json::Value) -> Result<Configuration, String> {
        use super::policy::{LevelVersion, Version};
        let kind = v
            .get("kind")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("");
        if kind != "PodSecurityConfiguration" {
            return Err(format!(
                "expected kind PodSecurityConfiguration, got {kind:?}"
            ));
        }
        let defaults = v
            .get("defaults")
            .cloned()
            .unwrap_or(serde_json::Value::Null);
        let mode = |name: &str| -> Result<LevelVersion, String> {
            let s = |k: &str| {
                defaults
                    .get(k)
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("")
            };
            let level = match s(name) {
                "" => Level::Privileged,
                l => Level::parse(l).map_err(|e| format!("defaults.{name}: {e}"))?,
            };
            let version = match s(&format!("{name}-version")) {
                "" => Version::Latest,
                ver => Version::parse(ver).map_err(|e| format!("defaults.{name}-version: {e}"))?,
            };
            Ok(LevelVersion { level, version })
        };
        let list = |k: &str| -> Vec<String> {
            v.pointer(&format!("/exemptions/{k}"))
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(serde_json::Value::as_str)
                .map(str::to_string)
                .collect()
        };
        Ok(Configuration {
            defaults: Policy {
                enforce: mode("enforce")?,
                audit: mode("audit")?,
                warn: mode("warn")?,
            },
            exemptions: Exemptions {
                usernames: list("usernames"),
                namespaces: list("namespaces"),
                runtime_classes: list("runtimeClasses"),
            },
        })
    }
}

fn contains(list: &[String], needle: &str) -> bool {
    !needle.is_empty() && list.iter().any(|s| s == needle)
}

impl Configuration {
    /// Whether the namespace is exempt (the empty name never is).
    pub fn exempt_namespace(&self, namespace: &str) -> bool {
        contains(&self.exemptions.namespaces, namespace)
    }

    /// Whether the user is exempt (the empty name never is).
    pub fn exempt_user(&self, user: &str) -> bool {
        contains(&self.exemptions.usernames, user)
    }

    /// Whether the RuntimeClass is exempt (an unset class never is).
    pub fn exempt_runtime_class(&self, class: &str) -> bool {
        contains(&self.exemptions.runtime_classes, class)
    }

    /// Upstream's warning when an exempt namespace is labelled with a
    /// policy that is not privileged and differs from the defaults:
    /// `namespace "x" is exempt from Pod Security, and the policy
    /// (enforce=restricted:latest) will be ignored`, naming only the modes
    /// the labels set.
    pub fn exempt_namespace_warning(
        &self,
        namespace: &str,
        policy: &Policy,
        labels: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> Option<String> {
        if policy.fully_privileged() || policy.equivalent(&self.defaults) {
            return None;
        }
        let parts: Vec<String> = [
            ("enforce", policy.enforce),
            ("audit", policy.audit),
            ("warn", policy.warn),
        ]
        .into_iter()
        .filter(|(mode, lv)| {
            lv.level != Level::Privileged && super::policy::sets_mode(labels, mode)
        })
        .map(|(mode, lv)| format!("{mode}={lv}"))
        .collect();
        Some(format!(
            "namespace {} is exempt from Pod Security, and the policy ({}) will be ignored",
            apiserver::apimachinery::validation::go_quote(namespace),
            parts.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::policy::{policy_to_evaluate, LevelVersion};
    use super::*;
    use serde_json::json;

    fn exempt() -> Configuration {
        Configuration {
            defaults: Policy::default(),
            exemptions: Exemptions {
                usernames: vec!["admin".into()],
                namespaces: vec!["test".into()],
                runtime_classes: vec!["kata".into()],
            },
        }
    }

    #[test]
    fn nothing_is_exempt_by_default() {
        let c = Configuration::default();
        assert!(!c.exempt_namespace("kube-system"));
        assert!(!c.exempt_user("system:admin"));
        assert!(!c.exempt_runtime_class("kata"));
        assert_eq!(c.defaults.enforce, LevelVersion::PRIVILEGED);
    }

    #[test]
    fn exemptions_match_exact_names_only() {
        let c = exempt();
        assert!(c.exempt_namespace("test"));
        assert!(!c.exempt_namespace("test2"));
        assert!(!c.exempt_namespace(""));
        assert!(c.exempt_user("admin"));
        assert!(c.exempt_runtime_class("kata"));
        assert!(!c.exempt_runtime_class(""));
    }

    #[test]
    fn the_exempt_namespace_warning_names_the_labelled_modes() {
        let c = exempt();
        let labels = json!({"pod-security.kubernetes.io/enforce": "restricted"});
        let (p, _) = policy_to_evaluate(labels.as_object(), &c.defaults);
        assert_eq!(
            c.exempt_namespace_warning("test", &p, labels.as_object()).as_deref(),
            Some("namespace \"test\" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored")
        );
        let labels = json!({"pod-security.kubernetes.io/enforce": "restricted",
            "pod-security.kubernetes.io/enforce-version": "v1.0",
            "pod-security.kubernetes.io/audit": "restricted",
            "pod-security.kubernetes.io/warn": "baseline"});
        let (p, _) = policy_to_evaluate(labels.as_object(), &c.defaults);
        assert_eq!(
            c.exempt_namespace_warning("test", &p, labels.as_object()).as_deref(),
            Some("namespace \"test\" is exempt from Pod Security, and the policy (enforce=restricted:v1.0, audit=restricted:latest, warn=baseline:latest) will be ignored")
        );
        let privileged = json!({"pod-security.kubernetes.io/enforce": "privileged"});
        let (p, _) = policy_to_evaluate(privileged.as_object(), &c.defaults);
        assert!(c
            .exempt_namespace_warning("test", &p, privileged.as_object())
            .is_none());
    }
}

#[cfg(test)]
mod from_json_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_upstreams_configuration() {
        let c = Configuration::from_json(&json!({
            "apiVersion": "pod-security.admission.config.k8s.io/v1",
            "kind": "PodSecurityConfiguration",
            "defaults": {"enforce": "baseline", "enforce-version": "v1.30", "warn": "restricted"},
            "exemptions": {"usernames": ["admin"], "namespaces": ["kube-system"], "runtimeClasses": ["kata"]}
        }))
        .expect("config");
        assert_eq!(c.defaults.enforce.to_string(), "baseline:v1.30");
        assert_eq!(c.defaults.warn.to_string(), "restricted:latest");
        assert_eq!(c.defaults.audit.to_string(), "privileged:latest");
        assert!(
            c.exempt_namespace("kube-system")
                && c.exempt_user("admin")
                && c.exempt_runtime_class("kata")
        );
        assert!(Configuration::from_json(&json!({"kind": "Other"})).is_err());
        assert!(
            Configuration::from_json(&json!({"kind": "PodSecurityConfiguration",
            "defaults": {"enforce": "strict"}}))
            .is_err()
        );
    }
}

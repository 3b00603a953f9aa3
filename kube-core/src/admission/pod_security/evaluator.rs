//! The check registry, as upstream's `policy/registry.go`: every check has
//! an ID, a level and revisions by the first policy version they apply to.
//! A level and version select, for each check, the newest revision not
//! newer than the version (`latest`, and versions past the newest revision,
//! take the newest); `restricted` runs the restricted checks and the
//! baseline checks they do not override. Checks run in upstream's order:
//! baseline IDs sorted, then restricted IDs sorted, so messages list the
//! violations in upstream's order.

use std::sync::OnceLock;

use super::policy::{Level, LevelVersion, Version};
use super::spec::PodView;
use super::{baseline, restricted};

/// Why a check forbids a pod: a short reason (`host namespaces`) and an
/// optional detail (`hostNetwork=true`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Always printed (`host namespaces`).
    pub reason: String,
    /// Printed in parentheses for a single object; may be empty.
    pub detail: String,
}

impl Violation {
    /// A violation with its reason and detail.
    pub fn new(reason: impl Into<String>, detail: impl Into<String>) -> Self {
        Violation {
            reason: reason.into(),
            detail: detail.into(),
        }
    }
}

/// A check: `None` allows the pod.
pub type CheckFn = fn(&PodView<'_>) -> Option<Violation>;

/// One revision of a check.
pub struct VersionedCheck {
    /// The first `v1.<minor>` policy version this revision applies to.
    pub min_minor: u64,
    /// The check of this revision.
    pub check: CheckFn,
    /// Baseline check IDs this (restricted) revision replaces.
    pub overrides: &'static [&'static str],
}

/// A check with its revisions, oldest first.
pub struct Check {
    /// Upstream's check ID (`hostNamespaces`), which orders the checks.
    pub id: &'static str,
    /// Baseline checks also run for restricted (unless overridden).
    pub level: Level,
    /// The revisions, oldest first.
    pub versions: &'static [VersionedCheck],
}

impl Check {
    /// The revision in force at `v1.<minor>`.
    fn at(&self, minor: u64) -> Option<&VersionedCheck> {
        self.versions.iter().rev().find(|v| v.min_minor <= minor)
    }
}

/// The outcome of all checks of a level and version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Aggregate {
    /// The violations, in check order.
    pub violations: Vec<Violation>,
}

impl Aggregate {
    /// Whether every check allowed the pod.
    pub fn allowed(&self) -> bool {
        self.violations.is_empty()
    }

    /// The reasons, comma-separated: `host namespaces, privileged`.
    pub fn forbidden_reason(&self) -> String {
        self.violations
            .iter()
            .map(|v| v.reason.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The reasons with their details in parentheses:
    /// `host namespaces (hostNetwork=true), privileged (...)`.
    pub fn forbidden_detail(&self) -> String {
        self.violations
            .iter()
            .map(|v| {
                if v.detail.is_empty() {
                    v.reason.clone()
                } else {
                    format!("{} ({})", v.reason, v.detail)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Every check in upstream's order (baseline IDs sorted, then restricted).
pub fn ordered_checks() -> &'static [&'static Check] {
    static ORDERED: OnceLock<Vec<&'static Check>> = OnceLock::new();
    ORDERED.get_or_init(|| {
        let mut base: Vec<&'static Check> = baseline::CHECKS.iter().collect();
        let mut strict: Vec<&'static Check> = restricted::CHECKS.iter().collect();
        base.sort_by(|a, b| a.id.as_bytes().cmp(b.id.as_bytes()));
        strict.sort_by(|a, b| a.id.as_bytes().cmp(b.id.as_bytes()));
        base.extend(strict);
        base
    })
}

/// The newest policy version any check has a revision for; later versions
/// and `latest` evaluate as this one.
pub fn max_minor() -> u64 {
    ordered_checks()
        .iter()
        .flat_map(|c| c.versions.iter().map(|v| v.min_minor))
        .max()
        .unwrap_or(0)
}

/// The checks that run at a level and version, in order.
pub fn checks_for(lv: LevelVersion) -> Vec<CheckFn> {
    if lv.level == Level::Privileged {
        return Vec::new();
    }
    let max = max_minor();
    let minor = match lv.version {
        Version::Latest => max,
        Version::V1(m) => m.min(max),
    };
    let overridden: Vec<&str> = if lv.level == Level::Restricted {
        ordered_checks()
            .iter()
            .filter(|c| c.level == Level::Restricted)
            .filter_map(|c| c.at(minor))
            .flat_map(|v| v.overrides.iter().copied())
            .collect()
    } else {
        Vec::new()
    };
    ordered_checks()
        .iter()
        .filter(|c| match c.level {
            Level::Baseline => !overridden.contains(&c.id),
            _ => lv.level == Level::Restricted,
        })
        .filter_map(|c| c.at(minor))
        .map(|v| v.check)
        .collect()
}

/// Runs the checks of `lv` on the pod.
pub fn evaluate(lv: LevelVersion, pod: &PodView<'_>) -> Aggregate {
    Aggregate {
        violations: checks_for(lv).into_iter().filter_map(|c| c(pod)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lv(level: Level, version: Version) -> LevelVersion {
        LevelVersion { level, version }
    }

    fn ids_at(level: Level, minor: u64) -> Vec<&'static str> {
        let overridden: Vec<&str> = ordered_checks()
            .iter()
            .filter(|c| c.level == Level::Restricted && level == Level::Restricted)
            .filter_map(|c| c.at(minor))
            .flat_map(|v| v.overrides.iter().copied())
            .collect();
        ordered_checks()
            .iter()
            .filter(|c| match c.level {
                Level::Baseline => !overridden.contains(&c.id),
                _ => level == Level::Restricted,
            })
            .filter(|c| c.at(minor).is_some())
            .map(|c| c.id)
            .collect()
    }

    #[test]
    fn order_and_overrides_at_latest_are_upstreams() {
        assert_eq!(max_minor(), 35);
        assert_eq!(
            ids_at(Level::Baseline, 35),
            [
                "appArmorProfile",
                "capabilities_baseline",
                "hostNamespaces",
                "hostPathVolumes",
                "hostPorts",
                "hostProbesAndHostLifecycle",
                "privileged",
                "procMount",
                "seLinuxOptions",
                "seccompProfile_baseline",
                "sysctls",
                "windowsHostProcess",
            ]
        );
        assert_eq!(
            ids_at(Level::Restricted, 35),
            [
                "appArmorProfile",
                "hostNamespaces",
                "hostPorts",
                "hostProbesAndHostLifecycle",
                "privileged",
                "seLinuxOptions",
                "sysctls",
                "windowsHostProcess",
                "allowPrivilegeEscalation",
                "capabilities_restricted",
                "procMount_restricted",
                "restrictedVolumes",
                "runAsNonRoot",
                "runAsUser",
                "seccompProfile_restricted",
            ]
        );
        // v1.0 restricted: no allowPrivilegeEscalation (1.8), no
        // capabilities_restricted (1.22), no runAsUser (1.23), no seccomp
        // restricted (1.19) -- so seccomp and capabilities baseline stay.
        let old = ids_at(Level::Restricted, 0);
        assert!(old.contains(&"capabilities_baseline"));
        assert!(old.contains(&"seccompProfile_baseline"));
        assert!(old.contains(&"procMount"));
        assert!(!old.contains(&"hostPathVolumes"));
        assert!(!old.contains(&"runAsUser"));
        assert!(!old.contains(&"allowPrivilegeEscalation"));
    }

    #[test]
    fn versions_past_the_newest_evaluate_as_latest() {
        assert_eq!(
            checks_for(lv(Level::Restricted, Version::V1(99))).len(),
            checks_for(lv(Level::Restricted, Version::Latest)).len()
        );
        assert!(checks_for(lv(Level::Privileged, Version::Latest)).is_empty());
    }

    #[test]
    fn the_full_message_of_a_privileged_container() {
        let pod = json!({"metadata": {"name": "x"}, "spec": {"containers": [
            {"name": "app", "image": "nginx", "securityContext": {"privileged": true}}
        ]}});
        let r = evaluate(
            lv(Level::Restricted, Version::Latest),
            &PodView::of_pod(&pod),
        );
        assert!(!r.allowed());
        assert_eq!(
            r.forbidden_detail(),
            "privileged (container \"app\" must not set securityContext.privileged=true), \
             allowPrivilegeEscalation != false (container \"app\" must set securityContext.allowPrivilegeEscalation=false), \
             unrestricted capabilities (container \"app\" must set securityContext.capabilities.drop=[\"ALL\"]), \
             runAsNonRoot != true (pod or container \"app\" must set securityContext.runAsNonRoot=true), \
             seccompProfile (pod or container \"app\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")"
        );
        assert_eq!(
            r.forbidden_reason(),
            "privileged, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"
        );
        let b = evaluate(lv(Level::Baseline, Version::Latest), &PodView::of_pod(&pod));
        assert_eq!(
            b.forbidden_detail(),
            "privileged (container \"app\" must not set securityContext.privileged=true)"
        );
    }

    #[test]
    fn a_restricted_pod_passes_every_level() {
        let pod = json!({"spec": {
            "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "app", "securityContext": {
                "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}],
            "volumes": [{"name": "t", "projected": {"sources": []}}],
        }});
        for level in [Level::Privileged, Level::Baseline, Level::Restricted] {
            for version in [Version::Latest, Version::V1(0), Version::V1(25)] {
                assert!(
                    evaluate(lv(level, version), &PodView::of_pod(&pod)).allowed(),
                    "{level}:{version}"
                );
            }
        }
    }

    #[test]
    fn details_are_optional_in_the_message() {
        let a = Aggregate {
            violations: vec![Violation::new("a", ""), Violation::new("b", "x")],
        };
        assert_eq!(a.forbidden_detail(), "a, b (x)");
        assert_eq!(a.forbidden_reason(), "a, b");
    }
}

//! Levels, versions and the policy of a namespace, read from its
//! `pod-security.kubernetes.io/*` labels as upstream's
//! `k8s.io/pod-security-admission/api` reads them: a label that does not
//! parse is reported (a namespace write carrying it is refused) and is
//! evaluated as `restricted` (enforce) or `privileged` (audit, warn), with
//! the `latest` version.

use std::fmt;

use apiserver::apimachinery::validation::FieldError;
use serde_json::{Map, Value};

const LABEL_PREFIX: &str = "pod-security.kubernetes.io/";
/// The enforce level label.
pub const ENFORCE_LEVEL_LABEL: &str = "pod-security.kubernetes.io/enforce";
/// The enforce version label.
pub const ENFORCE_VERSION_LABEL: &str = "pod-security.kubernetes.io/enforce-version";
/// The audit level label.
pub const AUDIT_LEVEL_LABEL: &str = "pod-security.kubernetes.io/audit";
/// The audit version label.
pub const AUDIT_VERSION_LABEL: &str = "pod-security.kubernetes.io/audit-version";
/// The warn level label.
pub const WARN_LEVEL_LABEL: &str = "pod-security.kubernetes.io/warn";
/// The warn version label.
pub const WARN_VERSION_LABEL: &str = "pod-security.kubernetes.io/warn-version";

/// A Pod Security Standards level, ordered by strictness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// No restrictions.
    Privileged,
    /// Prevents known privilege escalations.
    Baseline,
    /// Pod hardening best practices, on top of baseline.
    Restricted,
}

impl Level {
    /// The label value (`privileged`, `baseline`, `restricted`).
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }

    /// Upstream's `ParseLevel`: an unknown value is an error and is
    /// evaluated as `restricted`.
    pub fn parse(value: &str) -> Result<Level, &'static str> {
        match value {
            "privileged" => Ok(Level::Privileged),
            "baseline" => Ok(Level::Baseline),
            "restricted" => Ok(Level::Restricted),
            _ => Err("must be one of privileged, baseline, restricted"),
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A policy version: `latest` or `v1.<minor>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Version {
    /// The newest checks (`latest`).
    Latest,
    /// The checks as of `v1.<minor>`.
    V1(u64),
}

impl Version {
    /// Upstream's `ParseVersion` (`latest` or `v1.x`, no leading zeros);
    /// anything else is an error and is evaluated as `latest`.
    pub fn parse(value: &str) -> Result<Version, &'static str> {
        const ERR: &str = "must be \"latest\" or \"v1.x\"";
        if value == "latest" {
            return Ok(Version::Latest);
        }
        let Some(minor) = value.strip_prefix("v1.") else {
            return Err(ERR);
        };
        let digits = !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit());
        if !digits || (minor.len() > 1 && minor.starts_with('0')) {
            return Err(ERR);
        }
        // Go's Atoi fails past the (64-bit) int range.
        minor
            .parse::<i64>()
            .ok()
            .and_then(|m| u64::try_from(m).ok())
            .map(Version::V1)
            .ok_or(ERR)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Version::Latest => f.write_str("latest"),
            Version::V1(minor) => write!(f, "v1.{minor}"),
        }
    }
}

/// A level at a version, printed `restricted:latest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LevelVersion {
    /// The level.
    pub level: Level,
    /// The version of the level's checks.
    pub version: Version,
}

impl LevelVersion {
    /// `privileged:latest`, what a namespace without labels gets.
    pub const PRIVILEGED: LevelVersion = LevelVersion {
        level: Level::Privileged,
        version: Version::Latest,
    };

    /// Both privileged, or the same level and version.
    pub fn equivalent(&self, other: &LevelVersion) -> bool {
        (self.level == Level::Privileged && other.level == Level::Privileged) || self == other
    }
}

impl fmt::Display for LevelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.level, self.version)
    }
}

/// The three modes of a namespace's policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Violations refuse pods.
    pub enforce: LevelVersion,
    /// Violations are recorded in the audit log (upstream).
    pub audit: LevelVersion,
    /// Violations are returned as warnings.
    pub warn: LevelVersion,
}

impl Default for Policy {
    /// Upstream's default configuration: privileged, latest, for all modes.
    fn default() -> Self {
        Policy {
            enforce: LevelVersion::PRIVILEGED,
            audit: LevelVersion::PRIVILEGED,
            warn: LevelVersion::PRIVILEGED,
        }
    }
}

impl Policy {
    /// Whether every mode is privileged (nothing to check).
    pub fn fully_privileged(&self) -> bool {
        self.enforce.level == Level::Privileged
            && self.audit.level == Level::Privileged
            && self.warn.level == Level::Privileged
    }

    /// Every mode equivalent.
    pub fn equivalent(&self, other: &Policy) -> bool {
        self.enforce.equivalent(&other.enforce)
            && self.audit.equivalent(&other.audit)
            && self.warn.equivalent(&other.warn)
    }
}

/// A label that does not parse: `metadata.labels[<label>]: Invalid value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelError {
    /// The label key.
    pub label: &'static str,
    /// Its value.
    pub value: String,
    /// Why it does not parse.
    pub detail: &'static str,
}

impl LabelError {
    /// Upstream's `field.Invalid` for the label.
    pub fn to_field_error(&self) -> FieldError {
        FieldError::invalid(
            format!("metadata.labels[{}]", self.label),
            Value::String(self.value.clone()),
            self.detail,
        )
    }
}

/// Upstream's `PolicyToEvaluate`: the policy the labels ask for, the
/// defaults for modes they leave out, and the labels that did not parse.
/// A level label that does not parse evaluates as `restricted` for enforce
/// and `privileged` for audit and warn (failing open); a bad version as
/// `latest`. An enforce level stricter than the warn level raises warn to it
/// (and its version) unless a warn level label is present.
pub fn policy_to_evaluate(
    labels: Option<&Map<String, Value>>,
    defaults: &Policy,
) -> (Policy, Vec<LabelError>) {
    let mut p = *defaults;
    let mut errs = Vec::new();
    let Some(labels) = labels.filter(|l| !l.is_empty()) else {
        return (p, errs);
    };
    let get = |k: &str| labels.get(k).map(|v| v.as_str().unwrap_or(""));
    let mut record = |label: &'static str, value: &str, err: &'static str| {
        errs.push(LabelError {
            label,
            value: value.to_string(),
            detail: err,
        })
    };
    let mut has_enforce_level = false;
    if let Some(v) = get(ENFORCE_LEVEL_LABEL) {
        match Level::parse(v) {
            Ok(l) => {
                p.enforce.level = l;
                has_enforce_level = true;
            }
            Err(e) => {
                p.enforce.level = Level::Restricted;
                record(ENFORCE_LEVEL_LABEL, v, e);
            }
        }
    }
    if let Some(v) = get(ENFORCE_VERSION_LABEL) {
        p.enforce.version = Version::parse(v).unwrap_or_else(|e| {
            record(ENFORCE_VERSION_LABEL, v, e);
            Version::Latest
        });
    }
    if let Some(v) = get(AUDIT_LEVEL_LABEL) {
        p.audit.level = Level::parse(v).unwrap_or_else(|e| {
            record(AUDIT_LEVEL_LABEL, v, e);
            Level::Privileged
        });
    }
    if let Some(v) = get(AUDIT_VERSION_LABEL) {
        p.audit.version = Version::parse(v).unwrap_or_else(|e| {
            record(AUDIT_VERSION_LABEL, v, e);
            Version::Latest
        });
    }
    let has_warn_level = get(WARN_LEVEL_LABEL).is_some();
    if let Some(v) = get(WARN_LEVEL_LABEL) {
        p.warn.level = Level::parse(v).unwrap_or_else(|e| {
            record(WARN_LEVEL_LABEL, v, e);
            Level::Privileged
        });
    }
    let has_warn_version = get(WARN_VERSION_LABEL).is_some();
    if let Some(v) = get(WARN_VERSION_LABEL) {
        p.warn.version = Version::parse(v).unwrap_or_else(|e| {
            record(WARN_VERSION_LABEL, v, e);
            Version::Latest
        });
    }
    if !has_warn_level && has_enforce_level && p.enforce.level > p.warn.level {
        p.warn.level = p.enforce.level;
        if !has_warn_version {
            p.warn.version = p.enforce.version;
        }
    }
    (p, errs)
}

/// Whether `labels` has any label of the PodSecurity prefix for `mode`
/// (`enforce`, `audit`, `warn`): its level or its version.
pub fn sets_mode(labels: Option<&Map<String, Value>>, mode: &str) -> bool {
    labels.is_some_and(|l| {
        l.contains_key(&format!("{LABEL_PREFIX}{mode}"))
            || l.contains_key(&format!("{LABEL_PREFIX}{mode}-version"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lv(level: Level, version: Version) -> LevelVersion {
        LevelVersion { level, version }
    }

    fn eval(labels: Value) -> (Policy, Vec<LabelError>) {
        policy_to_evaluate(labels.as_object(), &Policy::default())
    }

    #[test]
    fn versions_parse_as_upstream() {
        assert_eq!(Version::parse("latest"), Ok(Version::Latest));
        assert_eq!(Version::parse("v1.0"), Ok(Version::V1(0)));
        assert_eq!(Version::parse("v1.25"), Ok(Version::V1(25)));
        for bad in [
            "",
            "v1",
            "v1.",
            "v1.01",
            "v2.0",
            "1.25",
            "v1.2x",
            "v1.-1",
            "Latest",
            "v1.99999999999999999999",
        ] {
            assert_eq!(
                Version::parse(bad),
                Err("must be \"latest\" or \"v1.x\""),
                "{bad}"
            );
        }
        assert_eq!(
            Version::parse("v1.99999999999"),
            Ok(Version::V1(99999999999))
        );
        assert_eq!(Version::V1(30).to_string(), "v1.30");
        assert_eq!(
            lv(Level::Restricted, Version::Latest).to_string(),
            "restricted:latest"
        );
    }

    #[test]
    fn levels_parse_and_order() {
        assert_eq!(Level::parse("baseline"), Ok(Level::Baseline));
        assert_eq!(
            Level::parse("Baseline"),
            Err("must be one of privileged, baseline, restricted")
        );
        assert!(Level::Restricted > Level::Baseline && Level::Baseline > Level::Privileged);
    }

    #[test]
    fn no_labels_give_the_defaults() {
        let (p, errs) = eval(json!({}));
        assert_eq!(p, Policy::default());
        assert!(errs.is_empty());
        assert!(p.fully_privileged());
        let (p, _) = policy_to_evaluate(None, &Policy::default());
        assert_eq!(p, Policy::default());
    }

    #[test]
    fn enforce_raises_warn_unless_warn_is_set() {
        let (p, errs) = eval(json!({ENFORCE_LEVEL_LABEL: "restricted",
            ENFORCE_VERSION_LABEL: "v1.24"}));
        assert!(errs.is_empty());
        assert_eq!(p.enforce, lv(Level::Restricted, Version::V1(24)));
        assert_eq!(p.warn, lv(Level::Restricted, Version::V1(24)));
        assert_eq!(p.audit, LevelVersion::PRIVILEGED);

        let (p, _) = eval(json!({ENFORCE_LEVEL_LABEL: "baseline", WARN_LEVEL_LABEL: "privileged"}));
        assert_eq!(p.warn, LevelVersion::PRIVILEGED);

        let (p, _) = eval(json!({ENFORCE_LEVEL_LABEL: "baseline", WARN_VERSION_LABEL: "v1.20"}));
        assert_eq!(p.warn, lv(Level::Baseline, Version::V1(20)));

        // A warn level stricter than enforce is kept.
        let (p, _) = eval(json!({ENFORCE_LEVEL_LABEL: "baseline", WARN_LEVEL_LABEL: "restricted"}));
        assert_eq!(p.warn, lv(Level::Restricted, Version::Latest));
    }

    #[test]
    fn bad_labels_fail_closed_for_enforce_and_open_for_audit_and_warn() {
        let (p, errs) = eval(json!({
            ENFORCE_LEVEL_LABEL: "strict", ENFORCE_VERSION_LABEL: "v2",
            AUDIT_LEVEL_LABEL: "x", AUDIT_VERSION_LABEL: "y",
            WARN_LEVEL_LABEL: "z", WARN_VERSION_LABEL: "v1.01",
        }));
        assert_eq!(p.enforce, lv(Level::Restricted, Version::Latest));
        assert_eq!(p.audit, LevelVersion::PRIVILEGED);
        assert_eq!(p.warn, LevelVersion::PRIVILEGED);
        let labels: Vec<&str> = errs.iter().map(|e| e.label).collect();
        assert_eq!(
            labels,
            [
                ENFORCE_LEVEL_LABEL,
                ENFORCE_VERSION_LABEL,
                AUDIT_LEVEL_LABEL,
                AUDIT_VERSION_LABEL,
                WARN_LEVEL_LABEL,
                WARN_VERSION_LABEL
            ]
        );
        assert_eq!(
            errs[0].to_field_error().to_string(),
            "metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"strict\": must be one of privileged, baseline, restricted"
        );
        assert_eq!(
            errs[1].to_field_error().to_string(),
            "metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: \"v2\": must be \"latest\" or \"v1.x\""
        );

        // An invalid enforce level does not raise warn.
        let (p, _) = eval(json!({ENFORCE_LEVEL_LABEL: "bogus"}));
        assert_eq!(p.warn, LevelVersion::PRIVILEGED);
    }

    #[test]
    fn equivalence_and_modes() {
        let a = lv(Level::Privileged, Version::V1(3));
        assert!(a.equivalent(&LevelVersion::PRIVILEGED));
        assert!(
            !lv(Level::Baseline, Version::V1(3)).equivalent(&lv(Level::Baseline, Version::Latest))
        );
        assert!(Policy::default().equivalent(&Policy {
            enforce: a,
            ..Policy::default()
        }));
        let labels = json!({WARN_VERSION_LABEL: "latest"});
        assert!(sets_mode(labels.as_object(), "warn"));
        assert!(!sets_mode(labels.as_object(), "enforce"));
    }
}

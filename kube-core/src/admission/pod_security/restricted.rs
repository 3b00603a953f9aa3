//! The restricted checks of upstream's `policy` package, with upstream's
//! IDs, revisions, overrides of baseline checks and messages:
//! allowPrivilegeEscalation, capabilities, procMount, volume types,
//! runAsNonRoot, runAsUser and seccomp.

use serde_json::Value;

use super::baseline::{
    proc_mount, seccomp_type, valid_seccomp, CAPABILITIES_BASELINE, HOST_PATH_VOLUMES, PROC_MOUNT,
    SECCOMP_BASELINE,
};
use super::evaluator::{Check, CheckFn, VersionedCheck, Violation};
use super::policy::Level;
use super::spec::{
    containers_phrase, field, join_quote, name, pluralize, security_context, sorted_set, strings,
    PodView,
};

/// The restricted checks, in any order (the registry sorts them).
pub static CHECKS: &[Check] = &[
    Check {
        id: "allowPrivilegeEscalation",
        level: Level::Restricted,
        versions: &[
            v(8, allow_privilege_escalation, &[]),
            v(25, allow_privilege_escalation_1_25, &[]),
        ],
    },
    Check {
        id: "capabilities_restricted",
        level: Level::Restricted,
        versions: &[
            v(22, capabilities_restricted, &[CAPABILITIES_BASELINE]),
            v(25, capabilities_restricted_1_25, &[CAPABILITIES_BASELINE]),
        ],
    },
    Check {
        id: "procMount_restricted",
        level: Level::Restricted,
        versions: &[v(35, proc_mount, &[PROC_MOUNT])],
    },
    Check {
        id: "restrictedVolumes",
        level: Level::Restricted,
        versions: &[v(0, restricted_volumes, &[HOST_PATH_VOLUMES])],
    },
    Check {
        id: "runAsNonRoot",
        level: Level::Restricted,
        versions: &[v(0, run_as_non_root, &[]), v(35, run_as_non_root_1_35, &[])],
    },
    Check {
        id: "runAsUser",
        level: Level::Restricted,
        versions: &[v(23, run_as_user, &[]), v(35, run_as_user_1_35, &[])],
    },
    Check {
        id: "seccompProfile_restricted",
        level: Level::Restricted,
        versions: &[
            v(19, seccomp_restricted, &[SECCOMP_BASELINE]),
            v(25, seccomp_restricted_1_25, &[SECCOMP_BASELINE]),
        ],
    },
];

const fn v(min_minor: u64, check: CheckFn, overrides: &'static [&'static str]) -> VersionedCheck {
    VersionedCheck {
        min_minor,
        check,
        overrides,
    }
}

fn allow_privilege_escalation(pod: &PodView<'_>) -> Option<Violation> {
    let bad: Vec<String> = pod
        .containers()
        .filter(|c| {
            security_context(c).and_then(|sc| sc.get("allowPrivilegeEscalation")?.as_bool())
                != Some(false)
        })
        .map(name)
        .collect();
    (!bad.is_empty()).then(|| {
        Violation::new(
            "allowPrivilegeEscalation != false",
            format!(
                "{} must set securityContext.allowPrivilegeEscalation=false",
                containers_phrase(&bad)
            ),
        )
    })
}

/// From v1.25 Windows pods are exempt (the field cannot be set for them).
fn allow_privilege_escalation_1_25(pod: &PodView<'_>) -> Option<Violation> {
    if pod.is_windows() {
        return None;
    }
    allow_privilege_escalation(pod)
}

fn capabilities_restricted(pod: &PodView<'_>) -> Option<Violation> {
    let mut missing_drop_all = Vec::new();
    let mut adding_forbidden = Vec::new();
    let mut forbidden = Vec::new();
    for c in pod.containers() {
        let Some(caps) = security_context(c).and_then(|sc| field(sc, "capabilities")) else {
            missing_drop_all.push(name(c));
            continue;
        };
        if !strings(caps, "drop").any(|d| d == "ALL") {
            missing_drop_all.push(name(c));
        }
        let mut added = false;
        for cap in strings(caps, "add").filter(|a| *a != "NET_BIND_SERVICE") {
            added = true;
            forbidden.push(cap.to_string());
        }
        if added {
            adding_forbidden.push(name(c));
        }
    }
    let mut details = Vec::new();
    if !missing_drop_all.is_empty() {
        details.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            containers_phrase(&missing_drop_all)
        ));
    }
    if !adding_forbidden.is_empty() {
        details.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&adding_forbidden),
            join_quote(&sorted_set(forbidden))
        ));
    }
    (!details.is_empty()).then(|| Violation::new("unrestricted capabilities", details.join("; ")))
}

fn capabilities_restricted_1_25(pod: &PodView<'_>) -> Option<Violation> {
    if pod.is_windows() {
        return None;
    }
    capabilities_restricted(pod)
}

const ALLOWED_VOLUME_SOURCES: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// The restricted sources, in the order upstream names the first one set.
const RESTRICTED_VOLUME_SOURCES: &[&str] = &[
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
];

fn restricted_volumes(pod: &PodView<'_>) -> Option<Violation> {
    let mut bad_volumes = Vec::new();
    let mut bad_types = Vec::new();
    for vol in pod.volumes() {
        if ALLOWED_VOLUME_SOURCES
            .iter()
            .any(|k| field(vol, k).is_some())
        {
            continue;
        }
        bad_volumes.push(name(vol));
        let kind = RESTRICTED_VOLUME_SOURCES
            .iter()
            .find(|k| field(vol, k).is_some())
            .copied()
            .unwrap_or("unknown");
        bad_types.push(kind.to_string());
    }
    if bad_volumes.is_empty() {
        return None;
    }
    let bad_types = sorted_set(bad_types);
    Some(Violation::new(
        "restricted volume types",
        format!(
            "{} {} {} {} {}",
            pluralize("volume", "volumes", bad_volumes.len()),
            join_quote(&bad_volumes),
            pluralize("uses", "use", bad_volumes.len()),
            pluralize(
                "restricted volume type",
                "restricted volume types",
                bad_types.len()
            ),
            join_quote(&bad_types)
        ),
    ))
}

fn bool_of(sc: Option<&Value>, key: &str) -> Option<bool> {
    sc.and_then(|sc| sc.get(key)?.as_bool())
}

fn run_as_non_root(pod: &PodView<'_>) -> Option<Violation> {
    let pod_setting = bool_of(pod.security_context(), "runAsNonRoot");
    let pod_bad = pod_setting == Some(false);
    let pod_non_root = pod_setting == Some(true);
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for c in pod.containers() {
        match bool_of(security_context(c), "runAsNonRoot") {
            Some(false) => explicit.push(name(c)),
            Some(true) => {}
            None if !pod_non_root => implicit.push(name(c)),
            None => {}
        }
    }
    let mut who = Vec::new();
    if pod_bad {
        who.push("pod".to_string());
    }
    if !explicit.is_empty() {
        who.push(containers_phrase(&explicit));
    }
    if !who.is_empty() {
        return Some(Violation::new(
            "runAsNonRoot != true",
            format!(
                "{} must not set securityContext.runAsNonRoot=false",
                who.join(" and ")
            ),
        ));
    }
    (!implicit.is_empty()).then(|| {
        Violation::new(
            "runAsNonRoot != true",
            format!(
                "pod or {} must set securityContext.runAsNonRoot=true",
                containers_phrase(&implicit)
            ),
        )
    })
}

/// From v1.35 a pod in a user namespace may run as root.
fn run_as_non_root_1_35(pod: &PodView<'_>) -> Option<Violation> {
    if pod.in_user_namespace() {
        return None;
    }
    run_as_non_root(pod)
}

fn runs_as_root(sc: Option<&Value>) -> bool {
    sc.and_then(|sc| sc.get("runAsUser")?.as_i64()) == Some(0)
}

fn run_as_user(pod: &PodView<'_>) -> Option<Violation> {
    let mut who = Vec::new();
    if runs_as_root(pod.security_context()) {
        who.push("pod".to_string());
    }
    let bad: Vec<String> = pod
        .containers()
        .filter(|c| runs_as_root(security_context(c)))
        .map(name)
        .collect();
    if !bad.is_empty() {
        who.push(containers_phrase(&bad));
    }
    (!who.is_empty()).then(|| {
        Violation::new(
            "runAsUser=0",
            format!("{} must not set runAsUser=0", who.join(" and ")),
        )
    })
}

fn run_as_user_1_35(pod: &PodView<'_>) -> Option<Violation> {
    if pod.in_user_namespace() {
        return None;
    }
    run_as_user(pod)
}

fn seccomp_restricted(pod: &PodView<'_>) -> Option<Violation> {
    let mut values = Vec::new();
    let mut who = Vec::new();
    let pod_type = seccomp_type(pod.security_context());
    let pod_set = pod_type.is_some_and(valid_seccomp);
    if let Some(t) = pod_type.filter(|t| !valid_seccomp(t)) {
        who.push("pod".to_string());
        values.push(t.to_string());
    }
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for c in pod.containers() {
        match seccomp_type(security_context(c)) {
            Some(t) if !valid_seccomp(t) => {
                explicit.push(name(c));
                values.push(t.to_string());
            }
            Some(_) => {}
            None if !pod_set => implicit.push(name(c)),
            None => {}
        }
    }
    if !explicit.is_empty() {
        who.push(containers_phrase(&explicit));
    }
    if !who.is_empty() {
        return Some(Violation::new(
            "seccompProfile",
            format!(
                "{} must not set securityContext.seccompProfile.type to {}",
                who.join(" and "),
                join_quote(&sorted_set(values))
            ),
        ));
    }
    (!implicit.is_empty()).then(|| {
        Violation::new(
            "seccompProfile",
            format!(
                "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
                containers_phrase(&implicit)
            ),
        )
    })
}

fn seccomp_restricted_1_25(pod: &PodView<'_>) -> Option<Violation> {
    if pod.is_windows() {
        return None;
    }
    seccomp_restricted(pod)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(f: CheckFn, pod: Value) -> Option<(String, String)> {
        f(&PodView::of_pod(&pod)).map(|v| (v.reason, v.detail))
    }

    fn forbidden(f: CheckFn, pod: Value) -> String {
        let (_, detail) = check(f, pod).expect("forbidden");
        detail
    }

    fn containers(list: Value) -> Value {
        json!({"spec": {"containers": list}})
    }

    #[test]
    fn allow_privilege_escalation_must_be_false() {
        let pod = containers(json!([
            {"name": "a"},
            {"name": "b", "securityContext": {"allowPrivilegeEscalation": null}},
            {"name": "c", "securityContext": {"allowPrivilegeEscalation": true}},
            {"name": "d", "securityContext": {"allowPrivilegeEscalation": false}},
        ]));
        assert_eq!(
            check(allow_privilege_escalation, pod),
            Some((
                "allowPrivilegeEscalation != false".into(),
                "containers \"a\", \"b\", \"c\" must set securityContext.allowPrivilegeEscalation=false".into()
            ))
        );
        let windows = json!({"spec": {"os": {"name": "windows"}, "containers": [{"name": "a"}]}});
        assert!(check(allow_privilege_escalation_1_25, windows.clone()).is_none());
        assert!(check(allow_privilege_escalation, windows).is_some());
        let linux = json!({"spec": {"os": {"name": "linux"}, "containers": [{"name": "a"}]}});
        assert_eq!(
            forbidden(allow_privilege_escalation_1_25, linux),
            "container \"a\" must set securityContext.allowPrivilegeEscalation=false"
        );
    }

    #[test]
    fn capabilities_must_drop_all_and_add_only_net_bind_service() {
        let pod = containers(json!([
            {"name": "a"},
            {"name": "b", "securityContext": {"capabilities": {}}},
            {"name": "c", "securityContext": {"capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}},
            {"name": "d", "securityContext": {"capabilities": {"drop": ["ALL"], "add": ["SYS_TIME", "CHOWN"]}}},
            {"name": "e", "securityContext": {"capabilities": {"drop": ["NET_RAW"], "add": ["CHOWN"]}}},
        ]));
        assert_eq!(
            check(capabilities_restricted, pod),
            Some((
                "unrestricted capabilities".into(),
                "containers \"a\", \"b\", \"e\" must set securityContext.capabilities.drop=[\"ALL\"]; \
                 containers \"d\", \"e\" must not include \"CHOWN\", \"SYS_TIME\" in securityContext.capabilities.add".into()
            ))
        );
        let windows = json!({"spec": {"os": {"name": "windows"}, "containers": [{"name": "a"}]}});
        assert!(check(capabilities_restricted_1_25, windows).is_none());
    }

    #[test]
    fn only_the_allowed_volume_types() {
        let pod = json!({"spec": {"volumes": [
            {"name": "ok1", "configMap": {}}, {"name": "ok2", "emptyDir": {}},
            {"name": "ok3", "projected": {}}, {"name": "ok4", "secret": {}},
            {"name": "ok5", "csi": {}}, {"name": "ok6", "persistentVolumeClaim": {}},
            {"name": "ok7", "ephemeral": {}}, {"name": "ok8", "image": {}},
            {"name": "ok9", "downwardAPI": {}},
            {"name": "h", "hostPath": {"path": "/"}}, {"name": "n", "nfs": {}},
            {"name": "h2", "hostPath": {"path": "/x"}}, {"name": "u"},
            {"name": "g", "gitRepo": {}, "emptyDir": null},
        ]}});
        assert_eq!(
            check(restricted_volumes, pod),
            Some((
                "restricted volume types".into(),
                "volumes \"h\", \"n\", \"h2\", \"u\", \"g\" use restricted volume types \"gitRepo\", \"hostPath\", \"nfs\", \"unknown\"".into()
            ))
        );
        let one = json!({"spec": {"volumes": [{"name": "a", "rbd": {}}]}});
        assert_eq!(
            forbidden(restricted_volumes, one),
            "volume \"a\" uses restricted volume type \"rbd\""
        );
    }

    #[test]
    fn run_as_non_root_explicit_then_implicit() {
        let pod = json!({"spec": {"securityContext": {"runAsNonRoot": false}, "containers": [
            {"name": "a"},
            {"name": "b", "securityContext": {"runAsNonRoot": false}},
            {"name": "c", "securityContext": {"runAsNonRoot": true}},
        ]}});
        assert_eq!(
            check(run_as_non_root, pod),
            Some((
                "runAsNonRoot != true".into(),
                "pod and container \"b\" must not set securityContext.runAsNonRoot=false".into()
            ))
        );
        let implicit = containers(json!([{"name": "a"}, {"name": "b"},
            {"name": "c", "securityContext": {"runAsNonRoot": true}}]));
        assert_eq!(
            forbidden(run_as_non_root, implicit),
            "pod or containers \"a\", \"b\" must set securityContext.runAsNonRoot=true"
        );
        let pod_level = json!({"spec": {"securityContext": {"runAsNonRoot": true},
            "containers": [{"name": "a"}]}});
        assert!(check(run_as_non_root, pod_level).is_none());
        let userns = json!({"spec": {"hostUsers": false, "containers": [{"name": "a"}]}});
        assert!(check(run_as_non_root_1_35, userns.clone()).is_none());
        assert!(check(run_as_non_root, userns).is_some());
    }

    #[test]
    fn run_as_user_must_not_be_root() {
        let pod = json!({"spec": {"securityContext": {"runAsUser": 0}, "initContainers": [
            {"name": "i", "securityContext": {"runAsUser": 0}}], "containers": [
            {"name": "a", "securityContext": {"runAsUser": 1000}},
            {"name": "b", "securityContext": {"runAsUser": 0}},
        ]}});
        assert_eq!(
            check(run_as_user, pod),
            Some((
                "runAsUser=0".into(),
                "pod and containers \"i\", \"b\" must not set runAsUser=0".into()
            ))
        );
        let only_pod =
            json!({"spec": {"securityContext": {"runAsUser": 0}, "containers": [{"name": "a"}]}});
        assert_eq!(
            forbidden(run_as_user, only_pod),
            "pod must not set runAsUser=0"
        );
        let userns = json!({"spec": {"hostUsers": false, "securityContext": {"runAsUser": 0}}});
        assert!(check(run_as_user_1_35, userns).is_none());
    }

    #[test]
    fn seccomp_must_be_runtime_default_or_localhost() {
        let pod = json!({"spec": {"securityContext": {"seccompProfile": {"type": "Unconfined"}},
        "containers": [
            {"name": "a"},
            {"name": "b", "securityContext": {"seccompProfile": {"type": "Unconfined"}}},
            {"name": "c", "securityContext": {"seccompProfile": {"type": "Localhost"}}},
        ]}});
        assert_eq!(
            check(seccomp_restricted, pod),
            Some((
                "seccompProfile".into(),
                "pod and container \"b\" must not set securityContext.seccompProfile.type to \"Unconfined\"".into()
            ))
        );
        let implicit = containers(json!([{"name": "a"},
            {"name": "b", "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}]));
        assert_eq!(
            forbidden(seccomp_restricted, implicit),
            "pod or container \"a\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\""
        );
        let pod_level = json!({"spec": {"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "a"}]}});
        assert!(check(seccomp_restricted, pod_level).is_none());
        let windows = json!({"spec": {"os": {"name": "windows"}, "containers": [{"name": "a"}]}});
        assert!(check(seccomp_restricted_1_25, windows).is_none());
    }

    #[test]
    fn proc_mount_restricted_ignores_user_namespaces() {
        let pod = json!({"spec": {"hostUsers": false, "containers": [
            {"name": "a", "securityContext": {"procMount": "Unmasked"}}]}});
        assert_eq!(
            check(proc_mount, pod),
            Some((
                "procMount".into(),
                "container \"a\" must not set securityContext.procMount to \"Unmasked\"".into()
            ))
        );
    }
}

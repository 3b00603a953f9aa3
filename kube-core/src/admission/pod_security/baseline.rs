//! The baseline checks of upstream's `policy` package, with upstream's IDs,
//! revisions and messages: AppArmor, capabilities, host namespaces,
//! hostPath volumes, host ports, probe and lifecycle hosts, privileged,
//! procMount, SELinux, seccomp, sysctls and Windows HostProcess.

use apiserver::apimachinery::validation::go_quote;

use super::evaluator::{Check, CheckFn, VersionedCheck, Violation};
use super::policy::Level;
use super::spec::{
    containers_phrase, field, join_quote, name, pluralize, security_context, sorted_set, str_field,
    strings, PodView,
};

/// The baseline checks, in any order (the registry sorts them).
pub static CHECKS: &[Check] = &[
    Check {
        id: "appArmorProfile",
        level: Level::Baseline,
        versions: &[v(0, app_armor_profile)],
    },
    Check {
        id: CAPABILITIES_BASELINE,
        level: Level::Baseline,
        versions: &[v(0, capabilities_baseline)],
    },
    Check {
        id: "hostNamespaces",
        level: Level::Baseline,
        versions: &[v(0, host_namespaces)],
    },
    Check {
        id: HOST_PATH_VOLUMES,
        level: Level::Baseline,
        versions: &[v(0, host_path_volumes)],
    },
    Check {
        id: "hostPorts",
        level: Level::Baseline,
        versions: &[v(0, host_ports)],
    },
    Check {
        id: "hostProbesAndHostLifecycle",
        level: Level::Baseline,
        versions: &[v(34, host_probes_and_lifecycle)],
    },
    Check {
        id: "privileged",
        level: Level::Baseline,
        versions: &[v(0, privileged)],
    },
    Check {
        id: PROC_MOUNT,
        level: Level::Baseline,
        versions: &[v(0, proc_mount), v(35, proc_mount_1_35)],
    },
    Check {
        id: "seLinuxOptions",
        level: Level::Baseline,
        versions: &[v(0, se_linux_options_1_0), v(31, se_linux_options_1_31)],
    },
    Check {
        id: SECCOMP_BASELINE,
        level: Level::Baseline,
        versions: &[v(0, seccomp_annotations), v(19, seccomp_baseline)],
    },
    Check {
        id: "sysctls",
        level: Level::Baseline,
        versions: &[
            v(0, sysctls_1_0),
            v(27, sysctls_1_27),
            v(29, sysctls_1_29),
            v(32, sysctls_1_32),
        ],
    },
    Check {
        id: "windowsHostProcess",
        level: Level::Baseline,
        versions: &[v(0, windows_host_process)],
    },
];

/// The ID of the baseline capabilities check (restricted overrides it).
pub const CAPABILITIES_BASELINE: &str = "capabilities_baseline";
/// The ID of the hostPath volumes check (restricted volumes override it).
pub const HOST_PATH_VOLUMES: &str = "hostPathVolumes";
/// The ID of the baseline procMount check (restricted overrides it).
pub const PROC_MOUNT: &str = "procMount";
/// The ID of the baseline seccomp check (restricted overrides it).
pub const SECCOMP_BASELINE: &str = "seccompProfile_baseline";

const fn v(min_minor: u64, check: CheckFn) -> VersionedCheck {
    VersionedCheck {
        min_minor,
        check,
        overrides: &[],
    }
}

const APPARMOR_ANNOTATION_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";
const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_ANNOTATION_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";

/// `pod`, `containers "a", "b"`, `annotations` joined by ` and `.
fn setters(pod: bool, containers: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    if pod {
        out.push("pod".to_string());
    }
    if !containers.is_empty() {
        out.push(containers_phrase(containers));
    }
    out
}

fn app_armor_profile(pod: &PodView<'_>) -> Option<Violation> {
    let allowed = |t: &str| matches!(t, "RuntimeDefault" | "Localhost");
    let profile_type = |sc: Option<&serde_json::Value>| -> Option<String> {
        let p = field(sc?, "appArmorProfile")?;
        let t = str_field(p, "type");
        (!allowed(t)).then(|| t.to_string())
    };
    let mut bad_values = Vec::new();
    let pod_bad = profile_type(pod.security_context());
    let pod_set = pod_bad.is_some();
    bad_values.extend(pod_bad);
    let mut bad_containers = Vec::new();
    for c in pod.containers() {
        if let Some(t) = profile_type(security_context(c)) {
            bad_containers.push(name(c));
            bad_values.push(t);
        }
    }
    let mut who = setters(pod_set, &bad_containers);
    let mut forbidden_annotations: Vec<String> = pod
        .annotations()
        .filter(|(k, v)| {
            k.starts_with(APPARMOR_ANNOTATION_PREFIX)
                && !(v.is_empty() || *v == "runtime/default" || v.starts_with("localhost/"))
        })
        .map(|(k, v)| format!("{k}={}", go_quote(v)))
        .collect();
    let mut values = sorted_set(bad_values);
    if !forbidden_annotations.is_empty() {
        forbidden_annotations.sort();
        who.push(pluralize("annotation", "annotations", forbidden_annotations.len()).to_string());
        values.extend(forbidden_annotations);
    }
    if who.is_empty() {
        return None;
    }
    Some(Violation::new(
        pluralize(
            "forbidden AppArmor profile",
            "forbidden AppArmor profiles",
            values.len(),
        ),
        format!(
            "{} must not set AppArmor profile type to {}",
            who.join(" and "),
            join_quote(&values)
        ),
    ))
}

const DEFAULT_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

fn capabilities_baseline(pod: &PodView<'_>) -> Option<Violation> {
    let mut bad_containers = Vec::new();
    let mut bad = Vec::new();
    for c in pod.containers() {
        let Some(caps) = security_context(c).and_then(|sc| field(sc, "capabilities")) else {
            continue;
        };
        let mut valid = true;
        for cap in strings(caps, "add") {
            if !DEFAULT_CAPABILITIES.contains(&cap) {
                valid = false;
                bad.push(cap.to_string());
            }
        }
        if !valid {
            bad_containers.push(name(c));
        }
    }
    if bad_containers.is_empty() {
        return None;
    }
    Some(Violation::new(
        "non-default capabilities",
        format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&bad_containers),
            join_quote(&sorted_set(bad))
        ),
    ))
}

fn host_namespaces(pod: &PodView<'_>) -> Option<Violation> {
    let set: Vec<&str> = [
        ("hostNetwork", "hostNetwork=true"),
        ("hostPID", "hostPID=true"),
        ("hostIPC", "hostIPC=true"),
    ]
    .into_iter()
    .filter(|(k, _)| pod.spec_flag(k))
    .map(|(_, s)| s)
    .collect();
    (!set.is_empty()).then(|| Violation::new("host namespaces", set.join(", ")))
}

fn host_path_volumes(pod: &PodView<'_>) -> Option<Violation> {
    let bad: Vec<String> = pod
        .volumes()
        .filter(|v| field(v, "hostPath").is_some())
        .map(name)
        .collect();
    (!bad.is_empty()).then(|| {
        Violation::new(
            "hostPath volumes",
            format!(
                "{} {}",
                pluralize("volume", "volumes", bad.len()),
                join_quote(&bad)
            ),
        )
    })
}

fn host_ports(pod: &PodView<'_>) -> Option<Violation> {
    let mut bad_containers = Vec::new();
    let mut ports = Vec::new();
    for c in pod.containers() {
        let mut valid = true;
        for p in c
            .get("ports")
            .and_then(|p| p.as_array())
            .into_iter()
            .flatten()
        {
            let port = p.get("hostPort").and_then(|h| h.as_i64()).unwrap_or(0);
            if port != 0 {
                valid = false;
                ports.push(port.to_string());
            }
        }
        if !valid {
            bad_containers.push(name(c));
        }
    }
    if bad_containers.is_empty() {
        return None;
    }
    let ports = sorted_set(ports);
    Some(Violation::new(
        "hostPort",
        format!(
            "{} {} {} {}",
            containers_phrase(&bad_containers),
            pluralize("uses", "use", bad_containers.len()),
            pluralize("hostPort", "hostPorts", ports.len()),
            ports.join(", ")
        ),
    ))
}

/// The `host` of a handler's `httpGet` and `tcpSocket`, when set.
fn handler_hosts(handler: Option<&serde_json::Value>) -> Vec<String> {
    let Some(h) = handler.filter(|h| !h.is_null()) else {
        return Vec::new();
    };
    ["httpGet", "tcpSocket"]
        .into_iter()
        .filter_map(|k| field(h, k))
        .map(|a| str_field(a, "host"))
        .filter(|host| !host.is_empty())
        .map(str::to_string)
        .collect()
}

fn host_probes_and_lifecycle(pod: &PodView<'_>) -> Option<Violation> {
    let mut bad_containers = Vec::new();
    let mut hosts = Vec::new();
    for c in pod.containers() {
        let lifecycle = field(c, "lifecycle");
        let handlers = [
            c.get("livenessProbe"),
            c.get("readinessProbe"),
            c.get("startupProbe"),
            lifecycle.and_then(|l| l.get("postStart")),
            lifecycle.and_then(|l| l.get("preStop")),
        ];
        for h in handlers {
            let bad = handler_hosts(h);
            if !bad.is_empty() {
                bad_containers.push(name(c));
                hosts.extend(bad);
            }
        }
    }
    if bad_containers.is_empty() {
        return None;
    }
    let (bad_containers, hosts) = (sorted_set(bad_containers), sorted_set(hosts));
    Some(Violation::new(
        "probe or lifecycle host",
        format!(
            "{} {} {} {}",
            containers_phrase(&bad_containers),
            pluralize("uses", "use", bad_containers.len()),
            pluralize(
                "probe or lifecycle host",
                "probe or lifecycle hosts",
                hosts.len()
            ),
            join_quote(&hosts)
        ),
    ))
}

fn privileged(pod: &PodView<'_>) -> Option<Violation> {
    let bad: Vec<String> = pod
        .containers()
        .filter(|c| {
            security_context(c).and_then(|sc| sc.get("privileged")?.as_bool()) == Some(true)
        })
        .map(name)
        .collect();
    (!bad.is_empty()).then(|| {
        Violation::new(
            "privileged",
            format!(
                "{} must not set securityContext.privileged=true",
                containers_phrase(&bad)
            ),
        )
    })
}

/// procMount must be unset or `Default` (also restricted's check).
pub fn proc_mount(pod: &PodView<'_>) -> Option<Violation> {
    let mut bad_containers = Vec::new();
    let mut types = Vec::new();
    for c in pod.containers() {
        let Some(t) = security_context(c).and_then(|sc| field(sc, "procMount")) else {
            continue;
        };
        let t = t.as_str().unwrap_or("");
        if t != "Default" {
            bad_containers.push(name(c));
            types.push(t.to_string());
        }
    }
    (!bad_containers.is_empty()).then(|| {
        Violation::new(
            "procMount",
            format!(
                "{} must not set securityContext.procMount to {}",
                containers_phrase(&bad_containers),
                join_quote(&sorted_set(types))
            ),
        )
    })
}

/// From v1.35 any procMount is allowed in a user namespace.
fn proc_mount_1_35(pod: &PodView<'_>) -> Option<Violation> {
    if pod.in_user_namespace() {
        return None;
    }
    proc_mount(pod)
}

const SELINUX_TYPES_1_0: &[&str] = &["", "container_t", "container_init_t", "container_kvm_t"];
const SELINUX_TYPES_1_31: &[&str] = &[
    "",
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
];

fn se_linux_options_1_0(pod: &PodView<'_>) -> Option<Violation> {
    se_linux_options(pod, SELINUX_TYPES_1_0)
}

fn se_linux_options_1_31(pod: &PodView<'_>) -> Option<Violation> {
    se_linux_options(pod, SELINUX_TYPES_1_31)
}

fn se_linux_options(pod: &PodView<'_>, allowed_types: &[&str]) -> Option<Violation> {
    let mut bad_types = Vec::new();
    let (mut set_user, mut set_role) = (false, false);
    let mut valid = |sc: Option<&serde_json::Value>| -> bool {
        let Some(opts) = sc.and_then(|sc| field(sc, "seLinuxOptions")) else {
            return true;
        };
        let mut ok = true;
        let t = str_field(opts, "type");
        if !allowed_types.contains(&t) {
            ok = false;
            bad_types.push(t.to_string());
        }
        if !str_field(opts, "user").is_empty() {
            ok = false;
            set_user = true;
        }
        if !str_field(opts, "role").is_empty() {
            ok = false;
            set_role = true;
        }
        ok
    };
    let pod_bad = !valid(pod.security_context());
    let bad_containers: Vec<String> = pod
        .containers()
        .filter(|c| !valid(security_context(c)))
        .map(name)
        .collect();
    let who = setters(pod_bad, &bad_containers);
    if who.is_empty() {
        return None;
    }
    let bad_types = sorted_set(bad_types);
    let mut data = Vec::new();
    if !bad_types.is_empty() {
        data.push(format!(
            "{} {}",
            pluralize("type", "types", bad_types.len()),
            join_quote(&bad_types)
        ));
    }
    if set_user {
        data.push("user may not be set".to_string());
    }
    if set_role {
        data.push("role may not be set".to_string());
    }
    Some(Violation::new(
        "seLinuxOptions",
        format!(
            "{} set forbidden securityContext.seLinuxOptions: {}",
            who.join(" and "),
            data.join("; ")
        ),
    ))
}

fn valid_seccomp_annotation(v: &str) -> bool {
    v == "runtime/default" || v == "docker/default" || v.starts_with("localhost/")
}

/// Before v1.19: the seccomp annotations.
fn seccomp_annotations(pod: &PodView<'_>) -> Option<Violation> {
    let mut forbidden = Vec::new();
    if let Some(v) = pod.annotation(SECCOMP_POD_ANNOTATION) {
        if !valid_seccomp_annotation(v) {
            forbidden.push(format!("{SECCOMP_POD_ANNOTATION}={}", go_quote(v)));
        }
    }
    for c in pod.containers() {
        let key = format!("{SECCOMP_CONTAINER_ANNOTATION_PREFIX}{}", name(c));
        if let Some(v) = pod.annotation(&key) {
            if !valid_seccomp_annotation(v) {
                forbidden.push(format!("{key}={}", go_quote(v)));
            }
        }
    }
    let forbidden = sorted_set(forbidden);
    (!forbidden.is_empty()).then(|| {
        Violation::new(
            "seccompProfile",
            format!(
                "forbidden {} {}",
                pluralize("annotation", "annotations", forbidden.len()),
                forbidden.join(", ")
            ),
        )
    })
}

/// Whether a seccomp profile type is `RuntimeDefault` or `Localhost`.
pub fn valid_seccomp(t: &str) -> bool {
    matches!(t, "RuntimeDefault" | "Localhost")
}

/// The seccomp profile type of a security context, when a profile is set.
pub fn seccomp_type(sc: Option<&serde_json::Value>) -> Option<&str> {
    let p = field(sc?, "seccompProfile")?;
    Some(str_field(p, "type"))
}

fn seccomp_baseline(pod: &PodView<'_>) -> Option<Violation> {
    let mut values = Vec::new();
    let pod_type = seccomp_type(pod.security_context()).filter(|t| !valid_seccomp(t));
    let pod_bad = pod_type.is_some();
    values.extend(pod_type.map(str::to_string));
    let mut bad_containers = Vec::new();
    for c in pod.containers() {
        if let Some(t) = seccomp_type(security_context(c)).filter(|t| !valid_seccomp(t)) {
            bad_containers.push(name(c));
            values.push(t.to_string());
        }
    }
    let who = setters(pod_bad, &bad_containers);
    (!who.is_empty()).then(|| {
        Violation::new(
            "seccompProfile",
            format!(
                "{} must not set securityContext.seccompProfile.type to {}",
                who.join(" and "),
                join_quote(&sorted_set(values))
            ),
        )
    })
}

const SYSCTLS_1_0: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
];
const SYSCTLS_1_27: &[&str] = &["net.ipv4.ip_local_reserved_ports"];
const SYSCTLS_1_29: &[&str] = &[
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];
const SYSCTLS_1_32: &[&str] = &["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"];

fn sysctls_1_0(pod: &PodView<'_>) -> Option<Violation> {
    sysctls(pod, &[SYSCTLS_1_0])
}

fn sysctls_1_27(pod: &PodView<'_>) -> Option<Violation> {
    sysctls(pod, &[SYSCTLS_1_0, SYSCTLS_1_27])
}

fn sysctls_1_29(pod: &PodView<'_>) -> Option<Violation> {
    sysctls(pod, &[SYSCTLS_1_0, SYSCTLS_1_27, SYSCTLS_1_29])
}

fn sysctls_1_32(pod: &PodView<'_>) -> Option<Violation> {
    sysctls(
        pod,
        &[SYSCTLS_1_0, SYSCTLS_1_27, SYSCTLS_1_29, SYSCTLS_1_32],
    )
}

fn sysctls(pod: &PodView<'_>, allowed: &[&[&str]]) -> Option<Violation> {
    let forbidden: Vec<&str> = pod
        .security_context()
        .and_then(|sc| sc.get("sysctls"))
        .and_then(|s| s.as_array())
        .into_iter()
        .flatten()
        .map(|s| str_field(s, "name"))
        .filter(|n| !allowed.iter().any(|set| set.contains(n)))
        .collect();
    (!forbidden.is_empty()).then(|| Violation::new("forbidden sysctls", forbidden.join(", ")))
}

fn windows_host_process(pod: &PodView<'_>) -> Option<Violation> {
    let host_process = |sc: Option<&serde_json::Value>| {
        sc.and_then(|sc| sc.pointer("/windowsOptions/hostProcess"))
            .and_then(|h| h.as_bool())
            == Some(true)
    };
    let bad_containers: Vec<String> = pod
        .containers()
        .filter(|c| host_process(security_context(c)))
        .map(name)
        .collect();
    let who = setters(host_process(pod.security_context()), &bad_containers);
    (!who.is_empty()).then(|| {
        Violation::new(
            "hostProcess",
            format!(
                "{} must not set securityContext.windowsOptions.hostProcess=true",
                who.join(" and ")
            ),
        )
    })
}

#[cfg(test)]
#[path = "baseline_tests.rs"]
mod tests;

//! Tests of the baseline checks: every check, its messages (singular and
//! plural forms) and its version differences.

use super::*;
use serde_json::{json, Value};

fn check(f: CheckFn, pod: Value) -> Option<(String, String)> {
    f(&PodView::of_pod(&pod)).map(|v| (v.reason, v.detail))
}

fn detail(f: CheckFn, pod: Value) -> String {
    check(f, pod).expect("forbidden").1
}

fn with_containers(list: Value) -> Value {
    json!({"spec": {"containers": list}})
}

#[test]
fn app_armor_fields_and_annotations() {
    let allowed = json!({"metadata": {"annotations": {
            "container.apparmor.security.beta.kubernetes.io/a": "runtime/default",
            "container.apparmor.security.beta.kubernetes.io/b": "localhost/x",
            "container.apparmor.security.beta.kubernetes.io/c": "",
            "env": "prod"}},
        "spec": {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "a", "securityContext": {"appArmorProfile": {"type": "Localhost"}}}]}});
    assert!(check(app_armor_profile, allowed).is_none());

    let pod = json!({"spec": {"securityContext": {"appArmorProfile": {"type": "Unconfined"}}}});
    assert_eq!(
        check(app_armor_profile, pod),
        Some((
            "forbidden AppArmor profile".into(),
            "pod must not set AppArmor profile type to \"Unconfined\"".into()
        ))
    );
    let init = json!({"spec": {"containers": [{"name": "foo"}], "initContainers": [
        {"name": "bar", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}]}});
    assert_eq!(
        detail(app_armor_profile, init),
        "container \"bar\" must not set AppArmor profile type to \"Unconfined\""
    );
    let annotations = json!({"metadata": {"annotations": {
        "container.apparmor.security.beta.kubernetes.io/": "bogus",
        "container.apparmor.security.beta.kubernetes.io/a": "",
        "container.apparmor.security.beta.kubernetes.io/b": "runtime/default",
        "container.apparmor.security.beta.kubernetes.io/c": "localhost/",
        "container.apparmor.security.beta.kubernetes.io/d": "localhost/foo",
        "container.apparmor.security.beta.kubernetes.io/e": "unconfined",
        "container.apparmor.security.beta.kubernetes.io/f": "unknown",
    }}});
    assert_eq!(
        check(app_armor_profile, annotations),
        Some((
            "forbidden AppArmor profiles".into(),
            "annotations must not set AppArmor profile type to \
             \"container.apparmor.security.beta.kubernetes.io/=\"bogus\"\", \
             \"container.apparmor.security.beta.kubernetes.io/e=\"unconfined\"\", \
             \"container.apparmor.security.beta.kubernetes.io/f=\"unknown\"\""
                .into()
        ))
    );
    let both = json!({"metadata": {"annotations": {
            "container.apparmor.security.beta.kubernetes.io/a": "unconfined"}},
        "spec": {"securityContext": {"appArmorProfile": {"type": "Unconfined"}},
            "containers": [{"name": "a", "securityContext": {"appArmorProfile": {"type": "Bogus"}}}]}});
    assert_eq!(
        detail(app_armor_profile, both),
        "pod and container \"a\" and annotation must not set AppArmor profile type to \
         \"Bogus\", \"Unconfined\", \"container.apparmor.security.beta.kubernetes.io/a=\"unconfined\"\""
    );
}

#[test]
fn capabilities_beyond_the_default_set() {
    let pod = with_containers(json!([
        {"name": "a", "securityContext": {"capabilities": {"add": ["CHOWN", "NET_BIND_SERVICE"]}}},
        {"name": "b", "securityContext": {"capabilities": {"add": ["NET_RAW", "CHOWN"]}}},
        {"name": "c", "securityContext": {"capabilities": {"add": ["SYS_ADMIN", "NET_RAW"]}}},
        {"name": "d"},
    ]));
    assert_eq!(
        check(capabilities_baseline, pod),
        Some((
            "non-default capabilities".into(),
            "containers \"b\", \"c\" must not include \"NET_RAW\", \"SYS_ADMIN\" in securityContext.capabilities.add".into()
        ))
    );
}

#[test]
fn host_namespaces_in_upstreams_order() {
    let pod = json!({"spec": {"hostIPC": true, "hostPID": true, "hostNetwork": true}});
    assert_eq!(
        check(host_namespaces, pod),
        Some((
            "host namespaces".into(),
            "hostNetwork=true, hostPID=true, hostIPC=true".into()
        ))
    );
    assert!(check(host_namespaces, json!({"spec": {"hostNetwork": false}})).is_none());
}

#[test]
fn host_path_volumes() {
    let pod = json!({"spec": {"volumes": [
        {"name": "a", "hostPath": {}}, {"name": "b", "hostPath": {"path": "/"}},
        {"name": "c", "emptyDir": {}}]}});
    assert_eq!(
        check(super::host_path_volumes, pod),
        Some(("hostPath volumes".into(), "volumes \"a\", \"b\"".into()))
    );
}

#[test]
fn host_ports() {
    let one = with_containers(json!([
        {"name": "a", "ports": [{"hostPort": 0}]},
        {"name": "b", "ports": [{"hostPort": 0}, {"hostPort": 20}]},
    ]));
    assert_eq!(
        check(super::host_ports, one),
        Some(("hostPort".into(), "container \"b\" uses hostPort 20".into()))
    );
    let many = with_containers(json!([
        {"name": "a", "ports": [{"containerPort": 80}]},
        {"name": "b", "ports": [{"hostPort": 10}, {"hostPort": 20}]},
        {"name": "c", "ports": [{"hostPort": 10}, {"hostPort": 30}]},
    ]));
    assert_eq!(
        detail(super::host_ports, many),
        "containers \"b\", \"c\" use hostPorts 10, 20, 30"
    );
}

#[test]
fn probe_and_lifecycle_hosts() {
    let pod = with_containers(json!([
        {"name": "b", "livenessProbe": {"httpGet": {"host": "example.com", "port": 80}},
            "lifecycle": {"preStop": {"tcpSocket": {"host": "a.example", "port": 1}}}},
        {"name": "a", "startupProbe": {"tcpSocket": {"host": "example.com", "port": 80}}},
        {"name": "c", "readinessProbe": {"httpGet": {"host": "", "port": 80}},
            "lifecycle": {"postStart": {"httpGet": {"port": 80}}}},
    ]));
    assert_eq!(
        check(host_probes_and_lifecycle, pod),
        Some((
            "probe or lifecycle host".into(),
            "containers \"a\", \"b\" use probe or lifecycle hosts \"a.example\", \"example.com\""
                .into()
        ))
    );
    let one = with_containers(json!([
        {"name": "a", "readinessProbe": {"httpGet": {"host": "localhost"}}}]));
    assert_eq!(
        detail(host_probes_and_lifecycle, one),
        "container \"a\" uses probe or lifecycle host \"localhost\""
    );
}

#[test]
fn privileged_containers() {
    let pod = json!({"spec": {
        "initContainers": [{"name": "i", "securityContext": {"privileged": true}}],
        "containers": [{"name": "a", "securityContext": {"privileged": false}},
            {"name": "b", "securityContext": {"privileged": true}}],
        "ephemeralContainers": [{"name": "e", "securityContext": {"privileged": true}}]}});
    assert_eq!(
        check(privileged, pod),
        Some((
            "privileged".into(),
            "containers \"i\", \"b\", \"e\" must not set securityContext.privileged=true".into()
        ))
    );
}

#[test]
fn proc_mount_baseline_and_user_namespaces() {
    let pod = with_containers(json!([
        {"name": "a", "securityContext": {"procMount": "Default"}},
        {"name": "b", "securityContext": {"procMount": "Unmasked"}},
        {"name": "c", "securityContext": {"procMount": "Other"}},
        {"name": "d", "securityContext": {}},
    ]));
    assert_eq!(
        check(proc_mount, pod.clone()),
        Some((
            "procMount".into(),
            "containers \"b\", \"c\" must not set securityContext.procMount to \"Other\", \"Unmasked\"".into()
        ))
    );
    let mut userns = pod;
    userns["spec"]["hostUsers"] = json!(false);
    assert!(check(proc_mount_1_35, userns.clone()).is_none());
    assert!(check(proc_mount, userns).is_some());
}

#[test]
fn se_linux_types_users_and_roles() {
    let pod = json!({"spec": {
    "securityContext": {"seLinuxOptions": {"type": "spc_t"}},
    "containers": [
        {"name": "a", "securityContext": {"seLinuxOptions": {"type": "container_t"}}},
        {"name": "b", "securityContext": {"seLinuxOptions": {"user": "root"}}},
        {"name": "c", "securityContext": {"seLinuxOptions": {"role": "r", "type": "bad_t"}}},
    ]}});
    assert_eq!(
        check(se_linux_options_1_31, pod),
        Some((
            "seLinuxOptions".into(),
            "pod and containers \"b\", \"c\" set forbidden securityContext.seLinuxOptions: \
             types \"bad_t\", \"spc_t\"; user may not be set; role may not be set"
                .into()
        ))
    );
    let engine =
        json!({"spec": {"securityContext": {"seLinuxOptions": {"type": "container_engine_t"}}}});
    assert!(check(se_linux_options_1_31, engine.clone()).is_none());
    assert_eq!(
        detail(se_linux_options_1_0, engine),
        "pod set forbidden securityContext.seLinuxOptions: type \"container_engine_t\""
    );
}

#[test]
fn seccomp_fields_and_old_annotations() {
    let pod = json!({"spec": {
    "securityContext": {"seccompProfile": {"type": "Unconfined"}},
    "containers": [
        {"name": "a", "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}},
        {"name": "b", "securityContext": {"seccompProfile": {"type": "Unconfined"}}},
        {"name": "c"},
    ]}});
    assert_eq!(
        check(seccomp_baseline, pod),
        Some((
            "seccompProfile".into(),
            "pod and container \"b\" must not set securityContext.seccompProfile.type to \"Unconfined\"".into()
        ))
    );
    assert!(check(seccomp_baseline, with_containers(json!([{"name": "a"}]))).is_none());
    let annotated = json!({"metadata": {"annotations": {
            "seccomp.security.alpha.kubernetes.io/pod": "unconfined",
            "container.seccomp.security.alpha.kubernetes.io/a": "runtime/default",
            "container.seccomp.security.alpha.kubernetes.io/b": "docker/default",
            "container.seccomp.security.alpha.kubernetes.io/c": "localhost/x",
            "container.seccomp.security.alpha.kubernetes.io/d": "",
            "container.seccomp.security.alpha.kubernetes.io/z": "unconfined"}},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}]}});
    assert_eq!(
        check(seccomp_annotations, annotated),
        Some((
            "seccompProfile".into(),
            "forbidden annotations container.seccomp.security.alpha.kubernetes.io/d=\"\", \
             seccomp.security.alpha.kubernetes.io/pod=\"unconfined\""
                .into()
        ))
    );
}

#[test]
fn sysctls_by_version() {
    let pod = json!({"spec": {"securityContext": {"sysctls": [
        {"name": "net.ipv4.tcp_rmem", "value": "1"},
        {"name": "kernel.shm_rmid_forced", "value": "1"},
        {"name": "net.ipv4.tcp_keepalive_time", "value": "1"},
        {"name": "net.ipv4.ip_local_reserved_ports", "value": "1"},
        {"name": "kernel.msgmax", "value": "1"},
        {"name": "kernel.msgmax", "value": "2"},
    ]}}});
    assert_eq!(
        check(sysctls_1_32, pod.clone()),
        Some((
            "forbidden sysctls".into(),
            "kernel.msgmax, kernel.msgmax".into()
        ))
    );
    assert_eq!(
        detail(sysctls_1_29, pod.clone()),
        "net.ipv4.tcp_rmem, kernel.msgmax, kernel.msgmax"
    );
    assert_eq!(
        detail(sysctls_1_27, pod.clone()),
        "net.ipv4.tcp_rmem, net.ipv4.tcp_keepalive_time, kernel.msgmax, kernel.msgmax"
    );
    assert_eq!(
        detail(sysctls_1_0, pod),
        "net.ipv4.tcp_rmem, net.ipv4.tcp_keepalive_time, net.ipv4.ip_local_reserved_ports, kernel.msgmax, kernel.msgmax"
    );
}

#[test]
fn windows_host_process() {
    let pod = json!({"spec": {
    "securityContext": {"windowsOptions": {"hostProcess": true}},
    "containers": [
        {"name": "a", "securityContext": {"windowsOptions": {"hostProcess": true}}},
        {"name": "b", "securityContext": {"windowsOptions": {"hostProcess": false}}},
        {"name": "c", "securityContext": {"windowsOptions": {"hostProcess": true}}},
    ]}});
    assert_eq!(
        check(super::windows_host_process, pod),
        Some((
            "hostProcess".into(),
            "pod and containers \"a\", \"c\" must not set securityContext.windowsOptions.hostProcess=true".into()
        ))
    );
    let only_container = with_containers(json!([
        {"name": "a", "securityContext": {"windowsOptions": {"hostProcess": true}}}]));
    assert_eq!(
        detail(super::windows_host_process, only_container),
        "container \"a\" must not set securityContext.windowsOptions.hostProcess=true"
    );
}

//! The deployment files for real clusters, rendered from the same flag
//! contract the local cluster uses ([`crate::tier_args`]), so they never
//! drift from what the tests run: a systemd unit and a kubelet static-pod
//! manifest per tier, with the PKI in kubeadm's layout (`/etc/kubernetes/pki`,
//! written by `kube-local-cluster pki`). `deploy/systemd/` and
//! `deploy/manifests/static-pods/` hold them as rendered; a test keeps them
//! current (`kube-local-cluster render --out deploy` rewrites them).

use std::path::Path;

use crate::{tier_args, Pki, Ports, Tier};

/// Where kubeadm keeps the PKI.
pub const KUBEADM_PKI_DIR: &str = "/etc/kubernetes/pki";
/// The container image the static pods run (built from `deploy/Containerfile`).
pub const IMAGE: &str = "localhost/kube-apiserver-tiers:0.1.0";

/// Flags every rendered tier gets beyond the local cluster's: a shutdown
/// delay so a load balancer (or the aggregator's readiness probe) stops
/// sending before the listener closes.
const PRODUCTION_FLAGS: &[&str] = &["--shutdown-delay-duration=5s"];

/// The flags of `tier` as `--name=value`, for the kubeadm PKI and default ports.
pub fn flags(tier: Tier) -> Vec<String> {
    let pki = Pki::paths(Path::new(KUBEADM_PKI_DIR));
    let extra: Vec<String> = PRODUCTION_FLAGS.iter().map(|s| s.to_string()).collect();
    let args = tier_args(tier, &pki, &Ports::defaults(), &extra);
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        match args.get(i + 1) {
            Some(v) if a.starts_with("--") && !a.contains('=') && !v.starts_with("--") => {
                out.push(format!("{a}={v}"));
                i += 2;
            }
            _ => {
                out.push(a.clone());
                i += 1;
            }
        }
    }
    out
}

fn after(tier: Tier) -> &'static str {
    match tier {
        Tier::Extensions => "etcd.service",
        Tier::KubeCore => "etcd.service kube-extensions-apiserver.service",
        Tier::Aggregator => "kube-core-apiserver.service",
    }
}

fn description(tier: Tier) -> &'static str {
    match tier {
        Tier::Aggregator => "Kubernetes API aggregator (the front door)",
        Tier::KubeCore => "Kubernetes core API server (built-in kinds)",
        Tier::Extensions => "Kubernetes extensions API server (CustomResourceDefinitions)",
    }
}

/// The systemd unit of `tier`.
pub fn systemd_unit(tier: Tier) -> String {
    let bin = tier.binary_name();
    let mut exec = format!("ExecStart=/usr/local/bin/{bin}");
    for f in flags(tier) {
        exec.push_str(" \\\n  ");
        exec.push_str(&f);
    }
    format!(
        "# Rendered by `kube-local-cluster render` from the flags the tests run; do not edit.\n\
         # The PKI is kubeadm's layout in {KUBEADM_PKI_DIR} (`kube-local-cluster pki --dir {KUBEADM_PKI_DIR}`);\n\
         # etcd is Debian's etcd.service with TLS and client-certificate authentication.\n\
         [Unit]\n\
         Description={desc}\n\
         After=network-online.target {after}\n\
         Wants={after}\n\
         \n\
         [Service]\n\
         {exec}\n\
         Restart=on-failure\n\
         RestartSec=2\n\
         # The shutdown delay, then in-flight requests (up to the request timeout).\n\
         TimeoutStopSec=90\n\
         LimitNOFILE=65536\n\
         \n\
         [Install]\n\
         WantedBy=multi-user.target\n",
        desc = description(tier),
        after = after(tier),
    )
}

/// The kubelet static-pod manifest of `tier` (as kubeadm writes
/// kube-apiserver's): host network, the PKI mounted read-only, probes on
/// `/livez`, `/readyz` and startup.
pub fn static_pod(tier: Tier) -> String {
    let name = tier.binary_name();
    let port = tier.port(&Ports::defaults());
    let mut command = format!("    - {name}\n");
    for f in flags(tier) {
        command.push_str(&format!("    - {f}\n"));
    }
    let probe = |path: &str, period: u32, failures: u32, initial: u32| {
        format!(
            "      httpGet:\n        host: 127.0.0.1\n        path: {path}\n        port: {port}\n        scheme: HTTPS\n      \
             initialDelaySeconds: {initial}\n      periodSeconds: {period}\n      timeoutSeconds: 15\n      failureThreshold: {failures}\n"
        )
    };
    format!(
        "# Rendered by `kube-local-cluster render` from the flags the tests run; do not edit.\n\
         apiVersion: v1\n\
         kind: Pod\n\
         metadata:\n  name: {name}\n  namespace: kube-system\n  labels:\n    component: {name}\n    tier: control-plane\n\
         spec:\n  hostNetwork: true\n  priorityClassName: system-node-critical\n  \
         securityContext:\n    seccompProfile:\n      type: RuntimeDefault\n  \
         terminationGracePeriodSeconds: 90\n  \
         containers:\n  - name: {name}\n    image: {IMAGE}\n    imagePullPolicy: IfNotPresent\n    command:\n{command}    \
         livenessProbe:\n{live}    readinessProbe:\n{ready}    startupProbe:\n{startup}    \
         resources:\n      requests:\n        cpu: 250m\n    \
         volumeMounts:\n    - name: k8s-certs\n      mountPath: {KUBEADM_PKI_DIR}\n      readOnly: true\n  \
         volumes:\n  - name: k8s-certs\n    hostPath:\n      path: {KUBEADM_PKI_DIR}\n      type: DirectoryOrCreate\n",
        live = probe("/livez", 10, 8, 10),
        ready = probe("/readyz", 1, 3, 0),
        startup = probe("/livez", 10, 24, 10),
    )
}

/// Writes every tier's unit to `<out>/systemd/` and manifest to
/// `<out>/manifests/static-pods/`.
pub fn write_all(out: &Path) -> anyhow::Result<()> {
    let units = out.join("systemd");
    let pods = out.join("manifests").join("static-pods");
    std::fs::create_dir_all(&units)?;
    std::fs::create_dir_all(&pods)?;
    for tier in Tier::START_ORDER {
        let name = tier.binary_name();
        std::fs::write(units.join(format!("{name}.service")), systemd_unit(tier))?;
        std::fs::write(pods.join(format!("{name}.yaml")), static_pod(tier))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deploy_dir() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
    }

    #[test]
    fn the_committed_files_are_the_rendered_ones() {
        for tier in Tier::START_ORDER {
            let name = tier.binary_name();
            let unit =
                std::fs::read_to_string(deploy_dir().join(format!("systemd/{name}.service")))
                    .unwrap_or_default();
            assert_eq!(unit, systemd_unit(tier), "deploy/systemd/{name}.service is stale: run `kube-local-cluster render --out deploy`");
            let pod = std::fs::read_to_string(
                deploy_dir().join(format!("manifests/static-pods/{name}.yaml")),
            )
            .unwrap_or_default();
            assert_eq!(
                pod,
                static_pod(tier),
                "deploy/manifests/static-pods/{name}.yaml is stale"
            );
        }
    }

    #[test]
    fn manifests_are_pods_with_probes_and_the_pki() {
        for tier in Tier::START_ORDER {
            let pod: serde_json::Value = serde_saphyr::from_str(&static_pod(tier)).expect("YAML");
            assert_eq!(pod["kind"], "Pod");
            assert_eq!(pod["spec"]["hostNetwork"], true);
            let c = &pod["spec"]["containers"][0];
            assert_eq!(c["command"][0], tier.binary_name());
            assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
            assert_eq!(
                c["livenessProbe"]["httpGet"]["port"],
                tier.port(&Ports::defaults())
            );
            assert_eq!(c["volumeMounts"][0]["mountPath"], KUBEADM_PKI_DIR);
            let cmd: Vec<&str> = c["command"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|v| v.as_str())
                .collect();
            assert!(
                cmd.contains(&"--etcd-cafile=/etc/kubernetes/pki/etcd/ca.crt"),
                "{cmd:?}"
            );
        }
    }

    /// Every rendered flag is one the tier binary accepts (`<flags> --help`
    /// fails on an unknown flag or a bad value before printing the help).
    #[test]
    fn every_rendered_flag_is_accepted_by_its_binary() {
        let bin_dir = crate::default_bin_dir();
        for tier in Tier::START_ORDER {
            let bin = bin_dir.join(tier.binary_name());
            if !bin.exists() {
                eprintln!("skipping: {} is not built", bin.display());
                continue;
            }
            let out = std::process::Command::new(&bin)
                .args(flags(tier))
                .arg("--help")
                .output()
                .expect("running the tier");
            assert!(
                out.status.success(),
                "{} refuses its rendered flags: {}",
                tier.binary_name(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

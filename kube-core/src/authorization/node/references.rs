//! What a pod or a PersistentVolume refers to, read from its JSON as
//! upstream's `podutil.VisitPodSecretNames`, `VisitPodConfigmapNames`,
//! `ephemeral.VolumeClaimName`, `resourceclaim.Name` and
//! `pvutil.VisitPVSecretNames` read the typed objects. The Node authorizer's
//! graph is built from these; NodeRestriction uses them to refuse mirror
//! pods that refer to API objects.

use std::collections::BTreeSet;

use apiserver::apimachinery::meta;
use serde_json::Value;

/// The annotation that marks a kubelet's mirror of a static pod.
pub const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn array<'a>(v: &'a Value, pointer: &str) -> impl Iterator<Item = &'a Value> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// Whether the pod carries the mirror-pod annotation.
pub fn is_mirror_pod(pod: &Value) -> bool {
    pod.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(MIRROR_POD_ANNOTATION))
}

/// Every container of a pod spec: init, regular and ephemeral ones.
fn all_containers(spec: &Value) -> impl Iterator<Item = &Value> {
    ["initContainers", "containers", "ephemeralContainers"]
        .into_iter()
        .flat_map(move |k| spec.get(k).and_then(Value::as_array).into_iter().flatten())
}

/// The secrets a pod spec names (image pull secrets, `envFrom`, `env`
/// `secretKeyRef`s and volumes), empty names skipped.
pub fn pod_secret_names(spec: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut push = |n: &str| {
        if !n.is_empty() {
            out.push(n.to_string())
        }
    };
    for r in array(spec, "/imagePullSecrets") {
        push(str_at(r, "/name"));
    }
    for c in all_containers(spec) {
        for e in array(c, "/envFrom") {
            if e.get("secretRef").is_some_and(Value::is_object) {
                push(str_at(e, "/secretRef/name"));
            }
        }
        for e in array(c, "/env") {
            if e.pointer("/valueFrom/secretKeyRef")
                .is_some_and(Value::is_object)
            {
                push(str_at(e, "/valueFrom/secretKeyRef/name"));
            }
        }
    }
    for v in array(spec, "/volumes") {
        // The first source present, in upstream's order.
        let secret_ref = [
            ("azureFile", "/azureFile/secretName"),
            ("cephfs", "/cephfs/secretRef/name"),
            ("cinder", "/cinder/secretRef/name"),
            ("flexVolume", "/flexVolume/secretRef/name"),
            ("projected", ""),
            ("rbd", "/rbd/secretRef/name"),
            ("secret", "/secret/secretName"),
            ("scaleIO", "/scaleIO/secretRef/name"),
            ("iscsi", "/iscsi/secretRef/name"),
            ("storageos", "/storageos/secretRef/name"),
            ("csi", "/csi/nodePublishSecretRef/name"),
        ]
        .into_iter()
        .find(|(key, _)| v.get(*key).is_some_and(Value::is_object));
        match secret_ref {
            Some(("projected", _)) => {
                for s in array(v, "/projected/sources") {
                    if s.get("secret").is_some_and(Value::is_object) {
                        push(str_at(s, "/secret/name"));
                    }
                }
            }
            Some((_, pointer)) => push(str_at(v, pointer)),
            None => {}
        }
    }
    out
}

/// The ConfigMaps a pod spec names (`envFrom`, `env` `configMapKeyRef`s,
/// ConfigMap and projected volumes), empty names skipped.
pub fn pod_config_map_names(spec: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut push = |n: &str| {
        if !n.is_empty() {
            out.push(n.to_string())
        }
    };
    for c in all_containers(spec) {
        for e in array(c, "/envFrom") {
            if e.get("configMapRef").is_some_and(Value::is_object) {
                push(str_at(e, "/configMapRef/name"));
            }
        }
        for e in array(c, "/env") {
            if e.pointer("/valueFrom/configMapKeyRef")
                .is_some_and(Value::is_object)
            {
                push(str_at(e, "/valueFrom/configMapKeyRef/name"));
            }
        }
    }
    for v in array(spec, "/volumes") {
        if v.get("projected").is_some_and(Value::is_object) {
            for s in array(v, "/projected/sources") {
                if s.get("configMap").is_some_and(Value::is_object) {
                    push(str_at(s, "/configMap/name"));
                }
            }
        } else if v.get("configMap").is_some_and(Value::is_object) {
            push(str_at(v, "/configMap/name"));
        }
    }
    out
}

/// The PersistentVolumeClaims a pod's volumes use: `persistentVolumeClaim`
/// claims and the `<pod>-<volume>` claims of ephemeral volumes.
pub fn pod_claim_names(pod: &Value) -> Vec<String> {
    let pod_name = meta::name(pod);
    array(pod, "/spec/volumes")
        .filter_map(|v| {
            if v.get("persistentVolumeClaim").is_some_and(Value::is_object) {
                Some(str_at(v, "/persistentVolumeClaim/claimName").to_string())
            } else if v.get("ephemeral").is_some_and(Value::is_object) {
                Some(format!("{pod_name}-{}", str_at(v, "/name")))
            } else {
                None
            }
        })
        .filter(|n| !n.is_empty())
        .collect()
}

/// The ResourceClaims a pod uses: those its `spec.resourceClaims` name, the
/// ones generated from templates as `status.resourceClaimStatuses` records
/// them (a template without a status entry has no claim yet), and the
/// claim of `status.extendedResourceClaimStatus`.
pub fn pod_resource_claim_names(pod: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for c in array(pod, "/spec/resourceClaims") {
        if let Some(name) = c.get("resourceClaimName").and_then(Value::as_str) {
            out.push(name.to_string());
        } else if c
            .get("resourceClaimTemplateName")
            .is_some_and(|t| !t.is_null())
        {
            let entry = str_at(c, "/name");
            let status = array(pod, "/status/resourceClaimStatuses")
                .find(|s| str_at(s, "/name") == entry)
                .and_then(|s| s.get("resourceClaimName"))
                .and_then(Value::as_str);
            if let Some(name) = status {
                out.push(name.to_string());
            }
        }
    }
    let extended = str_at(pod, "/status/extendedResourceClaimStatus/resourceClaimName");
    if !extended.is_empty() {
        out.push(extended.to_string());
    }
    out
}

/// What a pod bound to a node contributes to the graph.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodRefs {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub node_name: String,
    /// Mirror pods get only their pod → node edge.
    pub mirror: bool,
    pub service_account: String,
    pub secrets: BTreeSet<String>,
    pub config_maps: BTreeSet<String>,
    pub claims: BTreeSet<String>,
    pub resource_claims: BTreeSet<String>,
}

impl PodRefs {
    /// The references of a pod, `None` while it is not bound to a node.
    pub fn of(pod: &Value) -> Option<PodRefs> {
        let node_name = str_at(pod, "/spec/nodeName");
        if node_name.is_empty() {
            return None;
        }
        let spec = pod.get("spec").unwrap_or(&Value::Null);
        let mut refs = PodRefs {
            namespace: meta::namespace(pod).to_string(),
            name: meta::name(pod).to_string(),
            uid: meta::uid(pod).to_string(),
            node_name: node_name.to_string(),
            mirror: is_mirror_pod(pod),
            ..Default::default()
        };
        if refs.mirror {
            return Some(refs);
        }
        refs.service_account = str_at(spec, "/serviceAccountName").to_string();
        refs.secrets = pod_secret_names(spec).into_iter().collect();
        refs.config_maps = pod_config_map_names(spec).into_iter().collect();
        refs.claims = pod_claim_names(pod).into_iter().collect();
        refs.resource_claims = pod_resource_claim_names(pod).into_iter().collect();
        Some(refs)
    }
}

/// What a PersistentVolume contributes to the graph: its claim and the
/// kubelet-visible secrets of its source, as `(namespace, name)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PvRefs {
    pub name: String,
    pub claim: Option<(String, String)>,
    pub secrets: Vec<(String, String)>,
}

impl PvRefs {
    /// The references of a PersistentVolume.
    pub fn of(pv: &Value) -> PvRefs {
        let claim = pv
            .pointer("/spec/claimRef")
            .filter(|c| c.is_object())
            .map(|c| {
                (
                    str_at(c, "/namespace").to_string(),
                    str_at(c, "/name").to_string(),
                )
            });
        PvRefs {
            name: meta::name(pv).to_string(),
            claim,
            secrets: pv_secret_refs(pv),
        }
    }
}

/// The secrets a PersistentVolume's source passes to the kubelet, as
/// `(namespace, name)`: a reference without a namespace means the claim's
/// (the secrets CSI controllers use are not the kubelet's).
pub fn pv_secret_refs(pv: &Value) -> Vec<(String, String)> {
    let spec = pv.get("spec").unwrap_or(&Value::Null);
    let claim_ns = str_at(spec, "/claimRef/namespace");
    let mut out = Vec::new();
    let mut push = |ns: &str, name: &str| {
        if !name.is_empty() {
            out.push((ns.to_string(), name.to_string()))
        }
    };
    let or_claim = |ns: &'_ str| -> String {
        if ns.is_empty() {
            claim_ns.to_string()
        } else {
            ns.to_string()
        }
    };
    let present = |k: &str| spec.get(k).is_some_and(Value::is_object);
    if present("azureFile") {
        let ns = str_at(spec, "/azureFile/secretNamespace");
        push(&or_claim(ns), str_at(spec, "/azureFile/secretName"));
    } else if let Some(source) = ["cephfs", "flexVolume", "rbd", "scaleIO", "iscsi"]
        .into_iter()
        .find(|k| present(k))
    {
        let r = &spec[source]["secretRef"];
        if r.is_object() {
            push(&or_claim(str_at(r, "/namespace")), str_at(r, "/name"));
        }
    } else if let Some(source) = ["cinder", "storageos"].into_iter().find(|k| present(k)) {
        let r = &spec[source]["secretRef"];
        if r.is_object() {
            push(str_at(r, "/namespace"), str_at(r, "/name"));
        }
    } else if present("csi") {
        for key in [
            "nodePublishSecretRef",
            "nodeStageSecretRef",
            "nodeExpandSecretRef",
        ] {
            let r = &spec["csi"][key];
            if r.is_object() {
                push(str_at(r, "/namespace"), str_at(r, "/name"));
            }
        }
    }
    out
}

/// Upstream's `HasAPIObjectReference`: the first kind of API object a pod
/// refers to (what a node may not give its mirror pods), `Ok(None)` when it
/// refers to none, an error for a volume of an unknown type.
pub fn api_object_reference(pod: &Value) -> Result<Option<&'static str>, String> {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    if !str_at(spec, "/serviceAccountName").is_empty() {
        return Ok(Some("serviceaccounts"));
    }
    if !pod_secret_names(spec).is_empty() {
        return Ok(Some("secrets"));
    }
    if !pod_config_map_names(spec).is_empty() {
        return Ok(Some("configmaps"));
    }
    if spec
        .get("resourceClaims")
        .and_then(Value::as_array)
        .is_some_and(|c| !c.is_empty())
    {
        return Ok(Some("resourceclaims"));
    }
    const LOCAL: &[&str] = &[
        "awsElasticBlockStore",
        "azureDisk",
        "cephfs",
        "cinder",
        "downwardAPI",
        "emptyDir",
        "fc",
        "flexVolume",
        "flocker",
        "gcePersistentDisk",
        "gitRepo",
        "hostPath",
        "image",
        "iscsi",
        "nfs",
        "photonPersistentDisk",
        "portworxVolume",
        "quobyte",
        "rbd",
        "scaleIO",
        "storageos",
        "vsphereVolume",
    ];
    const REFERRING: &[(&str, &str)] = &[
        ("configMap", "configmaps (via configmap volumes)"),
        ("secret", "secrets (via secret volumes)"),
        ("csi", "csidrivers (via CSI volumes)"),
        ("glusterfs", "endpoints (via glusterFS volumes)"),
        ("persistentVolumeClaim", "persistentvolumeclaims"),
        (
            "ephemeral",
            "persistentvolumeclaims (via ephemeral volumes)",
        ),
        ("azureFile", "secrets (via azureFile volumes)"),
    ];
    for v in array(spec, "/volumes") {
        let present = |k: &str| v.get(k).is_some_and(|s| !s.is_null());
        if LOCAL.iter().any(|k| present(k)) {
            continue;
        }
        if let Some((_, what)) = REFERRING.iter().find(|(k, _)| present(k)) {
            return Ok(Some(what));
        }
        if present("projected") {
            for s in array(v, "/projected/sources") {
                let has = |k: &str| s.get(k).is_some_and(|x| !x.is_null());
                if has("configMap") {
                    return Ok(Some("configmaps (via projected volumes)"));
                } else if has("secret") {
                    return Ok(Some("secrets (via projected volumes)"));
                } else if has("serviceAccountToken") {
                    return Ok(Some("serviceaccounts (via projected volumes)"));
                } else if has("clusterTrustBundle") {
                    return Ok(Some("clustertrustbundles"));
                } else if has("podCertificate") {
                    return Ok(Some("podcertificates"));
                } else if has("downwardAPI") {
                    continue;
                }
                return Err(format!(
                    "unknown source for projected volume {:?}",
                    str_at(v, "/name")
                ));
            }
            continue;
        }
        return Err(format!(
            "unknown volume type for volume  {:?}",
            str_at(v, "/name")
        ));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(spec: Value) -> Value {
        json!({"metadata": {"name": "p", "namespace": "ns", "uid": "u1"}, "spec": spec})
    }

    #[test]
    fn secrets_and_config_maps_of_every_place() {
        let p = pod(json!({
            "nodeName": "n1",
            "serviceAccountName": "sa",
            "imagePullSecrets": [{"name": "pull"}, {"name": ""}],
            "initContainers": [{"envFrom": [{"secretRef": {"name": "init-env"}}]}],
            "containers": [{
                "envFrom": [{"configMapRef": {"name": "cm-env"}}],
                "env": [
                    {"name": "A", "valueFrom": {"secretKeyRef": {"name": "env-secret", "key": "k"}}},
                    {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "env-cm", "key": "k"}}}
                ]
            }],
            "ephemeralContainers": [{"envFrom": [{"secretRef": {"name": "eph"}}]}],
            "volumes": [
                {"name": "s", "secret": {"secretName": "vol-secret"}},
                {"name": "c", "configMap": {"name": "vol-cm"}},
                {"name": "p", "projected": {"sources": [
                    {"secret": {"name": "proj-secret"}},
                    {"configMap": {"name": "kube-root-ca.crt"}},
                    {"serviceAccountToken": {"path": "token"}}
                ]}},
                {"name": "csi", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "csi-secret"}}},
                {"name": "az", "azureFile": {"secretName": "az-secret", "shareName": "s"}},
                {"name": "claim", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
            ],
            "resourceClaims": [
                {"name": "a", "resourceClaimName": "direct"},
                {"name": "b", "resourceClaimTemplateName": "tpl"},
                {"name": "c", "resourceClaimTemplateName": "tpl"}
            ]
        }));
        let mut p = p;
        p["status"] = json!({
            "resourceClaimStatuses": [{"name": "b", "resourceClaimName": "p-b-xyz"}, {"name": "c"}],
            "extendedResourceClaimStatus": {"resourceClaimName": "extended"}
        });
        let refs = PodRefs::of(&p).expect("bound");
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        assert_eq!(
            refs.secrets,
            set(&[
                "pull",
                "init-env",
                "env-secret",
                "eph",
                "vol-secret",
                "proj-secret",
                "csi-secret",
                "az-secret"
            ])
        );
        assert_eq!(
            refs.config_maps,
            set(&["cm-env", "env-cm", "vol-cm", "kube-root-ca.crt"])
        );
        assert_eq!(refs.claims, set(&["data", "p-scratch"]));
        assert_eq!(
            refs.resource_claims,
            set(&["direct", "p-b-xyz", "extended"])
        );
        assert_eq!(refs.service_account, "sa");
        assert_eq!(refs.node_name, "n1");
        assert!(!refs.mirror);
    }

    #[test]
    fn unbound_and_mirror_pods() {
        assert_eq!(PodRefs::of(&pod(json!({"containers": []}))), None);
        let mut m = pod(json!({"nodeName": "n1", "serviceAccountName": "sa",
            "volumes": [{"name": "s", "secret": {"secretName": "x"}}]}));
        m["metadata"]["annotations"] = json!({MIRROR_POD_ANNOTATION: "h"});
        let refs = PodRefs::of(&m).expect("bound");
        assert!(refs.mirror);
        assert!(refs.secrets.is_empty() && refs.service_account.is_empty());
    }

    #[test]
    fn pv_secrets_default_to_the_claim_namespace() {
        let pv = |source: Value| {
            let mut spec = json!({"claimRef": {"namespace": "claims", "name": "c"}});
            if let (Some(s), Some(src)) = (spec.as_object_mut(), source.as_object()) {
                s.extend(src.clone());
            }
            json!({"metadata": {"name": "pv"}, "spec": spec})
        };
        let got = |v: Value| pv_secret_refs(&pv(v));
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            got(json!({"rbd": {"secretRef": {"name": "r"}}})),
            vec![pair("claims", "r")]
        );
        assert_eq!(
            got(json!({"cephfs": {"secretRef": {"name": "c", "namespace": "other"}}})),
            vec![pair("other", "c")]
        );
        assert_eq!(
            got(json!({"azureFile": {"secretName": "a"}})),
            vec![pair("claims", "a")]
        );
        assert_eq!(
            got(json!({"cinder": {"secretRef": {"name": "c", "namespace": "x"}}})),
            vec![pair("x", "c")]
        );
        assert_eq!(
            got(json!({"csi": {
                "controllerPublishSecretRef": {"name": "ctl", "namespace": "x"},
                "nodePublishSecretRef": {"name": "pub", "namespace": "x"},
                "nodeStageSecretRef": {"name": "stage", "namespace": "y"},
                "nodeExpandSecretRef": {"name": "", "namespace": "y"}
            }})),
            vec![pair("x", "pub"), pair("y", "stage")]
        );
        let refs = PvRefs::of(&pv(json!({"nfs": {"server": "s", "path": "/"}})));
        assert_eq!(refs.claim, Some(pair("claims", "c")));
        assert!(refs.secrets.is_empty());
    }

    #[test]
    fn api_object_references_as_upstream_names_them() {
        let check = |spec: Value| api_object_reference(&pod(spec));
        assert_eq!(check(json!({"containers": [{"name": "c"}]})), Ok(None));
        assert_eq!(
            check(json!({"volumes": [{"name": "h", "hostPath": {"path": "/"}},
                {"name": "d", "projected": {"sources": [{"downwardAPI": {}}]}}]})),
            Ok(None)
        );
        assert_eq!(
            check(json!({"serviceAccountName": "default"})),
            Ok(Some("serviceaccounts"))
        );
        assert_eq!(
            check(json!({"imagePullSecrets": [{"name": "x"}]})),
            Ok(Some("secrets"))
        );
        assert_eq!(
            check(json!({"containers": [{"envFrom": [{"configMapRef": {"name": "x"}}]}]})),
            Ok(Some("configmaps"))
        );
        assert_eq!(
            check(json!({"resourceClaims": [{"name": "x"}]})),
            Ok(Some("resourceclaims"))
        );
        assert_eq!(
            check(json!({"volumes": [{"name": "c", "csi": {"driver": "d"}}]})),
            Ok(Some("csidrivers (via CSI volumes)"))
        );
        assert_eq!(
            check(json!({"volumes": [{"name": "c", "persistentVolumeClaim": {"claimName": "d"}}]})),
            Ok(Some("persistentvolumeclaims"))
        );
        assert_eq!(
            check(json!({"volumes": [{"name": "p", "projected": {"sources": [
                {"serviceAccountToken": {"path": "t"}}]}}]})),
            Ok(Some("serviceaccounts (via projected volumes)"))
        );
        assert_eq!(
            check(json!({"volumes": [{"name": "p", "projected": {"sources": [
                {"clusterTrustBundle": {"path": "t"}}]}}]})),
            Ok(Some("clustertrustbundles"))
        );
        assert_eq!(
            check(json!({"volumes": [{"name": "v", "mystery": {}}]})),
            Err("unknown volume type for volume  \"v\"".to_string())
        );
        assert_eq!(
            check(json!({"volumes": [{"name": "v", "projected": {"sources": [{}]}}]})),
            Err("unknown source for projected volume \"v\"".to_string())
        );
    }
}

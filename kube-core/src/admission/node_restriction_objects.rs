//! NodeRestriction's checks that read other objects: service account
//! token requests (the pod they are bound to, the audiences it uses) and
//! PodCertificateRequests (the node, pod and account they name).

use apiserver::admission::objects::ObjectReader;
use apiserver::admission::Operation;
use apiserver::apimachinery::errors::ApiError;
use apiserver::apimachinery::meta;
use apiserver::authorization::{self, Decision};
use apiserver::request::info::RequestInfo;
use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{plain_error, str_at, NodeRestriction, Request};
use crate::authorization::node::references::is_mirror_pod;

/// Where the plugin reads objects (the tier's stores; a map in tests).
pub trait Objects: Send + Sync {
    /// One object, `None` when it does not exist.
    fn get<'a>(
        &'a self,
        group: &'a str,
        resource: &'a str,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Value>, ApiError>>;
}

impl Objects for ObjectReader {
    fn get<'a>(
        &'a self,
        group: &'a str,
        resource: &'a str,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Value>, ApiError>> {
        Box::pin(ObjectReader::get(self, group, resource, namespace, name))
    }
}

/// An object as a lister returns it: the lister's `NotFound` message
/// (`persistentvolumeclaim "x" not found`) as the error.
async fn listed(
    objects: &dyn Objects,
    group: &str,
    resource: &str,
    singular: &str,
    namespace: &str,
    name: &str,
) -> Result<Value, String> {
    match objects.get(group, resource, namespace, name).await {
        Ok(Some(v)) => Ok(v),
        Ok(None) if group.is_empty() => Err(format!("{singular} {name:?} not found")),
        Ok(None) => Err(format!("{singular}.{group} {name:?} not found")),
        Err(e) => Err(e.message),
    }
}

/// Go's aggregate error text: one error as is, several in brackets.
fn aggregate(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

impl NodeRestriction {
    /// A token request of a node must be bound to a pod running on it.
    pub(super) async fn admit_token_request(&self, req: &Request<'_>) -> Result<(), ApiError> {
        let a = req.attrs;
        if a.operation != Operation::Create || a.subresource != "token" {
            return Ok(());
        }
        let tr = req.object()?;
        let r = tr.pointer("/spec/boundObjectRef").unwrap_or(&Value::Null);
        if !r.is_object()
            || str_at(r, "/apiVersion") != "v1"
            || str_at(r, "/kind") != "Pod"
            || str_at(r, "/name").is_empty()
        {
            return Err(req.forbidden("node requested token not bound to a pod"));
        }
        let uid = str_at(r, "/uid");
        if uid.is_empty() {
            return Err(req.forbidden("node requested token with a pod binding without a uid"));
        }
        let pod = self.pod(req, str_at(r, "/name")).await?;
        if uid != meta::uid(&pod) {
            return Err(req.forbidden(&format!(
                "the UID in the bound object reference ({uid}) does not match the UID in record. The object might have been deleted and then recreated"
            )));
        }
        if str_at(&pod, "/spec/nodeName") != req.node {
            return Err(
                req.forbidden("node requested token bound to a pod scheduled on a different node")
            );
        }
        self.check_audience(req, tr, &pod)
            .await
            .map_err(|e| req.forbidden(&e))
    }

    /// Upstream's `ServiceAccountNodeAudienceRestriction`: the audience
    /// must be one the pod's volumes use, or one the node is authorized to
    /// ask for.
    async fn check_audience(
        &self,
        req: &Request<'_>,
        tr: &Value,
        pod: &Value,
    ) -> Result<(), String> {
        let audiences: Vec<&str> = tr
            .pointer("/spec/audiences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let audience = match audiences.as_slice() {
            [] => "",
            [one] => one,
            _ => return Err("node may only request 0 or 1 audiences".into()),
        };
        match self.pod_uses_audience(pod, audience).await {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(e) => return Err(format!("error validating audience {audience:?}: {e}")),
        }
        let Some(user) = req.attrs.user else {
            return Err(format!(
                "audience {audience:?} not found in pod spec volume"
            ));
        };
        let request = RequestInfo {
            is_resource_request: true,
            verb: "request-serviceaccounts-token-audience".into(),
            namespace: req.attrs.namespace.into(),
            api_version: "v1".into(),
            resource: audience.into(),
            name: req.attrs.name.into(),
            ..Default::default()
        };
        let attrs = authorization::Attributes {
            user,
            request: &request,
        };
        match self.authorizer.authorize(&attrs).await {
            Decision::Allow => Ok(()),
            Decision::Error(e) => Err(format!(
                "audience {audience:?} not found in pod spec volume, error authorizing {} to request tokens for this audience: {e}",
                user.name
            )),
            _ => Err(format!(
                "audience {audience:?} not found in pod spec volume, {} is not authorized to request tokens for this audience",
                user.name
            )),
        }
    }

    /// Whether a projected token volume of the pod, or the CSI driver of
    /// one of its volumes (inline, through its claim, or an ephemeral
    /// claim), asks for `audience`.
    async fn pod_uses_audience(&self, pod: &Value, audience: &str) -> Result<bool, String> {
        let objects = self.objects.as_ref();
        let namespace = meta::namespace(pod);
        let mut errors = Vec::new();
        let volumes = pod
            .pointer("/spec/volumes")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for v in &volumes {
            let projected = v
                .pointer("/projected/sources")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|s| s.get("serviceAccountToken"))
                .any(|t| str_at(t, "/audience") == audience);
            if projected {
                return Ok(true);
            }
            let driver = if v
                .pointer("/ephemeral/volumeClaimTemplate")
                .is_some_and(Value::is_object)
            {
                let claim = format!("{}-{}", meta::name(pod), str_at(v, "/name"));
                self.claim_driver(namespace, &claim).await
            } else if v.get("persistentVolumeClaim").is_some_and(Value::is_object) {
                self.claim_driver(namespace, str_at(v, "/persistentVolumeClaim/claimName"))
                    .await
            } else {
                Ok(str_at(v, "/csi/driver").to_string())
            };
            let driver = match driver {
                Ok(d) if d.is_empty() => continue,
                Ok(d) => d,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            match listed(
                objects,
                "storage.k8s.io",
                "csidrivers",
                "csidriver",
                "",
                &driver,
            )
            .await
            {
                Ok(d) => {
                    let asks = d
                        .pointer("/spec/tokenRequests")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .any(|t| str_at(t, "/audience") == audience);
                    if asks {
                        return Ok(true);
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        if errors.is_empty() {
            Ok(false)
        } else {
            Err(aggregate(&errors))
        }
    }

    /// The CSI driver of a claim's volume (`""` when it is not CSI).
    async fn claim_driver(&self, namespace: &str, claim: &str) -> Result<String, String> {
        let objects = self.objects.as_ref();
        let pvc = listed(
            objects,
            "",
            "persistentvolumeclaims",
            "persistentvolumeclaim",
            namespace,
            claim,
        )
        .await?;
        let volume = str_at(&pvc, "/spec/volumeName");
        let pv = listed(
            objects,
            "",
            "persistentvolumes",
            "persistentvolume",
            "",
            volume,
        )
        .await?;
        Ok(str_at(&pv, "/spec/csi/driver").to_string())
    }

    /// A PodCertificateRequest must come from the node its pod runs on,
    /// for that pod's account, with the UIDs of the live objects.
    pub(super) async fn admit_pod_certificate_request(
        &self,
        req: &Request<'_>,
    ) -> Result<(), ApiError> {
        let a = req.attrs;
        if a.operation != Operation::Create {
            return Err(req.forbidden(&format!("unexpected operation {}", req.operation())));
        }
        if !a.subresource.is_empty() {
            return Err(req.forbidden(&format!("unexpected subresource {}", a.subresource)));
        }
        let pcr = req.object()?;
        let spec = |f: &str| str_at(pcr, &format!("/spec/{f}"));
        let namespace = a.namespace;
        let pod_key = format!("{namespace}/{}", spec("podName"));
        let node_name = spec("nodeName");
        if node_name != req.node {
            return Err(req.forbidden(&format!(
                "PodCertificateRequest.Spec.NodeName={node_name:?}, which is not the requesting node {:?}",
                req.node
            )));
        }
        let node = self
            .named(
                req,
                "nodes",
                "node",
                "",
                node_name,
                format!("node {node_name:?}"),
            )
            .await?;
        if meta::uid(&node) != spec("nodeUID") {
            return Err(plain_error(format!(
                "PodCertificateRequest for pod {pod_key:?} names node UID {:?}, inconsistent with the running node ({:?})",
                spec("nodeUID"),
                meta::uid(&node)
            )));
        }
        let pod = self
            .named(
                req,
                "pods",
                "pod",
                namespace,
                spec("podName"),
                format!("pod {pod_key:?}"),
            )
            .await?;
        if spec("podUID") != meta::uid(&pod) {
            return Err(plain_error(format!(
                "PodCertificateRequest for pod {pod_key:?} contains pod UID ({:?}) which differs from running pod {:?}",
                spec("podUID"),
                meta::uid(&pod)
            )));
        }
        if str_at(&pod, "/spec/nodeName") != node_name {
            return Err(req.forbidden(&format!(
                "pod {pod_key:?} is not running on node {node_name:?} named in the PodCertificateRequest"
            )));
        }
        if is_mirror_pod(&pod) {
            return Err(req.forbidden(&format!("pod {pod_key:?} is a mirror pod")));
        }
        let account = spec("serviceAccountName");
        let pod_account = str_at(&pod, "/spec/serviceAccountName");
        if account != pod_account {
            return Err(req.forbidden(&format!(
                "PodCertificateRequest for pod {pod_key:?} contains serviceAccountName ({account:?}) that differs from running pod ({pod_account:?})"
            )));
        }
        let sa_key = format!("{namespace}/{account}");
        let sa = self
            .named(
                req,
                "serviceaccounts",
                "serviceaccount",
                namespace,
                account,
                format!("service account {sa_key:?}"),
            )
            .await?;
        if spec("serviceAccountUID") != meta::uid(&sa) {
            return Err(plain_error(format!(
                "PodCertificateRequest for pod {pod_key:?} names service account UID {:?}, which differs from the running service account ({:?})",
                spec("serviceAccountUID"),
                meta::uid(&sa)
            )));
        }
        Ok(())
    }

    /// An object a PodCertificateRequest names: missing is a plain error
    /// (the cache may lag, a retry may succeed), as upstream's.
    async fn named(
        &self,
        req: &Request<'_>,
        resource: &str,
        singular: &str,
        namespace: &str,
        name: &str,
        what: String,
    ) -> Result<Value, ApiError> {
        match self.objects.get("", resource, namespace, name).await {
            Ok(Some(v)) => Ok(v),
            Ok(None) => Err(plain_error(format!(
                "while retrieving {what} named in the PodCertificateRequest: {singular} {name:?} not found"
            ))),
            Err(e) => Err(req.forbidden(&format!(
                "while retrieving {what} named in the PodCertificateRequest: {}",
                e.message
            ))),
        }
    }
}

//! Which webhooks a write goes to: upstream's rule matching (operations,
//! groups, versions, `resource/subresource` wildcards, scope), the objects
//! never sent to webhooks, and the object selector. The namespace selector
//! and `matchConditions` need the request's context and live in the
//! dispatcher.

use serde_json::{Map, Value};

use super::config::{Rule, Target, Webhook};
use super::review::{request_namespace, Gvk};
use crate::admission::Attributes;

/// Whether `rule` matches the write, seen as `gvr` (the request's resource,
/// or an equivalent one).
pub fn rule_matches(rule: &Rule, attrs: &Attributes<'_>, gvr: &Gvk) -> bool {
    let any = |list: &[String], v: &str| list.iter().any(|x| x == "*" || x == v);
    if !any(&rule.operations, attrs.operation.as_str()) {
        return false;
    }
    if !any(&rule.api_groups, &gvr.group) || !any(&rule.api_versions, &gvr.version) {
        return false;
    }
    let resource_ok = rule.resources.iter().any(|r| {
        let (res, sub) = r.split_once('/').unwrap_or((r.as_str(), ""));
        (res == "*" || res == gvr.resource) && (sub == "*" || sub == attrs.subresource)
    });
    if !resource_ok {
        return false;
    }
    let is_namespace = gvr.group.is_empty() && gvr.resource == "namespaces";
    let namespaced = !request_namespace(attrs).is_empty();
    match rule.scope.as_str() {
        "Namespaced" => !is_namespace && namespaced,
        "Cluster" => is_namespace || !namespaced,
        _ => true,
    }
}

/// Writes no webhook ever sees: the admission configuration kinds
/// themselves (upstream's rule, so that a broken webhook can always be
/// removed) and, beyond upstream, Leases (leader election and node
/// heartbeats must not depend on a webhook).
pub fn exempt(attrs: &Attributes<'_>) -> bool {
    let r = attrs.resource;
    (r.group == "admissionregistration.k8s.io"
        && matches!(
            r.resource.as_str(),
            "validatingwebhookconfigurations"
                | "mutatingwebhookconfigurations"
                | "validatingadmissionpolicies"
                | "validatingadmissionpolicybindings"
                | "mutatingadmissionpolicies"
                | "mutatingadmissionpolicybindings"
        ))
        || (r.group == "coordination.k8s.io" && r.resource == "leases")
}

/// Beyond upstream: the Endpoints and EndpointSlices of a webhook's own
/// Service never go to that webhook, so a webhook that fails closed on
/// everything can still get endpoints and come back.
pub fn is_own_endpoints(hook: &Webhook, attrs: &Attributes<'_>, object: Option<&Value>) -> bool {
    let Ok(Target::Service {
        namespace, name, ..
    }) = &hook.target
    else {
        return false;
    };
    if attrs.namespace != namespace.as_str()
        || !attrs.resource.group.is_empty() && attrs.resource.group != "discovery.k8s.io"
    {
        return false;
    }
    match (
        attrs.resource.group.as_str(),
        attrs.resource.resource.as_str(),
    ) {
        ("", "endpoints") => attrs.name == name.as_str(),
        ("discovery.k8s.io", "endpointslices") => {
            [object, attrs.old_object].into_iter().flatten().any(|o| {
                o.pointer("/metadata/labels/kubernetes.io~1service-name")
                    .and_then(Value::as_str)
                    == Some(name.as_str())
            })
        }
        _ => false,
    }
}

fn labels(obj: Option<&Value>) -> Option<&Map<String, Value>> {
    obj.map(|o| {
        o.pointer("/metadata/labels")
            .and_then(Value::as_object)
            .unwrap_or(empty_map())
    })
}

fn empty_map() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

/// Upstream's object selector: it matches when the object or the old
/// object has matching labels (an absent object never matches, unless the
/// selector is empty).
pub fn object_selector_matches(
    hook: &Webhook,
    object: Option<&Value>,
    old_object: Option<&Value>,
) -> Result<bool, String> {
    let sel = hook.object_selector.as_ref().map_err(Clone::clone)?;
    Ok(selects_object(sel, object, old_object))
}

/// Whether `sel` selects the object or the old object (an empty selector
/// selects everything, an absent object nothing).
pub fn selects_object(
    sel: &crate::apimachinery::labels::LabelSelector,
    object: Option<&Value>,
    old_object: Option<&Value>,
) -> bool {
    if sel.is_empty() {
        return true;
    }
    [labels(object), labels(old_object)]
        .into_iter()
        .flatten()
        .any(|l| sel.matches(l))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::Operation;
    use crate::registry::resource::ResourceDef;

    fn rule(ops: &[&str], res: &[&str], scope: &str) -> Rule {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect();
        Rule {
            operations: v(ops),
            api_groups: v(&[""]),
            api_versions: v(&["*"]),
            resources: v(res),
            scope: scope.into(),
        }
    }

    fn attrs<'a>(def: &'a ResourceDef, ns: &'a str, sub: &'a str) -> Attributes<'a> {
        Attributes {
            operation: Operation::Create,
            resource: def,
            subresource: sub,
            namespace: ns,
            name: "x",
            object: None,
            old_object: None,
            user: None,
            dry_run: false,
            warnings: None,
            started: None,
            kind: None,
        }
    }

    #[test]
    fn resources_and_subresources_match_as_upstream() {
        let pods = ResourceDef::new("", "v1", "Pod", "pods");
        let main = attrs(&pods, "ns", "");
        let status = attrs(&pods, "ns", "status");
        let gvr = Gvk::of(&main);
        let m = |r: &Rule, a: &Attributes<'_>| rule_matches(r, a, &gvr);
        assert!(m(&rule(&["CREATE"], &["pods"], "*"), &main));
        assert!(!m(&rule(&["UPDATE"], &["pods"], "*"), &main));
        assert!(m(&rule(&["*"], &["*"], "*"), &main));
        assert!(!m(&rule(&["*"], &["*"], "*"), &status));
        assert!(m(&rule(&["*"], &["*/*"], "*"), &status));
        assert!(m(&rule(&["*"], &["pods/*"], "*"), &status));
        assert!(m(&rule(&["*"], &["*/status"], "*"), &status));
        assert!(!m(&rule(&["*"], &["pods/scale"], "*"), &status));
        assert!(m(&rule(&["*"], &["pods"], "Namespaced"), &main));
        assert!(!m(&rule(&["*"], &["pods"], "Cluster"), &main));
    }

    #[test]
    fn namespaces_are_cluster_scoped() {
        let ns = ResourceDef::new("", "v1", "Namespace", "namespaces").cluster_scoped();
        let a = attrs(&ns, "", "");
        let gvr = Gvk::of(&a);
        assert!(rule_matches(
            &rule(&["*"], &["namespaces"], "Cluster"),
            &a,
            &gvr
        ));
        assert!(!rule_matches(
            &rule(&["*"], &["namespaces"], "Namespaced"),
            &a,
            &gvr
        ));
    }

    #[test]
    fn configuration_kinds_and_leases_are_exempt() {
        let vwc = ResourceDef::new(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
        );
        let lease = ResourceDef::new("coordination.k8s.io", "v1", "Lease", "leases");
        let cm = ResourceDef::new("", "v1", "ConfigMap", "configmaps");
        assert!(exempt(&attrs(&vwc, "", "")));
        assert!(exempt(&attrs(&lease, "ns", "")));
        assert!(!exempt(&attrs(&cm, "ns", "")));
    }
}

//! Classification: which FlowSchema a request matches (the first by
//! `matchingPrecedence`, then name, whose subjects and rules match), the
//! priority level it names, and the flow distinguisher (user or namespace)
//! that, with the schema's name, identifies the request's flow.

use serde_json::Value;

use crate::authentication::UserInfo;
use crate::request::info::RequestInfo;

/// A FlowSchema as classification reads it.
#[derive(Clone, Debug)]
pub struct FlowSchema {
    pub name: String,
    pub uid: String,
    pub precedence: i64,
    pub priority_level: String,
    pub distinguisher: Distinguisher,
    rules: Vec<Rule>,
}

/// How flows of one schema are told apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distinguisher {
    None,
    ByUser,
    ByNamespace,
}

#[derive(Clone, Debug)]
struct Rule {
    subjects: Vec<Subject>,
    resource_rules: Vec<ResourceRule>,
    non_resource_rules: Vec<NonResourceRule>,
}

#[derive(Clone, Debug)]
enum Subject {
    User(String),
    Group(String),
    ServiceAccount { namespace: String, name: String },
}

#[derive(Clone, Debug)]
struct ResourceRule {
    verbs: Vec<String>,
    api_groups: Vec<String>,
    resources: Vec<String>,
    cluster_scope: bool,
    namespaces: Vec<String>,
}

#[derive(Clone, Debug)]
struct NonResourceRule {
    verbs: Vec<String>,
    urls: Vec<String>,
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    let mut cur = v;
    for p in path {
        match cur.get(p) {
            Some(next) => cur = next,
            None => return "",
        }
    }
    cur.as_str().unwrap_or("")
}

impl FlowSchema {
    /// Reads a `flowcontrol.apiserver.k8s.io/v1` FlowSchema; `None` when it
    /// names no priority level.
    pub fn from_object(o: &Value) -> Option<FlowSchema> {
        let spec = o.get("spec")?;
        let priority_level = str_at(spec, &["priorityLevelConfiguration", "name"]).to_string();
        if priority_level.is_empty() {
            return None;
        }
        let distinguisher = match str_at(spec, &["distinguisherMethod", "type"]) {
            "ByUser" => Distinguisher::ByUser,
            "ByNamespace" => Distinguisher::ByNamespace,
            _ => Distinguisher::None,
        };
        let rules = spec
            .get("rules")
            .and_then(Value::as_array)
            .map(|rules| rules.iter().map(Rule::from_value).collect())
            .unwrap_or_default();
        Some(FlowSchema {
            name: str_at(o, &["metadata", "name"]).to_string(),
            uid: str_at(o, &["metadata", "uid"]).to_string(),
            precedence: spec
                .get("matchingPrecedence")
                .and_then(Value::as_i64)
                .unwrap_or(1000),
            priority_level,
            distinguisher,
            rules,
        })
    }

    /// Whether the request of `user` described by `info` matches.
    pub fn matches(&self, user: &UserInfo, info: &RequestInfo) -> bool {
        self.rules.iter().any(|r| r.matches(user, info))
    }

    /// The flow distinguisher of a matching request.
    pub fn distinguish<'a>(&self, user: &'a UserInfo, info: &'a RequestInfo) -> &'a str {
        match self.distinguisher {
            Distinguisher::None => "",
            Distinguisher::ByUser => &user.name,
            Distinguisher::ByNamespace => &info.namespace,
        }
    }
}

impl Rule {
    fn from_value(v: &Value) -> Rule {
        let list = |key: &str| -> Vec<&Value> {
            v.get(key)
                .and_then(Value::as_array)
                .map(|a| a.iter().collect())
                .unwrap_or_default()
        };
        let subjects = list("subjects")
            .into_iter()
            .filter_map(|s| match str_at(s, &["kind"]) {
                "User" => Some(Subject::User(str_at(s, &["user", "name"]).to_string())),
                "Group" => Some(Subject::Group(str_at(s, &["group", "name"]).to_string())),
                "ServiceAccount" => Some(Subject::ServiceAccount {
                    namespace: str_at(s, &["serviceAccount", "namespace"]).to_string(),
                    name: str_at(s, &["serviceAccount", "name"]).to_string(),
                }),
                _ => None,
            })
            .collect();
        let resource_rules = list("resourceRules")
            .into_iter()
            .map(|r| ResourceRule {
                verbs: strings(r, "verbs"),
                api_groups: strings(r, "apiGroups"),
                resources: strings(r, "resources"),
                cluster_scope: r
                    .get("clusterScope")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                namespaces: strings(r, "namespaces"),
            })
            .collect();
        let non_resource_rules = list("nonResourceRules")
            .into_iter()
            .map(|r| NonResourceRule {
                verbs: strings(r, "verbs"),
                urls: strings(r, "nonResourceURLs"),
            })
            .collect();
        Rule {
            subjects,
            resource_rules,
            non_resource_rules,
        }
    }

    fn matches(&self, user: &UserInfo, info: &RequestInfo) -> bool {
        if !self.subjects.iter().any(|s| s.matches(user)) {
            return false;
        }
        if info.is_resource_request {
            self.resource_rules.iter().any(|r| r.matches(info))
        } else {
            self.non_resource_rules.iter().any(|r| r.matches(info))
        }
    }
}

fn has(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v == "*" || v == value)
}

impl Subject {
    fn matches(&self, user: &UserInfo) -> bool {
        match self {
            Subject::User(name) => name == "*" || *name == user.name,
            Subject::Group(name) => name == "*" || user.groups.iter().any(|g| g == name),
            Subject::ServiceAccount { namespace, name } => {
                let Some(rest) = user.name.strip_prefix("system:serviceaccount:") else {
                    return false;
                };
                let Some((ns, sa)) = rest.split_once(':') else {
                    return false;
                };
                ns == namespace && (name == "*" || name == sa)
            }
        }
    }
}

impl ResourceRule {
    fn matches(&self, info: &RequestInfo) -> bool {
        if !has(&self.verbs, &info.verb) || !has(&self.api_groups, &info.api_group) {
            return false;
        }
        let resource_ok = if info.subresource.is_empty() {
            has(&self.resources, &info.resource)
        } else {
            let full = format!("{}/{}", info.resource, info.subresource);
            has(&self.resources, &full)
        };
        if !resource_ok {
            return false;
        }
        if info.namespace.is_empty() {
            self.cluster_scope
        } else {
            has(&self.namespaces, &info.namespace)
        }
    }
}

impl NonResourceRule {
    fn matches(&self, info: &RequestInfo) -> bool {
        if !has(&self.verbs, &info.verb) {
            return false;
        }
        let path = info.path.as_str();
        self.urls.iter().any(|u| {
            if u == "*" || u == path {
                return true;
            }
            match u.strip_suffix("/*") {
                Some(prefix) => {
                    path == prefix
                        || path
                            .strip_prefix(prefix)
                            .is_some_and(|rest| rest.starts_with('/'))
                }
                None => false,
            }
        })
    }
}

/// The schemas in matching order: ascending precedence, then name.
pub fn sort(schemas: &mut [FlowSchema]) {
    schemas.sort_by(|a, b| {
        a.precedence
            .cmp(&b.precedence)
            .then_with(|| a.name.cmp(&b.name))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            uid: String::new(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            extra: Default::default(),
        }
    }

    fn info(verb: &str, group: &str, resource: &str, ns: &str) -> RequestInfo {
        RequestInfo {
            is_resource_request: true,
            verb: verb.into(),
            api_group: group.into(),
            resource: resource.into(),
            namespace: ns.into(),
            ..Default::default()
        }
    }

    #[test]
    fn subjects_rules_and_distinguishers() {
        let fs = FlowSchema::from_object(&json!({
            "metadata": {"name": "sa", "uid": "u1"},
            "spec": {
                "matchingPrecedence": 900,
                "priorityLevelConfiguration": {"name": "workload-high"},
                "distinguisherMethod": {"type": "ByNamespace"},
                "rules": [{
                    "subjects": [{"kind": "ServiceAccount",
                                  "serviceAccount": {"namespace": "kube-system", "name": "*"}}],
                    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                       "clusterScope": true, "namespaces": ["*"]}]
                }]
            }
        }))
        .expect("schema");
        let sa = user(
            "system:serviceaccount:kube-system:deployment-controller",
            &[],
        );
        let other = user("system:serviceaccount:default:x", &[]);
        let i = info("list", "apps", "deployments", "team-a");
        assert!(fs.matches(&sa, &i));
        assert!(!fs.matches(&other, &i));
        assert_eq!(fs.distinguish(&sa, &i), "team-a");
    }

    #[test]
    fn cluster_scope_subresources_and_non_resource_prefixes() {
        let fs = FlowSchema::from_object(&json!({
            "metadata": {"name": "x"},
            "spec": {
                "priorityLevelConfiguration": {"name": "p"},
                "rules": [{
                    "subjects": [{"kind": "Group", "group": {"name": "system:nodes"}}],
                    "resourceRules": [{"verbs": ["update"], "apiGroups": [""],
                                       "resources": ["pods/status"], "namespaces": ["*"]}],
                    "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz/*"]}]
                }]
            }
        }))
        .expect("schema");
        let node = user("system:node:a", &["system:nodes"]);
        let mut i = info("update", "", "pods", "default");
        i.subresource = "status".into();
        assert!(fs.matches(&node, &i));
        i.subresource.clear();
        assert!(!fs.matches(&node, &i));
        assert!(!fs.matches(&node, &info("update", "", "pods/status", "")));
        let nr = |path: &str| RequestInfo {
            verb: "get".into(),
            path: path.into(),
            ..Default::default()
        };
        assert!(fs.matches(&node, &nr("/healthz")));
        assert!(fs.matches(&node, &nr("/healthz/etcd")));
        assert!(!fs.matches(&node, &nr("/healthzz")));
    }
}

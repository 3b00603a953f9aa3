//! The audit policy (`audit.k8s.io/v1` `Policy`, `--audit-policy-file`):
//! which requests are recorded, at which level, and which stages are left
//! out.
//!
//! The first rule that matches a request decides its level; a request no
//! rule matches is not audited (`None`), as upstream's policy checker. A
//! rule matches when every field it sets matches: `users`, `userGroups` (any
//! group), `verbs`, and either `namespaces`/`resources` (resource requests
//! only) or `nonResourceURLs` (non-resource requests only). A resource entry
//! `pods` names pods alone, `pods/log` that subresource, `pods/*` pods and all
//! their subresources, `*/status` every status subresource and `*` all. A
//! non-resource URL matches exactly or, ending in `*`, as a prefix.

use std::path::Path;

use anyhow::{bail, Context};
use serde::Deserialize;

use super::{Level, Stage};
use crate::authentication::UserInfo;

/// A loaded, validated policy; rules carry the policy's `omitStages` merged
/// into their own.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    rules: Vec<Rule>,
    omit_stages: Vec<Stage>,
    omit_managed_fields: bool,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PolicyDocument {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    rules: Vec<Rule>,
    #[serde(default)]
    omit_stages: Vec<Stage>,
    #[serde(default)]
    omit_managed_fields: bool,
}

/// One rule of a policy.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    level: Level,
    #[serde(default)]
    users: Vec<String>,
    #[serde(default)]
    user_groups: Vec<String>,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(default)]
    resources: Vec<GroupResources>,
    #[serde(default)]
    namespaces: Vec<String>,
    #[serde(default, rename = "nonResourceURLs")]
    non_resource_urls: Vec<String>,
    #[serde(default)]
    omit_stages: Vec<Stage>,
    #[serde(default)]
    omit_managed_fields: Option<bool>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GroupResources {
    #[serde(default)]
    group: String,
    #[serde(default)]
    resources: Vec<String>,
    #[serde(default)]
    resource_names: Vec<String>,
}

/// What a request is, as far as the policy asks.
#[derive(Clone, Copy, Debug)]
pub struct Attributes<'a> {
    /// The authenticated user; `None` when authentication failed.
    pub user: Option<&'a UserInfo>,
    pub verb: &'a str,
    pub is_resource_request: bool,
    pub path: &'a str,
    pub namespace: &'a str,
    pub api_group: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    pub name: &'a str,
}

/// What the policy decided for one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestAuditConfig {
    pub level: Level,
    pub omit_stages: Vec<Stage>,
    pub omit_managed_fields: bool,
}

impl Policy {
    /// Reads and validates a policy file (YAML or JSON).
    pub fn load(path: &Path) -> anyhow::Result<Policy> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading audit policy {}", path.display()))?;
        Policy::parse(&text).with_context(|| format!("loading audit policy {}", path.display()))
    }

    /// Parses and validates a policy document.
    pub fn parse(text: &str) -> anyhow::Result<Policy> {
        let doc: PolicyDocument = serde_saphyr::from_str(text).context("decoding the policy")?;
        match doc.api_version.as_str() {
            "audit.k8s.io/v1" => {}
            "" => bail!("the policy has no apiVersion (want audit.k8s.io/v1)"),
            other => bail!("unsupported policy apiVersion {other:?} (want audit.k8s.io/v1)"),
        }
        if doc.kind != "Policy" {
            bail!("the policy's kind is {:?}, not \"Policy\"", doc.kind);
        }
        if doc.rules.is_empty() {
            bail!("loaded illegal policy with 0 rules");
        }
        let mut rules = doc.rules;
        for (i, rule) in rules.iter_mut().enumerate() {
            if !rule.non_resource_urls.is_empty()
                && (!rule.resources.is_empty() || !rule.namespaces.is_empty())
            {
                bail!("rules[{i}]: rules cannot apply to both regular resources and non-resource URLs");
            }
            for url in &rule.non_resource_urls {
                if url != "*" && !url.starts_with('/') {
                    bail!("rules[{i}].nonResourceURLs: {url:?}: non-resource URL rules must begin with a '/' character");
                }
                if let Some(star) = url.find('*') {
                    if star != url.len() - 1 {
                        bail!("rules[{i}].nonResourceURLs: {url:?}: non-resource URL wildcards ('*') must be the final character");
                    }
                }
            }
            for gr in &rule.resources {
                if gr.group.contains('/') {
                    bail!(
                        "rules[{i}].resources: group {:?} should not contain '/'",
                        gr.group
                    );
                }
                for res in &gr.resources {
                    if res.matches('/').count() > 1 {
                        bail!(
                            "rules[{i}].resources: {res:?}: at most one '/' (resource/subresource)"
                        );
                    }
                    if !gr.resource_names.is_empty() && (res == "*" || res.starts_with("*/")) {
                        bail!("rules[{i}].resources: resourceNames cannot be used with a wildcard resource");
                    }
                }
            }
            for s in &doc.omit_stages {
                if !rule.omit_stages.contains(s) {
                    rule.omit_stages.push(*s);
                }
            }
        }
        Ok(Policy {
            rules,
            omit_stages: doc.omit_stages,
            omit_managed_fields: doc.omit_managed_fields,
        })
    }

    /// The level and omitted stages of a request.
    pub fn evaluate(&self, attrs: &Attributes<'_>) -> RequestAuditConfig {
        for rule in &self.rules {
            if rule.matches(attrs) {
                return RequestAuditConfig {
                    level: rule.level,
                    omit_stages: rule.omit_stages.clone(),
                    omit_managed_fields: rule
                        .omit_managed_fields
                        .unwrap_or(self.omit_managed_fields),
                };
            }
        }
        RequestAuditConfig {
            level: Level::None,
            omit_stages: self.omit_stages.clone(),
            omit_managed_fields: self.omit_managed_fields,
        }
    }
}

fn has(list: &[String], value: &str) -> bool {
    list.iter().any(|s| s == value)
}

impl Rule {
    fn matches(&self, a: &Attributes<'_>) -> bool {
        if !self.users.is_empty() && !a.user.is_some_and(|u| has(&self.users, &u.name)) {
            return false;
        }
        if !self.user_groups.is_empty()
            && !a
                .user
                .is_some_and(|u| u.groups.iter().any(|g| has(&self.user_groups, g)))
        {
            return false;
        }
        if !self.verbs.is_empty() && !has(&self.verbs, a.verb) {
            return false;
        }
        if !self.namespaces.is_empty() || !self.resources.is_empty() {
            return self.matches_resource(a);
        }
        if !self.non_resource_urls.is_empty() {
            return !a.is_resource_request
                && self
                    .non_resource_urls
                    .iter()
                    .any(|spec| path_matches(a.path, spec));
        }
        true
    }

    fn matches_resource(&self, a: &Attributes<'_>) -> bool {
        if !a.is_resource_request {
            return false;
        }
        // Cluster-scoped resources have the empty namespace.
        if !self.namespaces.is_empty() && !has(&self.namespaces, a.namespace) {
            return false;
        }
        if self.resources.is_empty() {
            return true;
        }
        let combined = if a.subresource.is_empty() {
            a.resource.to_string()
        } else {
            format!("{}/{}", a.resource, a.subresource)
        };
        self.resources.iter().any(|gr| {
            gr.group == a.api_group
                && (gr.resources.is_empty()
                    || gr.resources.iter().any(|res| {
                        (gr.resource_names.is_empty() || has(&gr.resource_names, a.name))
                            && (*res == combined
                                || res == "*"
                                || (!a.subresource.is_empty()
                                    && res.strip_prefix("*/") == Some(a.subresource))
                                || res.strip_suffix("/*") == Some(a.resource))
                    }))
        })
    }
}

fn path_matches(path: &str, spec: &str) -> bool {
    spec == "*"
        || spec == path
        || spec
            .strip_suffix('*')
            .is_some_and(|prefix| path.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: ["system:kube-proxy"]
  verbs: ["watch"]
- level: None
  nonResourceURLs: ["/healthz*", "/version"]
- level: Metadata
  resources:
  - group: ""
    resources: ["secrets", "configmaps"]
- level: Request
  userGroups: ["devs"]
  namespaces: ["team-a"]
- level: RequestResponse
  resources:
  - group: "apps"
    resources: ["deployments/*"]
  - group: ""
    resources: ["*/status"]
  - group: "rbac.authorization.k8s.io"
    resources: ["roles"]
    resourceNames: ["admin"]
  omitStages: [ResponseStarted]
- level: Metadata
"#;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        }
    }

    fn resource<'a>(
        u: &'a UserInfo,
        verb: &'a str,
        group: &'a str,
        ns: &'a str,
        res: &'a str,
        sub: &'a str,
        name: &'a str,
    ) -> Attributes<'a> {
        Attributes {
            user: Some(u),
            verb,
            is_resource_request: true,
            path: "/",
            namespace: ns,
            api_group: group,
            resource: res,
            subresource: sub,
            name,
        }
    }

    #[test]
    fn the_first_matching_rule_decides() {
        let p = Policy::parse(POLICY).unwrap();
        let alice = user("alice", &["devs"]);
        let proxy = user("system:kube-proxy", &[]);
        let level = |a: Attributes<'_>| p.evaluate(&a).level;
        assert_eq!(
            level(resource(&proxy, "watch", "", "", "endpoints", "", "")),
            Level::None
        );
        assert_eq!(
            level(resource(&proxy, "list", "", "", "endpoints", "", "")),
            Level::Metadata
        );
        assert_eq!(
            level(resource(&alice, "get", "", "team-a", "secrets", "", "s")),
            Level::Metadata
        );
        assert_eq!(
            level(resource(&alice, "get", "", "team-a", "pods", "", "p")),
            Level::Request
        );
        assert_eq!(
            level(resource(&alice, "get", "apps", "b", "deployments", "", "d")),
            Level::RequestResponse,
            "resource/* matches the resource itself"
        );
        assert_eq!(
            level(resource(
                &alice,
                "update",
                "apps",
                "b",
                "deployments",
                "scale",
                "d"
            )),
            Level::RequestResponse
        );
        assert_eq!(
            level(resource(&alice, "patch", "", "b", "pods", "status", "p")),
            Level::RequestResponse
        );
        assert_eq!(
            level(resource(&alice, "get", "", "b", "pods", "", "p")),
            Level::Metadata
        );
        let rbac = "rbac.authorization.k8s.io";
        assert_eq!(
            level(resource(&alice, "get", rbac, "b", "roles", "", "admin")),
            Level::RequestResponse
        );
        assert_eq!(
            level(resource(&alice, "get", rbac, "b", "roles", "", "view")),
            Level::Metadata
        );
        let health = Attributes {
            user: Some(&alice),
            verb: "get",
            is_resource_request: false,
            path: "/healthz/etcd",
            namespace: "",
            api_group: "",
            resource: "",
            subresource: "",
            name: "",
        };
        assert_eq!(level(health), Level::None);
        assert_eq!(
            level(Attributes {
                path: "/version/x",
                ..health
            }),
            Level::Metadata
        );
        assert_eq!(
            level(Attributes {
                user: None,
                ..health
            }),
            Level::None
        );
    }

    #[test]
    fn stages_of_the_policy_and_the_rule_are_merged() {
        let p = Policy::parse(POLICY).unwrap();
        let alice = user("alice", &[]);
        let c = p.evaluate(&resource(&alice, "get", "", "x", "pods", "status", "p"));
        assert_eq!(
            c.omit_stages,
            [Stage::ResponseStarted, Stage::RequestReceived]
        );
        let c = p.evaluate(&resource(&alice, "get", "", "x", "pods", "", "p"));
        assert_eq!(c.omit_stages, [Stage::RequestReceived]);
    }

    #[test]
    fn bad_policies_are_refused() {
        for (text, want) in [
            ("apiVersion: audit.k8s.io/v1\nkind: Policy\n", "0 rules"),
            ("kind: Policy\nrules: [{level: None}]\n", "no apiVersion"),
            ("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Everything}]\n", "decoding"),
            (
                "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: ['/x'], namespaces: [a]}]\n",
                "both regular resources and non-resource URLs",
            ),
            (
                "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: ['/x*y']}]\n",
                "final character",
            ),
            (
                "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, omitStages: [Sometime]}]\n",
                "decoding",
            ),
        ] {
            let err = format!("{:#}", Policy::parse(text).unwrap_err());
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}

//! RBAC: upstream's `rbac.authorization.k8s.io` authorizer.
//!
//! Decisions come from an in-memory [`RbacIndex`] of Roles, ClusterRoles,
//! RoleBindings and ClusterRoleBindings, rebuilt by the owner of those
//! objects whenever one changes (kube-core feeds it from its watch caches),
//! so a decision never waits on storage. The rules are upstream's:
//!
//! - ClusterRoleBindings grant their ClusterRole everywhere; RoleBindings
//!   grant their Role or ClusterRole in their own namespace only.
//! - A subject applies to a user by name (`User`), by group (`Group`), or as
//!   `system:serviceaccount:<namespace>:<name>` (`ServiceAccount`, whose
//!   namespace defaults to the binding's).
//! - A rule allows a resource request when verb, API group, resource (with
//!   `resource/subresource` and `*/subresource` forms) and resource name all
//!   match (`*` matches anything; empty `resourceNames` matches every name);
//!   a non-resource request when verb and URL match (a trailing `*` matches a
//!   prefix).
//! - RBAC only ever allows: without a matching rule it has no opinion, with
//!   the reason naming missing roles (`RBAC: clusterrole... not found`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use serde_json::{json, Value};

use super::{decided, Attributes, Authorizer, Decision, DecisionFuture};
use crate::authentication::UserInfo;
use crate::request::info::RequestInfo;

/// One rule of a Role or ClusterRole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    pub non_resource_urls: Vec<String>,
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    crate::apimachinery::meta::string_list(v.get(key))
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

impl PolicyRule {
    /// Reads a rule from its JSON form; missing lists are empty.
    pub fn from_json(v: &Value) -> Self {
        PolicyRule {
            verbs: strings(v, "verbs"),
            api_groups: strings(v, "apiGroups"),
            resources: strings(v, "resources"),
            resource_names: strings(v, "resourceNames"),
            non_resource_urls: strings(v, "nonResourceURLs"),
        }
    }

    /// Whether this rule allows the request.
    pub fn allows(&self, r: &RequestInfo) -> bool {
        if !matches_any(&self.verbs, &r.verb) {
            return false;
        }
        if !r.is_resource_request {
            return self
                .non_resource_urls
                .iter()
                .any(|u| non_resource_url_matches(u, &r.path));
        }
        matches_any(&self.api_groups, &r.api_group)
            && resource_matches(&self.resources, &r.resource, &r.subresource)
            && (self.resource_names.is_empty() || self.resource_names.contains(&r.name))
    }
}

fn matches_any(allowed: &[String], requested: &str) -> bool {
    allowed.iter().any(|a| a == "*" || a == requested)
}

/// Upstream's `ResourceMatches`: `*`, the exact `resource[/subresource]`, or
/// `*/subresource`.
fn resource_matches(rules: &[String], resource: &str, subresource: &str) -> bool {
    rules.iter().any(|rule| {
        if rule == "*" {
            return true;
        }
        if subresource.is_empty() {
            return rule == resource;
        }
        match rule.split_once('/') {
            Some((res, sub)) => sub == subresource && (res == resource || res == "*"),
            None => false,
        }
    })
}

/// Upstream's `NonResourceURLMatches`: `*`, the exact path, or a prefix
/// ending in `*`.
pub fn non_resource_url_matches(rule: &str, path: &str) -> bool {
    if rule == "*" || rule == path {
        return true;
    }
    match rule.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => false,
    }
}

/// Who a binding grants its role to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subject {
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

impl Subject {
    /// Upstream's `appliesToUser`; `binding_namespace` is the default
    /// namespace of ServiceAccount subjects.
    pub fn applies_to(&self, user: &UserInfo, binding_namespace: &str) -> bool {
        match self.kind.as_str() {
            "User" => user.name == self.name,
            "Group" => user.in_group(&self.name),
            "ServiceAccount" => {
                let ns = if self.namespace.is_empty() {
                    binding_namespace
                } else {
                    &self.namespace
                };
                user.name
                    .strip_prefix("system:serviceaccount:")
                    .and_then(|rest| rest.split_once(':'))
                    .is_some_and(|(n, name)| n == ns && name == self.name)
            }
            _ => false,
        }
    }
}

/// A RoleBinding (with its namespace) or ClusterRoleBinding (namespace empty).
#[derive(Clone, Debug)]
struct Binding {
    namespace: String,
    subjects: Vec<Subject>,
    role_kind: String,
    role_name: String,
}

impl Binding {
    fn from_json(v: &Value) -> Self {
        let meta = v.get("metadata").unwrap_or(&Value::Null);
        let role_ref = v.get("roleRef").unwrap_or(&Value::Null);
        Binding {
            namespace: str_at(meta, "namespace").to_string(),
            subjects: v
                .get("subjects")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|s| Subject {
                    kind: str_at(s, "kind").to_string(),
                    name: str_at(s, "name").to_string(),
                    namespace: str_at(s, "namespace").to_string(),
                })
                .collect(),
            role_kind: str_at(role_ref, "kind").to_string(),
            role_name: str_at(role_ref, "name").to_string(),
        }
    }

    fn applies_to(&self, user: &UserInfo) -> bool {
        self.subjects
            .iter()
            .any(|s| s.applies_to(user, &self.namespace))
    }
}

fn rules_of(v: &Value) -> Arc<Vec<PolicyRule>> {
    Arc::new(
        v.get("rules")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(PolicyRule::from_json)
            .collect(),
    )
}

fn meta_str<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Bindings (all ClusterRoleBindings, or one namespace's RoleBindings)
/// indexed by subject, so that finding a user's bindings costs the
/// bindings that name the user, their groups or their service account,
/// not every binding there is.
#[derive(Default)]
struct BindingSet {
    /// In the order they were given (the order rules are visited in).
    bindings: Vec<Binding>,
    /// User subjects: name to positions in `bindings`.
    users: HashMap<String, Vec<u32>>,
    /// Group subjects.
    groups: HashMap<String, Vec<u32>>,
    /// ServiceAccount subjects, keyed `<namespace>:<name>` (what follows
    /// `system:serviceaccount:` in the account's user name).
    service_accounts: HashMap<String, Vec<u32>>,
}

impl BindingSet {
    fn push(&mut self, b: Binding) {
        let at = self.bindings.len() as u32;
        for s in &b.subjects {
            let (map, key) = match s.kind.as_str() {
                "User" => (&mut self.users, s.name.clone()),
                "Group" => (&mut self.groups, s.name.clone()),
                "ServiceAccount" => {
                    let ns = if s.namespace.is_empty() {
                        &b.namespace
                    } else {
                        &s.namespace
                    };
                    (&mut self.service_accounts, format!("{ns}:{}", s.name))
                }
                _ => continue,
            };
            let positions = map.entry(key).or_default();
            if positions.last() != Some(&at) {
                positions.push(at);
            }
        }
        self.bindings.push(b);
    }

    /// The bindings that apply to `user`, in their order.
    fn applying_to<'a>(&'a self, user: &UserInfo) -> impl Iterator<Item = &'a Binding> + 'a {
        let mut at: Vec<u32> = Vec::new();
        if let Some(p) = self.users.get(&user.name) {
            at.extend_from_slice(p);
        }
        for g in &user.groups {
            if let Some(p) = self.groups.get(g) {
                at.extend_from_slice(p);
            }
        }
        if let Some(p) = user
            .name
            .strip_prefix("system:serviceaccount:")
            .and_then(|account| self.service_accounts.get(account))
        {
            at.extend_from_slice(p);
        }
        at.sort_unstable();
        at.dedup();
        at.into_iter()
            .filter_map(move |i| self.bindings.get(i as usize))
    }
}

/// The RBAC objects, indexed for authorization: roles by name, bindings by
/// namespace and subject (a request's cost does not grow with the number
/// of bindings that do not name its user). Each part (all ClusterRoles, all
/// ClusterRoleBindings, one namespace's Roles, one namespace's
/// RoleBindings) is shared between an index and the next one
/// [`RbacIndex::rebuilt`] makes, so a change costs the parts it touches.
#[derive(Default, Clone)]
pub struct RbacIndex {
    cluster_roles: Arc<HashMap<String, Arc<Vec<PolicyRule>>>>,
    /// Namespace → Role name → rules.
    roles: HashMap<String, Arc<HashMap<String, Arc<Vec<PolicyRule>>>>>,
    cluster_role_bindings: Arc<BindingSet>,
    role_bindings: HashMap<String, Arc<BindingSet>>,
}

/// Where the rules a visitor sees come from.
pub enum RuleSource<'a> {
    /// A rule of the role a binding refers to.
    Rule(&'a PolicyRule),
    /// A binding whose role does not exist (the reason RBAC reports).
    Missing(String),
}

/// The RBAC objects an index is built from, as an informer mirrors them:
/// cluster-scoped ones keyed by name, namespaced ones by
/// `<namespace>/<name>` (so one namespace's objects are one key range).
pub struct RbacObjects<'a> {
    pub cluster_roles: &'a BTreeMap<String, Value>,
    pub roles: &'a BTreeMap<String, Value>,
    pub cluster_role_bindings: &'a BTreeMap<String, Value>,
    pub role_bindings: &'a BTreeMap<String, Value>,
}

/// Which parts of an [`RbacIndex`] changed: the ClusterRoles, the
/// ClusterRoleBindings (each one part), and the namespaces whose Roles or
/// RoleBindings did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RbacChanges {
    pub cluster_roles: bool,
    pub cluster_role_bindings: bool,
    pub role_namespaces: BTreeSet<String>,
    pub role_binding_namespaces: BTreeSet<String>,
}

impl RbacChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        *self == RbacChanges::default()
    }
}

/// The objects of `objects` (keyed `<namespace>/<name>`) in `namespace`.
fn in_namespace<'a>(
    objects: &'a BTreeMap<String, Value>,
    namespace: &str,
) -> impl Iterator<Item = &'a Value> + 'a {
    // `/` is followed by `0` in byte order: the range holds exactly the
    // keys `<namespace>/…`.
    objects
        .range(format!("{namespace}/")..format!("{namespace}0"))
        .map(|(_, v)| v)
}

fn role_map<'a>(
    roles: impl IntoIterator<Item = &'a Value>,
) -> HashMap<String, Arc<Vec<PolicyRule>>> {
    roles
        .into_iter()
        .map(|r| (meta_str(r, "name").to_string(), rules_of(r)))
        .collect()
}

fn binding_set<'a>(bindings: impl IntoIterator<Item = &'a Value>) -> BindingSet {
    let mut set = BindingSet::default();
    for b in bindings {
        set.push(Binding::from_json(b));
    }
    set
}

impl RbacIndex {
    /// Indexes the four kinds' objects (their JSON as stored).
    pub fn build<'a>(
        cluster_roles: impl IntoIterator<Item = &'a Value>,
        roles: impl IntoIterator<Item = &'a Value>,
        cluster_role_bindings: impl IntoIterator<Item = &'a Value>,
        role_bindings: impl IntoIterator<Item = &'a Value>,
    ) -> Self {
        let mut roles_by_ns: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
        for r in roles {
            roles_by_ns
                .entry(meta_str(r, "namespace"))
                .or_default()
                .push(r);
        }
        let mut bindings_by_ns: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
        for b in role_bindings {
            bindings_by_ns
                .entry(meta_str(b, "namespace"))
                .or_default()
                .push(b);
        }
        RbacIndex {
            cluster_roles: Arc::new(role_map(cluster_roles)),
            roles: roles_by_ns
                .into_iter()
                .map(|(ns, rs)| (ns.to_string(), Arc::new(role_map(rs))))
                .collect(),
            cluster_role_bindings: Arc::new(binding_set(cluster_role_bindings)),
            role_bindings: bindings_by_ns
                .into_iter()
                .map(|(ns, bs)| (ns.to_string(), Arc::new(binding_set(bs))))
                .collect(),
        }
    }

    /// Every part of `objects` indexed.
    pub fn of(objects: &RbacObjects<'_>) -> Self {
        Self::build(
            objects.cluster_roles.values(),
            objects.roles.values(),
            objects.cluster_role_bindings.values(),
            objects.role_bindings.values(),
        )
    }

    /// This index with the parts in `changes` rebuilt from `objects` (the
    /// current state of all four kinds) and every other part shared: a
    /// RoleBinding written in one namespace costs that namespace's
    /// bindings, not every binding in the cluster. The result equals
    /// [`RbacIndex::of`] `objects` when `changes` names every part that
    /// differs.
    pub fn rebuilt(&self, changes: &RbacChanges, objects: &RbacObjects<'_>) -> Self {
        let mut next = self.clone();
        if changes.cluster_roles {
            next.cluster_roles = Arc::new(role_map(objects.cluster_roles.values()));
        }
        if changes.cluster_role_bindings {
            next.cluster_role_bindings =
                Arc::new(binding_set(objects.cluster_role_bindings.values()));
        }
        for ns in &changes.role_namespaces {
            let roles = role_map(in_namespace(objects.roles, ns));
            if roles.is_empty() {
                next.roles.remove(ns);
            } else {
                next.roles.insert(ns.clone(), Arc::new(roles));
            }
        }
        for ns in &changes.role_binding_namespaces {
            let set = binding_set(in_namespace(objects.role_bindings, ns));
            if set.bindings.is_empty() {
                next.role_bindings.remove(ns);
            } else {
                next.role_bindings.insert(ns.clone(), Arc::new(set));
            }
        }
        next
    }

    fn role_rules(&self, b: &Binding) -> Result<&[PolicyRule], String> {
        let found = match b.role_kind.as_str() {
            "ClusterRole" => self.cluster_roles.get(&b.role_name),
            "Role" => self
                .roles
                .get(&b.namespace)
                .and_then(|roles| roles.get(&b.role_name)),
            _ => None,
        };
        found
            .map(|r| r.as_slice())
            .ok_or_else(|| match b.role_kind.as_str() {
                "ClusterRole" => format!(
                    "clusterrole.rbac.authorization.k8s.io \"{}\" not found",
                    b.role_name
                ),
                _ => format!(
                    "role.rbac.authorization.k8s.io \"{}\" not found",
                    b.role_name
                ),
            })
    }

    /// The rules of the role a binding in `namespace` refers to
    /// (`kind` `Role` or `ClusterRole`), if it exists.
    pub fn role_ref_rules(
        &self,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Option<Vec<PolicyRule>> {
        let found = match kind {
            "ClusterRole" => self.cluster_roles.get(name),
            "Role" => self.roles.get(namespace).and_then(|roles| roles.get(name)),
            _ => None,
        };
        found.map(|r| r.as_ref().clone())
    }

    /// Calls `visit` with every rule granted to `user` in `namespace` (the
    /// cluster-wide ones first), stopping when it returns `false`.
    pub fn visit_rules_for(
        &self,
        user: &UserInfo,
        namespace: &str,
        mut visit: impl FnMut(RuleSource<'_>) -> bool,
    ) {
        let namespaced = (!namespace.is_empty())
            .then(|| self.role_bindings.get(namespace))
            .flatten()
            .into_iter()
            .flat_map(|set| set.applying_to(user));
        for b in self
            .cluster_role_bindings
            .applying_to(user)
            .chain(namespaced)
        {
            debug_assert!(b.applies_to(user));
            match self.role_rules(b) {
                Ok(rules) => {
                    for r in rules {
                        if !visit(RuleSource::Rule(r)) {
                            return;
                        }
                    }
                }
                Err(e) => {
                    if !visit(RuleSource::Missing(e)) {
                        return;
                    }
                }
            }
        }
    }

    /// The decision for one request.
    pub fn decide(&self, user: &UserInfo, request: &RequestInfo) -> Decision {
        let mut allowed = false;
        let mut errors = Vec::new();
        self.visit_rules_for(user, &request.namespace, |src| match src {
            RuleSource::Rule(rule) => {
                allowed = rule.allows(request);
                !allowed
            }
            RuleSource::Missing(e) => {
                errors.push(e);
                true
            }
        });
        if allowed {
            return Decision::Allow;
        }
        Decision::NoOpinion(match errors.len() {
            0 => String::new(),
            1 => format!("RBAC: {}", errors[0]),
            _ => format!("RBAC: [{}]", errors.join(", ")),
        })
    }

    /// Every rule granted to `user` in `namespace` and the errors met on the
    /// way (for SelfSubjectRulesReview).
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<PolicyRule>, Vec<String>) {
        let (mut rules, mut errors) = (Vec::new(), Vec::new());
        self.visit_rules_for(user, namespace, |src| {
            match src {
                RuleSource::Rule(r) => rules.push(r.clone()),
                RuleSource::Missing(e) => errors.push(e),
            }
            true
        });
        (rules, errors)
    }
}

/// The RBAC authorizer. Until the owner of the RBAC objects has loaded them
/// ([`RbacAuthorizer::replace`] with `synced`), it has no opinion, so only
/// authorizers before it (`system:masters`) allow anything.
#[derive(Default)]
pub struct RbacAuthorizer {
    index: RwLock<Arc<RbacIndex>>,
    synced: AtomicBool,
}

impl RbacAuthorizer {
    /// An authorizer with no objects, not synced.
    pub fn new() -> Self {
        Self::default()
    }

    /// Installs a new index; `synced` once every kind was listed.
    pub fn replace(&self, index: RbacIndex, synced: bool) {
        if let Ok(mut guard) = self.index.write() {
            *guard = Arc::new(index);
        }
        if synced {
            self.synced.store(true, Ordering::Release);
        }
    }

    /// Whether every kind has been loaded.
    pub fn synced(&self) -> bool {
        self.synced.load(Ordering::Acquire)
    }

    /// The current index.
    pub fn snapshot(&self) -> Arc<RbacIndex> {
        match self.index.read() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl Authorizer for RbacAuthorizer {
    fn authorize<'a>(&'a self, attrs: &'a Attributes<'a>) -> DecisionFuture<'a> {
        if !self.synced() {
            return decided(Decision::NoOpinion(
                "RBAC: the authorization cache is not loaded yet".into(),
            ));
        }
        decided(self.snapshot().decide(attrs.user, attrs.request))
    }
}

/// The parts of `servant` that none of `owner` covers (upstream's
/// `Covers`, used by RBAC's escalation check: nobody may grant what they do
/// not hold). `servant` is broken down into one-verb, one-group,
/// one-resource, one-name rules; the missing ones are returned.
pub fn uncovered(owner: &[PolicyRule], servant: &PolicyRule) -> Vec<PolicyRule> {
    let mut missing = Vec::new();
    let one = |v: &str| vec![v.to_string()];
    for verb in &servant.verbs {
        for url in &servant.non_resource_urls {
            let covered = owner.iter().any(|o| {
                matches_any(&o.verbs, verb)
                    && o.non_resource_urls
                        .iter()
                        .any(|u| non_resource_url_matches(u, url))
            });
            if !covered {
                missing.push(PolicyRule {
                    verbs: one(verb),
                    non_resource_urls: one(url),
                    ..Default::default()
                });
            }
        }
        for group in &servant.api_groups {
            for resource in &servant.resources {
                let names: Vec<Option<&String>> = if servant.resource_names.is_empty() {
                    vec![None]
                } else {
                    servant.resource_names.iter().map(Some).collect()
                };
                for name in names {
                    let covered = owner.iter().any(|o| {
                        matches_any(&o.verbs, verb)
                            && matches_any(&o.api_groups, group)
                            && resource_covers(&o.resources, resource)
                            && match name {
                                None => o.resource_names.is_empty(),
                                Some(n) => {
                                    o.resource_names.is_empty() || o.resource_names.contains(n)
                                }
                            }
                    });
                    if !covered {
                        missing.push(PolicyRule {
                            verbs: one(verb),
                            api_groups: one(group),
                            resources: one(resource),
                            resource_names: name.map(|n| one(n)).unwrap_or_default(),
                            ..Default::default()
                        });
                    }
                }
            }
        }
    }
    missing
}

/// Whether an owner's `resources` cover one servant resource (`*`, the
/// exact name, or `*/<subresource>` for a subresource).
fn resource_covers(owner: &[String], resource: &str) -> bool {
    owner.iter().any(|o| {
        o == "*"
            || o == resource
            || resource
                .split_once('/')
                .is_some_and(|(_, sub)| o.strip_prefix("*/") == Some(sub))
    })
}

/// Upstream's compact form of rules in escalation errors:
/// `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`.
pub fn compact_string(rules: &[PolicyRule]) -> String {
    let list = |v: &[String]| {
        format!(
            "[{}]",
            v.iter()
                .map(|s| format!("{s:?}"))
                .collect::<Vec<_>>()
                .join(" ")
        )
    };
    rules
        .iter()
        .map(|r| {
            let mut parts = Vec::new();
            if !r.api_groups.is_empty() {
                parts.push(format!("APIGroups:{}", list(&r.api_groups)));
            }
            if !r.resources.is_empty() {
                parts.push(format!("Resources:{}", list(&r.resources)));
            }
            if !r.resource_names.is_empty() {
                parts.push(format!("ResourceNames:{}", list(&r.resource_names)));
            }
            if !r.non_resource_urls.is_empty() {
                parts.push(format!("NonResourceURLs:{}", list(&r.non_resource_urls)));
            }
            parts.push(format!("Verbs:{}", list(&r.verbs)));
            format!("{{{}}}", parts.join(", "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Rules in SelfSubjectRulesReview's form: `(resourceRules, nonResourceRules)`.
pub fn review_rules(rules: &[PolicyRule]) -> (Vec<Value>, Vec<Value>) {
    let (mut res, mut non) = (Vec::new(), Vec::new());
    for r in rules {
        if !r.resources.is_empty() {
            let mut v =
                json!({"verbs": r.verbs, "apiGroups": r.api_groups, "resources": r.resources});
            if !r.resource_names.is_empty() {
                v["resourceNames"] = json!(r.resource_names);
            }
            res.push(v);
        }
        if !r.non_resource_urls.is_empty() {
            non.push(json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}));
        }
    }
    (res, non)
}

#[cfg(test)]
mod tests;

//! RBAC: upstream's `rbac.authorization.k8s.io` authorizer.
//!
//! Decisions come from an in-memory [`RbacIndex`] of Roles, ClusterRoles,
//! RoleBindings and ClusterRoleBindings, updated object by object by the
//! owner of those objects whenever one changes (kube-core feeds it from its
//! watch caches),
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

/// Which index of a [`BindingSet`] a subject goes to.
#[derive(Clone, Copy)]
enum SubjectIndex {
    User,
    Group,
    ServiceAccount,
}

/// Bindings (all ClusterRoleBindings, or one namespace's RoleBindings)
/// indexed by subject, so that finding a user's bindings costs the
/// bindings that name the user, their groups or their service account,
/// not every binding there is. A binding is added, replaced or removed
/// by name at the cost of its own subjects.
#[derive(Default)]
struct BindingSet {
    /// By name (visited in name order).
    bindings: HashMap<String, Binding>,
    /// User subjects: name to the names of the bindings naming them.
    users: HashMap<String, BTreeSet<String>>,
    /// Group subjects.
    groups: HashMap<String, BTreeSet<String>>,
    /// ServiceAccount subjects, keyed `<namespace>:<name>` (what follows
    /// `system:serviceaccount:` in the account's user name).
    service_accounts: HashMap<String, BTreeSet<String>>,
}

impl BindingSet {
    /// Where each subject of `b` is indexed.
    fn subject_keys(b: &Binding) -> impl Iterator<Item = (SubjectIndex, String)> + '_ {
        b.subjects.iter().filter_map(|s| match s.kind.as_str() {
            "User" => Some((SubjectIndex::User, s.name.clone())),
            "Group" => Some((SubjectIndex::Group, s.name.clone())),
            "ServiceAccount" => {
                let ns = if s.namespace.is_empty() {
                    &b.namespace
                } else {
                    &s.namespace
                };
                Some((SubjectIndex::ServiceAccount, format!("{ns}:{}", s.name)))
            }
            _ => None,
        })
    }

    fn index_mut(&mut self, which: SubjectIndex) -> &mut HashMap<String, BTreeSet<String>> {
        match which {
            SubjectIndex::User => &mut self.users,
            SubjectIndex::Group => &mut self.groups,
            SubjectIndex::ServiceAccount => &mut self.service_accounts,
        }
    }

    /// Adds the binding `name`, replacing the one of that name.
    fn insert(&mut self, name: &str, b: Binding) {
        self.remove(name);
        let keys: Vec<_> = Self::subject_keys(&b).collect();
        for (which, key) in keys {
            self.index_mut(which)
                .entry(key)
                .or_default()
                .insert(name.to_string());
        }
        self.bindings.insert(name.to_string(), b);
    }

    /// Removes the binding `name`, if there is one.
    fn remove(&mut self, name: &str) {
        let Some(old) = self.bindings.remove(name) else {
            return;
        };
        for (which, key) in Self::subject_keys(&old) {
            let index = self.index_mut(which);
            if let Some(names) = index.get_mut(&key) {
                names.remove(name);
                if names.is_empty() {
                    index.remove(&key);
                }
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.bindings.is_empty()
    }

    /// The bindings that apply to `user`, in their order.
    fn applying_to<'a>(&'a self, user: &UserInfo) -> impl Iterator<Item = &'a Binding> + 'a {
        let mut names: Vec<&'a str> = Vec::new();
        let mut add = |found: Option<&'a BTreeSet<String>>| {
            names.extend(found.into_iter().flatten().map(String::as_str));
        };
        add(self.users.get(&user.name));
        for g in &user.groups {
            add(self.groups.get(g));
        }
        add(user
            .name
            .strip_prefix("system:serviceaccount:")
            .and_then(|account| self.service_accounts.get(account)));
        names.sort_unstable();
        names.dedup();
        names
            .into_iter()
            .filter_map(move |name| self.bindings.get(name))
    }
}

/// The RBAC objects, indexed for authorization: roles by name, bindings by
/// namespace and subject (a request's cost does not grow with the number
/// of bindings that do not name its user). [`RbacIndex::apply`] updates it
/// object by object, so a change costs the objects that changed, whatever
/// the size of their namespace.
#[derive(Default)]
pub struct RbacIndex {
    cluster_roles: HashMap<String, Arc<Vec<PolicyRule>>>,
    /// Namespace → Role name → rules.
    roles: HashMap<String, HashMap<String, Arc<Vec<PolicyRule>>>>,
    cluster_role_bindings: BindingSet,
    role_bindings: HashMap<String, BindingSet>,
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
/// `<namespace>/<name>`.
pub struct RbacObjects<'a> {
    pub cluster_roles: &'a BTreeMap<String, Value>,
    pub roles: &'a BTreeMap<String, Value>,
    pub cluster_role_bindings: &'a BTreeMap<String, Value>,
    pub role_bindings: &'a BTreeMap<String, Value>,
}

/// The objects added, changed or removed since an [`RbacIndex`] was last
/// updated, by their keys in [`RbacObjects`] (a name, or
/// `<namespace>/<name>`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RbacChanges {
    pub cluster_roles: BTreeSet<String>,
    pub roles: BTreeSet<String>,
    pub cluster_role_bindings: BTreeSet<String>,
    pub role_bindings: BTreeSet<String>,
}

impl RbacChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        *self == RbacChanges::default()
    }

    /// How many objects changed.
    pub fn len(&self) -> usize {
        self.cluster_roles.len()
            + self.roles.len()
            + self.cluster_role_bindings.len()
            + self.role_bindings.len()
    }
}

/// `(namespace, name)` of a mirror key (`""` namespace for a bare name).
fn split_key(key: &str) -> (&str, &str) {
    key.split_once('/').unwrap_or(("", key))
}

impl RbacIndex {
    /// Indexes the four kinds' objects (their JSON as stored).
    pub fn build<'a>(
        cluster_roles: impl IntoIterator<Item = &'a Value>,
        roles: impl IntoIterator<Item = &'a Value>,
        cluster_role_bindings: impl IntoIterator<Item = &'a Value>,
        role_bindings: impl IntoIterator<Item = &'a Value>,
    ) -> Self {
        let mut index = RbacIndex::default();
        for r in cluster_roles {
            index
                .cluster_roles
                .insert(meta_str(r, "name").to_string(), rules_of(r));
        }
        for r in roles {
            index
                .roles
                .entry(meta_str(r, "namespace").to_string())
                .or_default()
                .insert(meta_str(r, "name").to_string(), rules_of(r));
        }
        for b in cluster_role_bindings {
            index
                .cluster_role_bindings
                .insert(meta_str(b, "name"), Binding::from_json(b));
        }
        for b in role_bindings {
            index
                .role_bindings
                .entry(meta_str(b, "namespace").to_string())
                .or_default()
                .insert(meta_str(b, "name"), Binding::from_json(b));
        }
        index
    }

    /// Every object of `objects` indexed.
    pub fn of(objects: &RbacObjects<'_>) -> Self {
        Self::build(
            objects.cluster_roles.values(),
            objects.roles.values(),
            objects.cluster_role_bindings.values(),
            objects.role_bindings.values(),
        )
    }

    /// Brings the objects named in `changes` up to date with `objects` (the
    /// current state of all four kinds): each is re-indexed, or dropped when
    /// `objects` no longer holds it, at the cost of that object alone (a
    /// RoleBinding written among ten thousand in its namespace costs one
    /// RoleBinding). The result equals [`RbacIndex::of`] `objects` when
    /// `changes` names every object that differs.
    pub fn apply(&mut self, changes: &RbacChanges, objects: &RbacObjects<'_>) {
        for name in &changes.cluster_roles {
            match objects.cluster_roles.get(name) {
                Some(r) => {
                    self.cluster_roles.insert(name.clone(), rules_of(r));
                }
                None => {
                    self.cluster_roles.remove(name);
                }
            }
        }
        for key in &changes.roles {
            let (ns, name) = split_key(key);
            match objects.roles.get(key) {
                Some(r) => {
                    self.roles
                        .entry(ns.to_string())
                        .or_default()
                        .insert(name.to_string(), rules_of(r));
                }
                None => {
                    if let Some(roles) = self.roles.get_mut(ns) {
                        roles.remove(name);
                        if roles.is_empty() {
                            self.roles.remove(ns);
                        }
                    }
                }
            }
        }
        for name in &changes.cluster_role_bindings {
            match objects.cluster_role_bindings.get(name) {
                Some(b) => self
                    .cluster_role_bindings
                    .insert(name, Binding::from_json(b)),
                None => self.cluster_role_bindings.remove(name),
            }
        }
        for key in &changes.role_bindings {
            let (ns, name) = split_key(key);
            match objects.role_bindings.get(key) {
                Some(b) => self
                    .role_bindings
                    .entry(ns.to_string())
                    .or_default()
                    .insert(name, Binding::from_json(b)),
                None => {
                    if let Some(set) = self.role_bindings.get_mut(ns) {
                        set.remove(name);
                        if set.is_empty() {
                            self.role_bindings.remove(ns);
                        }
                    }
                }
            }
        }
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
    /// Read by every decision, written by the owner's updates (each a few
    /// objects' worth of work under the lock).
    index: RwLock<RbacIndex>,
    synced: AtomicBool,
}

impl RbacAuthorizer {
    /// An authorizer with no objects, not synced.
    pub fn new() -> Self {
        Self::default()
    }

    /// Installs a new index; `synced` once every kind was listed.
    pub fn replace(&self, index: RbacIndex, synced: bool) {
        let old = std::mem::replace(
            &mut *self.index.write().unwrap_or_else(|p| p.into_inner()),
            index,
        );
        // Freed after the lock is released: decisions do not wait for it.
        drop(old);
        if synced {
            self.synced.store(true, Ordering::Release);
        }
    }

    /// Updates the index with `changes` ([`RbacIndex::apply`]); `synced`
    /// once every kind was listed.
    pub fn apply(&self, changes: &RbacChanges, objects: &RbacObjects<'_>, synced: bool) {
        if !changes.is_empty() {
            self.index
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .apply(changes, objects);
        }
        if synced {
            self.synced.store(true, Ordering::Release);
        }
    }

    /// Whether every kind has been loaded.
    pub fn synced(&self) -> bool {
        self.synced.load(Ordering::Acquire)
    }

    /// Calls `f` with the current index (updates wait until it returns).
    pub fn read<R>(&self, f: impl FnOnce(&RbacIndex) -> R) -> R {
        f(&self.index.read().unwrap_or_else(|p| p.into_inner()))
    }
}

impl Authorizer for RbacAuthorizer {
    fn authorize<'a>(&'a self, attrs: &'a Attributes<'a>) -> DecisionFuture<'a> {
        if !self.synced() {
            return decided(Decision::NoOpinion(
                "RBAC: the authorization cache is not loaded yet".into(),
            ));
        }
        decided(self.read(|index| index.decide(attrs.user, attrs.request)))
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

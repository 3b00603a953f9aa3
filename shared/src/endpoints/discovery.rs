//! Legacy discovery documents: `/api`, `/api/v1`, `/apis`, `/apis/<g>`,
//! `/apis/<g>/<v>`, built from the registered resources.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine;
use serde_json::{json, Value};

use crate::registry::resource::ResourceDef;
use crate::registry::store::Store;

/// One group's versions, preferred first.
#[derive(Clone, Default)]
pub struct GroupEntry {
    pub name: String,
    pub versions: Vec<String>,
}

/// A handler for a resource that is not backed by the generic store
/// (reviews such as SelfSubjectReview, TokenReview, SubjectAccessReview).
pub type ResourceHandler = Arc<
    dyn Fn(
            crate::body::Request,
            crate::request::info::RequestInfo,
        ) -> futures_util::future::BoxFuture<'static, crate::body::Response>
        + Send
        + Sync,
>;

/// How a resource is served.
#[derive(Clone)]
pub enum Route {
    /// By the generic store.
    Store(Arc<Store>),
    /// By a custom handler.
    Handler(Arc<ResourceDef>, ResourceHandler),
}

impl Route {
    /// The resource's declaration.
    pub fn def(&self) -> &ResourceDef {
        match self {
            Route::Store(s) => &s.def,
            Route::Handler(d, _) => d,
        }
    }
}

/// Everything a server serves itself, in registration order.
#[derive(Clone, Default)]
pub struct GroupSet {
    groups: Vec<GroupEntry>,
    routes: BTreeMap<(String, String, String), Route>,
    /// (group, version) → resources in registration order.
    resources: BTreeMap<(String, String), Vec<Route>>,
}

impl GroupSet {
    /// Registers a store; its group and version appear in discovery in the
    /// order first registered.
    pub fn add(&mut self, store: Store) {
        let def = store.def.clone();
        self.add_route(&def, Route::Store(Arc::new(store)));
    }

    /// Registers a resource served by a custom handler.
    pub fn add_handler(&mut self, def: ResourceDef, handler: ResourceHandler) {
        let def = Arc::new(def);
        self.add_route(&def.clone(), Route::Handler(def, handler));
    }

    fn add_route(&mut self, def: &ResourceDef, route: Route) {
        match self.groups.iter_mut().find(|g| g.name == def.group) {
            Some(g) => {
                if !g.versions.contains(&def.version) {
                    g.versions.push(def.version.clone());
                }
            }
            None => self.groups.push(GroupEntry {
                name: def.group.clone(),
                versions: vec![def.version.clone()],
            }),
        }
        self.routes.insert(
            (def.group.clone(), def.version.clone(), def.resource.clone()),
            route.clone(),
        );
        self.resources
            .entry((def.group.clone(), def.version.clone()))
            .or_default()
            .push(route);
    }

    /// Puts a watch cache in front of every store (LISTs and WATCHes from
    /// memory), each kept within `max_bytes`.
    pub fn enable_watch_caches(&mut self, max_bytes: usize) {
        let mut cached: BTreeMap<(String, String, String), Arc<Store>> = BTreeMap::new();
        // Storage versions first: a resource served at another version
        // (`ResourceDef::served_as`) reads its storage version's cache.
        for (key, route) in self.routes.iter_mut() {
            if let Route::Store(s) = route {
                if s.def.conversion.is_none() {
                    let store = Arc::new((**s).clone().with_watch_cache(max_bytes));
                    cached.insert(key.clone(), store.clone());
                    *route = Route::Store(store);
                }
            }
        }
        for (key, route) in self.routes.iter_mut() {
            if let Route::Store(s) = route {
                let Some(conversion) = &s.def.conversion else {
                    continue;
                };
                let storage_key = (
                    conversion.storage_group.clone(),
                    conversion.storage_version.clone(),
                    s.def.resource.clone(),
                );
                let store = match cached.get(&storage_key) {
                    Some(storage) if storage.list_prefix("") == s.list_prefix("") => {
                        (**s).clone().share_storage_cache(storage)
                    }
                    _ => (**s).clone().with_watch_cache(max_bytes),
                };
                let store = Arc::new(store);
                cached.insert(key.clone(), store.clone());
                *route = Route::Store(store);
            }
        }
        for ((group, version), routes) in self.resources.iter_mut() {
            for route in routes.iter_mut() {
                let key = (group.clone(), version.clone(), route.def().resource.clone());
                if let Some(store) = cached.get(&key) {
                    *route = Route::Store(store.clone());
                }
            }
        }
    }

    /// How a resource is served.
    pub fn route(&self, group: &str, version: &str, resource: &str) -> Option<&Route> {
        self.routes
            .get(&(group.to_string(), version.to_string(), resource.to_string()))
    }

    /// The store serving a resource, if it is store-backed.
    pub fn lookup(&self, group: &str, version: &str, resource: &str) -> Option<&Arc<Store>> {
        match self.route(group, version, resource)? {
            Route::Store(s) => Some(s),
            Route::Handler(..) => None,
        }
    }

    /// Whether this server owns `group` (the core group is `""`).
    pub fn owns_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g.name == group)
    }

    /// Whether this server serves `group`/`version`.
    pub fn serves(&self, group: &str, version: &str) -> bool {
        self.resources
            .contains_key(&(group.to_string(), version.to_string()))
    }

    /// Every served resource's declaration, store-backed or not, grouped
    /// by group/version (for documents such as OpenAPI that list them all).
    pub fn defs(&self) -> impl Iterator<Item = &ResourceDef> {
        self.resources.values().flatten().map(Route::def)
    }

    /// All stores.
    pub fn stores(&self) -> impl Iterator<Item = &Arc<Store>> {
        self.routes.values().filter_map(|r| match r {
            Route::Store(s) => Some(s),
            Route::Handler(..) => None,
        })
    }

    /// The named groups (not the core group), in order.
    pub fn named_groups(&self) -> impl Iterator<Item = &GroupEntry> {
        self.groups.iter().filter(|g| !g.name.is_empty())
    }

    /// `/api`.
    pub fn api_versions(&self, server_address: &str) -> Value {
        json!({
            "kind": "APIVersions",
            "versions": self.groups.iter().filter(|g| g.name.is_empty()).flat_map(|g| g.versions.clone()).collect::<Vec<_>>(),
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
        })
    }

    /// `/apis` entries of this server's named groups.
    pub fn group_list_entries(&self) -> Vec<Value> {
        self.named_groups().map(api_group_body).collect()
    }

    /// `/apis/<group>`.
    pub fn api_group(&self, group: &str) -> Option<Value> {
        let g = self
            .groups
            .iter()
            .find(|g| g.name == group && !group.is_empty())?;
        let mut body = json!({"kind": "APIGroup", "apiVersion": "v1"});
        if let (Value::Object(out), Value::Object(inner)) = (&mut body, api_group_body(g)) {
            out.extend(inner);
        }
        Some(body)
    }

    /// `/api/v1` or `/apis/<group>/<version>`.
    pub fn resource_list(&self, group: &str, version: &str) -> Option<Value> {
        let stores = self
            .resources
            .get(&(group.to_string(), version.to_string()))?;
        let gv = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        let mut resources = Vec::new();
        for route in stores {
            let def = route.def();
            resources.push(api_resource(def));
            for sub in &def.subresources {
                resources.push(sub.discovery_entry(def));
            }
            for sub in &def.custom_subresources {
                resources.push(sub.discovery_entry(def));
            }
        }
        let mut body = json!({"kind": "APIResourceList"});
        if let Value::Object(m) = &mut body {
            if !group.is_empty() {
                m.insert("apiVersion".into(), json!("v1"));
            }
            m.insert("groupVersion".into(), json!(gv));
            m.insert("resources".into(), Value::Array(resources));
        }
        Some(body)
    }
}

fn api_group_body(g: &GroupEntry) -> Value {
    let versions: Vec<Value> = g
        .versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{}/{}", g.name, v), "version": v}))
        .collect();
    json!({
        "name": g.name,
        "versions": versions,
        "preferredVersion": versions.first().cloned().unwrap_or(Value::Null),
    })
}

fn api_resource(def: &ResourceDef) -> Value {
    let mut r = serde_json::Map::new();
    r.insert("name".into(), json!(def.resource));
    r.insert("singularName".into(), json!(def.singular));
    r.insert("namespaced".into(), json!(def.namespaced));
    r.insert("kind".into(), json!(def.kind));
    r.insert("verbs".into(), json!(def.verbs));
    if !def.short_names.is_empty() {
        r.insert("shortNames".into(), json!(def.short_names));
    }
    if !def.categories.is_empty() {
        r.insert("categories".into(), json!(def.categories));
    }
    r.insert(
        "storageVersionHash".into(),
        json!(match &def.conversion {
            Some(c) => storage_version_hash(&c.storage_group, &c.storage_version, &c.storage_kind),
            None => storage_version_hash(&def.group, &def.version, &def.kind),
        }),
    );
    Value::Object(r)
}

/// Upstream's storage version hash: base64 of the first 8 bytes of
/// SHA-256(`<group>/<version>/<kind>`).
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        format!("{group}/{version}/{kind}").as_bytes(),
    );
    base64::engine::general_purpose::STANDARD.encode(&digest.as_ref()[..8])
}

/// `/apis` from entries (this server's first, then the delegate's, without duplicates).
pub fn group_list(mut own: Vec<Value>, delegated: Vec<Value>) -> Value {
    for g in delegated {
        let name = g.get("name").cloned();
        if !own.iter().any(|o| o.get("name") == name.as_ref()) {
            own.push(g);
        }
    }
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": own})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_version_hash_matches_upstream() {
        // upstream's value for core v1 ConfigMap
        assert_eq!(storage_version_hash("", "v1", "ConfigMap"), "qFsyl6wFWjQ=");
    }
}

//! The catalogue of a tier: every resource it serves itself, by group and
//! version, and how each is served (after upstream's `APIGroupInfo`).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::resource::ResourceDef;
use super::store::Store;

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

/// Everything a tier serves itself, in registration order: the one place a
/// tier declares its resources (a [`Store`] for each kind the generic store
/// serves, a [`ResourceHandler`] for the few that are not stored). Routing,
/// discovery, OpenAPI and admission read it.
#[derive(Clone, Default)]
pub struct Catalog {
    groups: Vec<GroupEntry>,
    routes: BTreeMap<(String, String, String), Route>,
    /// (group, version) → resources in registration order.
    resources: BTreeMap<(String, String), Vec<Route>>,
}

impl Catalog {
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

    /// The core group's versions (`/api`).
    pub fn core_versions(&self) -> impl Iterator<Item = &str> {
        self.groups
            .iter()
            .filter(|g| g.name.is_empty())
            .flat_map(|g| g.versions.iter().map(String::as_str))
    }

    /// A named group's entry.
    pub fn group(&self, name: &str) -> Option<&GroupEntry> {
        self.groups
            .iter()
            .find(|g| g.name == name && !name.is_empty())
    }

    /// The resources of one group-version, in registration order.
    pub fn routes(&self, group: &str, version: &str) -> Option<&[Route]> {
        self.resources
            .get(&(group.to_string(), version.to_string()))
            .map(Vec::as_slice)
    }
}

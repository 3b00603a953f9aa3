//! The Node authorizer's graph (upstream's `plugin/pkg/auth/authorizer/node`
//! `Graph`): vertices for the API objects a node may reach, edges pointing
//! toward the node vertices.
//!
//! ```text
//! node <- pod <- secret, configmap, pvc, serviceaccount, resourceclaim
//!               pvc <- pv <- secret
//! node <- volumeattachment, resourceslice, podcertificaterequest
//! ```
//!
//! An edge whose end is known to lead to exactly one node carries that node
//! (a *destination*): every edge into a pod, and the edges of pods,
//! attachments, slices and certificate requests. Every vertex counts the
//! destinations of its outgoing edges, so "does this configmap lead to node
//! n1" is one lookup even when ten thousand pods use `kube-root-ca.crt`;
//! only a secret or a PersistentVolume (whose PV → PVC edges carry no
//! destination) needs a walk. Deleting a vertex also deletes the neighbours
//! left without edges, so the graph holds exactly what bound pods and
//! bound volumes refer to.

use std::collections::{HashMap, HashSet};
use std::sync::RwLock;

/// The kind of API object a vertex stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VertexType {
    ConfigMap,
    ResourceSlice,
    Node,
    Pod,
    Pvc,
    Pv,
    ResourceClaim,
    Secret,
    VolumeAttachment,
    ServiceAccount,
    PodCertificateRequest,
}

impl VertexType {
    /// Upstream's name of the type, in log messages.
    pub fn name(self) -> &'static str {
        match self {
            VertexType::ConfigMap => "configmap",
            VertexType::ResourceSlice => "resourceslice",
            VertexType::Node => "node",
            VertexType::Pod => "pod",
            VertexType::Pvc => "pvc",
            VertexType::Pv => "pv",
            VertexType::ResourceClaim => "resourceclaim",
            VertexType::Secret => "secret",
            VertexType::VolumeAttachment => "volumeattachment",
            VertexType::ServiceAccount => "serviceAccount",
            VertexType::PodCertificateRequest => "podcertificaterequest",
        }
    }

    /// Whether every edge out of such a vertex carries its destination, so
    /// the destination counts are the whole answer (upstream's
    /// `vertexTypeWithAuthoritativeIndex`).
    fn authoritative(self) -> bool {
        !matches!(self, VertexType::Node | VertexType::Pv | VertexType::Secret)
    }
}

type Id = u64;

struct Vertex {
    kind: VertexType,
    namespace: String,
    name: String,
    /// Outgoing edges: target → the edge's destination node, if known.
    out: HashMap<Id, Option<Id>>,
    /// Sources of incoming edges.
    inbound: HashSet<Id>,
    /// How many outgoing edges carry each destination node.
    destinations: HashMap<Id, u32>,
}

impl Vertex {
    fn degree(&self) -> usize {
        self.out.len() + self.inbound.len()
    }
}

/// type → namespace → name → vertex.
type Names = HashMap<VertexType, HashMap<String, HashMap<String, Id>>>;

#[derive(Default)]
struct Inner {
    next: Id,
    vertices: HashMap<Id, Vertex>,
    names: Names,
}

impl Inner {
    fn lookup(&self, kind: VertexType, namespace: &str, name: &str) -> Option<Id> {
        self.names.get(&kind)?.get(namespace)?.get(name).copied()
    }

    fn get_or_create(&mut self, kind: VertexType, namespace: &str, name: &str) -> Id {
        if let Some(id) = self.lookup(kind, namespace, name) {
            return id;
        }
        self.next += 1;
        let id = self.next;
        self.vertices.insert(
            id,
            Vertex {
                kind,
                namespace: namespace.to_string(),
                name: name.to_string(),
                out: HashMap::new(),
                inbound: HashSet::new(),
                destinations: HashMap::new(),
            },
        );
        self.names
            .entry(kind)
            .or_default()
            .entry(namespace.to_string())
            .or_default()
            .insert(name.to_string(), id);
        id
    }

    /// Adds (or replaces) the edge `from → to` carrying `destination`.
    fn add_edge(&mut self, from: Id, to: Id, destination: Option<Id>) {
        let Some(f) = self.vertices.get_mut(&from) else {
            return;
        };
        debug_assert!(
            destination.is_some() || !f.kind.authoritative(),
            "edges from a {} must carry their destination",
            f.kind.name()
        );
        if let Some(Some(old)) = f.out.insert(to, destination) {
            uncount(&mut f.destinations, old);
        }
        if let Some(d) = destination {
            *f.destinations.entry(d).or_default() += 1;
        }
        if let Some(t) = self.vertices.get_mut(&to) {
            t.inbound.insert(from);
        }
    }

    /// Removes a vertex and every edge touching it, keeping the
    /// neighbours' destination counts right.
    fn remove(&mut self, id: Id) {
        let Some(v) = self.vertices.remove(&id) else {
            return;
        };
        for to in v.out.keys() {
            if let Some(t) = self.vertices.get_mut(to) {
                t.inbound.remove(&id);
            }
        }
        for from in &v.inbound {
            if let Some(f) = self.vertices.get_mut(from) {
                if let Some(Some(d)) = f.out.remove(&id) {
                    uncount(&mut f.destinations, d);
                }
            }
        }
        if let Some(namespaces) = self.names.get_mut(&v.kind) {
            if let Some(names) = namespaces.get_mut(&v.namespace) {
                names.remove(&v.name);
                if names.is_empty() {
                    namespaces.remove(&v.namespace);
                }
            }
        }
    }

    /// Upstream's `deleteVertexLocked`: removes the vertex and the
    /// neighbours whose only edge was to or from it.
    fn delete(&mut self, kind: VertexType, namespace: &str, name: &str) {
        let Some(id) = self.lookup(kind, namespace, name) else {
            return;
        };
        let Some(v) = self.vertices.get(&id) else {
            return;
        };
        let orphans: Vec<Id> = v
            .out
            .keys()
            .chain(v.inbound.iter())
            .filter(|n| self.vertices.get(n).is_some_and(|n| n.degree() == 1))
            .copied()
            .collect();
        self.remove(id);
        for n in orphans {
            self.remove(n);
        }
    }
}

fn uncount(counts: &mut HashMap<Id, u32>, d: Id) {
    if let Some(c) = counts.get_mut(&d) {
        *c -= 1;
        if *c == 0 {
            counts.remove(&d);
        }
    }
}

/// Why a node was found to have no path to an object (logged; the
/// authorizer's answer is always upstream's `no relationship found`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoPath(pub String);

/// The graph, shared by its populator (writes) and the authorizer (reads).
#[derive(Default)]
pub struct Graph {
    inner: RwLock<Inner>,
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Self {
        Graph::default()
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a pod bound to `refs.node_name`: pod → node and, unless it is
    /// a mirror pod, its service account, secrets, ConfigMaps, claims and
    /// ResourceClaims → pod, replacing what the pod had before.
    pub fn add_pod(&self, refs: &super::references::PodRefs) {
        let mut g = self.write();
        g.delete(VertexType::Pod, &refs.namespace, &refs.name);
        let pod = g.get_or_create(VertexType::Pod, &refs.namespace, &refs.name);
        let node = g.get_or_create(VertexType::Node, "", &refs.node_name);
        g.add_edge(pod, node, Some(node));
        // A node must never gain access to other objects through a pod it
        // could have created itself.
        if refs.mirror {
            return;
        }
        let ns = &refs.namespace;
        let link = |g: &mut Inner, kind: VertexType, name: &str| {
            let v = g.get_or_create(kind, ns, name);
            g.add_edge(v, pod, Some(node));
        };
        if !refs.service_account.is_empty() {
            link(&mut g, VertexType::ServiceAccount, &refs.service_account);
        }
        for s in &refs.secrets {
            link(&mut g, VertexType::Secret, s);
        }
        for c in &refs.config_maps {
            link(&mut g, VertexType::ConfigMap, c);
        }
        for c in &refs.claims {
            link(&mut g, VertexType::Pvc, c);
        }
        for c in &refs.resource_claims {
            link(&mut g, VertexType::ResourceClaim, c);
        }
    }

    /// Forgets a pod.
    pub fn delete_pod(&self, namespace: &str, name: &str) {
        self.write().delete(VertexType::Pod, namespace, name);
    }

    /// Records a PersistentVolume: pv → its claim, and its kubelet-visible
    /// secrets → pv (neither edge knows its node); nothing when unbound.
    pub fn add_pv(&self, refs: &super::references::PvRefs) {
        let mut g = self.write();
        g.delete(VertexType::Pv, "", &refs.name);
        let Some((claim_ns, claim_name)) = &refs.claim else {
            return;
        };
        let pv = g.get_or_create(VertexType::Pv, "", &refs.name);
        let pvc = g.get_or_create(VertexType::Pvc, claim_ns, claim_name);
        g.add_edge(pv, pvc, None);
        for (ns, name) in &refs.secrets {
            let s = g.get_or_create(VertexType::Secret, ns, name);
            g.add_edge(s, pv, None);
        }
    }

    /// Forgets a PersistentVolume.
    pub fn delete_pv(&self, name: &str) {
        self.write().delete(VertexType::Pv, "", name);
    }

    /// Records an object of `kind` bound to `node_name` by its
    /// `spec.nodeName` (a VolumeAttachment, ResourceSlice or
    /// PodCertificateRequest; `namespace` is empty for the cluster-scoped
    /// ones); nothing when `node_name` is empty.
    pub fn add_node_object(&self, kind: VertexType, namespace: &str, name: &str, node_name: &str) {
        let mut g = self.write();
        g.delete(kind, namespace, name);
        if node_name.is_empty() {
            return;
        }
        let v = g.get_or_create(kind, namespace, name);
        let node = g.get_or_create(VertexType::Node, "", node_name);
        g.add_edge(v, node, Some(node));
    }

    /// Forgets an object of `kind`.
    pub fn delete_object(&self, kind: VertexType, namespace: &str, name: &str) {
        self.write().delete(kind, namespace, name);
    }

    /// Whether there is a path from the object to the node (upstream's
    /// `hasPathFrom`): `Err` says why not.
    pub fn has_path_from(
        &self,
        node_name: &str,
        kind: VertexType,
        namespace: &str,
        name: &str,
    ) -> Result<(), NoPath> {
        let g = self.read();
        let Some(node) = g.lookup(VertexType::Node, "", node_name) else {
            return Err(NoPath(format!(
                "unknown node '{node_name}' cannot get {} {namespace}/{name}",
                kind.name()
            )));
        };
        let Some(start) = g.lookup(kind, namespace, name) else {
            return Err(NoPath(format!(
                "node '{node_name}' cannot get unknown {} {namespace}/{name}",
                kind.name()
            )));
        };
        let no_path = || {
            NoPath(format!(
                "node '{node_name}' cannot get {} {namespace}/{name}, no relationship to this object was found in the node authorizer graph",
                kind.name()
            ))
        };
        if kind.authoritative() {
            let found = g
                .vertices
                .get(&start)
                .is_some_and(|v| v.destinations.contains_key(&node));
            return if found { Ok(()) } else { Err(no_path()) };
        }
        // Walk the edges that do not name their node; an edge that names
        // another node is never followed.
        let mut seen = HashSet::from([start]);
        let mut stack = vec![start];
        while let Some(id) = stack.pop() {
            if id == node {
                return Ok(());
            }
            let Some(v) = g.vertices.get(&id) else {
                continue;
            };
            if v.destinations.contains_key(&node) {
                return Ok(());
            }
            for (to, destination) in &v.out {
                if destination.is_none() && seen.insert(*to) {
                    stack.push(*to);
                }
            }
        }
        Err(no_path())
    }

    /// Whether a vertex exists.
    #[cfg(test)]
    pub fn contains(&self, kind: VertexType, namespace: &str, name: &str) -> bool {
        self.read().lookup(kind, namespace, name).is_some()
    }

    /// How many vertices and edges the graph holds.
    #[cfg(test)]
    pub fn size(&self) -> (usize, usize) {
        let g = self.read();
        let edges = g.vertices.values().map(|v| v.out.len()).sum();
        (g.vertices.len(), edges)
    }
}

#[cfg(test)]
#[path = "graph_tests.rs"]
mod tests;

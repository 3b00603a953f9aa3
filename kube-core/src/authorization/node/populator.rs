//! Keeps the Node authorizer's graph current (upstream's
//! `graph_populator.go`): one watch per resource the graph is made of —
//! pods, PersistentVolumes, VolumeAttachments, ResourceSlices and
//! PodCertificateRequests — read from kube-core's own stores (their watch
//! caches), as a streaming list followed by the watch, relisted when the
//! watch ends.
//!
//! Each watch remembers what every object contributed, so an update that
//! changes none of a pod's references (a status write, most of a pod's
//! life) leaves the graph alone, and a relist removes the objects that went
//! away while no watch was open.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use apiserver::apimachinery::meta;
use apiserver::registry::catalog::Catalog;
use apiserver::registry::store::Store;
use apiserver::registry::watch::WatchOptions;
use apiserver::registry::watch_event::{EventType, WatchEvent};
use serde_json::Value;

use super::graph::{Graph, VertexType};
use super::references::{PodRefs, PvRefs};

/// Pause before relisting after a watch failed or ended.
const RELIST_BACKOFF: Duration = Duration::from_secs(1);

/// A resource the graph is built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Pods,
    PersistentVolumes,
    VolumeAttachments,
    ResourceSlices,
    PodCertificateRequests,
}

impl Source {
    const ALL: [Source; 5] = [
        Source::Pods,
        Source::PersistentVolumes,
        Source::VolumeAttachments,
        Source::ResourceSlices,
        Source::PodCertificateRequests,
    ];

    /// `(group, version, resource)`.
    fn resource(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Source::Pods => ("", "v1", "pods"),
            Source::PersistentVolumes => ("", "v1", "persistentvolumes"),
            Source::VolumeAttachments => ("storage.k8s.io", "v1", "volumeattachments"),
            Source::ResourceSlices => ("resource.k8s.io", "v1", "resourceslices"),
            Source::PodCertificateRequests => {
                ("certificates.k8s.io", "v1", "podcertificaterequests")
            }
        }
    }

    /// What an object contributes; `None` when it contributes nothing yet
    /// (an unbound pod: a pod is never unbound once bound).
    fn summarize(self, obj: &Value) -> Option<Contribution> {
        let at = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("");
        let object = |node: &str| NodeObject {
            namespace: meta::namespace(obj).to_string(),
            name: meta::name(obj).to_string(),
            node: node.to_string(),
        };
        Some(match self {
            Source::Pods => Contribution::Pod(PodRefs::of(obj)?),
            Source::PersistentVolumes => Contribution::Pv(PvRefs::of(obj)),
            Source::VolumeAttachments => Contribution::Object(object(at("/spec/nodeName"))),
            Source::ResourceSlices => Contribution::Object(object(at("/spec/nodeName"))),
            Source::PodCertificateRequests => Contribution::Object(object(at("/spec/nodeName"))),
        })
    }

    fn vertex(self) -> VertexType {
        match self {
            Source::Pods => VertexType::Pod,
            Source::PersistentVolumes => VertexType::Pv,
            Source::VolumeAttachments => VertexType::VolumeAttachment,
            Source::ResourceSlices => VertexType::ResourceSlice,
            Source::PodCertificateRequests => VertexType::PodCertificateRequest,
        }
    }
}

/// An object bound to a node by `spec.nodeName`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct NodeObject {
    namespace: String,
    name: String,
    node: String,
}

/// What one object put into the graph.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Contribution {
    Pod(PodRefs),
    Pv(PvRefs),
    Object(NodeObject),
}

/// Applies one resource's events to the graph.
struct Feeder {
    source: Source,
    graph: Arc<Graph>,
    /// What each object (by `namespace/name`) contributed.
    known: HashMap<String, Contribution>,
}

fn key_of(obj: &Value) -> String {
    format!("{}/{}", meta::namespace(obj), meta::name(obj))
}

impl Feeder {
    fn new(source: Source, graph: Arc<Graph>) -> Self {
        Feeder {
            source,
            graph,
            known: HashMap::new(),
        }
    }

    /// An object was added or changed.
    fn upsert(&mut self, obj: &Value) {
        let Some(new) = self.source.summarize(obj) else {
            return;
        };
        let key = key_of(obj);
        if self.known.get(&key) == Some(&new) {
            return;
        }
        match &new {
            Contribution::Pod(refs) => self.graph.add_pod(refs),
            Contribution::Pv(refs) => self.graph.add_pv(refs),
            Contribution::Object(o) => {
                self.graph
                    .add_node_object(self.source.vertex(), &o.namespace, &o.name, &o.node)
            }
        }
        self.known.insert(key, new);
    }

    /// The object of `key` is gone.
    fn remove(&mut self, key: &str) {
        let Some(old) = self.known.remove(key) else {
            return;
        };
        match old {
            Contribution::Pod(refs) => self.graph.delete_pod(&refs.namespace, &refs.name),
            Contribution::Pv(refs) => self.graph.delete_pv(&refs.name),
            Contribution::Object(o) => {
                self.graph
                    .delete_object(self.source.vertex(), &o.namespace, &o.name)
            }
        }
    }

    /// A relist ended having seen `seen`: forget everything else.
    fn retain(&mut self, seen: &HashSet<String>) {
        let gone: Vec<String> = self
            .known
            .keys()
            .filter(|k| !seen.contains(*k))
            .cloned()
            .collect();
        for key in gone {
            self.remove(&key);
        }
    }

    /// Applies one watch event. Returns `true` at the end of the initial
    /// events of a relist.
    fn apply(&mut self, ev: WatchEvent, seen: &mut Option<HashSet<String>>) -> bool {
        match ev {
            WatchEvent::Bookmark {
                initial_events_end, ..
            } => {
                if let (true, Some(seen)) = (initial_events_end, seen.take()) {
                    self.retain(&seen);
                    return true;
                }
            }
            WatchEvent::Object(EventType::Deleted, obj) => {
                let key = key_of(&obj.into_value());
                if let Some(seen) = seen {
                    seen.remove(&key);
                }
                self.remove(&key);
            }
            WatchEvent::Object(_, obj) => {
                let obj = obj.into_value();
                if let Some(seen) = seen {
                    seen.insert(key_of(&obj));
                }
                self.upsert(&obj);
            }
            WatchEvent::Error(_) => {}
        }
        false
    }
}

/// Runs forever: lists and watches `store`, feeding the graph; sets
/// `synced` once the first list is in.
async fn run(store: Store, mut feeder: Feeder, synced: Arc<AtomicBool>) {
    loop {
        match store.watch("", WatchOptions::streaming_list()).await {
            Ok(mut events) => {
                let mut seen = Some(HashSet::new());
                while let Some(ev) = events.recv().await {
                    if let WatchEvent::Error(e) = &ev {
                        tracing::debug!(source = ?feeder.source, error = %e, "node authorizer graph: relisting");
                        break;
                    }
                    if feeder.apply(ev, &mut seen) {
                        synced.store(true, Ordering::SeqCst);
                    }
                }
            }
            Err(e) => {
                tracing::debug!(source = ?feeder.source, error = %e, "node authorizer graph: watch failed");
            }
        }
        tokio::time::sleep(RELIST_BACKOFF).await;
    }
}

/// The running populator.
pub struct Populator {
    synced: Vec<Arc<AtomicBool>>,
}

impl Populator {
    /// Starts feeding `graph` from the stores of `groups` (a resource this
    /// server does not serve contributes nothing).
    pub fn start(groups: &Catalog, graph: Arc<Graph>) -> Populator {
        let mut synced = Vec::new();
        for source in Source::ALL {
            let (g, v, r) = source.resource();
            let Some(store) = groups.lookup(g, v, r) else {
                continue;
            };
            let flag = Arc::new(AtomicBool::new(false));
            synced.push(flag.clone());
            let feeder = Feeder::new(source, graph.clone());
            tokio::spawn(run((**store).clone(), feeder, flag));
        }
        Populator { synced }
    }

    /// Whether every resource's first list has been applied.
    pub fn synced(&self) -> bool {
        self.synced.iter().all(|s| s.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, node: &str, secret: &str) -> Value {
        json!({
            "metadata": {"name": name, "namespace": "ns", "uid": format!("u-{name}")},
            "spec": {"nodeName": node, "volumes": [{"name": "s", "secret": {"secretName": secret}}]}
        })
    }

    fn end() -> WatchEvent {
        WatchEvent::Bookmark {
            revision: 1,
            initial_events_end: true,
        }
    }

    fn event(type_: EventType, obj: Value) -> WatchEvent {
        WatchEvent::Object(
            type_,
            apiserver::registry::watch_event::ObjectRead::Decoded(obj),
        )
    }

    fn reaches(g: &Graph, node: &str, secret: &str) -> bool {
        g.has_path_from(node, VertexType::Secret, "ns", secret)
            .is_ok()
    }

    #[test]
    fn events_add_change_and_remove_edges() {
        let graph = Arc::new(Graph::new());
        let mut f = Feeder::new(Source::Pods, graph.clone());
        let mut seen = Some(HashSet::new());
        f.apply(event(EventType::Added, pod("p1", "n1", "s1")), &mut seen);
        // Unbound pods contribute nothing.
        f.apply(event(EventType::Added, pod("p2", "", "s2")), &mut seen);
        assert!(f.apply(end(), &mut seen));
        assert!(reaches(&graph, "n1", "s1"));
        assert!(!graph.contains(VertexType::Secret, "ns", "s2"));
        // Bound by the scheduler.
        f.apply(event(EventType::Modified, pod("p2", "n2", "s2")), &mut seen);
        assert!(reaches(&graph, "n2", "s2"));
        // A status change with the same references changes nothing.
        let mut status = pod("p2", "n2", "s2");
        status["status"] = json!({"phase": "Running"});
        let before = graph.size();
        f.apply(event(EventType::Modified, status), &mut seen);
        assert_eq!(graph.size(), before);
        f.apply(event(EventType::Deleted, pod("p1", "n1", "s1")), &mut seen);
        assert!(!graph.contains(VertexType::Pod, "ns", "p1"));
        assert!(!reaches(&graph, "n1", "s1"));
    }

    #[test]
    fn a_relist_forgets_what_went_away() {
        let graph = Arc::new(Graph::new());
        let mut f = Feeder::new(Source::Pods, graph.clone());
        let mut seen = Some(HashSet::new());
        f.apply(event(EventType::Added, pod("p1", "n1", "s1")), &mut seen);
        f.apply(event(EventType::Added, pod("p2", "n1", "s2")), &mut seen);
        f.apply(end(), &mut seen);
        // The watch broke; p1 was deleted meanwhile and p2 recreated.
        let mut seen = Some(HashSet::new());
        f.apply(event(EventType::Added, pod("p2", "n3", "s2")), &mut seen);
        assert!(reaches(&graph, "n1", "s1"));
        f.apply(end(), &mut seen);
        assert!(!reaches(&graph, "n1", "s1"));
        assert!(!reaches(&graph, "n1", "s2"));
        assert!(reaches(&graph, "n3", "s2"));
        // Bookmarks after the initial events change nothing.
        assert!(!f.apply(end(), &mut seen));
    }

    #[test]
    fn volumes_and_node_objects() {
        let graph = Arc::new(Graph::new());
        let mut pods = Feeder::new(Source::Pods, graph.clone());
        let mut pvs = Feeder::new(Source::PersistentVolumes, graph.clone());
        let mut slices = Feeder::new(Source::ResourceSlices, graph.clone());
        let mut none = None;
        pods.apply(
            event(
                EventType::Added,
                json!({"metadata": {"name": "p", "namespace": "ns"}, "spec": {"nodeName": "n1",
                "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}]}}),
            ),
            &mut none,
        );
        let pv = json!({"metadata": {"name": "pv1"}, "spec": {
            "claimRef": {"namespace": "ns", "name": "c"},
            "csi": {"driver": "d", "volumeHandle": "h", "nodeStageSecretRef": {"name": "stage", "namespace": "ns"}}}});
        pvs.apply(event(EventType::Added, pv.clone()), &mut none);
        assert!(reaches(&graph, "n1", "stage"));
        pvs.apply(event(EventType::Deleted, pv.clone()), &mut none);
        assert!(!reaches(&graph, "n1", "stage"));
        let slice = json!({"metadata": {"name": "s1"}, "spec": {"nodeName": "n1", "driver": "d"}});
        slices.apply(event(EventType::Added, slice.clone()), &mut none);
        assert!(graph
            .has_path_from("n1", VertexType::ResourceSlice, "", "s1")
            .is_ok());
        slices.apply(event(EventType::Deleted, slice.clone()), &mut none);
        assert!(!graph.contains(VertexType::ResourceSlice, "", "s1"));
    }
}

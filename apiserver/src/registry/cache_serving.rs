//! A store's watch cache: starting it, sharing a storage version's cache,
//! the cached form of objects (`StoreCodec`) and its protobuf memo. The
//! cache serves reads as a decorator of the store's read path,
//! [`CachedReads`] (`registry/cached_reads.rs`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

pub use super::cached_reads::{CachedPage, CachedReads};
use super::resource::ResourceDef;
use super::store::{ListOptions, Store};
use super::watch_event::WatchEvent;
use crate::apimachinery::errors::ApiError;
use crate::apimachinery::meta;
use crate::storage::cacher::{CachedObject, Codec, WatchCache};
use crate::storage::KeyValue;

/// Upstream's default per-resource budget is unbounded; this one keeps one
/// resource from taking the process down.
pub const DEFAULT_CACHE_BUDGET: usize = 2 * 1024 * 1024 * 1024;

/// Builds cached objects the way the store decodes them.
pub(super) struct StoreCodec {
    pub(super) def: Arc<ResourceDef>,
}

impl Codec for StoreCodec {
    fn cache(&self, kv: &KeyValue, revision: i64) -> Result<CachedObject, String> {
        let obj = crate::protobuf::decode_from_storage(&kv.value)?;
        self.cache_value(&kv.key, revision, obj)
    }
}

impl StoreCodec {
    /// The cached form of `obj` (as decoded from storage) at `key`.
    pub(super) fn cache_value(
        &self,
        key: &str,
        revision: i64,
        mut obj: Value,
    ) -> Result<CachedObject, String> {
        self.def.strategy.on_read(&mut obj).map_err(|e| e.message)?;
        meta::set(
            &mut obj,
            "resourceVersion",
            Value::String(revision.to_string()),
        );
        // `kind` and `apiVersion` lead, as upstream serializes typed
        // objects; a typed LIST then serves each item without them by
        // skipping that prefix of the cached bytes (see [`list_item`]).
        if let Value::Object(m) = &mut obj {
            m.shift_remove("kind");
            m.shift_remove("apiVersion");
            let mut typed = serde_json::Map::with_capacity(m.len() + 2);
            typed.insert("kind".into(), Value::String(self.def.kind.clone()));
            typed.insert("apiVersion".into(), Value::String(self.def.api_version()));
            typed.append(m);
            *m = typed;
        }
        let labels = meta::labels(&obj)
            .iter()
            .map(|(k, v)| (k.as_str().into(), v.as_str().unwrap_or_default().into()))
            .collect();
        let fields = self
            .def
            .selectable_fields
            .iter()
            .map(|f| (f.as_str().into(), super::store::field_value(&obj, f).into()))
            .collect();
        Ok(CachedObject {
            key: key.into(),
            revision,
            namespace: meta::namespace(&obj).into(),
            name: meta::name(&obj).into(),
            // An exact-size copy: the serializer's buffer grows by doubling
            // and would keep up to twice the object's size alive.
            bytes: bytes::Bytes::copy_from_slice(
                &serde_json::to_vec(&obj).map_err(|e| e.to_string())?,
            ),
            labels,
            fields,
            encoded: Default::default(),
            encoded_counted: Default::default(),
            converted: Default::default(),
            converted_counted: Default::default(),
        })
    }
}

/// The bytes of a cached object's JSON as an item of its LIST.
///
/// Upstream leaves `kind` and `apiVersion` off the items of built-in lists
/// (they are the list's own); custom resources keep them. Cached objects
/// begin with exactly `{"kind":…,"apiVersion":…` (see [`StoreCodec`]), so a
/// built-in item is `{` followed by the cached bytes past that prefix: no
/// copy of the object. `typed_prefix` is [`typed_item_prefix`] of the store,
/// or `None` to serve the bytes whole.
pub fn list_item(bytes: &bytes::Bytes, typed_prefix: Option<&[u8]>) -> [bytes::Bytes; 2] {
    let open = bytes::Bytes::from_static(b"{");
    match typed_prefix {
        Some(p) if bytes.starts_with(p) => match bytes.get(p.len()) {
            Some(b',') => [open, bytes.slice(p.len() + 1..)],
            Some(b'}') => [open, bytes.slice(p.len()..)],
            _ => [bytes::Bytes::new(), bytes.clone()],
        },
        _ => [bytes::Bytes::new(), bytes.clone()],
    }
}

/// The leading `{"kind":"<Kind>","apiVersion":"<version>"` of a built-in
/// store's cached objects, which [`list_item`] skips; `None` for custom
/// resources, whose items keep their type, as upstream.
pub fn typed_item_prefix(def: &ResourceDef) -> Option<Vec<u8>> {
    if !crate::protobuf::is_known(&def.api_version(), &def.kind) {
        return None;
    }
    let mut prefix = b"{\"kind\":".to_vec();
    serde_json::to_writer(&mut prefix, &def.kind).ok()?;
    prefix.extend_from_slice(b",\"apiVersion\":");
    serde_json::to_writer(&mut prefix, &def.api_version()).ok()?;
    Some(prefix)
}

/// The protobuf envelope of a cached object, encoded once from its JSON
/// bytes and shared by every protobuf watcher and LIST; empty when the
/// object cannot be encoded.
pub fn cached_protobuf(obj: &CachedObject) -> bytes::Bytes {
    obj.encoded_with(|json| {
        serde_json::from_slice::<Value>(json)
            .ok()
            .and_then(|value| crate::protobuf::encode_object(&value).ok())
            .map(|v| bytes::Bytes::copy_from_slice(&v))
            .unwrap_or_default()
    })
}

impl Store {
    /// [`cached_protobuf`], counting a newly made encoding in the watch
    /// cache's memory budget.
    pub fn cached_protobuf(&self, obj: &Arc<CachedObject>) -> bytes::Bytes {
        let mut made = false;
        let bytes = obj.encoded_with(|json| {
            made = true;
            serde_json::from_slice::<Value>(json)
                .ok()
                .and_then(|value| crate::protobuf::encode_object(&value).ok())
                .map(|v| bytes::Bytes::copy_from_slice(&v))
                .unwrap_or_default()
        });
        if made && !bytes.is_empty() {
            if let Some(cache) = self.cache() {
                cache.account_encoded(obj);
            }
        }
        bytes
    }

    /// How many objects the store holds, as its watch cache counts them
    /// (upstream's storage object count, which priority and fairness reads
    /// as `X-Kubernetes-APF-Object-Count`): `None` without a ready cache.
    pub fn object_count(&self) -> Option<usize> {
        use crate::storage::metrics::CountObjects;
        self.cache().and_then(|c| c.count_objects())
    }

    /// The revision the store's watch cache has reached: `None` without a
    /// ready cache.
    pub fn cache_revision(&self) -> Option<i64> {
        self.cache().filter(|c| c.is_ready()).map(|c| c.revision())
    }

    /// Stops the store's watch cache, if it has one: its watches end (their
    /// clients watch again and reach whatever serves the resource next) and
    /// its memory goes with the last request still holding the store.
    pub fn stop_cache(&self) {
        if let Some(cache) = self.cache() {
            cache.stop();
        }
    }
}

impl Store {
    /// Starts this store's watch cache (kept within `max_bytes`).
    pub fn with_watch_cache(mut self, max_bytes: usize) -> Self {
        let codec = Arc::new(StoreCodec {
            def: self.def.clone(),
        });
        let prefix = self.list_prefix("");
        // Only selectable fields can be selected, so only they are indexed.
        let indexed: Vec<String> = self
            .def
            .indexed_fields
            .iter()
            .filter(|f| self.def.selectable_fields.contains(f))
            .cloned()
            .collect();
        self.set_cache(
            WatchCache::start(prefix, self.storage().clone(), codec, max_bytes, &indexed),
            false,
        );
        self
    }

    /// Serves this resource from the watch cache of its storage version
    /// (`storage`, the store of the version this one is
    /// [`ResourceDef::served_as`]) instead of a cache of its own: one etcd
    /// watch and one copy of each object for every version of a resource,
    /// as upstream keeps one cache per resource. Objects are converted to
    /// this version when read, once per object state, and the conversion is
    /// shared by every reader and counted in the cache's budget. Selectors
    /// are matched on the stored form: a served version's selectable fields
    /// are its storage version's.
    pub fn share_storage_cache(mut self, storage: &Store) -> Self {
        if let Some(cache) = storage.cache() {
            self.set_cache(cache.clone(), true);
        }
        self
    }

    /// A GET answered from the watch cache alone: `Ok(None)` when the
    /// cache cannot answer (none, loading, over budget, not caught up).
    /// Admission and authentication read this way, as upstream's listers.
    pub async fn get_from_cache(
        &self,
        namespace: &str,
        name: &str,
        resource_version: &str,
    ) -> Result<Option<Arc<CachedObject>>, ApiError> {
        match self.reads().cached() {
            Some(cached) => cached.get(self, namespace, name, resource_version).await,
            None => Ok(None),
        }
    }

    /// A LIST answered from the watch cache alone; `Ok(None)` when it
    /// cannot answer.
    pub async fn list_from_cache(
        &self,
        namespace: &str,
        opts: &ListOptions,
    ) -> Result<Option<CachedPage>, ApiError> {
        match self.reads().cached() {
            Some(cached) => cached.list(self, namespace, opts).await,
            None => Ok(None),
        }
    }

    /// A WATCH served by the watch cache alone; `Ok(None)` when it cannot.
    pub fn watch_from_cache(
        &self,
        namespace: &str,
        opts: &ListOptions,
        send_initial_events: bool,
        initial_events_end_bookmark: bool,
        allow_bookmarks: bool,
        timeout: Option<Duration>,
    ) -> Result<Option<mpsc::Receiver<WatchEvent>>, ApiError> {
        match self.reads().cached() {
            Some(cached) => cached.watch(
                self,
                namespace,
                opts,
                send_initial_events,
                initial_events_end_bookmark,
                allow_bookmarks,
                timeout,
            ),
            None => Ok(None),
        }
    }

    /// Whether an object in this store's served bytes matches the
    /// selectors (by the labels the cache holds its fields under).
    pub fn cached_matches(&self, obj: &CachedObject, opts: &ListOptions) -> bool {
        match self.reads().cached() {
            Some(cached) => cached.matches(self, obj, opts),
            None => CachedReads::matches_as_stored(obj, opts, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cached(json: &str) -> CachedObject {
        CachedObject {
            key: "/registry/configmaps/d/c".into(),
            revision: 5,
            bytes: bytes::Bytes::copy_from_slice(json.as_bytes()),
            namespace: "d".into(),
            name: "c".into(),
            labels: Box::new([]),
            fields: Box::new([]),
            encoded: Default::default(),
            encoded_counted: Default::default(),
            converted: Default::default(),
            converted_counted: Default::default(),
        }
    }

    #[test]
    fn protobuf_is_encoded_once_and_shared() {
        let obj = cached(
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"d","resourceVersion":"5"},"data":{"a":"b"}}"#,
        );
        let first = cached_protobuf(&obj);
        assert!(first.starts_with(b"k8s\0"));
        let second = cached_protobuf(&obj);
        // The same buffer, not a second encoding.
        assert_eq!(first.as_ptr(), second.as_ptr());
        let decoded = crate::protobuf::decode_object(&second).expect("decode");
        assert_eq!(decoded["metadata"]["resourceVersion"], "5");
        assert_eq!(decoded["data"]["a"], "b");

        // Kinds without protobuf give empty bytes (the handlers answer 500).
        let widget =
            cached(r#"{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"c"}}"#);
        assert!(cached_protobuf(&widget).is_empty());
    }

    #[test]
    fn built_in_list_items_skip_their_type_without_a_copy() {
        let def = Arc::new(ResourceDef::new("", "v1", "ConfigMap", "configmaps"));
        let codec = StoreCodec { def: def.clone() };
        // Stored with the type last (or not at all): the cache puts it first.
        let stored = crate::protobuf::encode_for_storage(&serde_json::json!({
            "metadata": {"name": "c", "namespace": "d"}, "data": {"a": "b"},
            "apiVersion": "v1", "kind": "ConfigMap"}))
        .expect("encode");
        let kv = KeyValue {
            key: "/registry/configmaps/d/c".into(),
            value: stored.into(),
            create_revision: 3,
            mod_revision: 7,
        };
        let obj = codec.cache(&kv, 7).expect("cache");
        assert!(obj
            .bytes
            .starts_with(br#"{"kind":"ConfigMap","apiVersion":"v1","#));

        let prefix = typed_item_prefix(&def).expect("built-in");
        let [open, rest] = list_item(&obj.bytes, Some(&prefix));
        let item: Value = serde_json::from_slice(&[open, rest.clone()].concat()).expect("json");
        assert_eq!(item.get("kind"), None);
        assert_eq!(item.get("apiVersion"), None);
        assert_eq!(item["metadata"]["resourceVersion"], "7");
        assert_eq!(item["data"]["a"], "b");
        assert_eq!(
            rest.as_ptr(),
            obj.bytes[prefix.len() + 1..].as_ptr(),
            "no copy"
        );

        // An object with nothing but its type stays valid JSON.
        let bare = bytes::Bytes::from_static(br#"{"kind":"ConfigMap","apiVersion":"v1"}"#);
        assert_eq!(list_item(&bare, Some(&prefix)).concat(), b"{}".to_vec());

        // Custom resources keep their type, as upstream.
        let widgets = ResourceDef::new("example.com", "v1", "Widget", "widgets");
        assert!(typed_item_prefix(&widgets).is_none());
        let widget =
            bytes::Bytes::from_static(br#"{"kind":"Widget","apiVersion":"example.com/v1"}"#);
        assert_eq!(list_item(&widget, None).concat(), widget.to_vec());
    }
}

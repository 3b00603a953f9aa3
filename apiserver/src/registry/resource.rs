//! Resource declarations: what a kind is called, where it lives, how it behaves.
//!
//! A built-in kind is added by declaring a [`ResourceDef`] (names, scope, short
//! names, categories, storage path, strategy) and registering it; the generic
//! store and REST handlers serve it. No per-kind handler code.

use std::sync::Arc;

use super::strategy::{DefaultStrategy, Strategy};
use super::table::Column;
use crate::apimachinery::validation::NameRule;

/// Subresources a resource may expose through the generic store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subresource {
    /// `/status`: writes to the main resource ignore `.status`, writes here
    /// change only `.status`.
    Status,
    /// `/finalize` (namespaces): only `spec.finalizers` changes.
    Finalize,
    /// `/scale`: an `autoscaling/v1` Scale view of `spec.replicas`,
    /// `status.replicas` and the selector; writes change only `spec.replicas`.
    Scale,
}

impl Subresource {
    /// The path segment.
    pub fn name(self) -> &'static str {
        match self {
            Subresource::Status => "status",
            Subresource::Finalize => "finalize",
            Subresource::Scale => "scale",
        }
    }

    /// The legacy discovery entry (`APIResource`) of this subresource of
    /// `def`: `scale` is served as `autoscaling/v1` `Scale`, as upstream.
    pub fn discovery_entry(self, def: &ResourceDef) -> serde_json::Value {
        let mut v = serde_json::json!({
            "name": format!("{}/{}", def.resource, self.name()),
            "singularName": def.singular,
            "namespaced": def.namespaced,
            "kind": def.kind,
            "verbs": ["get", "patch", "update"],
        });
        match self {
            Subresource::Scale => {
                v["group"] = "autoscaling".into();
                v["version"] = "v1".into();
                v["kind"] = "Scale".into();
                v["singularName"] = "".into();
            }
            Subresource::Finalize => {
                v["verbs"] = serde_json::json!(["update"]);
                v["singularName"] = "".into();
            }
            Subresource::Status => {
                v["singularName"] = "".into();
            }
        }
        v
    }
}

/// The verbs every resource served by the generic store supports.
pub const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// One resource of one group/version.
#[derive(Clone)]
pub struct ResourceDef {
    pub group: String,
    pub version: String,
    /// Plural lower-case name, the URL segment (`configmaps`).
    pub resource: String,
    pub singular: String,
    pub kind: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub verbs: Vec<String>,
    pub subresources: Vec<Subresource>,
    /// Key path under the storage prefix (`configmaps`, `services/specs`, `minions`).
    pub storage_path: String,
    pub name_rule: NameRule,
    /// Fields usable in field selectors besides `metadata.name` and
    /// `metadata.namespace`, as dotted JSON paths.
    pub selectable_fields: Vec<String>,
    /// For a version served over another's storage (see
    /// [`ResourceDef::served_as`]): each of its field labels with the
    /// storage version's label for the same field (events.k8s.io's
    /// `reportingController` is core's `reportingComponent`), as upstream's
    /// field label conversion; the shared watch cache matches on the
    /// storage form.
    pub field_labels: Vec<(String, String)>,
    /// Selectable fields the watch cache indexes, so a LIST selecting one
    /// value (`spec.nodeName=node-1`) reads only the matching objects.
    pub indexed_fields: Vec<String>,
    /// Extra Table columns after `Name` (kubectl get); empty means upstream's
    /// default `Name`, `Created At`.
    pub columns: Vec<Column>,
    /// Columns built at runtime (custom resources' printer columns), shown
    /// after `columns`; when both are empty the default columns apply.
    pub dynamic_columns: Vec<super::table::DynamicColumn>,
    /// Whether DELETE answers with the deleted object rather than a Success
    /// Status (upstream's `ReturnDeletedObject`, set for pods).
    pub return_deleted_object: bool,
    /// Which metadata a `/status` write may change (upstream's status
    /// strategy of the kind; see [`StatusMetadata`]).
    pub status_metadata: StatusMetadata,
    /// Whether the Table starts with upstream's `Name` column (true for all
    /// kinds but events, whose printer shows the name only with `-o wide`).
    pub name_column: bool,
    /// Finds fields a request body's schema does not declare (paths such as
    /// `spec.foo`), for `fieldValidation=Strict|Warn`; `None` accepts all.
    pub unknown_fields: Option<UnknownFields>,
    /// Subresources with their own behaviour (`pods/binding`,
    /// `pods/eviction`, kubelet-backed ones), served before the generic ones.
    pub custom_subresources: Vec<CustomSubresource>,
    /// Applies a strategic merge patch (original, patch) with the kind's
    /// merge keys; `None` applies it as a JSON merge patch.
    pub strategic_merge: Option<StrategicMerge>,
    /// The kind's list and map types for server-side apply and
    /// `managedFields`; `None` deduces them from the values (maps
    /// granular, lists atomic).
    pub field_types: Option<Arc<dyn crate::fieldmanager::typeinfo::TypeResolver>>,
    pub strategy: Arc<dyn Strategy>,
    /// Set when this is another version of a resource stored in a
    /// different one (see [`ResourceDef::served_as`]): discovery reports
    /// the storage version's hash and Table cells are computed on the
    /// storage form.
    pub conversion: Option<Arc<super::conversion::VersionConversion>>,
    /// The kind's OpenAPI schema, from its typed model (see
    /// [`ResourceDef::schema`]); `None` for kinds without one (custom
    /// resources carry theirs in their CRD).
    pub schema: Option<SchemaOf>,
}

/// Adds a kind's schema, and every schema it references, to a generator
/// and returns the component name it is published under
/// (`io.k8s.api.core.v1.ConfigMap`).
pub type SchemaOf = fn(&mut schemars::SchemaGenerator) -> String;

fn schema_of<T: schemars::JsonSchema>(generator: &mut schemars::SchemaGenerator) -> String {
    generator.subschema_for::<T>();
    T::schema_name().into_owned()
}

/// See [`ResourceDef::strategic_merge`].
pub type StrategicMerge = Arc<
    dyn Fn(&serde_json::Value, &serde_json::Value) -> Result<serde_json::Value, String>
        + Send
        + Sync,
>;

/// One call of a [`CustomSubresource`].
pub struct SubresourceCall<'a> {
    /// The store of the parent resource.
    pub store: &'a crate::registry::store::Store,
    pub namespace: &'a str,
    pub name: &'a str,
    /// The request verb (`create`, `get`, `update`, `patch`, ...).
    pub verb: &'a str,
    /// The decoded JSON body (`Null` when there is none).
    pub body: serde_json::Value,
    pub ctx: crate::registry::store::WriteContext,
}

/// What a [`CustomSubresource`] answers: a status code and a JSON body.
pub type SubresourceResult =
    Result<(u16, serde_json::Value), crate::apimachinery::errors::ApiError>;

/// The handler of a [`CustomSubresource`].
pub type SubresourceHandler = Arc<
    dyn for<'a> Fn(SubresourceCall<'a>) -> futures_util::future::BoxFuture<'a, SubresourceResult>
        + Send
        + Sync,
>;

/// A subresource served by its own handler on top of the parent's store.
#[derive(Clone)]
pub struct CustomSubresource {
    pub name: &'static str,
    /// Verbs listed in discovery and accepted.
    pub verbs: &'static [&'static str],
    /// (group, version, kind) of the subresource's body, for discovery
    /// (`("", "v1", "Binding")`); empty group and version mean the parent's.
    pub kind: (&'static str, &'static str, &'static str),
    pub handler: SubresourceHandler,
}

impl CustomSubresource {
    /// The legacy discovery entry of this subresource of `def`.
    pub fn discovery_entry(&self, def: &ResourceDef) -> serde_json::Value {
        let mut v = serde_json::json!({
            "name": format!("{}/{}", def.resource, self.name),
            "singularName": "",
            "namespaced": def.namespaced,
            "kind": self.kind.2,
            "verbs": self.verbs,
        });
        if !self.kind.0.is_empty() || !self.kind.1.is_empty() {
            if self.kind.0 != def.group || self.kind.1 != def.version {
                v["group"] = self.kind.0.into();
                v["version"] = self.kind.1.into();
            }
        }
        v
    }
}

/// See [`ResourceDef::unknown_fields`].
pub type UnknownFields = Arc<dyn Fn(&serde_json::Value) -> Vec<String> + Send + Sync>;

impl ResourceDef {
    /// A namespaced resource with all verbs, stored under `<plural>` and named
    /// as DNS-1123 subdomains; refine with the builder methods.
    pub fn new(group: &str, version: &str, kind: &str, plural: &str) -> Self {
        ResourceDef {
            group: group.into(),
            version: version.into(),
            resource: plural.into(),
            singular: kind.to_lowercase(),
            kind: kind.into(),
            namespaced: true,
            short_names: vec![],
            categories: vec![],
            verbs: ALL_VERBS.iter().map(|s| s.to_string()).collect(),
            subresources: vec![],
            storage_path: plural.into(),
            name_rule: NameRule::Dns1123Subdomain,
            selectable_fields: vec![],
            field_labels: Vec::new(),
            indexed_fields: vec![],
            columns: vec![],
            dynamic_columns: vec![],
            return_deleted_object: false,
            status_metadata: StatusMetadata::Keep,
            name_column: true,
            unknown_fields: None,
            custom_subresources: vec![],
            strategic_merge: None,
            field_types: None,
            strategy: Arc::new(DefaultStrategy),
            conversion: None,
            schema: None,
        }
    }

    /// Takes the kind's OpenAPI schema from the type `T` that models it
    /// (a k8s-openapi type for built-ins): it is what OpenAPI publishes and
    /// what unknown-field detection, server-side apply's type information
    /// and strategic merge keys are read from.
    pub fn schema<T: schemars::JsonSchema>(mut self) -> Self {
        self.schema = Some(schema_of::<T>);
        self
    }

    /// Sets the singular name (default: the lower-cased kind).
    pub fn singular(mut self, name: &str) -> Self {
        self.singular = name.into();
        self
    }

    /// Marks the resource cluster-scoped.
    pub fn cluster_scoped(mut self) -> Self {
        self.namespaced = false;
        self
    }

    /// Sets the short names (`cm`).
    pub fn short_names(mut self, names: &[&str]) -> Self {
        self.short_names = names.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Sets the categories (`all`).
    pub fn categories(mut self, names: &[&str]) -> Self {
        self.categories = names.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Sets the etcd key path under the storage prefix.
    pub fn storage_path(mut self, path: &str) -> Self {
        self.storage_path = path.into();
        self
    }

    /// Adds the status subresource.
    pub fn with_status(mut self) -> Self {
        self.subresources.push(Subresource::Status);
        self
    }

    /// Sets which metadata `/status` writes keep (default: all of it).
    pub fn status_metadata(mut self, policy: StatusMetadata) -> Self {
        self.status_metadata = policy;
        self
    }

    /// Sets the verbs (e.g. only `create` for review resources).
    pub fn verbs(mut self, verbs: &[&str]) -> Self {
        self.verbs = verbs.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Sets how strategic merge patches are applied.
    pub fn with_strategic_merge(mut self, f: StrategicMerge) -> Self {
        self.strategic_merge = Some(f);
        self
    }

    /// Sets the type information server-side apply merges with.
    pub fn with_field_types(
        mut self,
        types: Arc<dyn crate::fieldmanager::typeinfo::TypeResolver>,
    ) -> Self {
        self.field_types = Some(types);
        self
    }

    /// Adds the scale subresource.
    pub fn with_scale(mut self) -> Self {
        self.subresources.push(Subresource::Scale);
        self
    }

    /// Adds a subresource with its own handler.
    pub fn with_custom_subresource(mut self, sub: CustomSubresource) -> Self {
        self.custom_subresources.push(sub);
        self
    }

    /// Adds several subresources with their own handlers.
    pub fn with_custom_subresources(mut self, subs: Vec<CustomSubresource>) -> Self {
        self.custom_subresources.extend(subs);
        self
    }

    /// Adds a subresource.
    pub fn with_subresource(mut self, sub: Subresource) -> Self {
        self.subresources.push(sub);
        self
    }

    /// Sets how names are validated.
    pub fn name_rule(mut self, rule: NameRule) -> Self {
        self.name_rule = rule;
        self
    }

    /// Adds selectable fields.
    pub fn selectable_fields(mut self, fields: &[&str]) -> Self {
        self.selectable_fields = fields.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Indexes these selectable fields in the watch cache (upstream
    /// indexes pods by `spec.nodeName`).
    pub fn indexed_fields(mut self, fields: &[&str]) -> Self {
        self.indexed_fields = fields.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Sets the Table columns shown after `Name`.
    pub fn columns(mut self, columns: Vec<Column>) -> Self {
        self.columns = columns;
        self
    }

    /// DELETE answers with the deleted object.
    pub fn returns_deleted_object(mut self) -> Self {
        self.return_deleted_object = true;
        self
    }

    /// Drops the leading `Name` Table column (events declare their own,
    /// wide-only, `Name` column as upstream's printer does).
    pub fn without_name_column(mut self) -> Self {
        self.name_column = false;
        self
    }

    /// Sets the unknown-field finder used by `fieldValidation`.
    pub fn with_unknown_fields(mut self, f: UnknownFields) -> Self {
        self.unknown_fields = Some(f);
        self
    }

    /// Sets the strategy.
    pub fn strategy(mut self, strategy: impl Strategy + 'static) -> Self {
        self.strategy = Arc::new(strategy);
        self
    }

    /// `v1` or `apps/v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The group/resource used in error messages.
    pub fn group_resource(&self) -> crate::apimachinery::errors::GroupResource<'_> {
        crate::apimachinery::errors::GroupResource {
            group: &self.group,
            resource: &self.resource,
        }
    }

    /// Whether the subresource is served.
    pub fn has_subresource(&self, sub: Subresource) -> bool {
        self.subresources.contains(&sub)
    }
}

/// What a `/status` write keeps of the metadata it sends. Upstream's status
/// strategies differ by kind: most built-in kinds keep only the old `spec`
/// and let labels, annotations, finalizers and owner references change
/// (CronJobs, Services, Ingresses, PVCs ...: `Keep`, the default);
/// Deployments also keep the old labels (`KeepExceptLabels`); pods, custom
/// resources and several newer kinds reset all of them
/// (`ResetObjectMetaForStatus`: `Reset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusMetadata {
    Keep,
    KeepExceptLabels,
    Reset,
}

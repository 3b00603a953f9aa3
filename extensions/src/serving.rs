//! Serving custom resources: one generic [`Store`] per served version of an
//! Established CRD, declared at runtime from the CRD (names, scope,
//! subresources, printer columns, selectable fields) and driven by a
//! strategy that prunes, defaults and validates with the version's schema.

use std::sync::Arc;
use std::time::Duration;

use apiserver::admission::AdmissionChain;
use apiserver::apimachinery::errors::ApiError;
use apiserver::apimachinery::validation::{FieldError, FieldPath};
use apiserver::registry::catalog::Catalog;
use apiserver::registry::resource::{ResourceDef, Subresource};
use apiserver::registry::store::Store;
use apiserver::registry::strategy::Strategy;
use apiserver::registry::table::DynamicColumn;
use apiserver::schema::Schema;
use apiserver::storage::EtcdStorage;
use serde_json::{json, Value};

use crate::conversion::Converter;
use crate::crd;
use crate::field_validation;
use crate::jsonpath::JsonPath;
use crate::scale::{self, ScalePaths};

/// Upstream's description of the default `Age` column.
const AGE_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// Behaviour of one version of a custom resource.
pub struct CustomResourceStrategy {
    schema: Arc<Schema>,
    api_version: String,
    /// `<group>/<storage version>`: what is written to etcd.
    storage_api_version: String,
    converter: Arc<Converter>,
    /// When the CRD became Established (its condition's
    /// `lastTransitionTime`).
    established_at: Option<jiff::Timestamp>,
}

/// How long after a CRD becomes Established a create waits, as upstream's
/// CRD handler does (so that every API server replica serves the resource
/// before an object exists that a follow-up request could miss).
const JUST_ESTABLISHED: Duration = Duration::from_secs(2);

impl CustomResourceStrategy {
    /// Schema validation, then the CEL rules (with `oldSelf` on update).
    fn check(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errs = self.schema.validate(obj, &FieldPath::nil());
        let mut budget = apiserver::schema::cel::Budget::default();
        errs.extend(apiserver::schema::cel::validate(
            &self.schema,
            obj,
            old,
            &FieldPath::nil(),
            &mut budget,
        ));
        match old {
            // Ratcheting: what was already stored invalid may stay so.
            Some(old) => apiserver::schema::ratchet::ratchet(errs, obj, old),
            None => errs,
        }
    }

    fn normalize(&self, obj: &mut Value) {
        self.schema.prune(obj);
        self.schema.apply_defaults(obj);
    }
}

impl Strategy for CustomResourceStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        self.normalize(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        self.normalize(new);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        self.check(obj, None)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        self.check(new, Some(old))
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn prepare_for_status_update(&self, new: &mut Value, _old: &Value) {
        self.normalize(new);
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        self.check(new, Some(old))
    }

    fn allocate<'a>(
        &'a self,
        _obj: &'a mut Value,
    ) -> futures_util::future::BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let just = self.established_at.is_some_and(|t| {
                jiff::Timestamp::now().duration_since(t).as_secs_f64()
                    < JUST_ESTABLISHED.as_secs_f64()
            });
            if just {
                tokio::time::sleep(JUST_ESTABLISHED).await;
            }
            Ok(())
        })
    }

    fn on_read(&self, obj: &mut Value) -> Result<(), ApiError> {
        self.converter.convert(obj, &self.api_version)?;
        self.normalize(obj);
        Ok(())
    }

    fn on_read_many(&self, objs: &mut [Value]) -> Result<(), ApiError> {
        self.converter.convert_many(objs, &self.api_version)?;
        for obj in objs {
            self.normalize(obj);
        }
        Ok(())
    }

    fn for_storage(&self, obj: &Value) -> Result<Option<Value>, ApiError> {
        if self.api_version == self.storage_api_version {
            return Ok(None);
        }
        let mut stored = obj.clone();
        self.converter
            .convert(&mut stored, &self.storage_api_version)?;
        Ok(Some(stored))
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The printer columns of a version (upstream's default `Age` when none).
fn columns(version: &Value) -> Vec<DynamicColumn> {
    let declared = version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if declared.is_empty() {
        return vec![DynamicColumn {
            name: "Age".into(),
            type_: "date".into(),
            format: String::new(),
            description: AGE_DESCRIPTION.into(),
            priority: 0,
            cell: Arc::new(|obj: &Value| {
                obj.get("metadata")
                    .and_then(|m| m.get("creationTimestamp"))
                    .map_or(Value::Null, |v| typed_cell("date", v))
            }),
        }];
    }
    declared
        .iter()
        .map(|c| {
            let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let type_ = s("type");
            let path = JsonPath::parse(&s("jsonPath")).ok();
            let cell_type = type_.clone();
            DynamicColumn {
                name: s("name"),
                type_,
                format: s("format"),
                description: s("description"),
                priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0) as i32,
                cell: Arc::new(move |obj: &Value| {
                    let Some(first) = path.as_ref().and_then(|p| p.find(obj).into_iter().next())
                    else {
                        return Value::Null;
                    };
                    typed_cell(&cell_type, first)
                }),
            }
        })
        .collect()
}

/// A printer column's cell from the value its JSONPath found, as upstream's
/// custom resource table convertor makes it: a `string` column prints the
/// value (JSON for anything but a string); `integer`, `number` and
/// `boolean` columns take a value of their type and are empty (`null`)
/// otherwise; a `date` column shows a timestamp's age as kubectl prints
/// ages (`45s`, `5m`, `2d`), `<invalid>` for a string that is not one.
fn typed_cell(column_type: &str, value: &Value) -> Value {
    match (column_type, value) {
        (_, Value::Null) => Value::Null,
        ("string", Value::String(_)) => value.clone(),
        ("string", other) => Value::String(other.to_string()),
        ("integer", Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .map_or(Value::Null, Value::from),
        ("number" | "boolean", Value::Number(_) | Value::Bool(_))
            if (column_type == "number") == value.is_number() =>
        {
            value.clone()
        }
        ("date", Value::String(s)) => match s.parse::<jiff::Timestamp>() {
            Ok(t) => Value::String(apiserver::registry::table::human_duration(
                jiff::Timestamp::now().as_second() - t.as_second(),
            )),
            Err(_) => Value::String("<invalid>".into()),
        },
        _ => Value::Null,
    }
}

/// One served version: its store, its schema, and its scale paths when it
/// has `/scale`.
#[derive(Clone)]
pub struct Served {
    pub store: Store,
    pub schema: Arc<Schema>,
    pub scale: Option<Arc<ScalePaths>>,
    /// The CRD is being deleted: creates are refused.
    pub terminating: bool,
}

impl Served {
    /// Stops this version's watch cache, if it has one: its watches end
    /// (clients re-watch and reach the stores that replace it) and its
    /// memory goes with the last request still holding the store.
    pub fn stop_cache(&self) {
        self.store.stop_cache();
    }

    /// Adds the route of this version to `groups`: `/scale` and the
    /// `fieldValidation` check here, everything else by the generic handlers.
    pub fn register(&self, groups: &mut Catalog) {
        let store = Arc::new(self.store.clone());
        let scale_paths = self.scale.clone();
        let schema = self.schema.clone();
        let terminating = self.terminating;
        let def = (*self.store.def).clone();
        groups.add_handler(
            def,
            Arc::new(move |req, info| {
                let (store, scale_paths, schema) =
                    (store.clone(), scale_paths.clone(), schema.clone());
                Box::pin(async move {
                    if terminating && info.verb == "create" {
                        // Upstream's forbidCreateAdmission while the CRD is terminating.
                        return ApiError::method_not_supported(
                            store.def.group_resource(),
                            "create",
                        )
                        .into_response();
                    }
                    if info.subresource == "scale" {
                        if let Some(paths) = scale_paths {
                            return scale::serve(store, paths, req, info).await;
                        }
                    }
                    // Custom resources have no strategic merge patch (upstream: 415).
                    let smp = req
                        .headers()
                        .get(http::header::CONTENT_TYPE)
                        .and_then(|v| v.to_str().ok())
                        .is_some_and(|ct| ct.starts_with("application/strategic-merge-patch+json"));
                    if info.verb == "patch" && smp {
                        return ApiError::unsupported_media_type(
                            "application/strategic-merge-patch+json",
                            &[
                                "application/json-patch+json",
                                "application/merge-patch+json",
                                "application/apply-patch+yaml",
                            ],
                        )
                        .into_response();
                    }
                    match field_validation::check(&schema, req, &info).await {
                        Err(e) => e.into_response(),
                        Ok(checked) => {
                            let mut resp = apiserver::endpoints::handlers::serve(
                                &store,
                                &info,
                                checked.request,
                            )
                            .await;
                            if resp.status().is_success() {
                                field_validation::add_warnings(&mut resp, &checked.warnings);
                            }
                            resp
                        }
                    }
                })
            }),
        );
    }
}

/// What is compiled once per CRD generation: the stores of its served versions.
/// What every custom resource store is made with: the etcd client and key
/// prefix, the admission chain, and the budget of each served version's
/// watch cache (`None`: no caches).
#[derive(Clone)]
pub struct StoreConfig {
    pub storage: EtcdStorage,
    pub prefix: String,
    pub admission: AdmissionChain,
    pub watch_cache: Option<usize>,
}

impl StoreConfig {
    /// The same stores without watch caches (for stores used once).
    pub fn uncached(&self) -> StoreConfig {
        StoreConfig {
            watch_cache: None,
            ..self.clone()
        }
    }
}

pub fn stores_for(crd_obj: &Value, config: &StoreConfig) -> Vec<Served> {
    let StoreConfig {
        storage,
        prefix,
        admission,
        watch_cache,
    } = config;
    let group = crd::spec_str(crd_obj, &["group"]).to_string();
    let names = crd_obj
        .get("status")
        .and_then(|s| s.get("acceptedNames"))
        .filter(|n| {
            n.get("plural")
                .and_then(Value::as_str)
                .is_some_and(|p| !p.is_empty())
        })
        .or_else(|| crd_obj.get("spec").and_then(|s| s.get("names")))
        .cloned()
        .unwrap_or(Value::Null);
    let ns = |k: &str| {
        names
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let (plural, kind) = (ns("plural"), ns("kind"));
    let singular = match ns("singular") {
        s if s.is_empty() => kind.to_lowercase(),
        s => s,
    };
    let namespaced = crd::spec_str(crd_obj, &["scope"]) != "Cluster";
    let mut versions: Vec<&Value> = crd::versions(crd_obj)
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
        .collect();
    versions.sort_by(|a, b| {
        crd::version_priority(
            a.get("name").and_then(Value::as_str).unwrap_or(""),
            b.get("name").and_then(Value::as_str).unwrap_or(""),
        )
    });
    let storage_api_version = format!("{group}/{}", crd::storage_version(crd_obj).unwrap_or(""));
    let converter = Arc::new(
        Converter::from_crd(crd_obj, format!("{group}, Kind={kind}")).unwrap_or_else(|e| {
            tracing::warn!(crd = %apiserver::apimachinery::meta::name(crd_obj), error = %e, "conversion webhook");
            Converter::Broken(e)
        }),
    );
    let established_at = crd::conditions::get(crd_obj, "Established")
        .and_then(|c| c.get("lastTransitionTime"))
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<jiff::Timestamp>().ok());
    versions
        .into_iter()
        .map(|v| {
            let version = v
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let schema = v
                .get("schema")
                .and_then(|s| s.get("openAPIV3Schema"))
                .map(Schema::compile)
                .unwrap_or_else(|| {
                    Schema::compile(
                        &json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
                    )
                });
            let schema = Arc::new(schema);
            let strategy = CustomResourceStrategy {
                schema: schema.clone(),
                api_version: format!("{group}/{version}"),
                storage_api_version: storage_api_version.clone(),
                converter: converter.clone(),
                established_at,
            };
            let mut def = ResourceDef::new(&group, &version, &kind, &plural)
                .singular(&singular)
                .storage_path(&format!("{group}/{plural}"))
                .with_field_types(Arc::new(
                    apiserver::fieldmanager::typeinfo::StructuralTypes(schema.clone()),
                ))
                // Status writes change nothing but status (upstream's
                // custom resource status strategy).
                .status_metadata(apiserver::registry::resource::StatusMetadata::Reset)
                .strategy(strategy);
            if !namespaced {
                def = def.cluster_scoped();
            }
            def.short_names = strings(names.get("shortNames"));
            def.categories = strings(names.get("categories"));
            if v.get("subresources")
                .and_then(|s| s.get("status"))
                .is_some()
            {
                def = def.with_status();
            }
            def.selectable_fields = v
                .get("selectableFields")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                        .map(|p| p.trim_start_matches('.').to_string())
                        .collect()
                })
                .unwrap_or_default();
            def.dynamic_columns = columns(v);
            let scale = v
                .get("subresources")
                .and_then(|s| s.get("scale"))
                .map(|s| Arc::new(ScalePaths::from_crd(s)));
            if scale.is_some() {
                def = def.with_subresource(Subresource::Scale);
            }
            let mut store = Store::new(def, storage.clone(), prefix, admission.clone());
            // A cache per served version, filled through that version's
            // read path (conversion, pruning and defaults of its schema), so
            // that it answers exactly as etcd reads do. Not with a conversion
            // webhook: an object the webhook failed to convert while the
            // cache loads would be missing from it, where an etcd read
            // reports the failure.
            if let (Some(max_bytes), Converter::None) = (watch_cache, &*converter) {
                store = store.with_watch_cache(*max_bytes);
            }
            Served {
                store,
                schema,
                scale,
                terminating: apiserver::apimachinery::meta::is_deleting(crd_obj),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_keep_only_values_of_their_column_type() {
        assert_eq!(typed_cell("string", &json!("a")), json!("a"));
        assert_eq!(typed_cell("string", &json!(5)), json!("5"));
        assert_eq!(typed_cell("string", &json!(["x"])), json!("[\"x\"]"));
        assert_eq!(typed_cell("integer", &json!(5)), json!(5));
        assert_eq!(typed_cell("integer", &json!(5.7)), json!(5));
        assert_eq!(typed_cell("integer", &json!("5")), Value::Null);
        assert_eq!(typed_cell("number", &json!(1.5)), json!(1.5));
        assert_eq!(typed_cell("number", &json!(true)), Value::Null);
        assert_eq!(typed_cell("boolean", &json!(true)), json!(true));
        assert_eq!(typed_cell("boolean", &json!(1)), Value::Null);
        assert_eq!(typed_cell("integer", &Value::Null), Value::Null);
    }

    #[test]
    fn date_cells_are_ages() {
        let an_hour_ago = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(3600);
        assert_eq!(
            typed_cell("date", &json!(an_hour_ago.to_string())),
            json!("60m")
        );
        assert_eq!(typed_cell("date", &json!("yesterday")), json!("<invalid>"));
        assert_eq!(typed_cell("date", &json!(7)), Value::Null);

        // The default Age column of a CRD without printer columns.
        let age = columns(&json!({"name": "v1"})).remove(0);
        assert_eq!((age.name.as_str(), age.type_.as_str()), ("Age", "date"));
        let obj = json!({"metadata": {"creationTimestamp": an_hour_ago.to_string()}});
        assert_eq!((age.cell)(&obj), json!("60m"));
        assert_eq!((age.cell)(&json!({"metadata": {}})), Value::Null);
    }
}

//! One resource served at several group/versions over one storage.
//!
//! Upstream stores a resource once, in its storage version, and serves it at
//! every version it has (autoscaling/v1 and v2 HorizontalPodAutoscalers,
//! core/v1 and events.k8s.io/v1 Events), converting through its internal
//! form. Here a resource served at another version is declared with
//! [`ResourceDef::served_as`]: the declaration of the storage version plus a
//! pair of conversion functions to and from the storage form. The result is
//! an ordinary [`ResourceDef`] on the generic store (same etcd keys, its own
//! watch cache holding the converted objects), whose strategy converts every
//! object it reads to the served version and every object it writes to the
//! storage version; defaulting and validation are the storage version's,
//! applied to the storage form, as upstream applies the internal type's.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::resource::ResourceDef;
use super::strategy::Strategy;
use crate::apimachinery::errors::ApiError;
use crate::apimachinery::validation::FieldError;

/// Converts an object (with `apiVersion` and `kind`) to another version.
pub type ConvertFn = Arc<dyn Fn(&Value) -> Result<Value, ApiError> + Send + Sync>;

/// How a served version relates to the storage version of its resource.
pub struct VersionConversion {
    /// Group of the storage version (`""` for core).
    pub storage_group: String,
    /// The storage version (`v1`).
    pub storage_version: String,
    /// The kind in the storage version.
    pub storage_kind: String,
    /// Served form → storage form.
    pub to_storage: ConvertFn,
    /// Storage form → served form.
    pub from_storage: ConvertFn,
}

impl VersionConversion {
    /// `apiVersion` of the storage form (`v1`, `autoscaling/v2`).
    pub fn storage_api_version(&self) -> String {
        if self.storage_group.is_empty() {
            self.storage_version.clone()
        } else {
            format!("{}/{}", self.storage_group, self.storage_version)
        }
    }
}

impl ResourceDef {
    /// Declares `storage` (the declaration of the storage version) served
    /// at `group`/`version` as `kind`, converted with `to_storage` and
    /// `from_storage`. Names, scope, short names, categories, etcd keys,
    /// subresources and Table columns are the storage version's (Table
    /// cells are computed on the storage form); the strategy is the storage
    /// version's, applied to the storage form.
    pub fn served_as(
        storage: &ResourceDef,
        group: &str,
        version: &str,
        kind: &str,
        to_storage: ConvertFn,
        from_storage: ConvertFn,
    ) -> ResourceDef {
        let conversion = Arc::new(VersionConversion {
            storage_group: storage.group.clone(),
            storage_version: storage.version.clone(),
            storage_kind: storage.kind.clone(),
            to_storage,
            from_storage,
        });
        let mut def = storage.clone();
        def.group = group.into();
        def.version = version.into();
        def.kind = kind.into();
        def.unknown_fields = None;
        def.strategic_merge = None;
        // The served version's type is not the storage version's.
        def.schema = None;
        def.strategy = Arc::new(ConvertingStrategy {
            inner: storage.strategy.clone(),
            conversion: conversion.clone(),
        });
        def.conversion = Some(conversion);
        def
    }
}

/// The strategy of a served version: the storage version's strategy,
/// applied to the storage form of each object.
struct ConvertingStrategy {
    inner: Arc<dyn Strategy>,
    conversion: Arc<VersionConversion>,
}

impl ConvertingStrategy {
    fn to_storage(&self, obj: &Value) -> Result<Value, ApiError> {
        (self.conversion.to_storage)(obj)
    }

    fn from_storage(&self, obj: &Value) -> Result<Value, ApiError> {
        (self.conversion.from_storage)(obj)
    }

    /// Runs `f` on the storage form of `obj` and converts the result back;
    /// leaves `obj` alone when a conversion fails (validation, which runs
    /// next, reports it).
    fn in_storage_form(&self, obj: &mut Value, f: impl FnOnce(&mut Value)) {
        if let Ok(mut stored) = self.to_storage(obj) {
            f(&mut stored);
            if let Ok(served) = self.from_storage(&stored) {
                *obj = served;
            }
        }
    }

    fn conversion_error(e: ApiError) -> Vec<FieldError> {
        vec![FieldError::invalid("", Value::Null, &e.message)]
    }
}

impl Strategy for ConvertingStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        self.in_storage_form(obj, |s| self.inner.prepare_for_create(s));
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let Ok(old) = self.to_storage(old) else {
            return;
        };
        self.in_storage_form(new, |s| self.inner.prepare_for_update(s, &old));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        match self.to_storage(obj) {
            Ok(s) => self.inner.validate(&s),
            Err(e) => Self::conversion_error(e),
        }
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        match (self.to_storage(new), self.to_storage(old)) {
            (Ok(n), Ok(o)) => self.inner.validate_update(&n, &o),
            (Err(e), _) | (_, Err(e)) => Self::conversion_error(e),
        }
    }

    fn tracks_generation(&self) -> bool {
        self.inner.tracks_generation()
    }

    fn allow_unconditional_update(&self) -> bool {
        self.inner.allow_unconditional_update()
    }

    fn graceful_delete(&self) -> bool {
        self.inner.graceful_delete()
    }

    fn default_grace_period(&self, obj: &Value) -> Option<i64> {
        match self.to_storage(obj) {
            Ok(s) => self.inner.default_grace_period(&s),
            Err(_) => self.inner.default_grace_period(obj),
        }
    }

    fn retain_on_delete(&self, obj: &mut Value) -> bool {
        let mut retain = false;
        self.in_storage_form(obj, |s| retain = self.inner.retain_on_delete(s));
        retain
    }

    fn on_read(&self, obj: &mut Value) -> Result<(), ApiError> {
        self.inner.on_read(obj)?;
        *obj = self.from_storage(obj)?;
        Ok(())
    }

    fn for_storage(&self, obj: &Value) -> Result<Option<Value>, ApiError> {
        let stored = self.to_storage(obj)?;
        Ok(Some(self.inner.for_storage(&stored)?.unwrap_or(stored)))
    }

    fn prepare_for_status_update(&self, new: &mut Value, old: &Value) {
        let Ok(old) = self.to_storage(old) else {
            return;
        };
        self.in_storage_form(new, |s| self.inner.prepare_for_status_update(s, &old));
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        match (self.to_storage(new), self.to_storage(old)) {
            (Ok(n), Ok(o)) => self.inner.validate_status_update(&n, &o),
            (Err(e), _) | (_, Err(e)) => Self::conversion_error(e),
        }
    }

    fn allocate<'a>(&'a self, obj: &'a mut Value) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let mut stored = self.to_storage(obj)?;
            self.inner.allocate(&mut stored).await?;
            *obj = self.from_storage(&stored)?;
            Ok(())
        })
    }

    fn allocate_update<'a>(
        &'a self,
        new: &'a mut Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let mut stored = self.to_storage(new)?;
            let old = self.to_storage(old)?;
            self.inner.allocate_update(&mut stored, &old).await?;
            *new = self.from_storage(&stored)?;
            Ok(())
        })
    }

    fn release_update<'a>(
        &'a self,
        new: &'a Value,
        old: &'a Value,
        committed: bool,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let (Ok(n), Ok(o)) = (self.to_storage(new), self.to_storage(old)) {
                self.inner.release_update(&n, &o, committed).await;
            }
        })
    }

    fn release<'a>(&'a self, obj: &'a Value) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Ok(s) = self.to_storage(obj) {
                self.inner.release(&s).await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A toy pair: v1 `{"size": n}` is stored as v2 `{"spec": {"size": n}}`.
    fn widget_v1() -> ResourceDef {
        struct Defaulting;
        impl Strategy for Defaulting {
            fn prepare_for_create(&self, obj: &mut Value) {
                if obj["spec"].get("size").is_none() {
                    obj["spec"]["size"] = json!(3);
                }
            }
            fn validate(&self, obj: &Value) -> Vec<FieldError> {
                if obj["spec"]["size"].as_i64().unwrap_or(0) < 0 {
                    vec![FieldError::invalid(
                        "spec.size",
                        obj["spec"]["size"].clone(),
                        "must be >= 0",
                    )]
                } else {
                    vec![]
                }
            }
        }
        let v2 = ResourceDef::new("example.com", "v2", "Widget", "widgets").strategy(Defaulting);
        ResourceDef::served_as(
            &v2,
            "example.com",
            "v1",
            "Widget",
            Arc::new(|o: &Value| {
                let mut s = json!({"apiVersion": "example.com/v2", "kind": "Widget",
                    "metadata": o["metadata"].clone(), "spec": {}});
                if let Some(n) = o.get("size") {
                    s["spec"]["size"] = n.clone();
                }
                Ok(s)
            }),
            Arc::new(|s: &Value| {
                let mut o = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                    "metadata": s["metadata"].clone()});
                if let Some(n) = s["spec"].get("size") {
                    o["size"] = n.clone();
                }
                Ok(o)
            }),
        )
    }

    #[test]
    fn served_version_shares_storage_and_converts() {
        let def = widget_v1();
        assert_eq!(def.api_version(), "example.com/v1");
        assert_eq!(def.storage_path, "widgets");
        let conv = def.conversion.as_ref().expect("conversion");
        assert_eq!(conv.storage_api_version(), "example.com/v2");

        // Defaulting runs on the storage form and shows in the served form.
        let mut obj =
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
        def.strategy.prepare_for_create(&mut obj);
        assert_eq!(obj["size"], 3);

        // Validation sees the storage form (storage field paths).
        let bad = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "size": -1});
        let errs = def.strategy.validate(&bad);
        assert_eq!(errs.len(), 1);

        // Writes are stored in the storage version, reads come back converted.
        let stored = def.strategy.for_storage(&obj).expect("ok").expect("some");
        assert_eq!(stored["apiVersion"], "example.com/v2");
        assert_eq!(stored["spec"]["size"], 3);
        let mut read = stored.clone();
        def.strategy.on_read(&mut read).expect("read");
        assert_eq!(read, obj);
    }
}

//! Legacy discovery documents: `/api`, `/api/v1`, `/apis`, `/apis/<g>`,
//! `/apis/<g>/<v>`, built from a tier's [`Catalog`].

use base64::Engine;
use serde_json::{json, Value};

use crate::registry::catalog::{Catalog, GroupEntry};
use crate::registry::resource::ResourceDef;

/// The discovery documents of what a tier serves itself.
impl Catalog {
    /// `/api`.
    pub fn api_versions(&self, server_address: &str) -> Value {
        json!({
            "kind": "APIVersions",
            "versions": self.core_versions().collect::<Vec<_>>(),
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
        })
    }

    /// `/apis` entries of this server's named groups.
    pub fn group_list_entries(&self) -> Vec<Value> {
        self.named_groups().map(api_group_body).collect()
    }

    /// `/apis/<group>`.
    pub fn api_group(&self, group: &str) -> Option<Value> {
        let g = self.group(group)?;
        let mut body = json!({"kind": "APIGroup", "apiVersion": "v1"});
        if let (Value::Object(out), Value::Object(inner)) = (&mut body, api_group_body(g)) {
            out.extend(inner);
        }
        Some(body)
    }

    /// `/api/v1` or `/apis/<group>/<version>`.
    pub fn resource_list(&self, group: &str, version: &str) -> Option<Value> {
        let stores = self.routes(group, version)?;
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

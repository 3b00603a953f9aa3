//! The `<Kind>List` schemas of the documents.

use serde_json::{json, Value};

use crate::registry::resource::ResourceDef;

/// The `<Kind>List` schema of a kind, as upstream's documents name it.
pub(super) fn list_component(def: &ResourceDef, schema_name: &str) -> Value {
    let kind = &def.kind;
    json!({
        "description": format!("{kind}List is a list of {kind} objects."),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"},
            "items": {"type": "array", "description": format!("List of {kind} objects."), "items": {"$ref": format!("#/components/schemas/{schema_name}"), "default": {}}},
            "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"},
            "metadata": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", "default": {}, "description": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"}
        },
        "x-kubernetes-group-version-kind": [{"group": def.group, "kind": format!("{kind}List"), "version": def.version}]
    })
}

//! apiextensions.k8s.io/v1 CustomResourceDefinitions: bodies built with
//! prost and the `k8s-pb` bindings (as client-go's apiextensions
//! clientset sends them) decode to the JSON upstream writes, and our
//! encoding reads back in prost.

use super::*;
use k8s_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1 as ext;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime;
use prost::Message as _;
use serde_json::json;
use std::collections::BTreeMap;

fn envelope(kind: &str, raw: Vec<u8>) -> Vec<u8> {
    let unknown = runtime::Unknown {
        type_meta: Some(runtime::TypeMeta {
            api_version: Some("apiextensions.k8s.io/v1".to_owned()),
            kind: Some(kind.to_owned()),
        }),
        raw: Some(raw),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = b"k8s\0".to_vec();
    out.extend(unknown.encode_to_vec());
    out
}

fn raw_json(text: &str) -> ext::Json {
    ext::Json {
        raw: Some(text.as_bytes().to_vec()),
    }
}

fn string_schema() -> ext::JsonSchemaProps {
    ext::JsonSchemaProps {
        r#type: Some("string".to_owned()),
        ..Default::default()
    }
}

fn prost_crd() -> ext::CustomResourceDefinition {
    let mut spec_props = BTreeMap::new();
    spec_props.insert(
        "color".to_owned(),
        ext::JsonSchemaProps {
            r#type: Some("string".to_owned()),
            default: Some(raw_json("\"red\"")),
            r#enum: vec![raw_json("\"red\""), raw_json("\"blue\"")],
            max_length: Some(10),
            ..Default::default()
        },
    );
    spec_props.insert(
        "size".to_owned(),
        ext::JsonSchemaProps {
            r#type: Some("number".to_owned()),
            maximum: Some(2.5),
            minimum: Some(0.0),
            multiple_of: Some(0.5),
            exclusive_maximum: Some(true),
            ..Default::default()
        },
    );
    spec_props.insert(
        "tags".to_owned(),
        ext::JsonSchemaProps {
            r#type: Some("array".to_owned()),
            items: Some(Box::new(ext::JsonSchemaPropsOrArray {
                schema: Some(Box::new(string_schema())),
                j_son_schemas: vec![],
            })),
            x_kubernetes_list_type: Some("set".to_owned()),
            ..Default::default()
        },
    );
    spec_props.insert(
        "labels".to_owned(),
        ext::JsonSchemaProps {
            r#type: Some("object".to_owned()),
            additional_properties: Some(Box::new(ext::JsonSchemaPropsOrBool {
                allows: Some(true),
                schema: Some(Box::new(string_schema())),
            })),
            ..Default::default()
        },
    );
    spec_props.insert(
        "free".to_owned(),
        ext::JsonSchemaProps {
            r#type: Some("object".to_owned()),
            x_kubernetes_preserve_unknown_fields: Some(true),
            additional_properties: Some(Box::new(ext::JsonSchemaPropsOrBool {
                allows: Some(false),
                schema: None,
            })),
            ..Default::default()
        },
    );
    let mut root_props = BTreeMap::new();
    root_props.insert(
        "spec".to_owned(),
        ext::JsonSchemaProps {
            r#type: Some("object".to_owned()),
            required: vec!["color".to_owned()],
            properties: spec_props,
            x_kubernetes_validations: vec![ext::ValidationRule {
                rule: Some("self.size >= 0".to_owned()),
                message: Some("negative".to_owned()),
                ..Default::default()
            }],
            ..Default::default()
        },
    );
    let mut dependencies = BTreeMap::new();
    dependencies.insert(
        "spec".to_owned(),
        ext::JsonSchemaPropsOrStringArray {
            schema: None,
            property: vec!["status".to_owned()],
        },
    );
    let schema = ext::JsonSchemaProps {
        r#type: Some("object".to_owned()),
        properties: root_props,
        dependencies,
        ..Default::default()
    };
    ext::CustomResourceDefinition {
        metadata: Some(meta::ObjectMeta {
            name: Some("widgets.example.com".to_owned()),
            ..Default::default()
        }),
        spec: Some(ext::CustomResourceDefinitionSpec {
            group: Some("example.com".to_owned()),
            names: Some(ext::CustomResourceDefinitionNames {
                plural: Some("widgets".to_owned()),
                singular: Some("widget".to_owned()),
                kind: Some("Widget".to_owned()),
                list_kind: Some("WidgetList".to_owned()),
                short_names: vec!["wd".to_owned()],
                ..Default::default()
            }),
            scope: Some("Namespaced".to_owned()),
            versions: vec![ext::CustomResourceDefinitionVersion {
                name: Some("v1".to_owned()),
                served: Some(true),
                storage: Some(false),
                schema: Some(ext::CustomResourceValidation {
                    open_apiv3_schema: Some(schema),
                }),
                subresources: Some(ext::CustomResourceSubresources {
                    status: Some(ext::CustomResourceSubresourceStatus {}),
                    scale: None,
                }),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: None,
    }
}

fn expected_json() -> Value {
    json!({
        "kind": "CustomResourceDefinition",
        "apiVersion": "apiextensions.k8s.io/v1",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "singular": "widget", "shortNames": ["wd"],
                "kind": "Widget", "listKind": "WidgetList"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": false,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {
                        "type": "object",
                        "required": ["color"],
                        "properties": {
                            "color": {"type": "string", "default": "red", "maxLength": 10,
                                "enum": ["red", "blue"]},
                            "free": {"type": "object", "additionalProperties": false,
                                "x-kubernetes-preserve-unknown-fields": true},
                            "labels": {"type": "object",
                                "additionalProperties": {"type": "string"}},
                            "size": {"type": "number", "maximum": 2.5, "exclusiveMaximum": true,
                                "minimum": 0, "multipleOf": 0.5},
                            "tags": {"type": "array", "items": {"type": "string"},
                                "x-kubernetes-list-type": "set"}
                        },
                        "x-kubernetes-validations": [{"rule": "self.size >= 0",
                            "message": "negative"}]
                    }},
                    "dependencies": {"spec": ["status"]}
                }},
                "subresources": {"status": {}}
            }]
        }
    })
}

#[test]
fn a_client_go_crd_decodes_as_upstream_writes_it() {
    let bytes = envelope("CustomResourceDefinition", prost_crd().encode_to_vec());
    let got = decode_object(&bytes).expect("decode");
    assert_eq!(got, expected_json());
    assert_eq!(got.to_string(), expected_json().to_string(), "key order");
}

#[test]
fn our_crd_encoding_reads_back_in_prost() {
    let bytes = encode_object(&expected_json()).expect("encode");
    assert_eq!(decode_object(&bytes).expect("decode"), expected_json());
    let body = bytes.strip_prefix(b"k8s\0").expect("magic");
    let unknown = runtime::Unknown::decode(body).expect("envelope");
    let crd = ext::CustomResourceDefinition::decode(unknown.raw.unwrap_or_default().as_slice())
        .expect("prost decodes our CRD");
    let spec = crd.spec.expect("spec");
    let schema = spec.versions[0]
        .schema
        .clone()
        .and_then(|s| s.open_apiv3_schema)
        .expect("schema");
    let inner = &schema.properties["spec"];
    let color = &inner.properties["color"];
    assert_eq!(color.default, Some(raw_json("\"red\"")));
    assert_eq!(
        color.r#enum,
        vec![raw_json("\"red\""), raw_json("\"blue\"")]
    );
    let size = &inner.properties["size"];
    assert_eq!((size.maximum, size.minimum), (Some(2.5), Some(0.0)));
    let labels = inner.properties["labels"]
        .additional_properties
        .clone()
        .expect("additionalProperties");
    assert_eq!(labels.allows, Some(true));
    assert_eq!(
        labels.schema.and_then(|s| s.r#type).as_deref(),
        Some("string")
    );
    let free = &inner.properties["free"];
    assert_eq!(free.x_kubernetes_preserve_unknown_fields, Some(true));
    let free_additional = free.additional_properties.clone().expect("bool");
    assert_eq!(
        (free_additional.allows, free_additional.schema),
        (Some(false), None)
    );
    assert_eq!(
        schema.dependencies["spec"].property,
        vec!["status".to_owned()]
    );
}

#[test]
fn polymorphic_schema_fields() {
    let crd = |schema: Value| {
        json!({"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1",
            "metadata": {"name": "a.b"},
            "spec": {"group": "b", "names": {"plural": "a", "kind": "A"}, "scope": "Cluster",
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": schema}}]}})
    };
    for schema in [
        json!({"items": [{"type": "string"}, {}], "additionalItems": true}),
        json!({"items": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}]}}),
        json!({"dependencies": {"a": {"required": ["b"]}, "c": ["d", "e"]}}),
        json!({"default": {"a": [1, null, {"b": 1.25e-7}]}, "example": null, "enum": [null, 3]}),
        json!({"$schema": "s", "$ref": "#/definitions/x", "definitions": {"x": {"not": {}}},
            "patternProperties": {"^a": {"x-kubernetes-map-type": "atomic"}},
            "externalDocs": {"url": "u"}, "nullable": true, "minimum": -1e300}),
    ] {
        let object = crd(schema);
        let back = decode_object(&encode_object(&object).expect("encode")).expect("decode");
        let mut want = object.clone();
        // `example: null` is a nil pointer in Go: not written back.
        if let Some(s) = want["spec"]["versions"][0]["schema"]["openAPIV3Schema"].as_object_mut() {
            s.remove("example");
        }
        assert_eq!(back, want);
    }
    // Lists of CRDs.
    let list = json!({"kind": "CustomResourceDefinitionList",
        "apiVersion": "apiextensions.k8s.io/v1", "metadata": {"resourceVersion": "5"},
        "items": [crd(json!({"type": "object"}))]});
    let bytes = encode_object(&list).expect("encode list");
    let body = bytes.strip_prefix(b"k8s\0").expect("magic");
    let unknown = runtime::Unknown::decode(body).expect("envelope");
    let got = ext::CustomResourceDefinitionList::decode(unknown.raw.unwrap_or_default().as_slice())
        .expect("prost list");
    assert_eq!(got.items.len(), 1);
    assert!(can_encode(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinitionList"
    ));
    assert!(is_known(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition"
    ));
}

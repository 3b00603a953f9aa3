//! CustomResourceDefinitions in protobuf, as upstream's conformance tests
//! send them with the apiextensions clientset: a create with a
//! `application/vnd.kubernetes.protobuf` body (built with prost and the
//! `k8s-pb` bindings, independently of our encoder), read back in
//! protobuf and in JSON with the whole schema intact, and served.

use crate::harness::{Auth, SendExt, TestCluster};
use std::collections::BTreeMap;

use k8s_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1 as ext;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime;
use prost::Message as _;
use serde_json::{json, Value};

use crate::crds::wait_established;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
const API_VERSION: &str = "apiextensions.k8s.io/v1";

/// A protobuf request body of an apiextensions.k8s.io/v1 kind.
fn envelope(kind: &str, message: &impl prost::Message) -> Vec<u8> {
    crate::client_go_writes::envelope(API_VERSION, kind, message)
}

/// The `raw` of a protobuf response of the given kind.
fn unwrap_envelope(bytes: &[u8], kind: &str) -> Vec<u8> {
    let body = bytes.strip_prefix(b"k8s\0").expect("k8s magic");
    let unknown = runtime::Unknown::decode(body).expect("runtime.Unknown");
    let type_meta = unknown.type_meta.expect("typeMeta");
    assert_eq!(type_meta.api_version.as_deref(), Some(API_VERSION));
    assert_eq!(type_meta.kind.as_deref(), Some(kind));
    unknown.raw.unwrap_or_default()
}

fn json_value(text: &str) -> ext::Json {
    ext::Json {
        raw: Some(text.as_bytes().to_vec()),
    }
}

fn typed(ty: &str) -> ext::JsonSchemaProps {
    ext::JsonSchemaProps {
        r#type: Some(ty.to_owned()),
        ..Default::default()
    }
}

fn gadget_crd() -> ext::CustomResourceDefinition {
    let mut spec_props = BTreeMap::new();
    spec_props.insert(
        "color".to_owned(),
        ext::JsonSchemaProps {
            default: Some(json_value("\"red\"")),
            r#enum: vec![json_value("\"red\""), json_value("\"blue\"")],
            ..typed("string")
        },
    );
    spec_props.insert(
        "size".to_owned(),
        ext::JsonSchemaProps {
            minimum: Some(0.0),
            maximum: Some(10.5),
            ..typed("number")
        },
    );
    spec_props.insert(
        "labels".to_owned(),
        ext::JsonSchemaProps {
            additional_properties: Some(Box::new(ext::JsonSchemaPropsOrBool {
                allows: Some(true),
                schema: Some(Box::new(typed("string"))),
            })),
            ..typed("object")
        },
    );
    spec_props.insert(
        "closed".to_owned(),
        ext::JsonSchemaProps {
            additional_properties: Some(Box::new(ext::JsonSchemaPropsOrBool {
                allows: Some(false),
                schema: None,
            })),
            ..typed("object")
        },
    );
    spec_props.insert(
        "extra".to_owned(),
        ext::JsonSchemaProps {
            x_kubernetes_preserve_unknown_fields: Some(true),
            ..typed("object")
        },
    );
    spec_props.insert(
        "tags".to_owned(),
        ext::JsonSchemaProps {
            items: Some(Box::new(ext::JsonSchemaPropsOrArray {
                schema: Some(Box::new(typed("string"))),
                j_son_schemas: vec![],
            })),
            ..typed("array")
        },
    );
    let mut root = BTreeMap::new();
    root.insert(
        "spec".to_owned(),
        ext::JsonSchemaProps {
            properties: spec_props,
            ..typed("object")
        },
    );
    ext::CustomResourceDefinition {
        metadata: Some(meta::ObjectMeta {
            name: Some("gadgets.pb.example.com".to_owned()),
            ..Default::default()
        }),
        spec: Some(ext::CustomResourceDefinitionSpec {
            group: Some("pb.example.com".to_owned()),
            names: Some(ext::CustomResourceDefinitionNames {
                plural: Some("gadgets".to_owned()),
                singular: Some("gadget".to_owned()),
                kind: Some("Gadget".to_owned()),
                list_kind: Some("GadgetList".to_owned()),
                ..Default::default()
            }),
            scope: Some("Namespaced".to_owned()),
            versions: vec![ext::CustomResourceDefinitionVersion {
                name: Some("v1".to_owned()),
                served: Some(true),
                storage: Some(true),
                schema: Some(ext::CustomResourceValidation {
                    open_apiv3_schema: Some(ext::JsonSchemaProps {
                        properties: root,
                        ..typed("object")
                    }),
                }),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: None,
    }
}

/// The schema as upstream writes it in JSON.
fn expected_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {
            "closed": {"type": "object", "additionalProperties": false},
            "color": {"type": "string", "default": "red", "enum": ["red", "blue"]},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "size": {"type": "number", "maximum": 10.5, "minimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}}
        }}}
    })
}

fn check_prost_schema(crd: &ext::CustomResourceDefinition) {
    let spec = crd.spec.as_ref().expect("spec");
    assert_eq!(spec.group.as_deref(), Some("pb.example.com"));
    let schema = spec.versions[0]
        .schema
        .as_ref()
        .and_then(|s| s.open_apiv3_schema.as_ref())
        .expect("openAPIV3Schema");
    let props = &schema.properties["spec"].properties;
    assert_eq!(props["color"].default, Some(json_value("\"red\"")));
    assert_eq!(
        props["color"].r#enum,
        vec![json_value("\"red\""), json_value("\"blue\"")]
    );
    assert_eq!(props["size"].maximum, Some(10.5));
    let labels = props["labels"]
        .additional_properties
        .as_ref()
        .expect("labels");
    assert_eq!(labels.allows, Some(true));
    assert_eq!(
        labels.schema.as_ref().and_then(|s| s.r#type.as_deref()),
        Some("string")
    );
    let closed = props["closed"]
        .additional_properties
        .as_ref()
        .expect("closed");
    assert_eq!(
        (closed.allows, closed.schema.is_none()),
        (Some(false), true)
    );
    assert_eq!(
        props["extra"].x_kubernetes_preserve_unknown_fields,
        Some(true)
    );
    let items = props["tags"].items.as_ref().expect("items");
    assert_eq!(
        items.schema.as_ref().and_then(|s| s.r#type.as_deref()),
        Some("string")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crd_created_in_protobuf_round_trips() {
    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let crds = c.url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
    let one = format!("{crds}/gadgets.pb.example.com");

    let resp = http
        .post(&crds)
        .header("content-type", PROTOBUF)
        .header("accept", "application/json")
        .body(envelope("CustomResourceDefinition", &gadget_crd()))
        .sent()
        .await;
    let code = resp.status().as_u16();
    let created: Value = resp.json().await.expect("json");
    assert_eq!(code, 201, "{created}");
    assert_eq!(
        created["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
        expected_schema(),
        "{created}"
    );
    wait_established(&c, "gadgets.pb.example.com").await;

    // Read back in protobuf.
    let resp = http.get(&one).header("accept", PROTOBUF).sent().await;
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(
        resp.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some(PROTOBUF)
    );
    let bytes = resp.bytes().await.expect("bytes");
    let raw = unwrap_envelope(&bytes, "CustomResourceDefinition");
    let crd = ext::CustomResourceDefinition::decode(raw.as_slice()).expect("prost CRD");
    check_prost_schema(&crd);
    let status = crd.status.expect("status");
    assert_eq!(status.stored_versions, ["v1"]);
    assert!(
        status
            .conditions
            .iter()
            .any(|c| c.r#type.as_deref() == Some("Established")
                && c.status.as_deref() == Some("True"))
    );

    // And in JSON.
    let got: Value = http.get(&one).fetch_json().await;
    assert_eq!(
        got["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
        expected_schema(),
        "{got}"
    );
    assert_eq!(got["spec"]["versions"][0]["served"], true);

    // The list in protobuf.
    let resp = http.get(&crds).header("accept", PROTOBUF).sent().await;
    assert_eq!(resp.status().as_u16(), 200);
    let bytes = resp.bytes().await.expect("bytes");
    let raw = unwrap_envelope(&bytes, "CustomResourceDefinitionList");
    let list = ext::CustomResourceDefinitionList::decode(raw.as_slice()).expect("prost list");
    let item = list
        .items
        .iter()
        .find(|i| {
            i.metadata.as_ref().and_then(|m| m.name.as_deref()) == Some("gadgets.pb.example.com")
        })
        .expect("listed");
    check_prost_schema(item);

    // The schema is in force: the default applies, unknown fields under
    // `extra` are kept, `closed` takes no properties.
    let gadgets = c.url("/apis/pb.example.com/v1/namespaces/default/gadgets");
    let resp = http
        .post(&gadgets)
        .json(&json!({"apiVersion": "pb.example.com/v1", "kind": "Gadget",
            "metadata": {"name": "g"},
            "spec": {"size": 2, "extra": {"anything": [1]}, "labels": {"a": "b"}}}))
        .sent()
        .await;
    let code = resp.status().as_u16();
    let gadget: Value = resp.json().await.expect("json");
    assert_eq!(code, 201, "{gadget}");
    assert_eq!(gadget["spec"]["color"], "red", "{gadget}");
    assert_eq!(
        gadget["spec"]["extra"],
        json!({"anything": [1]}),
        "{gadget}"
    );
    let resp = http
        .post(&gadgets)
        .json(&json!({"apiVersion": "pb.example.com/v1", "kind": "Gadget",
            "metadata": {"name": "h"}, "spec": {"color": "green"}}))
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 422);
}

//! CustomResourceDefinitions and custom resources, end to end through the
//! aggregator: CRD validation and conditions, runtime routes, schema
//! validation/pruning/defaulting, printer columns, status, deletion, and the
//! real-world operator CRDs in `../shared/testdata/crds/`.

use crate::harness::{eventually, expect_status, table_header, Auth, SendExt, TestCluster};
use std::time::Duration;

use serde_json::{json, Value};

/// The directory of the real-world CRDs (not copied into the repository).
pub(crate) const TESTDATA: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/testdata/crds");

fn spec_properties() -> Value {
    let mut m = serde_json::Map::new();
    for (k, v) in [
        (
            "size",
            json!({"type": "integer", "minimum": 1, "maximum": 10}),
        ),
        ("replicas", json!({"type": "integer", "minimum": 0})),
        (
            "bounds",
            json!({"type": "object", "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
                   "x-kubernetes-validations": [{"rule": "self.min <= self.max", "message": "min must not exceed max"}]}),
        ),
        (
            "word",
            json!({"type": "string", "x-kubernetes-validations": [{"rule": "self != 'forbidden'", "reason": "FieldValueForbidden", "messageExpression": "'word ' + self + ' is not allowed'"}]}),
        ),
        (
            "even",
            json!({"type": "integer", "x-kubernetes-validations": [{"rule": "self % 2 == 0"}]}),
        ),
        (
            "frozen",
            json!({"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "frozen is immutable"}]}),
        ),
        // Rules using the Kubernetes CEL libraries (quantity, URL, IP/CIDR).
        (
            "memory",
            json!({"type": "string", "x-kubernetes-validations": [{"rule": "isQuantity(self) && quantity(self).isLessThan(quantity('1Gi'))", "message": "memory must be a quantity below 1Gi"}]}),
        ),
        (
            "endpoint",
            json!({"type": "string", "x-kubernetes-validations": [{"rule": "isURL(self) && url(self).getScheme() == 'https'", "message": "endpoint must be an https URL"}]}),
        ),
        (
            "subnet",
            json!({"type": "string", "x-kubernetes-validations": [{"rule": "isCIDR(self) && cidr('10.0.0.0/8').containsCIDR(self)", "message": "subnet must be inside 10.0.0.0/8"}]}),
        ),
        (
            "address",
            json!({"type": "string", "x-kubernetes-validations": [{"rule": "isIP(self) && ip(self).family() == 4 && !ip(self).isLoopback()", "messageExpression": "'address ' + self + ' must be a non-loopback IPv4 address'"}]}),
        ),
        (
            "ratio",
            json!({"type": "number", "exclusiveMinimum": true, "minimum": 0, "exclusiveMaximum": true, "maximum": 1}),
        ),
        ("step", json!({"type": "integer", "multipleOf": 5})),
        (
            "color",
            json!({"type": "string", "enum": ["red", "green", "blue"], "default": "red"}),
        ),
        ("mode", json!({"type": "string", "default": "fast"})),
        (
            "name",
            json!({"type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 8}),
        ),
        ("uid", json!({"type": "string", "format": "uuid"})),
        ("ip", json!({"type": "string", "format": "ipv4"})),
        ("cidr", json!({"type": "string", "format": "cidr"})),
        ("when", json!({"type": "string", "format": "date-time"})),
        ("day", json!({"type": "string", "format": "date"})),
        ("enabled", json!({"type": "boolean"})),
        ("port", json!({"x-kubernetes-int-or-string": true})),
        (
            "tags",
            json!({"type": "array", "x-kubernetes-list-type": "set", "maxItems": 3, "minItems": 1, "items": {"type": "string"}}),
        ),
        (
            "ports",
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object", "required": ["name"], "properties": { "name": {"type": "string"}, "port": {"type": "integer", "minimum": 1, "maximum": 65535}, "protocol": {"type": "string", "default": "TCP"}}}}),
        ),
        (
            "labels",
            json!({"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 2, "minProperties": 1}),
        ),
        (
            "free",
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        ),
        (
            "nested",
            json!({"type": "object", "properties": {"deep": {"type": "object", "required": ["x"], "properties": {"x": {"type": "integer"}}}}}),
        ),
        (
            "choice",
            json!({"type": "string", "anyOf": [{"pattern": "^a"}, {"pattern": "^b"}]}),
        ),
        (
            "one",
            json!({"type": "integer", "oneOf": [{"minimum": 5}, {"maximum": 7}]}),
        ),
    ] {
        m.insert(k.to_string(), v);
    }
    Value::Object(m)
}

pub(crate) fn widget_crd(scope: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": scope,
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
                "additionalPrinterColumns": [
                    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                    {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
                    {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
                    {"name": "Mode", "type": "string", "jsonPath": ".spec.mode", "priority": 1}
                ],
                "selectableFields": [{"jsonPath": ".spec.color"}],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "required": ["size"],
                            "properties": spec_properties()
                        },
                        "status": {"type": "object", "properties": {
                            "replicas": {"type": "integer"},
                            "selector": {"type": "string"},
                            "conditions": {"type": "array", "items": {"type": "object", "properties": {"type": {"type": "string"}, "status": {"type": "string"}}}}
                        }}
                    }
                }}
            }]
        }
    })
}

pub(crate) async fn create_json(c: &TestCluster, v: &Value) {
    let (ok, out, err) = c
        .kubectl_stdin(
            &["create", "--validate=false", "-f", "-"],
            Some(&v.to_string()),
        )
        .await;
    assert!(ok, "kubectl create failed: {out} {err}");
}

pub(crate) async fn create_namespace(c: &TestCluster, name: &str) {
    create_json(
        c,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
    )
    .await;
}

/// Waits for the CRD's Established condition, then for the aggregator's
/// discovery to list it: the aggregator learns of CRDs from their etcd
/// events and refreshes its merged discovery asynchronously, so under load
/// it can answer a moment after the condition is visible (issue 13).
pub(crate) async fn wait_established(c: &TestCluster, name: &str) {
    let crd = format!("crd/{name}");
    c.kubectl_ok(&["wait", "--for=condition=Established", "--timeout=30s", &crd])
        .await;
    let (plural, group) = name.split_once('.').expect("plural.group");
    let listed = eventually(Duration::from_secs(15), || async {
        let (ok, out, _) = c
            .kubectl(&["api-resources", "--api-group", group, "-o", "name"])
            .await;
        ok && out
            .lines()
            .any(|l| l == name || l.split('.').next() == Some(plural))
    })
    .await;
    assert!(listed, "{name} never appeared in discovery");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crd_lifecycle_custom_resources_and_cleanup() {
    let c = TestCluster::start().await;
    create_json(&c, &widget_crd("Namespaced")).await;
    wait_established(&c, "widgets.example.com").await;

    // Conditions and status as upstream maintains them.
    let crd: Value = serde_json::from_str(
        &c.kubectl_ok(&["get", "crd", "widgets.example.com", "-o", "json"])
            .await,
    )
    .expect("json");
    assert_eq!(crd["status"]["storedVersions"], json!(["v1"]), "{crd}");
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "Widget");
    assert_eq!(crd["spec"]["names"]["listKind"], "WidgetList");
    let reasons: Vec<(String, String)> = crd["status"]["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .map(|c| {
            (
                c["type"].as_str().unwrap_or("").into(),
                c["reason"].as_str().unwrap_or("").into(),
            )
        })
        .collect();
    assert!(
        reasons.contains(&("NamesAccepted".into(), "NoConflicts".into())),
        "{reasons:?}"
    );
    assert!(
        reasons.contains(&("Established".into(), "InitialNamesAccepted".into())),
        "{reasons:?}"
    );

    create_namespace(&c, "demo").await;
    let w = r#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"demo"},
        "spec":{"size":3,"unknown":"dropped","ports":[{"name":"http","port":80}],"free":{"kept":{"a":1}}},
        "status":{"replicas":9}}"#;
    let (ok, out, err) = c
        .kubectl_stdin(&["create", "--validate=false", "-f", "-"], Some(w))
        .await;
    assert!(ok, "{out} {err}");

    // fieldValidation: Strict rejects unknown fields, Warn (default) warns.
    let strict = r#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"zz-warned","namespace":"demo"},"spec":{"size":1,"bogus":true}}"#;
    let resp = c
        .http(Auth::AdminCert)
        .post(c.url("/apis/example.com/v1/namespaces/demo/widgets?fieldValidation=Strict"))
        .header("content-type", "application/json")
        .body(strict)
        .sent()
        .await;
    let st = expect_status(resp, 400, "BadRequest").await;
    assert_eq!(
        st["message"], r#"strict decoding error: unknown field "spec.bogus""#,
        "{st}"
    );
    let resp = c
        .http(Auth::AdminCert)
        .post(c.url("/apis/example.com/v1/namespaces/demo/widgets"))
        .header("content-type", "application/json")
        .body(strict)
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 201);
    let warnings: Vec<String> = resp
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        warnings,
        [r#"299 - "unknown field \"spec.bogus\"""#],
        "{warnings:?}"
    );

    // Pruning and defaulting show in -o yaml; status is ignored on create.
    let yaml = c
        .kubectl_ok(&["-n", "demo", "get", "widget", "w1", "-o", "yaml"])
        .await;
    assert!(!yaml.contains("unknown"), "{yaml}");
    assert!(yaml.contains("color: red"), "{yaml}");
    assert!(yaml.contains("mode: fast"), "{yaml}");
    assert!(yaml.contains("protocol: TCP"), "{yaml}");
    assert!(yaml.contains("kept:"), "{yaml}");
    assert!(!yaml.contains("replicas: 9"), "{yaml}");
    assert!(yaml.contains("generation: 1"), "{yaml}");

    // Printer columns (short name, -o wide for priority 1).
    let table = c.kubectl_ok(&["-n", "demo", "get", "wd"]).await;
    let header: Vec<&str> = table_header(&table);
    assert_eq!(header, ["NAME", "SIZE", "COLOR", "READY"], "{table}");
    let row: Vec<&str> = table
        .lines()
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .collect();
    // The Ready cell is null (no status yet): kubectl prints it empty.
    assert_eq!(row, ["w1", "3", "red"], "{table}");
    let wide = c
        .kubectl_ok(&["-n", "demo", "get", "widgets", "-o", "wide"])
        .await;
    assert!(wide.lines().next().unwrap_or("").contains("MODE"), "{wide}");

    // Status subresource: status changes, generation does not; a spec change bumps it.
    c.kubectl_ok(&[
        "-n",
        "demo",
        "patch",
        "widget",
        "w1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"conditions":[{"type":"Ready","status":"True"}]}}"#,
    ])
    .await;
    let table = c.kubectl_ok(&["-n", "demo", "get", "widgets"]).await;
    assert!(
        table.lines().nth(1).unwrap_or("").ends_with("True"),
        "{table}"
    );
    c.kubectl_ok(&[
        "-n",
        "demo",
        "patch",
        "widget",
        "w1",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/size","value":4}]"#,
    ])
    .await;
    let got: Value = serde_json::from_str(
        &c.kubectl_ok(&["-n", "demo", "get", "widget", "w1", "-o", "json"])
            .await,
    )
    .expect("json");
    assert_eq!(got["metadata"]["generation"], 2, "{got}");
    assert_eq!(got["spec"]["size"], 4);
    let generation_before_scale = 2;
    assert_eq!(got["status"]["conditions"][0]["status"], "True");

    // /status is validated and pruned with the schema too.
    let (ok, _, err) = c
        .kubectl(&[
            "-n",
            "demo",
            "patch",
            "widget",
            "w1",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"replicas":"many"}}"#,
        ])
        .await;
    assert!(!ok);
    assert!(err.contains(r#"status.replicas: Invalid value: "string": status.replicas in body must be of type integer: "string""#), "{err}");

    // The scale subresource: kubectl scale, and the Scale view.
    c.kubectl_ok(&[
        "-n",
        "demo",
        "patch",
        "widget",
        "w1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"replicas":2,"selector":"app=w1"}}"#,
    ])
    .await;
    let out = c
        .kubectl_ok(&["-n", "demo", "scale", "widget", "w1", "--replicas=5"])
        .await;
    assert!(out.contains("scaled"), "{out}");
    let scale: Value = serde_json::from_str(
        &c.kubectl_ok(&[
            "get",
            "--raw",
            "/apis/example.com/v1/namespaces/demo/widgets/w1/scale",
        ])
        .await,
    )
    .expect("json");
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["apiVersion"], "autoscaling/v1");
    assert_eq!(scale["spec"]["replicas"], 5, "{scale}");
    assert_eq!(
        scale["status"],
        json!({"replicas": 2, "selector": "app=w1"})
    );
    let got: Value = serde_json::from_str(
        &c.kubectl_ok(&["-n", "demo", "get", "widget", "w1", "-o", "json"])
            .await,
    )
    .expect("json");
    assert_eq!(got["spec"]["replicas"], 5);
    assert_eq!(
        got["metadata"]["generation"],
        generation_before_scale + 1,
        "{got}"
    );
    let (ok, _, err) = c
        .kubectl(&["-n", "demo", "scale", "widget", "w1", "--replicas=-1"])
        .await;
    assert!(!ok, "{err}");

    // Validation through a patch: 422 with upstream's message.
    let (ok, _, err) = c
        .kubectl(&[
            "-n",
            "demo",
            "patch",
            "widget",
            "w1",
            "--type=merge",
            "-p",
            r#"{"spec":{"size":0}}"#,
        ])
        .await;
    assert!(!ok);
    assert!(
        err.contains(
            "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"
        ),
        "{err}"
    );

    // Field selectors on selectableFields; list across namespaces.
    c.kubectl_stdin(&["create", "--validate=false", "-f", "-"], Some(r#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w2","namespace":"default"},"spec":{"size":1,"color":"blue"}}"#)).await;
    let blue = c
        .kubectl_ok(&[
            "get",
            "widgets",
            "-A",
            "--field-selector",
            "spec.color=blue",
            "-o",
            "name",
        ])
        .await;
    assert_eq!(blue.trim(), "widget.example.com/w2", "{blue}");
    let (ok, _, err) = c
        .kubectl(&["get", "widgets", "-A", "--field-selector", "spec.size=1"])
        .await;
    assert!(
        !ok && err.contains("field label not supported: spec.size"),
        "{err}"
    );

    // Discovery through the aggregator.
    let res = c
        .kubectl_ok(&["api-resources", "--api-group=example.com"])
        .await;
    assert!(
        res.contains("widgets") && res.contains("wd") && res.contains("Widget"),
        "{res}"
    );

    // Deleting the CRD deletes its instances, then the CRD; the group goes away.
    for i in 0..100 {
        let obj = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": format!("bulk-{i}"), "namespace": "demo"}, "spec": {"size": 2}});
        let resp = c
            .http(Auth::AdminCert)
            .post(c.url("/apis/example.com/v1/namespaces/demo/widgets"))
            .json(&obj)
            .sent()
            .await;
        assert_eq!(resp.status().as_u16(), 201);
    }
    // Items of custom resource lists keep their kind and apiVersion, as
    // upstream's, whether the cache (no limit) or etcd (a page) serves them.
    for query in ["", "?limit=7", "?resourceVersion=0"] {
        let list: Value = c
            .http(Auth::AdminCert)
            .get(c.url(&format!(
                "/apis/example.com/v1/namespaces/demo/widgets{query}"
            )))
            .fetch_json()
            .await;
        let items = list["items"].as_array().expect("items");
        assert!(items.len() >= 7, "{query}: {list}");
        for item in items {
            assert_eq!(item["kind"], "Widget", "{query}: {item}");
            assert_eq!(item["apiVersion"], "example.com/v1", "{query}: {item}");
        }
    }
    c.kubectl_ok(&["delete", "crd", "widgets.example.com", "--timeout=60s"])
        .await;
    let (ok, _, _) = c.kubectl(&["get", "crd", "widgets.example.com"]).await;
    assert!(!ok, "CRD still present");
    let http = c.http(Auth::AdminCert);
    let gone = eventually(Duration::from_secs(20), || async {
        let r = http
            .get(c.url("/apis/example.com/v1/namespaces/demo/widgets"))
            .send()
            .await;
        r.is_ok_and(|r| r.status().as_u16() == 404)
    })
    .await;
    assert!(gone, "routes of the deleted CRD still served");
    // Discovery follows within a moment (the aggregator refreshes its
    // merged documents when a CRD changes).
    let t0 = std::time::Instant::now();
    let mut res = c.kubectl_ok(&["api-resources"]).await;
    while res.contains("example.com") && t0.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        res = c.kubectl_ok(&["api-resources"]).await;
    }
    assert!(!res.contains("example.com"), "{res}");
    // Recreating the CRD shows no leftover instances.
    create_json(&c, &widget_crd("Namespaced")).await;
    wait_established(&c, "widgets.example.com").await;
    let mut listed = c.kubectl(&["get", "widgets", "-A", "-o", "name"]).await;
    while !listed.0 && t0.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        listed = c.kubectl(&["get", "widgets", "-A", "-o", "name"]).await;
    }
    assert!(listed.0, "{}", listed.2);
    let left = listed.1;
    assert!(left.trim().is_empty(), "{left}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_violations_get_422_with_upstream_messages() {
    let c = TestCluster::start().await;
    create_json(&c, &widget_crd("Cluster")).await;
    wait_established(&c, "widgets.example.com").await;
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "spec.size: Required value"),
        (json!({"size": 0}), "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"),
        (json!({"size": 11}), "spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10"),
        (json!({"size": "3"}), "spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\""),
        (json!({"size": 1.5}), "spec.size: Invalid value: \"number\": spec.size in body must be of type integer: \"number\""),
        (json!({"size": true}), "spec.size: Invalid value: \"boolean\": spec.size in body must be of type integer: \"boolean\""),
        (json!({"size": 1, "ratio": 0}), "spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0"),
        (json!({"size": 1, "ratio": 1}), "spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1"),
        (json!({"size": 1, "ratio": "x"}), "spec.ratio: Invalid value: \"string\": spec.ratio in body must be of type number: \"string\""),
        (json!({"size": 1, "step": 7}), "spec.step: Invalid value: 7: spec.step in body should be a multiple of 5"),
        (json!({"size": 1, "color": "pink"}), "spec.color: Unsupported value: \"pink\": supported values: \"red\", \"green\", \"blue\""),
        (json!({"size": 1, "color": 3}), "spec.color: Invalid value: \"integer\": spec.color in body must be of type string: \"integer\""),
        (json!({"size": 1, "name": "ABC"}), "spec.name: Invalid value: \"ABC\": spec.name in body should match '^[a-z]+$'"),
        (json!({"size": 1, "name": "a"}), "spec.name: Invalid value: \"a\": spec.name in body should be at least 2 chars long"),
        (json!({"size": 1, "name": "abcdefghij"}), "spec.name: Too long: may not be more than 8 bytes"),
        (json!({"size": 1, "uid": "nope"}), "spec.uid: Invalid value: \"nope\": spec.uid in body must be of type uuid: \"nope\""),
        (json!({"size": 1, "ip": "1.2.3.400"}), "spec.ip: Invalid value: \"1.2.3.400\": spec.ip in body must be of type ipv4: \"1.2.3.400\""),
        (json!({"size": 1, "cidr": "10.0.0.0/40"}), "spec.cidr: Invalid value: \"10.0.0.0/40\": spec.cidr in body must be of type cidr: \"10.0.0.0/40\""),
        (json!({"size": 1, "when": "yesterday"}), "spec.when: Invalid value: \"yesterday\": spec.when in body must be of type date-time: \"yesterday\""),
        (json!({"size": 1, "day": "2024-02-30"}), "spec.day: Invalid value: \"2024-02-30\": spec.day in body must be of type date: \"2024-02-30\""),
        (json!({"size": 1, "enabled": "yes"}), "spec.enabled: Invalid value: \"string\": spec.enabled in body must be of type boolean: \"string\""),
        (json!({"size": 1, "port": true}), "spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer-or-string: \"boolean\""),
        (json!({"size": 1, "port": [1]}), "spec.port: Invalid value: \"array\": spec.port in body must be of type integer-or-string: \"array\""),
        (json!({"size": 1, "tags": ["a", "a"]}), "spec.tags[1]: Duplicate value: \"a\""),
        (json!({"size": 1, "tags": ["a", "b", "c", "d"]}), "spec.tags: Too many: 4: must have at most 3 items"),
        (json!({"size": 1, "tags": []}), "spec.tags: Invalid value: []string{}: spec.tags in body should have at least 1 items"),
        (json!({"size": 1, "tags": "a"}), "spec.tags: Invalid value: \"string\": spec.tags in body must be of type array: \"string\""),
        (json!({"size": 1, "tags": [1]}), "spec.tags[0]: Invalid value: \"integer\": spec.tags[0] in body must be of type string: \"integer\""),
        (json!({"size": 1, "ports": [{"name": "a"}, {"name": "a"}]}), "spec.ports[1]: Duplicate value: map[string]interface {}{\"name\":\"a\"}"),
        (json!({"size": 1, "ports": [{"port": 1}]}), "spec.ports[0].name: Required value"),
        (json!({"size": 1, "ports": [{"name": "a", "port": 70000}]}), "spec.ports[0].port: Invalid value: 70000: spec.ports[0].port in body should be less than or equal to 65535"),
        (json!({"size": 1, "ports": {"name": "a"}}), "spec.ports: Invalid value: \"object\": spec.ports in body must be of type array: \"object\""),
        (json!({"size": 1, "labels": {"a": 1}}), "spec.labels.a: Invalid value: \"integer\": spec.labels.a in body must be of type string: \"integer\""),
        (json!({"size": 1, "labels": {"a": "1", "b": "2", "c": "3"}}), "spec.labels: Too many: 3: must have at most 2 items"),
        (json!({"size": 1, "labels": {}}), "spec.labels: Invalid value: map[string]interface {}{}: spec.labels in body should have at least 1 properties"),
        (json!({"size": 1, "free": "x"}), "spec.free: Invalid value: \"string\": spec.free in body must be of type object: \"string\""),
        (json!({"size": 1, "nested": {"deep": {}}}), "spec.nested.deep.x: Required value"),
        (json!({"size": 1, "nested": {"deep": {"x": "y"}}}), "spec.nested.deep.x: Invalid value: \"string\": spec.nested.deep.x in body must be of type integer: \"string\""),
        (json!({"size": 1, "choice": "c"}), "spec.choice: Invalid value: \"c\": spec.choice in body must validate at least one schema (anyOf)"),
        (json!({"size": 1, "one": 6}), "spec.one: Invalid value: 6: spec.one in body must validate one and only one schema (oneOf)"),
        (json!({"size": 1, "nested": []}), "spec.nested: Invalid value: \"array\": spec.nested in body must be of type object: \"array\""),
        (json!({"size": 1, "bounds": {"min": 3, "max": 2}}), "spec.bounds: Invalid value: \"object\": min must not exceed max"),
        (json!({"size": 1, "word": "forbidden"}), "spec.word: Forbidden: word forbidden is not allowed"),
        (json!({"size": 1, "even": 3}), "spec.even: Invalid value: \"integer\": failed rule: self % 2 == 0"),
        (json!({"size": 1, "memory": "2Gi"}), "spec.memory: Invalid value: \"string\": memory must be a quantity below 1Gi"),
        (json!({"size": 1, "memory": "lots"}), "spec.memory: Invalid value: \"string\": memory must be a quantity below 1Gi"),
        (json!({"size": 1, "endpoint": "http://example.com/"}), "spec.endpoint: Invalid value: \"string\": endpoint must be an https URL"),
        (json!({"size": 1, "subnet": "192.168.0.0/16"}), "spec.subnet: Invalid value: \"string\": subnet must be inside 10.0.0.0/8"),
        (json!({"size": 1, "address": "127.0.0.1"}), "spec.address: Invalid value: \"string\": address 127.0.0.1 must be a non-loopback IPv4 address"),
    ];
    assert!(cases.len() >= 40);
    let http = c.http(Auth::AdminCert);
    for (i, (spec, want)) in cases.iter().enumerate() {
        let obj = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": format!("w{i}")}, "spec": spec});
        let resp = http
            .post(c.url("/apis/example.com/v1/widgets"))
            .json(&obj)
            .sent()
            .await;
        let status = expect_status(resp, 422, "Invalid").await;
        let msg = status["message"].as_str().unwrap_or("");
        assert_eq!(
            msg,
            format!("Widget.example.com \"w{i}\" is invalid: {want}"),
            "case {i}: {spec}"
        );
        assert_eq!(status["details"]["kind"], "Widget");
        assert_eq!(status["details"]["group"], "example.com");
    }
    // A valid object passes; defaults apply on create.
    let ok = http
        .post(c.url("/apis/example.com/v1/widgets"))
        .json(&json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "good"}, "spec": {"size": 5, "port": "http", "choice": "abc", "one": 10, "memory": "512Mi", "endpoint": "https://example.com:8443/hook", "subnet": "10.1.0.0/16", "address": "10.0.0.1"}}))
        .sent().await;
    assert_eq!(ok.status().as_u16(), 201);
    let body: Value = ok.json().await.expect("json");
    assert_eq!(body["spec"]["color"], "red");

    // A transition rule (oldSelf) applies on update only.
    let ok = http
        .post(c.url("/apis/example.com/v1/widgets"))
        .json(&json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "frozen"}, "spec": {"size": 1, "frozen": "a", "bounds": {"min": 1, "max": 2}}}))
        .sent().await;
    assert_eq!(ok.status().as_u16(), 201);
    let resp = http
        .patch(c.url("/apis/example.com/v1/widgets/frozen"))
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"spec":{"frozen":"b"}}"#)
        .sent()
        .await;
    let st = expect_status(resp, 422, "Invalid").await;
    assert_eq!(
        st["message"],
        "Widget.example.com \"frozen\" is invalid: spec.frozen: Invalid value: \"string\": frozen is immutable"
    );
    assert_eq!(st["details"]["causes"][0]["field"], "spec.frozen");

    // No strategic merge patch for custom resources.
    let resp = http
        .patch(c.url("/apis/example.com/v1/widgets/frozen"))
        .header("content-type", "application/strategic-merge-patch+json")
        .body(r#"{"spec":{"size":2}}"#)
        .sent()
        .await;
    expect_status(resp, 415, "UnsupportedMediaType").await;

    // deletecollection on a cluster-scoped custom resource.
    let resp = http
        .delete(c.url("/apis/example.com/v1/widgets"))
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 200);
    let list: Value = http
        .get(c.url("/apis/example.com/v1/widgets"))
        .fetch_json()
        .await;
    assert_eq!(list["items"], json!([]), "{list}");
    assert_eq!(list["kind"], "WidgetList");

    // A CRD whose rule does not compile is rejected.
    let mut bad = widget_crd("Cluster");
    bad["metadata"]["name"] = json!("gizmos.example.com");
    bad["spec"]["names"] = json!({"plural": "gizmos", "kind": "Gizmo"});
    bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["x-kubernetes-validations"] = json!([{"rule": "self.size >"}]);
    let resp = http
        .post(c.url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions"))
        .json(&bad)
        .sent()
        .await;
    let st = expect_status(resp, 422, "Invalid").await;
    assert!(
        st["message"].as_str().unwrap_or("").contains("spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: \"self.size >\": compilation failed"),
        "{st}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_crds_are_rejected_and_name_conflicts_reported() {
    let c = TestCluster::start().await;
    let mut bad = widget_crd("Namespaced");
    bad["spec"]["versions"][0]["storage"] = json!(false);
    let resp = c
        .http(Auth::AdminCert)
        .post(c.url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions"))
        .json(&bad)
        .sent()
        .await;
    let st = expect_status(resp, 422, "Invalid").await;
    assert!(
        st["message"].as_str().unwrap_or("").contains("spec.versions: Invalid value: []string{\"v1\"}: must have exactly one version marked as storage version"),
        "{st}"
    );
    let mut bad = widget_crd("Namespaced");
    bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["tags"]["uniqueItems"] = json!(true);
    let resp = c
        .http(Auth::AdminCert)
        .post(c.url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions"))
        .json(&bad)
        .sent()
        .await;
    let st = expect_status(resp, 422, "Invalid").await;
    assert!(st["message"].as_str().unwrap_or("").contains("uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"), "{st}");

    // A rule whose estimated cost is unbounded is refused with upstream's
    // message (a nested walk over a list without maxItems).
    let mut costly = widget_crd("Namespaced");
    costly["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["x-kubernetes-validations"] = json!([{"rule": "self.ports.all(a, self.ports.all(b, a.name != b.name || a.port == b.port))"}]);
    let resp = c
        .http(Auth::AdminCert)
        .post(c.url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions"))
        .json(&costly)
        .sent()
        .await;
    let st = expect_status(resp, 422, "Invalid").await;
    assert!(st["message"].as_str().unwrap_or("").contains("spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"), "{st}");

    // Two CRDs in one group wanting the same kind: the second is not accepted.
    create_json(&c, &widget_crd("Namespaced")).await;
    wait_established(&c, "widgets.example.com").await;
    let mut other = widget_crd("Namespaced");
    other["metadata"]["name"] = json!("gadgets.example.com");
    other["spec"]["names"] = json!({"plural": "gadgets", "singular": "gadget", "kind": "Widget", "listKind": "GadgetList"});
    create_json(&c, &other).await;
    let http = c.http(Auth::AdminCert);
    let reported = eventually(Duration::from_secs(15), || async {
        let Ok(r) =
            http.get(c.url(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com",
            ))
            .send()
            .await
        else {
            return false;
        };
        let v: Value = r.json().await.unwrap_or(Value::Null);
        v["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter().any(|c| {
                c["type"] == "NamesAccepted"
                    && c["status"] == "False"
                    && c["reason"] == "KindConflict"
                    && c["message"] == "\"Widget\" is already in use"
            }) && cs
                .iter()
                .any(|c| c["type"] == "Established" && c["status"] == "False")
        })
    })
    .await;
    let last = http
        .get(c.url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com"))
        .sent()
        .await
        .text()
        .await
        .expect("body");
    assert!(reported, "KindConflict not reported: {last}");
    // As upstream, the names without a conflict are accepted on their own.
    let last: Value = serde_json::from_str(&last).expect("json");
    assert_eq!(
        last["status"]["acceptedNames"]["plural"], "gadgets",
        "{last}"
    );
    assert_eq!(
        last["status"]["acceptedNames"]["listKind"], "GadgetList",
        "{last}"
    );
    let resp = http.get(c.url("/apis/example.com/v1/gadgets")).sent().await;
    expect_status(resp, 404, "NotFound").await;
}

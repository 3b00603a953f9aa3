//! `/openapi/v3/apis/metrics.k8s.io/v1beta1` and `/openapi/v2`: the schemas
//! of the two kinds, with `x-kubernetes-group-version-kind` so clients
//! (`kubectl explain`) can find them. The aggregator lists the v3 document in
//! its `/openapi/v3` and proxies it here; it merges the v2 one into its own
//! `/openapi/v2`.

use apiserver::body::{Request, Response};
use apiserver::endpoints::handlers::json_response;
use apiserver::request::info::RequestInfo;
use apiserver::server::handler::Interceptor;
use futures_util::future::BoxFuture;
use futures_util::FutureExt;
use serde_json::{json, Value};

/// The path of the document.
pub const PATH: &str = "/openapi/v3/apis/metrics.k8s.io/v1beta1";

fn kind_schema(kind: &str, usage: Value) -> Value {
    json!({
        "type": "object",
        "description": format!("{kind} sets resource usage metrics."),
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "timestamp": {"type": "string", "format": "date-time"},
            "window": {"type": "string"},
            "usage": usage,
        },
        "x-kubernetes-group-version-kind": [
            {"group": "metrics.k8s.io", "version": "v1beta1", "kind": kind}
        ],
    })
}

/// The OpenAPI v3 document of `metrics.k8s.io/v1beta1`.
pub fn document() -> Value {
    let usage = json!({"type": "object", "additionalProperties": {"type": "string"}});
    let containers = json!({"type": "array", "items": {"type": "object", "properties": {
        "name": {"type": "string"}, "usage": usage.clone()}}});
    let mut pod = kind_schema("PodMetrics", Value::Null);
    if let Some(p) = pod.get_mut("properties").and_then(Value::as_object_mut) {
        p.remove("usage");
        p.insert("containers".into(), containers);
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "metrics.k8s.io", "version": "v1beta1"},
        "paths": {},
        "components": {"schemas": {
            "io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics": kind_schema("NodeMetrics", usage),
            "io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics": pod,
        }},
    })
}

/// The path of the OpenAPI v2 document.
pub const V2_PATH: &str = "/openapi/v2";

/// The OpenAPI v2 document: the same schemas as definitions, and the read
/// paths of the two resources.
pub fn document_v2() -> Value {
    let v3 = document();
    let definitions = v3
        .pointer("/components/schemas")
        .cloned()
        .unwrap_or(Value::Null);
    let read = |kind: &str| {
        json!({"get": {
            "operationId": format!("list{kind}"),
            "produces": ["application/json"],
            "responses": {"200": {"description": "OK",
                "schema": {"$ref": format!("#/definitions/io.k8s.metrics.pkg.apis.metrics.v1beta1.{kind}")}}},
        }})
    };
    json!({
        "swagger": "2.0",
        "info": {"title": "metrics.k8s.io", "version": "v1beta1"},
        "paths": {
            "/apis/metrics.k8s.io/v1beta1/nodes": read("NodeMetrics"),
            "/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods": read("PodMetrics"),
        },
        "definitions": definitions,
    })
}

/// Serves [`PATH`] and [`V2_PATH`] before the API server's own routing.
pub struct OpenApi;

impl Interceptor for OpenApi {
    fn intercept(
        &self,
        req: Request,
        _info: &RequestInfo,
    ) -> Result<BoxFuture<'static, Response>, Request> {
        if req.method() != http::Method::GET {
            return Err(req);
        }
        match req.uri().path() {
            PATH => Ok(async { json_response(200, &document(), false) }.boxed()),
            V2_PATH => Ok(async { json_response(200, &document_v2(), false) }.boxed()),
            _ => Err(req),
        }
    }
}

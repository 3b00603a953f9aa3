//! REST handlers: one entry point that serves every verb of a resource from
//! its generic [`Store`], as upstream's `endpoints/handlers` package.
//!
//! The handler owns the HTTP concerns (decoding bodies, query options,
//! negotiation, response codes); the store owns the semantics.

mod apply;
mod create;
mod custom;
mod delete;
mod read;
pub use read::OBJECT_COUNT_HEADER;
mod scale;
pub mod strategic_merge;
pub mod strict_json;
mod update;
pub mod watch;
pub mod yaml;

pub use create::decode_yaml_lenient;

use bytes::Bytes;
use http_body_util::BodyExt;
use serde_json::Value;

use crate::apimachinery::errors::ApiError;
use crate::apimachinery::fields::FieldSelector;
use crate::apimachinery::labels::LabelSelector;
use crate::authentication::UserInfo;
use crate::body::MAX_REQUEST_BODY_BYTES;
use crate::body::{self, Request, Response};
use crate::endpoints::negotiation::{error_format, negotiate_for, Format, Negotiated, Output};
use crate::registry::resource::Subresource;
use crate::registry::store::{ListOptions, Store, WriteContext};
use crate::registry::table;
use crate::request::info::{parse_query, RequestInfo};

/// Query parameters of a request, first value wins.
pub struct Query(std::sync::Arc<[(String, String)]>);

impl Query {
    /// Parses the query string of a URI (where no [`RequestInfo`] is at
    /// hand; a request past the filters has its query parsed already).
    pub fn from_uri(uri: &http::Uri) -> Self {
        Query(parse_query(uri.query()).into())
    }

    /// The query the request-info filter parsed.
    pub fn of(info: &RequestInfo) -> Self {
        Query(info.query.clone())
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `name`, in order.
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A boolean parameter (`true`/`1`).
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.get(name), Some("true") | Some("1"))
    }

    /// An integer parameter; a malformed value is a 400.
    pub fn int(&self, name: &str) -> Result<Option<i64>, ApiError> {
        match self.get(name) {
            None | Some("") => Ok(None),
            Some(v) => v
                .parse()
                .map(Some)
                .map_err(|_| ApiError::bad_request(format!("invalid value for {name}: {v:?}"))),
        }
    }

    /// `dryRun`: only `All` is supported, as upstream.
    pub fn dry_run(&self, options_kind: &str) -> Result<bool, ApiError> {
        let values: Vec<&str> = self
            .0
            .iter()
            .filter(|(k, _)| k == "dryRun")
            .map(|(_, v)| v.as_str())
            .collect();
        for v in &values {
            if *v != "All" {
                let err = crate::apimachinery::validation::FieldError::not_supported(
                    "dryRun",
                    Value::String(v.to_string()),
                    &["All"],
                );
                return Err(ApiError::invalid("meta.k8s.io", options_kind, "", &[err]));
            }
        }
        Ok(!values.is_empty())
    }

    /// `fieldValidation`: Ignore, Warn (default) or Strict.
    pub fn field_validation(&self) -> Result<(), ApiError> {
        match self.get("fieldValidation") {
            None | Some("") | Some("Ignore") | Some("Warn") | Some("Strict") => Ok(()),
            Some(other) => Err(ApiError::bad_request(format!(
                "fieldValidation parameter unsupported: {other:?}"
            ))),
        }
    }

    /// The selection options of a LIST (or DELETE of a collection).
    pub fn list_options(&self) -> Result<ListOptions, ApiError> {
        self.list_options_for(false)
    }

    /// The selection options of a LIST, or of a WATCH when `watch`
    /// (either `?watch=true` or a legacy `/watch/` path), validated as
    /// upstream validates each.
    pub fn list_options_for(&self, watch: bool) -> Result<ListOptions, ApiError> {
        let label_selector = match self.get("labelSelector").filter(|s| !s.is_empty()) {
            Some(s) => Some(LabelSelector::parse(s).map_err(ApiError::bad_request)?),
            None => None,
        };
        let field_selector = match self.get("fieldSelector").filter(|s| !s.is_empty()) {
            Some(s) => Some(FieldSelector::parse(s).map_err(ApiError::bad_request)?),
            None => None,
        };
        let resource_version = self.get("resourceVersion").map(str::to_string);
        let resource_version_match = self
            .get("resourceVersionMatch")
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let continue_token = self
            .get("continue")
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let streaming = self.get("sendInitialEvents").is_some();
        // Upstream's ValidateListOptions (a LIST) and validateWatchOptions
        // (a WATCH): 422 Invalid on the `ListOptions` kind, one cause each.
        use crate::apimachinery::validation::FieldError;
        let mut errs = Vec::new();
        let rv = resource_version.as_deref().unwrap_or("");
        if let Some(m) = &resource_version_match {
            let value = Value::String(m.clone());
            if watch {
                if streaming && m != "NotOlderThan" {
                    errs.push(FieldError::forbidden(
                        "resourceVersionMatch",
                        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                    ));
                }
                if !streaming {
                    errs.push(FieldError::forbidden(
                        "resourceVersionMatch",
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                    ));
                }
                if m != "NotOlderThan" {
                    errs.push(FieldError::not_supported(
                        "resourceVersionMatch",
                        value,
                        &["NotOlderThan"],
                    ));
                }
            } else {
                if rv.is_empty() {
                    errs.push(FieldError::forbidden(
                        "resourceVersionMatch",
                        "resourceVersionMatch is forbidden unless resourceVersion is provided",
                    ));
                }
                if m != "Exact" && m != "NotOlderThan" {
                    errs.push(FieldError::not_supported(
                        "resourceVersionMatch",
                        value,
                        &["Exact", "NotOlderThan", ""],
                    ));
                }
                if m == "Exact" && rv == "0" {
                    errs.push(FieldError::forbidden(
                        "resourceVersionMatch",
                        "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                    ));
                }
            }
            if continue_token.is_some() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
        if streaming && !watch {
            errs.push(FieldError::forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list",
            ));
        }
        if !errs.is_empty() {
            return Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", &errs));
        }
        Ok(ListOptions {
            label_selector,
            field_selector,
            limit: self.int("limit")?,
            continue_token,
            resource_version,
            resource_version_match,
        })
    }
}

/// Reads a whole request body, at most [`MAX_REQUEST_BODY_BYTES`].
pub async fn read_body(req: Request) -> Result<Bytes, ApiError> {
    if let Some(len) = req
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
    {
        if len > 4 * MAX_REQUEST_BODY_BYTES as u64 {
            return Err(ApiError::request_entity_too_large(MAX_REQUEST_BODY_BYTES));
        }
    }
    let limited = http_body_util::Limited::new(req.into_body(), MAX_REQUEST_BODY_BYTES);
    match limited.collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            Err(ApiError::request_entity_too_large(MAX_REQUEST_BODY_BYTES))
        }
        Err(e) => Err(ApiError::bad_request(format!(
            "error reading request body: {e}"
        ))),
    }
}

/// Decodes a JSON object body.
pub fn decode_json(bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the body of the request was empty"));
    }
    serde_json::from_slice(bytes).map_err(|e| {
        ApiError::bad_request(format!("couldn't get version/kind; json parse error: {e}"))
    })
}

/// The request's `Content-Type`, as sent.
pub fn content_type(req: &Request) -> Option<String> {
    req.headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// 415 for an object sent in a format other than JSON, YAML or protobuf.
pub fn unsupported_object_format(content_type: Option<&str>) -> ApiError {
    ApiError::unsupported_media_type(
        content_type.unwrap_or(""),
        &[
            "application/json",
            "application/yaml",
            "application/vnd.kubernetes.protobuf",
        ],
    )
}

/// Reads the body of a request to a handler-served kind (reviews,
/// TokenRequest, Eviction, Binding) in whichever format the client sent:
/// JSON, YAML or protobuf (the `k8s\0` envelope names the kind). An empty
/// body is `Null`; other content types are 415.
pub async fn read_object_body(req: Request) -> Result<Value, ApiError> {
    use crate::endpoints::negotiation::{body_format, BodyFormat};
    let ct = content_type(&req);
    let format = body_format(ct.as_deref());
    let bytes = read_body(req).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    match format {
        Ok(BodyFormat::Json) => decode_json(&bytes),
        Ok(BodyFormat::Yaml) => create::decode_yaml(&bytes),
        Ok(BodyFormat::Protobuf) => crate::protobuf::decode_object(&bytes)
            .map_err(|e| ApiError::bad_request(format!("failed to decode protobuf body: {e}"))),
        _ => Err(unsupported_object_format(ct.as_deref())),
    }
}

/// `value` in the format the request's `Accept` asks for (JSON, YAML or
/// protobuf, falling back to JSON for kinds protobuf does not cover), as
/// `?pretty` of the request's parsed `query` says; an unacceptable `Accept`
/// is 406.
pub fn respond_to(headers: &http::HeaderMap, query: &Query, code: u16, value: &Value) -> Response {
    let pretty = query.flag("pretty");
    match negotiate_object(headers, pretty) {
        Ok(neg) if neg.format == Format::Protobuf => match crate::protobuf::encode_object(value) {
            Ok(bytes) => bytes_response(code, Format::Protobuf.content_type(), bytes),
            // A kind without protobuf tables: JSON, which every client
            // asking for protobuf also accepts.
            Err(_) => json_response(code, value, pretty),
        },
        Ok(neg) => respond(code, value, &neg),
        Err(e) => e.into_response(),
    }
}

/// Like [`respond_to`], for endpoints whose kind has no Table or metadata
/// form (the review kinds, as upstream's storage without a table
/// convertor): asking for `as=Table` or `as=PartialObjectMetadata` is 406.
pub fn respond_to_object_only(
    headers: &http::HeaderMap,
    query: &Query,
    code: u16,
    value: &Value,
) -> Response {
    match negotiate_object(headers, false) {
        Ok(neg) if neg.output != Output::Object => ApiError::not_acceptable(&[
            "application/json",
            "application/yaml",
            "application/vnd.kubernetes.protobuf",
        ])
        .into_response(),
        _ => respond_to(headers, query, code, value),
    }
}

/// The response format of a single object, from the request's `Accept`.
fn negotiate_object(headers: &http::HeaderMap, pretty: bool) -> Result<Negotiated, ApiError> {
    let accept = headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok());
    crate::endpoints::negotiation::negotiate_for(accept, false, None, pretty, true)
}

/// A JSON response.
pub fn json_response(code: u16, value: &Value, pretty: bool) -> Response {
    let bytes = if pretty {
        serde_json::to_vec_pretty(value)
    } else {
        serde_json::to_vec(value)
    };
    match bytes {
        Ok(mut b) => {
            b.push(b'\n');
            http::Response::builder()
                .status(code)
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(body::full(b))
                .unwrap_or_else(|_| ApiError::internal("building response").into_response())
        }
        Err(e) => ApiError::internal(e).into_response(),
    }
}

/// A response body of `bytes` with the given content type.
pub fn bytes_response(code: u16, content_type: &str, bytes: impl Into<Bytes>) -> Response {
    http::Response::builder()
        .status(code)
        .header(http::header::CONTENT_TYPE, content_type)
        .body(body::full(bytes))
        .unwrap_or_else(|_| ApiError::internal("building response").into_response())
}

/// A response holding `value` in the negotiated format: JSON (`?pretty`
/// honoured), YAML, or protobuf for kinds the tables cover (a kind that
/// cannot be encoded is 406 NotAcceptable, as upstream).
pub fn respond(code: u16, value: &Value, neg: &Negotiated) -> Response {
    match neg.format {
        Format::Json => json_response(code, value, neg.pretty),
        Format::Yaml => bytes_response(code, Format::Yaml.content_type(), yaml::to_yaml(value)),
        Format::Protobuf => match crate::protobuf::encode_object(value) {
            Ok(bytes) => bytes_response(code, Format::Protobuf.content_type(), bytes),
            Err(crate::protobuf::EncodeError::UnknownKind { .. }) => {
                ApiError::not_acceptable(crate::endpoints::negotiation::SUPPORTED).into_response()
            }
            Err(e) => ApiError::internal(e).into_response(),
        },
    }
}

/// An error `Status` in the given format (see
/// [`crate::endpoints::negotiation::error_format`]).
pub fn error_response(error: ApiError, format: Format) -> Response {
    if format == Format::Json {
        return error.into_response();
    }
    let status = error.to_status();
    let mut response = error.into_response();
    let bytes = match format {
        Format::Protobuf => match crate::protobuf::encode_object(&status) {
            Ok(bytes) => Bytes::from(bytes),
            Err(_) => return response,
        },
        _ => Bytes::from(yaml::to_yaml(&status)),
    };
    // Keep the status line and headers (Retry-After) of the JSON form.
    if let Ok(value) = http::HeaderValue::from_str(format.content_type()) {
        response
            .headers_mut()
            .insert(http::header::CONTENT_TYPE, value);
    }
    *response.body_mut() = body::full(bytes);
    response
}

/// Applies `fieldValidation` to a decoded body against the resource's
/// schema: `Strict` fails with upstream's 400 (`<Kind> in version "<v>"
/// cannot be handled as a <Kind>: strict decoding error: unknown field
/// "spec.foo"`), `Warn` (the default) returns the warnings to send, and
/// `Ignore` returns none. `patch` bodies get the bare decoding message.
pub fn check_unknown_fields(
    rest: &RestRequest<'_>,
    body: &mut Value,
    patch: bool,
) -> Result<Vec<String>, ApiError> {
    check_fields(rest, body, &[], patch)
}

/// Removes the field at a field path as the unknown-field finder writes
/// them (`spec.template.spec.containers[0].foo`). A key that itself holds
/// dots or brackets is matched whole first, so `metadata.a.b` finds a key
/// `a.b` under `metadata`. Returns whether something was removed.
pub fn remove_field_path(value: &mut Value, path: &str) -> bool {
    match value {
        Value::Object(map) => {
            if map.shift_remove(path).is_some() {
                return true;
            }
            for (i, c) in path.char_indices() {
                if c != '.' && c != '[' {
                    continue;
                }
                let rest = if c == '.' { &path[i + 1..] } else { &path[i..] };
                if let Some(child) = map.get_mut(&path[..i]) {
                    if remove_field_path(child, rest) {
                        return true;
                    }
                }
            }
            false
        }
        Value::Array(items) => {
            let Some(inner) = path.strip_prefix('[') else {
                return false;
            };
            let Some((index, rest)) = inner.split_once(']') else {
                return false;
            };
            let rest = rest.strip_prefix('.').unwrap_or(rest);
            match (index.parse::<usize>().ok(), rest.is_empty()) {
                (Some(i), false) => items
                    .get_mut(i)
                    .is_some_and(|item| remove_field_path(item, rest)),
                _ => false,
            }
        }
        _ => false,
    }
}

/// [`check_unknown_fields`] with the body's scanned keys
/// ([`strict_json::key_paths`]): repeated keys are reported as upstream's
/// `duplicate field "<path>"`, in document order among the unknown fields.
///
/// Unknown fields are dropped from `body` under `Warn` and `Ignore`, as
/// upstream's decoding into typed objects drops them: they are never stored
/// or returned.
pub fn check_fields(
    rest: &RestRequest<'_>,
    body: &mut Value,
    keys: &[strict_json::KeyPath],
    patch: bool,
) -> Result<Vec<String>, ApiError> {
    let def = &rest.store.def;
    let mode = rest.query.get("fieldValidation").unwrap_or("");
    let quote = crate::apimachinery::validation::go_quote;
    let unknown_paths: Vec<String> = match &def.unknown_fields {
        Some(finder) => finder(body),
        None => Vec::new(),
    };
    if mode != "Strict" {
        for path in &unknown_paths {
            remove_field_path(body, path);
        }
    }
    if mode == "Ignore" {
        return Ok(Vec::new());
    }
    let unknown: Vec<String> = if keys.iter().any(|k| k.duplicate) {
        let mut pending: Vec<Option<&String>> = unknown_paths.iter().map(Some).collect();
        let mut out = Vec::new();
        for k in keys {
            if k.duplicate {
                out.push(format!("duplicate field {}", quote(&k.path)));
            } else if let Some(slot) = pending.iter_mut().find(|p| p.is_some_and(|p| *p == k.path))
            {
                out.push(format!("unknown field {}", quote(&k.path)));
                *slot = None;
            }
        }
        out.extend(
            pending
                .into_iter()
                .flatten()
                .map(|f| format!("unknown field {}", quote(f))),
        );
        out
    } else {
        unknown_paths
            .iter()
            .map(|f| format!("unknown field {}", quote(f)))
            .collect()
    };
    if unknown.is_empty() {
        return Ok(unknown);
    }
    if mode == "Strict" {
        let detail = format!("strict decoding error: {}", unknown.join(", "));
        let message = if patch {
            detail
        } else {
            format!(
                "{kind} in version {v} cannot be handled as a {kind}: {detail}",
                kind = def.kind,
                v = crate::apimachinery::validation::go_quote(&def.version)
            )
        };
        return Err(ApiError::bad_request(message));
    }
    Ok(unknown)
}

/// Adds one `Warning: 299 - "<text>"` header per warning, as upstream.
pub fn with_warnings(mut resp: Response, warnings: &[String]) -> Response {
    for w in warnings {
        let value = format!("299 - {}", crate::apimachinery::validation::go_quote(w));
        if let Ok(v) = http::HeaderValue::from_str(&value) {
            resp.headers_mut().append("warning", v);
        }
    }
    resp
}

/// Shapes one object for the negotiated output.
pub fn shape_object(store: &Store, obj: Value, neg: &Negotiated) -> Value {
    match neg.output {
        Output::Object | Output::PartialObjectMetadataList => obj,
        Output::PartialObjectMetadata => table::partial_object_metadata(&obj),
        Output::Table => {
            let rv = crate::apimachinery::meta::resource_version(&obj).to_string();
            table::table(
                &store.def,
                &[obj],
                serde_json::json!({ "resourceVersion": rv }),
                neg.include_object,
                true,
            )
        }
    }
}

/// Everything a handler needs about the request besides the body.
pub struct RestRequest<'a> {
    pub store: &'a Store,
    pub info: &'a RequestInfo,
    pub query: Query,
    pub user: Option<UserInfo>,
    /// The `User-Agent` header, whose prefix names the field manager of
    /// writes without `fieldManager`.
    pub user_agent: Option<String>,
    /// Warnings admission leaves during this request; [`serve`] sends them
    /// as `Warning` headers on the response, success or error.
    pub warnings: std::sync::Arc<crate::request::Warnings>,
    /// When the request arrived (admission webhooks share a budget from it).
    pub started: crate::request::RequestStart,
    /// Fires when the server shuts down: a watch then ends (see
    /// `crate::server::lifecycle`).
    pub termination: Option<crate::request::WatchTermination>,
}

impl RestRequest<'_> {
    pub(crate) fn write_context(&self, options_kind: &str) -> Result<WriteContext, ApiError> {
        let dry_run = self.query.dry_run(options_kind)?;
        let field_manager = self.query.get("fieldManager").unwrap_or("");
        let mut errs = Vec::new();
        if field_manager.len() > 128 {
            errs.push(crate::apimachinery::validation::FieldError::too_long(
                "fieldManager",
                field_manager,
                128,
            ));
        }
        if field_manager.chars().any(char::is_control) {
            errs.push(crate::apimachinery::validation::FieldError::invalid(
                "fieldManager",
                Value::String(field_manager.to_string()),
                "invalid characters, only printable characters are allowed",
            ));
        }
        if !errs.is_empty() {
            return Err(ApiError::invalid("meta.k8s.io", options_kind, "", &errs));
        }
        Ok(WriteContext {
            user: self.user.clone(),
            dry_run,
            field_manager: crate::fieldmanager::manager_or_user_agent(
                Some(field_manager),
                self.user_agent.as_deref(),
            ),
            applying: false,
            warnings: self.warnings.clone(),
            started: self.started,
        })
    }

    pub(crate) fn subresource(&self) -> Option<Subresource> {
        match self.info.subresource.as_str() {
            "status" => Some(Subresource::Status),
            "finalize" => Some(Subresource::Finalize),
            "scale" => Some(Subresource::Scale),
            _ => None,
        }
    }
}

/// Serves one resource request against its store.
pub async fn serve(store: &Store, info: &RequestInfo, req: Request) -> Response {
    let user = req.extensions().get::<UserInfo>().cloned();
    let user_agent = req
        .headers()
        .get(http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let rest = RestRequest {
        store,
        info,
        query: Query::of(info),
        user,
        user_agent,
        warnings: Default::default(),
        started: Default::default(),
        termination: req
            .extensions()
            .get::<crate::request::WatchTermination>()
            .cloned(),
    };
    let errors = error_format(
        req.headers()
            .get(http::header::ACCEPT)
            .and_then(|v| v.to_str().ok()),
    );
    let resp = match dispatch(&rest, req).await {
        Ok(resp) => resp,
        Err(e) => error_response(e, errors),
    };
    with_warnings(resp, &rest.warnings.to_vec())
}

async fn dispatch(rest: &RestRequest<'_>, req: Request) -> Result<Response, ApiError> {
    let def = &rest.store.def;
    let info = rest.info;
    // Subresources with their own handlers.
    if let Some(sub) = def
        .custom_subresources
        .iter()
        .find(|s| !info.name.is_empty() && s.name == info.subresource)
    {
        return custom::serve_custom(rest, sub, req).await;
    }
    // Only the verbs the resource declares (discovery's list) are served:
    // namespaces have no deletecollection, component statuses are read-only.
    if info.subresource.is_empty() && !def.verbs.iter().any(|v| *v == info.verb) {
        return Err(ApiError::method_not_supported(
            def.group_resource(),
            &info.verb,
        ));
    }
    // Subresources: only those declared are served.
    if !info.subresource.is_empty() {
        let known = def
            .subresources
            .iter()
            .any(|s| s.name() == info.subresource);
        if !known || info.name.is_empty() {
            return Err(ApiError::path_not_found());
        }
        if !matches!(info.verb.as_str(), "get" | "update" | "patch") {
            return Err(ApiError::method_not_supported(
                def.group_resource(),
                &info.verb,
            ));
        }
    }
    // Scope: cluster-scoped resources have no namespace segment; namespaced
    // ones are reachable across namespaces only for list and watch.
    if !def.namespaced && !info.namespace.is_empty() && !(info.resource == "namespaces") {
        return Err(ApiError::path_not_found());
    }
    if def.namespaced
        && info.namespace.is_empty()
        && !matches!(info.verb.as_str(), "list" | "watch")
    {
        return Err(ApiError::method_not_supported(
            def.group_resource(),
            &info.verb,
        ));
    }
    let namespace = if def.namespaced {
        info.namespace.as_str()
    } else {
        ""
    };
    let accept = req
        .headers()
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let is_collection = matches!(info.verb.as_str(), "list" | "watch" | "deletecollection");
    let neg = negotiate_for(
        accept.as_deref(),
        is_collection,
        rest.query.get("includeObject"),
        rest.query.flag("pretty"),
        crate::protobuf::can_encode(&def.api_version(), &def.kind),
    )?;
    if info.subresource == "scale" {
        return scale::serve(rest, namespace, req, &neg).await;
    }
    match info.verb.as_str() {
        "get" => read::get(rest, namespace, &neg).await,
        "list" => read::list(rest, namespace, &neg).await,
        "watch" => watch::serve_watch(rest, namespace, &neg).await,
        "create" => create::create(rest, namespace, req, &neg).await,
        "update" => update::update(rest, namespace, req, &neg).await,
        "patch" => update::patch(rest, namespace, req, &neg).await,
        "delete" => delete::delete(rest, namespace, req, &neg).await,
        "deletecollection" => delete::delete_collection(rest, namespace, req, &neg).await,
        other => Err(ApiError::method_not_supported(def.group_resource(), other)),
    }
}

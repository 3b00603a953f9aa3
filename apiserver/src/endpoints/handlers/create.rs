//! POST: create an object.

use serde_json::Value;

use super::{
    check_fields, decode_json, read_body, respond, shape_object, with_warnings, RestRequest,
};
use crate::apimachinery::errors::ApiError;
use crate::body::{Request, Response};
use crate::endpoints::negotiation::{body_format, BodyFormat, Negotiated};

/// Checks `apiVersion`/`kind` of a body against the endpoint and fills them
/// in when missing, as upstream's decoder does with its default kind.
pub fn check_type_meta(rest: &RestRequest<'_>, obj: &mut Value) -> Result<(), ApiError> {
    let def = &rest.store.def;
    let Value::Object(m) = obj else {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    };
    let expected = def.api_version();
    match m.get("apiVersion").and_then(Value::as_str) {
        Some(v) if !v.is_empty() && v != expected => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({expected})"
            )))
        }
        _ => {}
    }
    match m.get("kind").and_then(Value::as_str) {
        Some(k) if !k.is_empty() && k != def.kind => {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                def.kind
            )))
        }
        _ => {}
    }
    Ok(())
}

/// Checks a body's `apiVersion`/`kind`, when present, against the expected
/// ones (subresource bodies such as `autoscaling/v1` `Scale`).
pub fn check_type_meta_of(obj: &Value, api_version: &str, kind: &str) -> Result<(), ApiError> {
    let Value::Object(m) = obj else {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    };
    if let Some(v) = m
        .get("apiVersion")
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty())
    {
        if v != api_version {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({api_version})"
            )));
        }
    }
    if let Some(k) = m
        .get("kind")
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty())
    {
        if k != kind {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({kind})"
            )));
        }
    }
    Ok(())
}

/// Reads and decodes an object body (JSON, YAML, or protobuf for built-in
/// kinds) for create/update.
/// Reads a create or update body; for JSON, also the body's keys in
/// document order (for duplicate-field detection) unless
/// `fieldValidation=Ignore`.
pub async fn read_object(
    rest: &RestRequest<'_>,
    req: Request,
) -> Result<(Value, Vec<super::strict_json::KeyPath>), ApiError> {
    let ct = super::content_type(&req);
    let format = body_format(ct.as_deref())?;
    if !matches!(
        format,
        BodyFormat::Json | BodyFormat::Yaml | BodyFormat::Protobuf
    ) {
        return Err(super::unsupported_object_format(ct.as_deref()));
    }
    let def = &rest.store.def;
    if format == BodyFormat::Protobuf && !crate::protobuf::is_known(&def.api_version(), &def.kind) {
        // Custom resources are JSON only, as upstream.
        return Err(ApiError::unsupported_media_type(
            ct.as_deref().unwrap_or(""),
            &["application/json"],
        ));
    }
    let bytes = read_body(req).await?;
    let mut obj = match format {
        BodyFormat::Protobuf => crate::protobuf::decode_object(&bytes)
            .map_err(|e| ApiError::bad_request(format!("failed to decode protobuf body: {e}")))?,
        BodyFormat::Yaml => decode_yaml(&bytes)?,
        _ => decode_json(&bytes)?,
    };
    let keys = if format == BodyFormat::Json && rest.query.get("fieldValidation") != Some("Ignore")
    {
        super::strict_json::key_paths(&bytes)
    } else {
        Vec::new()
    };
    check_type_meta(rest, &mut obj)?;
    Ok((obj, keys))
}

/// Decodes a YAML object body into the JSON it denotes.
pub fn decode_yaml(bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the body of the request was empty"));
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ApiError::bad_request(format!("yaml: invalid UTF-8: {e}")))?;
    let value: Value = serde_saphyr::from_str(text)
        .map_err(|e| ApiError::bad_request(format!("error converting YAML to JSON: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be an object",
        ));
    }
    Ok(value)
}

/// A YAML body decoded as upstream's non-strict YAML decoder does: a key
/// repeated in a mapping keeps its last value. Also returns the first
/// repeated key as upstream's strict decoder reports it (`line 9: key
/// "foo" already set in map`), for `fieldValidation`.
pub fn decode_yaml_lenient(bytes: &[u8]) -> Result<(Value, Option<String>), ApiError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ApiError::bad_request(format!("yaml: invalid UTF-8: {e}")))?;
    let duplicate = match serde_saphyr::from_str::<Value>(text) {
        Err(e) => match e.without_snippet() {
            serde_saphyr::Error::DuplicateMappingKey { key, location } => Some(format!(
                "line {}: key {} already set in map",
                location.line(),
                crate::apimachinery::validation::go_quote(key.as_deref().unwrap_or(""))
            )),
            _ => None,
        },
        Ok(_) => None,
    };
    let options = serde_saphyr::options! {
        duplicate_keys: serde_saphyr::options::DuplicateKeyPolicy::LastWins,
    };
    let value: Value = serde_saphyr::from_str_with_options(text, options)
        .map_err(|e| ApiError::bad_request(format!("error converting YAML to JSON: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be an object",
        ));
    }
    Ok((value, duplicate))
}

#[cfg(test)]
mod lenient_yaml_tests {
    use super::*;

    #[test]
    fn a_repeated_key_keeps_its_last_value_and_is_reported() {
        let (v, dup) =
            decode_yaml_lenient(b"a: 1\nspec:\n  foo: first\n  foo: second\n").expect("yaml");
        assert_eq!(v["spec"]["foo"], "second");
        assert_eq!(
            dup.as_deref(),
            Some("line 4: key \"foo\" already set in map")
        );
        let (_, dup) = decode_yaml_lenient(b"a: 1\n").expect("yaml");
        assert!(dup.is_none());
    }

    /// Hostile YAML is a 400, not a stack overflow or an exhausted memory:
    /// deep nesting (flow and block) and alias expansion (billion laughs).
    #[test]
    fn hostile_yaml_is_refused() {
        let flow = format!("a: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let block: String = (0..5_000)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .collect();
        let mut laughs = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        let names: Vec<char> = ('b'..='k').collect();
        let mut prev = 'a';
        for n in names {
            laughs.push_str(&format!(
                "{n}: &{n} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
            ));
            prev = n;
        }
        for doc in [flow, block, laughs] {
            let err = decode_yaml(doc.as_bytes()).expect_err("refused");
            assert_eq!(err.code, 400, "{}", err.message);
            let err = decode_yaml_lenient(doc.as_bytes()).expect_err("refused");
            assert_eq!(err.code, 400, "{}", err.message);
        }
    }
}

/// POST on a collection.
pub async fn create(
    rest: &RestRequest<'_>,
    namespace: &str,
    req: Request,
    neg: &Negotiated,
) -> Result<Response, ApiError> {
    if !rest.info.name.is_empty() {
        return Err(ApiError::method_not_supported(
            rest.store.def.group_resource(),
            "create",
        ));
    }
    rest.query.field_validation()?;
    let ctx = rest.write_context("CreateOptions")?;
    let (mut obj, keys) = read_object(rest, req).await?;
    let warnings = check_fields(rest, &mut obj, &keys, false)?;
    let created = rest.store.create(namespace, obj, &ctx).await?;
    Ok(with_warnings(
        respond(201, &shape_object(rest.store, created, neg), neg),
        &warnings,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_bodies() {
        let v = decode_yaml(
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"1\"\n  b: x\n",
        )
        .expect("yaml");
        assert_eq!(
            v,
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "c"}, "data": {"a": "1", "b": "x"}})
        );
        assert_eq!(decode_yaml(b"  \n").unwrap_err().code, 400);
        assert_eq!(decode_yaml(b"a: [").unwrap_err().code, 400);
        assert_eq!(decode_yaml(b"- 1\n").unwrap_err().code, 400);
        assert_eq!(decode_yaml(&[0xff, 0xfe]).unwrap_err().code, 400);
    }
}

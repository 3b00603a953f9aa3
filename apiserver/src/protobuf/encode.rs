//! Encoding of JSON objects (as upstream serves them) into Kubernetes
//! protobuf: the inverse of `decode`, driven by the same schema tables.
//!
//! Fields are written in ascending field-number order, as the gogo
//! marshallers upstream generates write them; map entries are sorted by
//! key; repeated scalars are written unpacked (upstream's
//! `generated.proto` files are proto2 without `[packed=true]`). Scalars
//! whose table rule is [`Zero::Omit`] are Go value fields, which Go
//! writes even when empty, so they are written even when the JSON omits
//! them; pointer fields, messages, lists and maps are written only when
//! present in the JSON. JSON fields the tables do not know are dropped,
//! as a Go struct would drop them.

use std::collections::HashMap;
use std::sync::OnceLock;

use base64::Engine as _;
use serde_json::{Map, Value};

use super::schema::{self, Card, Field, Kind, Message, Zero};
use super::{EncodeError, MAGIC};

/// How deeply JSON objects may nest before encoding fails.
const MAX_DEPTH: usize = super::decode::MAX_DEPTH;

/// Encodes a top-level object into `k8s\0` + `runtime.Unknown`.
pub(crate) fn object(value: &Value, depth: usize) -> Result<Vec<u8>, EncodeError> {
    let mut out = MAGIC.to_vec();
    object_envelope_into(value, depth, &mut out)?;
    Ok(out)
}

/// Writes the `runtime.Unknown` envelope of `value` (without the magic).
fn object_envelope_into(value: &Value, depth: usize, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let obj = value
        .as_object()
        .ok_or_else(|| EncodeError::invalid("the object is not a JSON object"))?;
    let api_version = type_meta(obj, "apiVersion")?;
    let kind = type_meta(obj, "kind")?;
    if let Some(message) = schema::message_for_kind(api_version, kind) {
        return envelope_into(api_version, kind, out, |out| {
            message_into(message, obj, depth + 1, out).map_err(|e| e.at(kind))
        });
    }
    let Some(item) = schema::list_item_message(api_version, kind) else {
        return Err(EncodeError::UnknownKind {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        });
    };
    // `<Kind>List`: {metadata=1 ListMeta, items=2 repeated Kind}.
    envelope_into(api_version, kind, out, |out| {
        list_meta_into(obj.get("metadata"), out).map_err(|e| e.at(kind))?;
        let items = match obj.get("items") {
            None | Some(Value::Null) => &[][..],
            Some(Value::Array(items)) => items.as_slice(),
            Some(other) => return Err(mismatch("an array", other).at("items").at(kind)),
        };
        for (index, value) in items.iter().enumerate() {
            let item_obj = value.as_object().ok_or_else(|| {
                mismatch("an object", value)
                    .at_index(index)
                    .at("items")
                    .at(kind)
            })?;
            nested(out, 2, |out| message_into(item, item_obj, depth + 2, out))
                .map_err(|e| e.at_index(index).at("items").at(kind))?;
        }
        Ok(())
    })
}

/// Writes field 1 (`metadata`, a `ListMeta`) of a list, always present as
/// Go writes it.
pub(crate) fn list_meta_into(meta: Option<&Value>, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let list_meta = lookup("meta.v1.ListMeta")?;
    let empty = Map::new();
    let meta = match meta {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(meta)) => meta,
        Some(other) => return Err(mismatch("an object", other).at("metadata")),
    };
    nested(out, 1, |out| message_into(list_meta, meta, 1, out)).map_err(|e| e.at("metadata"))
}

/// The `raw` field of an encoded envelope (`k8s\0` + `runtime.Unknown`):
/// the object's message without type information, as list items carry it.
pub(crate) fn envelope_raw(bytes: &[u8]) -> Option<&[u8]> {
    let body = bytes.strip_prefix(&MAGIC[..])?;
    let mut reader = super::wire::Reader::new(body);
    while !reader.is_empty() {
        match reader.field().ok()? {
            (2, super::wire::RawValue::Len(raw)) => return Some(raw),
            _ => continue,
        }
    }
    None
}

/// Writes `runtime.Unknown{typeMeta{apiVersion, kind}, raw, "", ""}` with
/// `raw` written by `body`, as upstream's protobuf serializer does.
pub(crate) fn envelope_into(
    api_version: &str,
    kind: &str,
    out: &mut Vec<u8>,
    body: impl FnOnce(&mut Vec<u8>) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    nested(out, 1, |out| {
        put_string(out, 1, api_version);
        put_string(out, 2, kind);
        Ok(())
    })?;
    nested(out, 2, body)?;
    put_string(out, 3, "");
    put_string(out, 4, "");
    Ok(())
}

fn type_meta<'a>(obj: &'a Map<String, Value>, name: &'static str) -> Result<&'a str, EncodeError> {
    match obj.get(name).and_then(Value::as_str) {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(EncodeError::MissingTypeMeta(name)),
    }
}

/// The fields of every message, sorted by field number.
fn sorted_fields(message: &'static Message) -> &'static [&'static Field] {
    static SORTED: OnceLock<HashMap<&'static str, Vec<&'static Field>>> = OnceLock::new();
    let map = SORTED.get_or_init(|| {
        schema::all_messages()
            .map(|m| {
                let mut fields: Vec<&'static Field> = m.fields.iter().collect();
                fields.sort_by_key(|f| f.tag);
                (m.name, fields)
            })
            .collect()
    });
    map.get(message.name).map(Vec::as_slice).unwrap_or_default()
}

/// Writes the fields of `message` found in `obj`.
pub(crate) fn message_into(
    message: &'static Message,
    obj: &Map<String, Value>,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    check_depth(depth)?;
    for field in sorted_fields(message) {
        field_into(field, obj, depth, out).map_err(|e| e.at(field.json))?;
    }
    Ok(())
}

fn field_into(
    field: &Field,
    obj: &Map<String, Value>,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    if let Kind::Inline(name) = field.kind {
        // Go embeds the struct by value: always written, fields from the
        // enclosing JSON object.
        let inline = lookup(name)?;
        return nested(out, field.tag, |out| {
            message_into(inline, obj, depth + 1, out)
        });
    }
    let value = obj.get(field.json);
    match field.card {
        Card::Single => single(field.tag, field.kind, value, depth, out),
        Card::Repeated => match value {
            None | Some(Value::Null) => Ok(()),
            Some(Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    value_into(field.tag, field.kind, item, depth + 1, out)
                        .map_err(|e| e.at_index(index))?;
                }
                Ok(())
            }
            Some(other) => Err(mismatch("an array", other)),
        },
        Card::Map => match value {
            None | Some(Value::Null) => Ok(()),
            Some(Value::Object(entries)) => {
                let mut keys: Vec<&String> = entries.keys().collect();
                keys.sort_unstable();
                for key in keys {
                    let Some(item) = entries.get(key) else {
                        continue;
                    };
                    nested(out, field.tag, |out| {
                        put_string(out, 1, key);
                        value_into(2, field.kind, item, depth + 1, out)
                    })
                    .map_err(|e| e.at(key))?;
                }
                Ok(())
            }
            Some(other) => Err(mismatch("an object", other)),
        },
    }
}

/// A single (optional) field: absent and `null` values are skipped,
/// except for Go value scalars and times, which Go always writes.
fn single(
    tag: u32,
    kind: Kind,
    value: Option<&Value>,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    match (kind, value) {
        (Kind::String(Zero::Omit), None | Some(Value::Null)) => {
            put_string(out, tag, "");
            Ok(())
        }
        (
            Kind::Int32(Zero::Omit) | Kind::Int64(Zero::Omit) | Kind::Bool(Zero::Omit),
            None | Some(Value::Null),
        ) => {
            put_varint_field(out, tag, 0);
            Ok(())
        }
        // A zero time (`null`) is an empty message, as Go writes it.
        (Kind::Time | Kind::MicroTime | Kind::RawExtension, Some(Value::Null)) => {
            nested(out, tag, |_| Ok(()))
        }
        (_, None | Some(Value::Null)) => Ok(()),
        (kind, Some(value)) => value_into(tag, kind, value, depth + 1, out),
    }
}

/// Writes one value of `kind` as field `tag`.
fn value_into(
    tag: u32,
    kind: Kind,
    value: &Value,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    check_depth(depth)?;
    match kind {
        Kind::String(_) => match value {
            Value::String(s) => put_string(out, tag, s),
            Value::Null => put_string(out, tag, ""),
            other => return Err(mismatch("a string", other)),
        },
        Kind::Bytes => {
            let bytes = match value {
                Value::String(s) => base64::engine::general_purpose::STANDARD
                    .decode(s)
                    .map_err(|e| EncodeError::invalid(format!("invalid base64: {e}")))?,
                Value::Null => Vec::new(),
                other => return Err(mismatch("a base64 string", other)),
            };
            put_bytes(out, tag, &bytes);
        }
        Kind::Int32(_) => {
            let n = integer(value)?;
            let n = i32::try_from(n)
                .map_err(|_| EncodeError::invalid(format!("{n} does not fit in 32 bits")))?;
            // Negative int32s are sign-extended to ten bytes, as Go does.
            put_varint_field(out, tag, i64::from(n) as u64);
        }
        Kind::Int64(_) => put_varint_field(out, tag, integer(value)? as u64),
        Kind::Bool(_) => match value {
            Value::Bool(b) => put_varint_field(out, tag, u64::from(*b)),
            Value::Null => put_varint_field(out, tag, 0),
            other => return Err(mismatch("a boolean", other)),
        },
        Kind::Message(name) | Kind::Inline(name) => {
            let message = lookup(name)?;
            match value {
                Value::Object(obj) => {
                    nested(out, tag, |out| message_into(message, obj, depth + 1, out))?
                }
                Value::Null => nested(out, tag, |_| Ok(()))?,
                other => return Err(mismatch("an object", other)),
            }
        }
        Kind::Time | Kind::MicroTime => {
            let (seconds, nanos) = match value {
                Value::String(s) => parse_time(s)?,
                Value::Null => return nested(out, tag, |_| Ok(())),
                other => return Err(mismatch("an RFC 3339 time", other)),
            };
            nested(out, tag, |out| {
                put_varint_field(out, 1, seconds as u64);
                put_varint_field(out, 2, i64::from(nanos) as u64);
                Ok(())
            })?;
        }
        Kind::Duration => {
            let nanos = match value {
                Value::String(s) => parse_duration(s)?,
                other => return Err(mismatch("a duration string", other)),
            };
            nested(out, tag, |out| {
                put_varint_field(out, 1, nanos as u64);
                Ok(())
            })?;
        }
        Kind::IntOrString => {
            let (ty, int_val, str_val) = match value {
                Value::String(s) => (1u64, 0i32, s.as_str()),
                Value::Number(_) => {
                    let n = integer(value)?;
                    let n = i32::try_from(n).map_err(|_| {
                        EncodeError::invalid(format!("{n} does not fit in 32 bits"))
                    })?;
                    (0, n, "")
                }
                other => return Err(mismatch("an integer or a string", other)),
            };
            nested(out, tag, |out| {
                put_varint_field(out, 1, ty);
                put_varint_field(out, 2, i64::from(int_val) as u64);
                put_string(out, 3, str_val);
                Ok(())
            })?;
        }
        Kind::Quantity => {
            let quantity = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                other => return Err(mismatch("a quantity", other)),
            };
            nested(out, tag, |out| {
                put_string(out, 1, &quantity);
                Ok(())
            })?;
        }
        Kind::Double => {
            let f = match value {
                Value::Number(n) => n
                    .as_f64()
                    .ok_or_else(|| EncodeError::invalid(format!("{n} is not a double")))?,
                Value::Null => 0.0,
                other => return Err(mismatch("a number", other)),
            };
            put_key(out, tag, 1);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Kind::Json => {
            // `JSON` {raw=1}: the JSON text; `null` is an empty message.
            nested(out, tag, |out| {
                if !value.is_null() {
                    put_bytes(out, 1, &json_bytes(value)?);
                }
                Ok(())
            })?;
        }
        Kind::SchemaOrArray | Kind::SchemaOrStringArray => {
            // {schema=1, jSONSchemas/property=2 repeated}.
            nested(out, tag, |out| match value {
                Value::Object(obj) => json_schema_into(1, obj, depth, out),
                Value::Array(items) => {
                    for (index, item) in items.iter().enumerate() {
                        match (kind, item) {
                            (Kind::SchemaOrArray, Value::Object(obj)) => {
                                json_schema_into(2, obj, depth, out)
                            }
                            (Kind::SchemaOrStringArray, Value::String(s)) => {
                                put_string(out, 2, s);
                                Ok(())
                            }
                            (Kind::SchemaOrArray, other) => Err(mismatch("an object", other)),
                            (_, other) => Err(mismatch("a string", other)),
                        }
                        .map_err(|e| e.at_index(index))?;
                    }
                    Ok(())
                }
                Value::Null => Ok(()),
                other => Err(mismatch("an object or an array", other)),
            })?;
        }
        Kind::SchemaOrBool => {
            // {allows=1, schema=2}: a schema allows.
            nested(out, tag, |out| match value {
                Value::Bool(allows) => {
                    put_varint_field(out, 1, u64::from(*allows));
                    Ok(())
                }
                Value::Object(obj) => {
                    put_varint_field(out, 1, 1);
                    json_schema_into(2, obj, depth, out)
                }
                Value::Null => Ok(()),
                other => Err(mismatch("a boolean or an object", other)),
            })?;
        }
        Kind::FieldsV1 | Kind::RawExtension => {
            // Both hold the raw JSON bytes of what they carry.
            let raw = match value {
                Value::Null => Vec::new(),
                other => serde_json::to_vec(other)
                    .map_err(|e| EncodeError::invalid(format!("cannot serialise JSON: {e}")))?,
            };
            nested(out, tag, |out| {
                if !raw.is_empty() {
                    put_bytes(out, 1, &raw);
                }
                Ok(())
            })?;
        }
        Kind::StringList => {
            let items = match value {
                Value::Array(items) => items.as_slice(),
                Value::Null => &[],
                other => return Err(mismatch("an array of strings", other)),
            };
            nested(out, tag, |out| {
                for (index, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) => put_string(out, 1, s),
                        other => return Err(mismatch("a string", other).at_index(index)),
                    }
                }
                Ok(())
            })?;
        }
    }
    Ok(())
}

/// `JSONSchemaProps` `obj` as field `tag`.
fn json_schema_into(
    tag: u32,
    obj: &Map<String, Value>,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let message = lookup(schema::JSON_SCHEMA_PROPS)?;
    nested(out, tag, |out| message_into(message, obj, depth + 1, out))
}

fn json_bytes(value: &Value) -> Result<Vec<u8>, EncodeError> {
    serde_json::to_vec(value)
        .map_err(|e| EncodeError::invalid(format!("cannot serialise JSON: {e}")))
}

/// A JSON number that is an integer (Go's JSON decoder accepts `1.0`
/// for an integer field only when it is integral).
fn integer(value: &Value) -> Result<i64, EncodeError> {
    match value {
        Value::Null => Ok(0),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(i)
            } else if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.2e18) {
                Ok(f as i64)
            } else {
                Err(EncodeError::invalid(format!("{n} is not a 64-bit integer")))
            }
        }
        other => Err(mismatch("an integer", other)),
    }
}

/// Parses an RFC 3339 time into Unix seconds and nanoseconds.
pub(crate) fn parse_time(s: &str) -> Result<(i64, i32), EncodeError> {
    let timestamp: jiff::Timestamp = s
        .parse()
        .map_err(|e| EncodeError::invalid(format!("invalid time {s:?}: {e}")))?;
    Ok((timestamp.as_second(), timestamp.subsec_nanosecond()))
}

/// Parses a Go duration string (`1h2m3.5s`, `1.5ms`, `-2µs`, `0s`) into
/// nanoseconds, as `time.ParseDuration` does.
pub(crate) fn parse_duration(s: &str) -> Result<i64, EncodeError> {
    let invalid = || EncodeError::invalid(format!("invalid duration {s:?}"));
    let (negative, mut rest) = if let Some(rest) = s.strip_prefix('-') {
        (true, rest)
    } else {
        (false, s.strip_prefix('+').unwrap_or(s))
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .ok_or_else(invalid)?;
        let (number, tail) = rest.split_at(digits);
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return Err(invalid()),
        };
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() {
            return Err(invalid());
        }
        let whole: i128 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| invalid())?
        };
        let mut part = whole.checked_mul(scale).ok_or_else(invalid)?;
        let mut divisor: i128 = 1;
        for digit in fraction.bytes().take(18) {
            divisor *= 10;
            part += i128::from(digit - b'0') * scale / divisor;
        }
        total = total.checked_add(part).ok_or_else(invalid)?;
        if total > i128::from(i64::MAX) + 1 {
            return Err(invalid());
        }
        rest = tail;
    }
    let total = if negative { -total } else { total };
    i64::try_from(total).map_err(|_| invalid())
}

fn mismatch(expected: &str, got: &Value) -> EncodeError {
    let got = match got {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    EncodeError::invalid(format!("expected {expected}, got {got}"))
}

fn lookup(name: &str) -> Result<&'static Message, EncodeError> {
    schema::message(name)
        .ok_or_else(|| EncodeError::invalid(format!("no schema for message {name}")))
}

fn check_depth(depth: usize) -> Result<(), EncodeError> {
    if depth > MAX_DEPTH * 2 {
        return Err(EncodeError::invalid(format!(
            "objects nest deeper than {MAX_DEPTH} levels"
        )));
    }
    Ok(())
}

/// Appends a base-128 varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_key(out: &mut Vec<u8>, tag: u32, wire_type: u8) {
    put_varint(out, (u64::from(tag) << 3) | u64::from(wire_type));
}

/// Appends a varint field.
pub(crate) fn put_varint_field(out: &mut Vec<u8>, tag: u32, v: u64) {
    put_key(out, tag, 0);
    put_varint(out, v);
}

/// Appends a length-delimited field.
pub(crate) fn put_bytes(out: &mut Vec<u8>, tag: u32, bytes: &[u8]) {
    put_key(out, tag, 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Appends a string field.
pub(crate) fn put_string(out: &mut Vec<u8>, tag: u32, s: &str) {
    put_bytes(out, tag, s.as_bytes());
}

/// Appends a length-delimited field whose payload `body` writes in place;
/// the length prefix is inserted afterwards.
pub(crate) fn nested(
    out: &mut Vec<u8>,
    tag: u32,
    body: impl FnOnce(&mut Vec<u8>) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    put_key(out, tag, 2);
    let start = out.len();
    // One byte holds lengths below 128, the common case; longer ones
    // shift the payload right.
    out.push(0);
    body(out)?;
    let len = out.len() - start - 1;
    if len < 0x80 {
        if let Some(slot) = out.get_mut(start) {
            *slot = len as u8;
        }
    } else {
        let mut prefix = Vec::with_capacity(10);
        put_varint(&mut prefix, len as u64);
        out.splice(start..start + 1, prefix);
    }
    Ok(())
}

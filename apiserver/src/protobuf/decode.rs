//! The schema walk: protobuf bytes plus a [`Message`] table to the JSON
//! upstream would write for the same object.
//!
//! Fields are collected first and written afterwards in table (Go struct)
//! order, so the JSON key order does not depend on the wire order. A
//! singular message field that occurs more than once is merged, as
//! protobuf requires, by decoding all occurrences as one concatenated
//! message; a singular scalar keeps its last occurrence. Fields whose
//! number is not in the table are skipped.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{Map, Value};

use super::schema::{self, Card, Field, Kind, Message, Zero};
use super::special::{format_duration, format_time};
use super::wire::{RawValue, Reader, WireError, WireType};
use super::{DecodeError, CONTENT_TYPE, MAGIC};

/// How deeply messages may nest (objects inside `RawExtension`s included)
/// before decoding fails.
pub(crate) const MAX_DEPTH: usize = 64;

/// Decodes a `k8s\0`-prefixed `runtime.Unknown` envelope at nesting
/// `depth`.
pub(crate) fn object(bytes: &[u8], depth: usize) -> Result<Value, DecodeError> {
    check_depth(depth)?;
    let body = bytes
        .strip_prefix(&MAGIC[..])
        .ok_or(DecodeError::BadMagic)?;
    let envelope = Envelope::parse(body).map_err(|e| e.at("Unknown"))?;
    if !envelope.content_encoding.is_empty() {
        return Err(DecodeError::UnsupportedEncoding(envelope.content_encoding));
    }
    if !envelope.content_type.is_empty() && envelope.content_type != CONTENT_TYPE {
        return Err(DecodeError::UnsupportedContentType(envelope.content_type));
    }
    if envelope.api_version.is_empty() {
        return Err(DecodeError::MissingTypeMeta("apiVersion"));
    }
    if envelope.kind.is_empty() {
        return Err(DecodeError::MissingTypeMeta("kind"));
    }
    let Some(message) = schema::message_for_kind(&envelope.api_version, &envelope.kind) else {
        return Err(DecodeError::UnknownKind {
            api_version: envelope.api_version,
            kind: envelope.kind,
        });
    };
    let fields =
        self::message(message, &[envelope.raw], depth + 1).map_err(|e| e.at(&envelope.kind))?;
    let mut out = Map::new();
    out.insert("kind".to_owned(), Value::String(envelope.kind));
    out.insert("apiVersion".to_owned(), Value::String(envelope.api_version));
    out.extend(fields);
    Ok(Value::Object(out))
}

/// The `runtime.Unknown` envelope: typeMeta{apiVersion=1, kind=2}=1,
/// raw=2, contentEncoding=3, contentType=4.
struct Envelope<'a> {
    api_version: String,
    kind: String,
    raw: &'a [u8],
    content_encoding: String,
    content_type: String,
}

impl<'a> Envelope<'a> {
    fn parse(body: &'a [u8]) -> Result<Self, DecodeError> {
        let mut envelope = Envelope {
            api_version: String::new(),
            kind: String::new(),
            raw: &[],
            content_encoding: String::new(),
            content_type: String::new(),
        };
        let mut type_meta: Vec<&[u8]> = Vec::new();
        scan(&[body], |tag, value| {
            match tag {
                1 => type_meta.push(len(value)?),
                2 => envelope.raw = len(value)?,
                3 => envelope.content_encoding = string(len(value)?),
                4 => envelope.content_type = string(len(value)?),
                _ => {}
            }
            Ok(())
        })?;
        scan(&type_meta, |tag, value| {
            match tag {
                1 => envelope.api_version = string(len(value)?),
                2 => envelope.kind = string(len(value)?),
                _ => {}
            }
            Ok(())
        })
        .map_err(|e| e.at("typeMeta"))?;
        Ok(envelope)
    }
}

/// Decodes the concatenation of `chunks` as one `message`.
pub(crate) fn message(
    message: &'static Message,
    chunks: &[&[u8]],
    depth: usize,
) -> Result<Map<String, Value>, DecodeError> {
    let mut out = Map::new();
    message_into(message, chunks, depth, &mut out)?;
    Ok(out)
}

fn message_into(
    message: &'static Message,
    chunks: &[&[u8]],
    depth: usize,
    out: &mut Map<String, Value>,
) -> Result<(), DecodeError> {
    check_depth(depth)?;
    let mut slots: Vec<Vec<RawValue<'_>>> = vec![Vec::new(); message.fields.len()];
    scan(chunks, |tag, value| {
        if let Some(slot) = message
            .field(tag)
            .and_then(|(index, _)| slots.get_mut(index))
        {
            slot.push(value);
        }
        Ok(())
    })?;
    for (field, values) in message.fields.iter().zip(&slots) {
        if values.is_empty() {
            continue;
        }
        field_into(field, values, depth, out).map_err(|e| e.at(field.json))?;
    }
    Ok(())
}

fn field_into(
    field: &Field,
    values: &[RawValue<'_>],
    depth: usize,
    out: &mut Map<String, Value>,
) -> Result<(), DecodeError> {
    let json = field.json.to_owned();
    match field.card {
        Card::Single => match field.kind {
            Kind::Inline(name) => {
                let chunks = len_chunks(values)?;
                message_into(lookup(name)?, &chunks, depth + 1, out)?;
            }
            kind if is_scalar(kind) => {
                if let Some(last) = values.last() {
                    let value = scalar(kind, *last)?;
                    if !omitted(kind, &value) {
                        out.insert(json, value);
                    }
                }
            }
            kind => {
                let chunks = len_chunks(values)?;
                out.insert(json, composite(kind, &chunks, depth + 1)?);
            }
        },
        Card::Repeated => {
            let items = repeated(field.kind, values, depth)?;
            if !items.is_empty() {
                out.insert(json, Value::Array(items));
            }
        }
        Card::Map => {
            let mut entries = BTreeMap::new();
            for value in values {
                let (key, value) = map_entry(field.kind, len(*value)?, depth + 1)?;
                entries.insert(key, value);
            }
            if !entries.is_empty() {
                out.insert(json, Value::Object(entries.into_iter().collect()));
            }
        }
    }
    Ok(())
}

fn repeated(kind: Kind, values: &[RawValue<'_>], depth: usize) -> Result<Vec<Value>, DecodeError> {
    let mut items = Vec::with_capacity(values.len());
    for value in values {
        match (kind, value) {
            // Packed numbers: a run of varints in one length-delimited field.
            (Kind::Int32(_) | Kind::Int64(_) | Kind::Bool(_), RawValue::Len(bytes)) => {
                let mut reader = Reader::new(bytes);
                while !reader.is_empty() {
                    let number = reader.varint().map_err(DecodeError::wire)?;
                    items.push(scalar(kind, RawValue::Varint(number))?);
                }
            }
            (kind, value) if is_scalar(kind) => items.push(scalar(kind, *value)?),
            (kind, value) => {
                let index = items.len();
                let item =
                    composite(kind, &[len(*value)?], depth + 1).map_err(|e| e.at_index(index))?;
                items.push(item);
            }
        }
    }
    Ok(items)
}

/// One `map<string, V>` entry: key=1, value=2.
fn map_entry(kind: Kind, entry: &[u8], depth: usize) -> Result<(String, Value), DecodeError> {
    let mut key = String::new();
    let mut values = Vec::new();
    scan(&[entry], |tag, value| {
        match tag {
            1 => key = string(len(value)?),
            2 => values.push(value),
            _ => {}
        }
        Ok(())
    })?;
    let value = if is_scalar(kind) {
        match values.last() {
            Some(last) => scalar(kind, *last)?,
            None => zero(kind),
        }
    } else {
        composite(kind, &len_chunks(&values)?, depth).map_err(|e| e.at(&key))?
    };
    Ok((key, value))
}

fn is_scalar(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::String(_)
            | Kind::Bytes
            | Kind::Int32(_)
            | Kind::Int64(_)
            | Kind::Bool(_)
            | Kind::Double
    )
}

/// The zero value of a scalar kind (a map entry without a value).
fn zero(kind: Kind) -> Value {
    match kind {
        Kind::Int32(_) | Kind::Int64(_) | Kind::Double => Value::from(0),
        Kind::Bool(_) => Value::Bool(false),
        _ => Value::String(String::new()),
    }
}

/// Whether a single scalar is dropped: empty bytes, or a zero value of a
/// field whose rule is [`Zero::Omit`].
fn omitted(kind: Kind, value: &Value) -> bool {
    let rule = match kind {
        Kind::Bytes => Zero::Omit,
        Kind::String(rule) | Kind::Int32(rule) | Kind::Int64(rule) | Kind::Bool(rule) => rule,
        _ => Zero::Keep,
    };
    rule == Zero::Omit
        && match value {
            Value::String(s) => s.is_empty(),
            Value::Bool(b) => !b,
            Value::Number(n) => n.as_i64() == Some(0),
            _ => false,
        }
}

fn scalar(kind: Kind, value: RawValue<'_>) -> Result<Value, DecodeError> {
    Ok(match kind {
        Kind::String(_) => Value::String(string(len(value)?)),
        Kind::Bytes => Value::String(base64::engine::general_purpose::STANDARD.encode(len(value)?)),
        // int32 is a sign-extended varint; truncation is protobuf's rule.
        Kind::Int32(_) => Value::from(varint(value)? as i32),
        Kind::Int64(_) => Value::from(varint(value)? as i64),
        Kind::Bool(_) => Value::Bool(varint(value)? != 0),
        Kind::Double => double(value)?,
        _ => return Err(DecodeError::malformed("not a scalar field")),
    })
}

/// A message-typed value (ordinary or special) made of `chunks`.
fn composite(kind: Kind, chunks: &[&[u8]], depth: usize) -> Result<Value, DecodeError> {
    check_depth(depth)?;
    match kind {
        Kind::Message(name) | Kind::Inline(name) => {
            Ok(Value::Object(message(lookup(name)?, chunks, depth)?))
        }
        Kind::Time => timestamp(chunks, false),
        Kind::MicroTime => timestamp(chunks, true),
        Kind::Duration => {
            let mut nanos = 0;
            scan(chunks, |tag, value| {
                if tag == 1 {
                    nanos = varint(value)? as i64;
                }
                Ok(())
            })?;
            Ok(Value::String(format_duration(nanos)))
        }
        Kind::IntOrString => int_or_string(chunks),
        Kind::Quantity => {
            let mut quantity = String::new();
            scan(chunks, |tag, value| {
                if tag == 1 {
                    quantity = string(len(value)?);
                }
                Ok(())
            })?;
            if quantity.is_empty() {
                quantity.push('0');
            }
            Ok(Value::String(quantity))
        }
        Kind::FieldsV1 => {
            let raw = last_bytes(chunks)?;
            if raw.is_empty() {
                return Ok(Value::Null);
            }
            serde_json::from_slice(raw)
                .map_err(|e| DecodeError::malformed(format!("fieldsV1 is not valid JSON: {e}")))
        }
        Kind::RawExtension => {
            let raw = last_bytes(chunks)?;
            if raw.is_empty() {
                Ok(Value::Null)
            } else if raw.starts_with(&MAGIC) {
                object(raw, depth + 1)
            } else {
                serde_json::from_slice(raw).map_err(|e| {
                    DecodeError::malformed(format!("embedded object is not valid JSON: {e}"))
                })
            }
        }
        Kind::StringList => {
            let mut items = Vec::new();
            scan(chunks, |tag, value| {
                if tag == 1 {
                    items.push(Value::String(string(len(value)?)));
                }
                Ok(())
            })?;
            Ok(Value::Array(items))
        }
        Kind::Json => {
            let raw = last_bytes(chunks)?;
            if raw.is_empty() {
                return Ok(Value::Null);
            }
            serde_json::from_slice(raw)
                .map_err(|e| DecodeError::malformed(format!("JSON value is not valid JSON: {e}")))
        }
        Kind::SchemaOrArray => schema_or(chunks, depth, |tag, value, items| {
            if tag != 2 {
                return Ok(false);
            }
            items.push(json_schema(&[len(value)?], depth + 1)?);
            Ok(true)
        }),
        Kind::SchemaOrStringArray => schema_or(chunks, depth, |tag, value, items| {
            if tag != 2 {
                return Ok(false);
            }
            items.push(Value::String(string(len(value)?)));
            Ok(true)
        }),
        Kind::SchemaOrBool => {
            // {allows=1, schema=2}: the schema when there is one (Go's
            // MarshalJSON ignores `allows` then), else the boolean.
            let mut allows = false;
            let mut schema: Vec<&[u8]> = Vec::new();
            scan(chunks, |tag, value| {
                match tag {
                    1 => allows = varint(value)? != 0,
                    2 => schema.push(len(value)?),
                    _ => {}
                }
                Ok(())
            })?;
            if schema.is_empty() {
                Ok(Value::Bool(allows))
            } else {
                json_schema(&schema, depth + 1)
            }
        }
        Kind::String(_)
        | Kind::Bytes
        | Kind::Int32(_)
        | Kind::Int64(_)
        | Kind::Bool(_)
        | Kind::Double => Err(DecodeError::malformed("not a message field")),
    }
}

/// A `JSONSchemaProps` made of `chunks`.
fn json_schema(chunks: &[&[u8]], depth: usize) -> Result<Value, DecodeError> {
    Ok(Value::Object(message(
        lookup(schema::JSON_SCHEMA_PROPS)?,
        chunks,
        depth,
    )?))
}

/// `JSONSchemaPropsOrArray` / `JSONSchemaPropsOrStringArray`: field 1 is
/// a schema, field 2 (collected by `item`) the array alternative. As Go's
/// `MarshalJSON`s do, a non-empty array wins, then the schema, else
/// `null`.
fn schema_or<'a>(
    chunks: &[&'a [u8]],
    depth: usize,
    mut item: impl FnMut(u32, RawValue<'a>, &mut Vec<Value>) -> Result<bool, DecodeError>,
) -> Result<Value, DecodeError> {
    let mut schema: Vec<&[u8]> = Vec::new();
    let mut items = Vec::new();
    scan(chunks, |tag, value| {
        if item(tag, value, &mut items)? {
            return Ok(());
        }
        if tag == 1 {
            schema.push(len(value)?);
        }
        Ok(())
    })?;
    if !items.is_empty() {
        Ok(Value::Array(items))
    } else if !schema.is_empty() {
        json_schema(&schema, depth + 1)
    } else {
        Ok(Value::Null)
    }
}

/// A fixed64 `double`, written as Go's JSON encoder writes a float64:
/// integral values without a fraction (`1`, not `1.0`).
fn double(value: RawValue<'_>) -> Result<Value, DecodeError> {
    let f = match value {
        RawValue::Fixed64(bits) => f64::from_bits(bits),
        other => return Err(wrong_wire_type(WireType::Fixed64, other)),
    };
    if !f.is_finite() {
        return Err(DecodeError::malformed(format!("unsupported value {f}")));
    }
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        return Ok(Value::from(f as i64));
    }
    serde_json::Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| DecodeError::malformed(format!("unsupported value {f}")))
}

/// `meta.v1.Time` / `MicroTime` {seconds=1, nanos=2}. An empty message is
/// Go's zero time, which upstream writes as `null`.
fn timestamp(chunks: &[&[u8]], micro: bool) -> Result<Value, DecodeError> {
    if chunks.iter().all(|chunk| chunk.is_empty()) {
        return Ok(Value::Null);
    }
    let mut seconds = 0i64;
    let mut nanos = 0i64;
    scan(chunks, |tag, value| {
        match tag {
            1 => seconds = varint(value)? as i64,
            2 => nanos = i64::from(varint(value)? as i32),
            _ => {}
        }
        Ok(())
    })?;
    format_time(seconds, nanos, micro)
        .map(Value::String)
        .map_err(DecodeError::malformed)
}

/// `intstr.IntOrString` {type=1 (0 int, 1 string), intVal=2, strVal=3}.
fn int_or_string(chunks: &[&[u8]]) -> Result<Value, DecodeError> {
    let mut ty = 0u64;
    let mut int_val = 0i32;
    let mut str_val = String::new();
    scan(chunks, |tag, value| {
        match tag {
            1 => ty = varint(value)?,
            2 => int_val = varint(value)? as i32,
            3 => str_val = string(len(value)?),
            _ => {}
        }
        Ok(())
    })?;
    match ty {
        0 => Ok(Value::from(int_val)),
        1 => Ok(Value::String(str_val)),
        other => Err(DecodeError::malformed(format!(
            "invalid IntOrString type {other}"
        ))),
    }
}

/// The last field 1 (`bytes raw`) of a `FieldsV1` or `RawExtension`.
fn last_bytes<'a>(chunks: &[&'a [u8]]) -> Result<&'a [u8], DecodeError> {
    let mut raw: &[u8] = &[];
    scan(chunks, |tag, value| {
        if tag == 1 {
            raw = len(value)?;
        }
        Ok(())
    })?;
    Ok(raw)
}

/// Calls `visit` with every field of the concatenation of `chunks`.
fn scan<'a>(
    chunks: &[&'a [u8]],
    mut visit: impl FnMut(u32, RawValue<'a>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    for chunk in chunks {
        let mut reader = Reader::new(chunk);
        while !reader.is_empty() {
            let (tag, value) = reader.field().map_err(DecodeError::wire)?;
            visit(tag, value)?;
        }
    }
    Ok(())
}

/// The payloads of length-delimited values.
fn len_chunks<'a>(values: &[RawValue<'a>]) -> Result<Vec<&'a [u8]>, DecodeError> {
    values.iter().map(|value| len(*value)).collect()
}

fn len(value: RawValue<'_>) -> Result<&[u8], DecodeError> {
    match value {
        RawValue::Len(bytes) => Ok(bytes),
        other => Err(wrong_wire_type(WireType::Len, other)),
    }
}

fn varint(value: RawValue<'_>) -> Result<u64, DecodeError> {
    match value {
        RawValue::Varint(v) => Ok(v),
        other => Err(wrong_wire_type(WireType::Varint, other)),
    }
}

fn wrong_wire_type(expected: WireType, got: RawValue<'_>) -> DecodeError {
    DecodeError::malformed(format!(
        "expected wire type {}, got {}",
        expected.name(),
        got.wire_type().name()
    ))
}

/// Lossy UTF-8, as Go's JSON encoder replaces invalid bytes.
fn string(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn lookup(name: &str) -> Result<&'static Message, DecodeError> {
    schema::message(name)
        .ok_or_else(|| DecodeError::malformed(format!("no schema for message {name}")))
}

fn check_depth(depth: usize) -> Result<(), DecodeError> {
    if depth > MAX_DEPTH {
        return Err(DecodeError::malformed(format!(
            "messages nest deeper than {MAX_DEPTH} levels"
        )));
    }
    Ok(())
}

impl DecodeError {
    fn wire(error: WireError) -> Self {
        Self::malformed(error.to_string())
    }
}

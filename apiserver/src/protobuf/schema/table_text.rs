//! Reads the schema tables under `tables/`: a line-oriented transcription of
//! upstream's `generated.proto` files, with Go's notation for what protobuf
//! alone does not say (pointers, embedding).
//!
//! ```text
//! # A comment.
//! kind core.v1.ConfigMap            # a kind's own message (upstream registers it)
//!   1 metadata meta.v1.ObjectMeta   # tag, JSON name, type
//!   4 immutable *bool               # a Go pointer: a zero value on the wire is kept
//!   2 data map[string]string
//! message core.v1.KeyToPath         # a message that is only ever nested
//!   1 key string                    # a value field: "" on the wire is omitted
//!   3 mode *int32
//! ```
//!
//! Types: `string`, `bool`, `int32`, `int64` (zero omitted) and their `*`
//! pointers (zero kept), `bytes`, `*double`, a message's full name, `inline`
//! and a message's name (Go embedding: its fields are written into the
//! enclosing JSON object), the well-known `Time`, `MicroTime`, `Duration`,
//! `IntOrString`, `Quantity`, `FieldsV1`, `RawExtension`, `ExtraValue` (a
//! string list written as a bare array), `JSON` and the three
//! `JSONSchemaPropsOr...` of apiextensions. `[]T` is a repeated field,
//! `map[string]T` a map; their scalar values are always written.
//!
//! The tables are compiled into the binary and read once, at first use. A
//! malformed line is a defect of the tables, not of any input: the unit
//! tests read every table, so it never reaches a running server.

use super::{Card, Field, Kind, Message, Zero};

/// The messages of one table; `file` names it in errors.
pub(super) fn parse(file: &str, text: &'static str) -> Result<Vec<Message>, String> {
    let mut messages = Vec::new();
    let mut current: Option<(&'static str, bool, Vec<Field>)> = None;
    let mut finish = |current: &mut Option<(&'static str, bool, Vec<Field>)>| {
        if let Some((name, top_level, fields)) = current.take() {
            messages.push(Message {
                name,
                fields: Box::leak(fields.into_boxed_slice()),
                top_level,
            });
        }
    };
    for (number, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = |what: &str| format!("{file}:{}: {what}: {raw}", number + 1);
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or("");
        match first {
            "kind" | "message" => {
                finish(&mut current);
                let name = words.next().ok_or_else(|| at("no message name"))?;
                current = Some((name, first == "kind", Vec::new()));
            }
            _ => {
                let (_, _, fields) = current
                    .as_mut()
                    .ok_or_else(|| at("a field outside a message"))?;
                let tag = first.parse().map_err(|_| at("not a field number"))?;
                let json = words.next().ok_or_else(|| at("no JSON name"))?;
                let ty: Vec<&'static str> = words.collect();
                let (kind, card) = field_type(&ty).ok_or_else(|| at("unknown type"))?;
                fields.push(Field {
                    tag,
                    json,
                    kind,
                    card,
                });
            }
        }
    }
    finish(&mut current);
    Ok(messages)
}

/// A field's type words (`*string`, `[]core.v1.Container`, `inline T`).
fn field_type(words: &[&'static str]) -> Option<(Kind, Card)> {
    match words {
        ["inline", name] => Some((Kind::Inline(name), Card::Single)),
        [ty] => {
            let (card, element) = if let Some(element) = ty.strip_prefix("[]") {
                (Card::Repeated, element)
            } else if let Some(element) = ty.strip_prefix("map[string]") {
                (Card::Map, element)
            } else {
                (Card::Single, *ty)
            };
            // Lists and maps write every value they hold.
            let scalar_zero = |pointer: bool| match (card, pointer) {
                (Card::Single, false) => Zero::Omit,
                _ => Zero::Keep,
            };
            let (pointer, base) = match element.strip_prefix('*') {
                Some(base) => (true, base),
                None => (false, element),
            };
            let kind = match base {
                "string" => Kind::String(scalar_zero(pointer)),
                "bool" => Kind::Bool(scalar_zero(pointer)),
                "int32" => Kind::Int32(scalar_zero(pointer)),
                "int64" => Kind::Int64(scalar_zero(pointer)),
                "double" if pointer => Kind::Double,
                _ if pointer => return None,
                "bytes" => Kind::Bytes,
                "Time" => Kind::Time,
                "MicroTime" => Kind::MicroTime,
                "Duration" => Kind::Duration,
                "IntOrString" => Kind::IntOrString,
                "Quantity" => Kind::Quantity,
                "FieldsV1" => Kind::FieldsV1,
                "RawExtension" => Kind::RawExtension,
                "ExtraValue" => Kind::StringList,
                "JSON" => Kind::Json,
                "JSONSchemaPropsOrArray" => Kind::SchemaOrArray,
                "JSONSchemaPropsOrBool" => Kind::SchemaOrBool,
                "JSONSchemaPropsOrStringArray" => Kind::SchemaOrStringArray,
                name if name.contains('.') => Kind::Message(name),
                _ => return None,
            };
            Some((kind, card))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_with_their_zero_rules_and_cardinality() {
        let text = "# c\nkind a.v1.K\n  1 metadata meta.v1.ObjectMeta\n  2 name string  # c\n\
                    message a.v1.N\n  3 p *int32\n  4 l []string\n  5 m map[string]Quantity\n  6 e inline a.v1.E\n";
        let messages = parse("t", text).expect("parses");
        assert_eq!(messages.len(), 2);
        assert!(messages[0].top_level && !messages[1].top_level);
        let kinds: Vec<_> = messages
            .iter()
            .flat_map(|m| m.fields)
            .map(|f| (f.tag, f.json, f.kind, f.card))
            .collect();
        assert_eq!(
            kinds,
            [
                (
                    1,
                    "metadata",
                    Kind::Message("meta.v1.ObjectMeta"),
                    Card::Single
                ),
                (2, "name", Kind::String(Zero::Omit), Card::Single),
                (3, "p", Kind::Int32(Zero::Keep), Card::Single),
                (4, "l", Kind::String(Zero::Keep), Card::Repeated),
                (5, "m", Kind::Quantity, Card::Map),
                (6, "e", Kind::Inline("a.v1.E"), Card::Single),
            ]
        );
    }

    #[test]
    fn malformed_lines_are_named() {
        let err = parse("t", "  1 x string\n").expect_err("a field outside a message");
        assert!(err.starts_with("t:1: a field outside a message"), "{err}");
        let err = parse("t", "message a.v1.M\n  1 x *bytes\n").expect_err("bad type");
        assert!(err.starts_with("t:2: unknown type"), "{err}");
    }
}

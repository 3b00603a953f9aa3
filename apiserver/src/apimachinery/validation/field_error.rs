//! Field-level validation errors, after upstream's
//! `k8s.io/apimachinery/pkg/util/validation/field` (`errors.go`, `path.go`).
//!
//! A [`FieldError`] renders exactly as upstream's `*field.Error` does:
//! [`FieldError::message_body`] is `ErrorBody()` (what goes into a Status
//! cause's `message`) and `Display` is `Error()` (`<field>: <body>`).

use std::fmt;

use serde_json::Value;

/// Machine-readable kind of a field error (upstream's `field.ErrorType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldErrorType {
    /// A requested value was not found (`field.NotFound`).
    NotFound,
    /// A required value is missing (`field.Required`).
    Required,
    /// A value that must be unique is duplicated (`field.Duplicate`).
    Duplicate,
    /// A value is malformed (`field.Invalid`).
    Invalid,
    /// A value is not one of an enumeration (`field.NotSupported`).
    NotSupported,
    /// A value is not permitted in the current conditions (`field.Forbidden`).
    Forbidden,
    /// A value is too long (`field.TooLong`).
    TooLong,
    /// A list has too many items (`field.TooMany`).
    TooMany,
    /// An error not caused by user input (`field.InternalError`).
    Internal,
    /// A value does not match the schema type (`field.TypeInvalid`).
    TypeInvalid,
}

impl FieldErrorType {
    /// The `CauseType` string upstream puts into `Status.details.causes[].reason`.
    pub fn reason(self) -> &'static str {
        match self {
            FieldErrorType::NotFound => "FieldValueNotFound",
            FieldErrorType::Required => "FieldValueRequired",
            FieldErrorType::Duplicate => "FieldValueDuplicate",
            FieldErrorType::Invalid => "FieldValueInvalid",
            FieldErrorType::NotSupported => "FieldValueNotSupported",
            FieldErrorType::Forbidden => "FieldValueForbidden",
            FieldErrorType::TooLong => "FieldValueTooLong",
            FieldErrorType::TooMany => "FieldValueTooMany",
            FieldErrorType::Internal => "InternalError",
            FieldErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// The human-readable prefix of the error body (upstream's `ErrorType.String()`).
    pub fn message(self) -> &'static str {
        match self {
            FieldErrorType::NotFound => "Not found",
            FieldErrorType::Required => "Required value",
            FieldErrorType::Duplicate => "Duplicate value",
            FieldErrorType::Invalid => "Invalid value",
            FieldErrorType::NotSupported => "Unsupported value",
            FieldErrorType::Forbidden => "Forbidden",
            FieldErrorType::TooLong => "Too long",
            FieldErrorType::TooMany => "Too many",
            FieldErrorType::Internal => "Internal error",
            FieldErrorType::TypeInvalid => "Invalid value",
        }
    }
}

impl fmt::Display for FieldErrorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// A path from an object's root to one of its fields (upstream's `*field.Path`).
///
/// `FieldPath::new("metadata").child("name").index(0).key("k")` renders as
/// `metadata.name[0][k]`. [`FieldPath::nil`] is upstream's nil path, which
/// renders as `<nil>` and whose children start a fresh path.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FieldPath {
    repr: Option<String>,
}

impl FieldPath {
    /// A root path named `name` (upstream's `field.NewPath(name)`).
    pub fn new(name: &str) -> Self {
        FieldPath {
            repr: Some(name.to_string()),
        }
    }

    /// Upstream's nil `*field.Path`: renders as `<nil>`.
    pub fn nil() -> Self {
        FieldPath { repr: None }
    }

    /// Whether this is the nil path.
    pub fn is_nil(&self) -> bool {
        self.repr.is_none()
    }

    /// The path of the child field `name`.
    pub fn child(&self, name: &str) -> Self {
        match &self.repr {
            None => FieldPath::new(name),
            Some(p) => FieldPath {
                repr: Some(format!("{p}.{name}")),
            },
        }
    }

    /// The path of list element `index`.
    pub fn index(&self, index: usize) -> Self {
        self.subscript(&index.to_string())
    }

    /// The path of map entry `key`.
    pub fn key(&self, key: &str) -> Self {
        self.subscript(key)
    }

    fn subscript(&self, sub: &str) -> Self {
        let base = self.repr.as_deref().unwrap_or("");
        FieldPath {
            repr: Some(format!("{base}[{sub}]")),
        }
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            None => f.write_str("<nil>"),
            Some(p) => f.write_str(p),
        }
    }
}

/// One field-level validation error (upstream's `*field.Error`).
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    /// The kind of error.
    pub error_type: FieldErrorType,
    /// The rendered path of the offending field (`metadata.name`).
    pub field: String,
    /// The offending value; `None` means upstream's omitted value (not printed).
    pub bad_value: Option<Value>,
    /// Human-readable detail appended after the value.
    pub detail: String,
}

impl FieldError {
    fn with(
        error_type: FieldErrorType,
        field: impl fmt::Display,
        bad_value: Option<Value>,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            error_type,
            field: field.to_string(),
            bad_value,
            detail: detail.into(),
        }
    }

    /// `field.NotFound`: a requested value was not found.
    pub fn not_found(field: impl fmt::Display, value: impl Into<Value>) -> Self {
        Self::with(FieldErrorType::NotFound, field, Some(value.into()), "")
    }

    /// `field.Required`: body `Required value[: detail]`.
    pub fn required(field: impl fmt::Display, detail: impl Into<String>) -> Self {
        Self::with(
            FieldErrorType::Required,
            field,
            Some(Value::String(String::new())),
            detail,
        )
    }

    /// `field.Duplicate`: body `Duplicate value: <value>`.
    pub fn duplicate(field: impl fmt::Display, value: impl Into<Value>) -> Self {
        Self::with(FieldErrorType::Duplicate, field, Some(value.into()), "")
    }

    /// `field.Invalid`: body `Invalid value: <value>: <detail>`.
    pub fn invalid(
        field: impl fmt::Display,
        value: impl Into<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self::with(FieldErrorType::Invalid, field, Some(value.into()), detail)
    }

    /// `field.NotSupported`: body
    /// `Unsupported value: <value>: supported values: "a", "b"`.
    pub fn not_supported(
        field: impl fmt::Display,
        value: impl Into<Value>,
        valid: &[&str],
    ) -> Self {
        let detail = if valid.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = valid.iter().map(|v| go_quote(v)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::with(
            FieldErrorType::NotSupported,
            field,
            Some(value.into()),
            detail,
        )
    }

    /// `field.Forbidden`: body `Forbidden[: detail]`.
    pub fn forbidden(field: impl fmt::Display, detail: impl Into<String>) -> Self {
        Self::with(
            FieldErrorType::Forbidden,
            field,
            Some(Value::String(String::new())),
            detail,
        )
    }

    /// `field.TooLong`: body `Too long: may not be more than <max> bytes`
    /// (`value is too long` when `max_length` is negative). The value is
    /// never printed, as upstream.
    pub fn too_long(field: impl fmt::Display, _value: impl Into<Value>, max_length: i64) -> Self {
        let detail = if max_length >= 0 {
            let unit = if max_length == 1 { "byte" } else { "bytes" };
            format!("may not be more than {max_length} {unit}")
        } else {
            "value is too long".to_string()
        };
        Self::with(
            FieldErrorType::TooLong,
            field,
            Some(Value::String("<value omitted>".to_string())),
            detail,
        )
    }

    /// `field.TooMany`: body `Too many: <actual>: must have at most <max> items`.
    /// A `None` (or negative) actual quantity is omitted; a negative maximum
    /// gives `has too many items`.
    pub fn too_many(field: impl fmt::Display, actual: Option<i64>, max_quantity: i64) -> Self {
        let detail = if max_quantity >= 0 {
            let unit = if max_quantity == 1 { "item" } else { "items" };
            format!("must have at most {max_quantity} {unit}")
        } else {
            "has too many items".to_string()
        };
        let bad = actual.filter(|a| *a >= 0).map(Value::from);
        Self::with(FieldErrorType::TooMany, field, bad, detail)
    }

    /// `field.InternalError`: body `Internal error: <err>`.
    pub fn internal_error(field: impl fmt::Display, err: impl fmt::Display) -> Self {
        Self::with(FieldErrorType::Internal, field, None, err.to_string())
    }

    /// `field.TypeInvalid`: body `Invalid value: <value>: <detail>`.
    pub fn type_invalid(
        field: impl fmt::Display,
        value: impl Into<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self::with(
            FieldErrorType::TypeInvalid,
            field,
            Some(value.into()),
            detail,
        )
    }

    /// The error without its field, as upstream's `ErrorBody()`; this is the
    /// `message` of a Status cause.
    pub fn message_body(&self) -> String {
        let mut s = match self.error_type {
            FieldErrorType::Required
            | FieldErrorType::Forbidden
            | FieldErrorType::TooLong
            | FieldErrorType::Internal => self.error_type.message().to_string(),
            _ => match &self.bad_value {
                None => self.error_type.message().to_string(),
                Some(v) => format!("{}: {}", self.error_type.message(), render_go_value(v)),
            },
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message_body())
    }
}

impl std::error::Error for FieldError {}

/// Upstream's `ErrorList.ToAggregate().Error()`: duplicates (by message) are
/// dropped; one error prints alone, several as `[a, b]`, none as the empty
/// string.
pub fn aggregate_message(errors: &[FieldError]) -> String {
    let msgs: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    aggregate_strings(&msgs)
}

/// Upstream's aggregate-error rendering over plain messages (duplicates
/// dropped; `[a, b]` for several).
pub fn aggregate_strings(messages: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for m in messages {
        if !seen.contains(&m.as_str()) {
            seen.push(m);
        }
    }
    match seen.len() {
        0 => String::new(),
        1 => seen[0].to_string(),
        _ => format!("[{}]", seen.join(", ")),
    }
}

/// Renders a bad value the way upstream's `ErrorBody` prints Go values:
/// strings quoted (`%q`), numbers and booleans plain, `null` for nil, a list
/// of strings as `[]string{"a", "b"}`, other lists and objects in Go's `%#v`
/// syntax for `[]interface {}` / `map[string]interface {}`.
pub fn render_go_value(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => render_number(n),
        Value::String(s) => go_quote(s),
        Value::Array(items) => {
            if items.iter().all(Value::is_string) {
                let parts: Vec<String> = items.iter().map(render_go_value).collect();
                format!("[]string{{{}}}", parts.join(", "))
            } else {
                let parts: Vec<String> = items.iter().map(render_go_interface).collect();
                format!("[]interface {{}}{{{}}}", parts.join(", "))
            }
        }
        Value::Object(_) => render_go_interface(v),
    }
}

/// `%#v` of a value held in an `interface{}` (as decoded by encoding/json).
fn render_go_interface(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".to_string(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(render_go_interface).collect();
            format!("[]interface {{}}{{{}}}", parts.join(", "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| {
                    let val = map.get(k).map(render_go_interface).unwrap_or_default();
                    format!("{}:{}", go_quote(k), val)
                })
                .collect();
            format!("map[string]interface {{}}{{{}}}", parts.join(", "))
        }
        other => render_go_value(other),
    }
}

fn render_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    match n.as_f64() {
        Some(f) => go_format_float(f),
        None => n.to_string(),
    }
}

/// Go's `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`): the
/// shortest representation, in exponent form when the decimal exponent is
/// below -4 or at least 6 (`1e+06`, `1.5`, `1e-05`).
pub fn go_format_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // Rust's `{:e}` gives the shortest round-tripping digits: `d.ddde±x`.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (sci.as_str(), 0),
    };
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let mant = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{mant}e{esign}{:02}", exp.abs());
    }
    let nd = digits.len() as i32;
    let dp = exp + 1; // position of the decimal point relative to the digits
    let body = if dp <= 0 {
        format!("0.{}{}", "0".repeat((-dp) as usize), digits)
    } else if dp >= nd {
        format!("{}{}", digits, "0".repeat((dp - nd) as usize))
    } else {
        let (a, b) = digits.split_at(dp as usize);
        format!("{a}.{b}")
    };
    format!("{sign}{body}")
}

/// Go's `strconv.Quote`: a double-quoted string with Go escapes for quotes,
/// backslashes and non-printable characters.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if is_go_printable(c) => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// An approximation of Go's `unicode.IsPrint`: graphic characters and the
/// ASCII space; no control, format, private-use, or non-ASCII space
/// characters. (Unassigned code points are treated as printable.)
pub fn is_go_printable(c: char) -> bool {
    let u = c as u32;
    if u < 0x80 {
        return (0x20..0x7f).contains(&u);
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    let format_or_private = matches!(u,
        0x00AD
        | 0x0600..=0x0605
        | 0x061C
        | 0x06DD
        | 0x070F
        | 0x0890..=0x0891
        | 0x08E2
        | 0x180E
        | 0x200B..=0x200F
        | 0x202A..=0x202E
        | 0x2060..=0x2064
        | 0x2066..=0x206F
        | 0xFEFF
        | 0xFFF9..=0xFFFB
        | 0x110BD
        | 0x110CD
        | 0x13430..=0x1343F
        | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A
        | 0xE0001
        | 0xE0020..=0xE007F
        | 0xE000..=0xF8FF
        | 0xF0000..=0xFFFFD
        | 0x100000..=0x10FFFD
        | 0xD800..=0xDFFF);
    !format_or_private
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reasons_match_upstream_cause_types() {
        let cases = [
            (FieldErrorType::NotFound, "FieldValueNotFound"),
            (FieldErrorType::Required, "FieldValueRequired"),
            (FieldErrorType::Duplicate, "FieldValueDuplicate"),
            (FieldErrorType::Invalid, "FieldValueInvalid"),
            (FieldErrorType::NotSupported, "FieldValueNotSupported"),
            (FieldErrorType::Forbidden, "FieldValueForbidden"),
            (FieldErrorType::TooLong, "FieldValueTooLong"),
            (FieldErrorType::TooMany, "FieldValueTooMany"),
            (FieldErrorType::Internal, "InternalError"),
            (FieldErrorType::TypeInvalid, "FieldValueTypeInvalid"),
        ];
        for (t, r) in cases {
            assert_eq!(t.reason(), r);
        }
    }

    #[test]
    fn paths_render_like_upstream() {
        let p = FieldPath::new("metadata").child("name").index(0).key("k");
        assert_eq!(p.to_string(), "metadata.name[0][k]");
        assert_eq!(
            FieldPath::new("spec")
                .child("containers")
                .index(1)
                .child("ports")
                .to_string(),
            "spec.containers[1].ports"
        );
        assert_eq!(FieldPath::nil().to_string(), "<nil>");
        assert_eq!(FieldPath::nil().child("values").to_string(), "values");
        assert_eq!(
            FieldPath::nil()
                .child("values")
                .index(0)
                .key("app")
                .to_string(),
            "values[0][app]"
        );
        assert_eq!(FieldPath::nil().index(2).to_string(), "[2]");
        assert!(FieldPath::nil().is_nil());
        assert!(!FieldPath::new("a").is_nil());
    }

    #[test]
    fn required_and_forbidden_bodies() {
        let e = FieldError::required(FieldPath::new("metadata").child("name"), "");
        assert_eq!(e.message_body(), "Required value");
        assert_eq!(e.to_string(), "metadata.name: Required value");
        let e = FieldError::required("metadata.name", "name or generateName is required");
        assert_eq!(
            e.to_string(),
            "metadata.name: Required value: name or generateName is required"
        );
        let e = FieldError::forbidden("metadata.namespace", "not allowed on this type");
        assert_eq!(
            e.to_string(),
            "metadata.namespace: Forbidden: not allowed on this type"
        );
    }

    #[test]
    fn invalid_prints_values_like_go() {
        let e = FieldError::invalid("metadata.name", "Bad_Name", "oops");
        assert_eq!(e.message_body(), "Invalid value: \"Bad_Name\": oops");
        assert_eq!(
            e.to_string(),
            "metadata.name: Invalid value: \"Bad_Name\": oops"
        );
        let e = FieldError::invalid(
            "metadata.generation",
            -1,
            "must be greater than or equal to 0",
        );
        assert_eq!(
            e.message_body(),
            "Invalid value: -1: must be greater than or equal to 0"
        );
        let e = FieldError::invalid("x", true, "");
        assert_eq!(e.message_body(), "Invalid value: true");
        let e = FieldError::invalid("x", Value::Null, "d");
        assert_eq!(e.message_body(), "Invalid value: null: d");
        let e = FieldError::invalid("x", json!(["a", "b"]), "d");
        assert_eq!(e.message_body(), "Invalid value: []string{\"a\", \"b\"}: d");
        let e = FieldError::invalid("x", json!([]), "d");
        assert_eq!(e.message_body(), "Invalid value: []string{}: d");
        let e = FieldError::invalid("x", json!({"b": 1, "a": "x"}), "d");
        assert_eq!(
            e.message_body(),
            "Invalid value: map[string]interface {}{\"a\":\"x\", \"b\":1}: d"
        );
        let e = FieldError::invalid("x", json!([1, "a"]), "d");
        assert_eq!(
            e.message_body(),
            "Invalid value: []interface {}{1, \"a\"}: d"
        );
        let e = FieldError::type_invalid("x", "s", "must be integer");
        assert_eq!(e.message_body(), "Invalid value: \"s\": must be integer");
    }

    #[test]
    fn not_supported_lists_quoted_values() {
        let e = FieldError::not_supported("dryRun", "x", &["All"]);
        assert_eq!(
            e.to_string(),
            "dryRun: Unsupported value: \"x\": supported values: \"All\""
        );
        let e = FieldError::not_supported("spec.policy", "x", &["a", "b"]);
        assert_eq!(
            e.message_body(),
            "Unsupported value: \"x\": supported values: \"a\", \"b\""
        );
        let e = FieldError::not_supported("spec.policy", "x", &[]);
        assert_eq!(e.message_body(), "Unsupported value: \"x\"");
    }

    #[test]
    fn too_long_never_prints_the_value() {
        let e = FieldError::too_long("metadata.annotations", "", 262144);
        assert_eq!(
            e.to_string(),
            "metadata.annotations: Too long: may not be more than 262144 bytes"
        );
        let e = FieldError::too_long("x", "abc", 1);
        assert_eq!(e.message_body(), "Too long: may not be more than 1 byte");
        let e = FieldError::too_long("x", "abc", -1);
        assert_eq!(e.message_body(), "Too long: value is too long");
    }

    #[test]
    fn too_many_duplicate_not_found_internal() {
        let e = FieldError::too_many("spec.items", Some(5), 3);
        assert_eq!(e.message_body(), "Too many: 5: must have at most 3 items");
        let e = FieldError::too_many("spec.items", Some(5), 1);
        assert_eq!(e.message_body(), "Too many: 5: must have at most 1 item");
        let e = FieldError::too_many("spec.items", None, -1);
        assert_eq!(e.message_body(), "Too many: has too many items");
        let e = FieldError::duplicate("spec.ports[1].name", "http");
        assert_eq!(e.message_body(), "Duplicate value: \"http\"");
        let e = FieldError::not_found("spec.x", "y");
        assert_eq!(e.message_body(), "Not found: \"y\"");
        let e = FieldError::internal_error("metadata.name", "boom");
        assert_eq!(e.to_string(), "metadata.name: Internal error: boom");
    }

    #[test]
    fn omitted_value_prints_type_only() {
        let e = FieldError {
            error_type: FieldErrorType::Invalid,
            field: "f".into(),
            bad_value: None,
            detail: "d".into(),
        };
        assert_eq!(e.message_body(), "Invalid value: d");
    }

    #[test]
    fn aggregates_dedupe_and_bracket() {
        let a = FieldError::required("a", "");
        let b = FieldError::required("b", "");
        assert_eq!(aggregate_message(&[]), "");
        assert_eq!(
            aggregate_message(std::slice::from_ref(&a)),
            "a: Required value"
        );
        assert_eq!(
            aggregate_message(&[a.clone(), b.clone(), a.clone()]),
            "[a: Required value, b: Required value]"
        );
        assert_eq!(aggregate_message(&[a.clone(), a]), "a: Required value");
    }

    #[test]
    fn go_quote_escapes() {
        assert_eq!(go_quote("abc"), "\"abc\"");
        assert_eq!(go_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(go_quote("a\nb\tc\u{7}"), "\"a\\nb\\tc\\a\"");
        assert_eq!(go_quote("\u{1}\u{7f}"), "\"\\x01\\x7f\"");
        assert_eq!(go_quote("héllo 世界"), "\"héllo 世界\"");
        assert_eq!(go_quote("\u{a0}\u{200b}"), "\"\\u00a0\\u200b\"");
        assert_eq!(go_quote("\u{e0001}"), "\"\\U000e0001\"");
    }

    #[test]
    fn go_float_formatting() {
        assert_eq!(go_format_float(1.5), "1.5");
        assert_eq!(go_format_float(100000.0), "100000");
        assert_eq!(go_format_float(1000000.0), "1e+06");
        assert_eq!(go_format_float(1234567.0), "1.234567e+06");
        assert_eq!(go_format_float(0.0001), "0.0001");
        assert_eq!(go_format_float(0.00001), "1e-05");
        assert_eq!(go_format_float(-2.25), "-2.25");
        assert_eq!(go_format_float(0.0), "0");
        assert_eq!(render_go_value(&json!(2.5)), "2.5");
    }
}

//! Label selectors (`?labelSelector=`), after upstream's
//! `k8s.io/apimachinery/pkg/labels` (`Parse`, `NewRequirement`) and
//! metav1's `LabelSelectorAsSelector`.
//!
//! Syntax (comma = AND, blanks around tokens ignored):
//! `key`, `!key`, `key=value`, `key==value`, `key!=value`,
//! `key in (a,b)`, `key notin (a,b)`, `key>1`, `key<1`.
//! Keys must be qualified names and values label values; errors carry
//! upstream's messages verbatim, including its `unable to parse
//! requirement: ` prefix where upstream adds it.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

use crate::apimachinery::validation::field_error::{
    aggregate_strings, go_quote, FieldError, FieldPath,
};
use crate::apimachinery::validation::names;

/// A requirement's operator (upstream's `selection.Operator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `key in (a,b)`.
    In,
    /// `key notin (a,b)`.
    NotIn,
    /// `key=value`.
    Equals,
    /// `key==value`.
    DoubleEquals,
    /// `key!=value`.
    NotEquals,
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `key>n`.
    GreaterThan,
    /// `key<n`.
    LessThan,
}

impl Operator {
    /// Upstream's string for the operator (`in`, `notin`, `=`, `==`, `!=`,
    /// `exists`, `!`, `gt`, `lt`).
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::In => "in",
            Operator::NotIn => "notin",
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::Exists => "exists",
            Operator::DoesNotExist => "!",
            Operator::GreaterThan => "gt",
            Operator::LessThan => "lt",
        }
    }
}

/// One requirement of a selector: a key, an operator and its values
/// (sorted and de-duplicated when parsed from a string).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

impl Requirement {
    /// Builds a validated requirement (upstream's `NewRequirement` with a
    /// nil path): the key must be a qualified name, the values count must
    /// suit the operator, `gt`/`lt` values must be integers and every value
    /// a label value. The error is upstream's aggregated message.
    pub fn new(key: &str, operator: Operator, values: Vec<String>) -> Result<Requirement, String> {
        new_requirement(key, operator, values, false)
    }

    /// The label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The operator.
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    fn has_value(&self, v: &str) -> bool {
        self.values.iter().any(|x| x == v)
    }

    /// Whether the requirement holds for `labels` (upstream's
    /// `Requirement.Matches`). Non-string label values compare by their
    /// JSON text.
    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        let lookup = labels.get(&self.key).map(label_value_text);
        self.matches_value(lookup.as_deref())
    }

    /// Whether the requirement holds for the value of its key (`None`: the
    /// label is absent).
    pub fn matches_value(&self, lookup: Option<&str>) -> bool {
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => {
                lookup.is_some_and(|v| self.has_value(v))
            }
            Operator::NotIn | Operator::NotEquals => lookup.is_none_or(|v| !self.has_value(v)),
            Operator::Exists => lookup.is_some(),
            Operator::DoesNotExist => lookup.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let Some(actual) = lookup.and_then(|v| v.parse::<i64>().ok()) else {
                    return false;
                };
                let [wanted] = self.values.as_slice() else {
                    return false;
                };
                let Ok(wanted) = wanted.parse::<i64>() else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    actual > wanted
                } else {
                    actual < wanted
                }
            }
        }
    }
}

fn label_value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.operator == Operator::DoesNotExist {
            f.write_str("!")?;
        }
        f.write_str(&self.key)?;
        let op = match self.operator {
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => " in ",
            Operator::NotIn => " notin ",
            Operator::GreaterThan => ">",
            Operator::LessThan => "<",
            Operator::Exists | Operator::DoesNotExist => return Ok(()),
        };
        f.write_str(op)?;
        let set = matches!(self.operator, Operator::In | Operator::NotIn);
        if set {
            f.write_str("(")?;
        }
        if self.values.len() == 1 {
            f.write_str(&self.values[0])?;
        } else {
            let mut sorted = self.values.clone();
            sorted.sort();
            f.write_str(&sorted.join(","))?;
        }
        if set {
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// A parsed label selector: an AND of requirements, or upstream's
/// "nothing" selector (from a null `metav1.LabelSelector`) that matches no
/// object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
    nothing: bool,
}

impl LabelSelector {
    /// The selector that matches everything.
    pub fn everything() -> Self {
        LabelSelector::default()
    }

    /// The selector that matches nothing.
    pub fn nothing() -> Self {
        LabelSelector {
            requirements: Vec::new(),
            nothing: true,
        }
    }

    /// Parses a selector string as upstream's `labels.Parse`; the error is
    /// upstream's full message, e.g. `unable to parse requirement: <nil>:
    /// Invalid value: "-a": ...` or `found '', expected: identifier after ','`.
    pub fn parse(selector: &str) -> Result<LabelSelector, String> {
        let mut parser = Parser::new(selector);
        let mut requirements = parser.parse()?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector {
            requirements,
            nothing: false,
        })
    }

    /// Whether the selector places no restriction (false for "nothing").
    pub fn is_empty(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }

    /// Whether this is the "nothing" selector.
    pub fn matches_nothing(&self) -> bool {
        self.nothing
    }

    /// The requirements, sorted by key.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether `labels` (an object's `metadata.labels`; absent labels are an
    /// empty map) satisfy every requirement.
    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Like [`LabelSelector::matches`], with labels looked up by `get`
    /// (cached objects keep their labels outside JSON).
    pub fn matches_with<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        !self.nothing
            && self
                .requirements
                .iter()
                .all(|r| r.matches_value(get(&r.key)))
    }

    /// If the selector requires `key` to have one specific value (through
    /// `=`, `==` or a one-value `in`), that value (upstream's
    /// `RequiresExactMatch`; only the first requirement on `key` counts).
    pub fn requires_exact_match(&self, key: &str) -> Option<&str> {
        let r = self.requirements.iter().find(|r| r.key == key)?;
        match (r.operator, r.values.as_slice()) {
            (Operator::Equals | Operator::DoubleEquals | Operator::In, [v]) => Some(v),
            _ => None,
        }
    }

    /// Converts a `metav1.LabelSelector` JSON object (see
    /// [`from_label_selector_json`]).
    pub fn from_json(v: &Value) -> Result<LabelSelector, String> {
        from_label_selector_json(v)
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for LabelSelector {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LabelSelector::parse(s)
    }
}

/// Converts a `metav1.LabelSelector` JSON object as upstream's
/// `LabelSelectorAsSelector`: `null` matches nothing, an empty selector
/// everything; `matchLabels` become `=` requirements and `matchExpressions`
/// (`In`, `NotIn`, `Exists`, `DoesNotExist`) the matching operators.
/// Errors are upstream's (`"Foo" is not a valid pod selector operator`, or
/// the requirement's validation message, e.g. `key: Invalid value: ...`).
pub fn from_label_selector_json(v: &Value) -> Result<LabelSelector, String> {
    let obj = match v {
        Value::Null => return Ok(LabelSelector::nothing()),
        Value::Object(o) => o,
        other => return Err(format!("label selector must be an object, not {other}")),
    };
    let match_labels = match obj.get("matchLabels") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m),
        Some(other) => return Err(format!("matchLabels must be an object, not {other}")),
    };
    let match_expressions = match obj.get("matchExpressions") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(a),
        Some(other) => return Err(format!("matchExpressions must be a list, not {other}")),
    };
    let count = match_labels.map_or(0, Map::len) + match_expressions.map_or(0, Vec::len);
    if count == 0 {
        return Ok(LabelSelector::everything());
    }
    let mut requirements = Vec::with_capacity(count);
    for (k, val) in match_labels.into_iter().flatten() {
        let val = match val {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => return Err(format!("matchLabels values must be strings, not {other}")),
        };
        requirements.push(new_requirement(k, Operator::Equals, vec![val], false)?);
    }
    for expr in match_expressions.into_iter().flatten() {
        let key = expr.get("key").and_then(Value::as_str).unwrap_or("");
        let op_str = expr.get("operator").and_then(Value::as_str).unwrap_or("");
        let op = match op_str {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            other => {
                return Err(format!(
                    "{} is not a valid pod selector operator",
                    go_quote(other)
                ))
            }
        };
        let values: Vec<String> = expr
            .get("values")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(label_value_text).collect())
            .unwrap_or_default();
        // `append([]string(nil), values...)` is nil when empty.
        let is_nil = values.is_empty();
        requirements.push(new_requirement(key, op, values, is_nil)?);
    }
    requirements.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(LabelSelector {
        requirements,
        nothing: false,
    })
}

/// `%#v` of a Go `[]string` (nil renders as `[]string(nil)`).
fn render_string_slice(values: &[String], is_nil: bool) -> String {
    if is_nil && values.is_empty() {
        return "[]string(nil)".to_string();
    }
    let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

fn validate_label_key(key: &str, path: &FieldPath) -> Option<String> {
    let errs = names::is_qualified_name(key);
    if errs.is_empty() {
        None
    } else {
        Some(FieldError::invalid(path, key, errs.join("; ")).to_string())
    }
}

/// Upstream's `NewRequirement` with a nil path; `values_nil` renders an
/// empty value list as Go's nil slice in messages.
fn new_requirement(
    key: &str,
    operator: Operator,
    values: Vec<String>,
    values_nil: bool,
) -> Result<Requirement, String> {
    let path = FieldPath::nil();
    let mut errs: Vec<String> = Vec::new();
    if let Some(e) = validate_label_key(key, &path.child("key")) {
        errs.push(e);
    }
    let value_path = path.child("values");
    let invalid_values = |detail: &str| {
        format!(
            "{value_path}: Invalid value: {}: {detail}",
            render_string_slice(&values, values_nil)
        )
    };
    match operator {
        Operator::In | Operator::NotIn => {
            if values.is_empty() {
                errs.push(invalid_values(
                    "for 'in', 'notin' operators, values set can't be empty",
                ));
            }
        }
        Operator::Equals | Operator::DoubleEquals | Operator::NotEquals => {
            if values.len() != 1 {
                errs.push(invalid_values(
                    "exact-match compatibility requires one single value",
                ));
            }
        }
        Operator::Exists | Operator::DoesNotExist => {
            if !values.is_empty() {
                errs.push(invalid_values(
                    "values set must be empty for exists and does not exist",
                ));
            }
        }
        Operator::GreaterThan | Operator::LessThan => {
            if values.len() != 1 {
                errs.push(invalid_values(
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                ));
            }
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(
                        FieldError::invalid(
                            value_path.index(i),
                            v.as_str(),
                            "for 'Gt', 'Lt' operators, the value must be an integer",
                        )
                        .to_string(),
                    );
                }
            }
        }
    }
    for (i, v) in values.iter().enumerate() {
        let msgs = names::is_valid_label_value(v);
        if !msgs.is_empty() {
            errs.push(
                FieldError::invalid(value_path.index(i).key(key), v.as_str(), msgs.join("; "))
                    .to_string(),
            );
        }
    }
    if errs.is_empty() {
        Ok(Requirement {
            key: key.to_string(),
            operator,
            values,
        })
    } else {
        Err(aggregate_strings(&errs))
    }
}

// ---------------------------------------------------------------------------
// Lexer and parser, a port of upstream's hand-written recursive descent.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(lit: &[u8]) -> Option<Token> {
    Some(match lit {
        b")" => Token::ClosedPar,
        b"," => Token::Comma,
        b"!" => Token::DoesNotExist,
        b"==" => Token::DoubleEquals,
        b"=" => Token::Equals,
        b">" => Token::GreaterThan,
        b"in" => Token::In,
        b"<" => Token::LessThan,
        b"!=" => Token::NotEquals,
        b"notin" => Token::NotIn,
        b"(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special_symbol(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    /// The next byte, or 0 at the end (as upstream, a NUL byte also ends a token).
    fn read(&mut self) -> u8 {
        match self.s.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b
            }
            None => 0,
        }
    }

    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    fn scan_id_or_keyword(&mut self) -> (Token, String) {
        let mut buf = Vec::new();
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if is_special_symbol(ch) || is_whitespace(ch) {
                self.unread();
                break;
            }
            buf.push(ch);
        }
        let lit = String::from_utf8_lossy(&buf).into_owned();
        match keyword(&buf) {
            Some(tok) => (tok, lit),
            None => (Token::Identifier, lit),
        }
    }

    fn scan_special_symbol(&mut self) -> (Token, String) {
        let mut last: Option<(Token, String)> = None;
        let mut buf = Vec::new();
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if is_special_symbol(ch) {
                buf.push(ch);
                if let Some(tok) = keyword(&buf) {
                    last = Some((tok, String::from_utf8_lossy(&buf).into_owned()));
                } else if last.is_some() {
                    self.unread();
                    break;
                }
            } else {
                self.unread();
                break;
            }
        }
        match last {
            Some(item) => item,
            None => (
                Token::Error,
                format!(
                    "error expected: keyword found '{}'",
                    String::from_utf8_lossy(&buf)
                ),
            ),
        }
    }

    fn lex(&mut self) -> (Token, String) {
        let mut ch = self.read();
        while is_whitespace(ch) {
            ch = self.read();
        }
        if ch == 0 {
            return (Token::EndOfString, String::new());
        }
        self.unread();
        if is_special_symbol(ch) {
            self.scan_special_symbol()
        } else {
            self.scan_id_or_keyword()
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
}

const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

impl Parser {
    fn new(selector: &str) -> Parser {
        let mut lexer = Lexer {
            s: selector.as_bytes(),
            pos: 0,
        };
        let mut items = Vec::new();
        loop {
            let item = lexer.lex();
            let end = item.0 == Token::EndOfString;
            items.push(item);
            if end {
                break;
            }
        }
        Parser { items, position: 0 }
    }

    fn item(&self, index: usize, ctx: Context) -> (Token, String) {
        let (tok, lit) = self
            .items
            .get(index)
            .cloned()
            .unwrap_or((Token::EndOfString, String::new()));
        let tok = match (ctx, tok) {
            (Context::Values, Token::In | Token::NotIn) => Token::Identifier,
            (_, t) => t,
        };
        (tok, lit)
    }

    fn lookahead(&self, ctx: Context) -> (Token, String) {
        self.item(self.position, ctx)
    }

    fn consume(&mut self, ctx: Context) -> (Token, String) {
        let item = self.item(self.position, ctx);
        self.position += 1;
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ))
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let (key, operator) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (Operator::Exists | Operator::DoesNotExist)) = operator {
            return new_requirement(&key, op, Vec::new(), false);
        }
        let operator = self.parse_operator()?;
        let values = match operator {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        new_requirement(&key, operator, values.into_iter().collect(), false)
    }

    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let mut operator = None;
        let (mut tok, mut lit) = self.consume(Context::Values);
        if tok == Token::DoesNotExist {
            operator = Some(Operator::DoesNotExist);
            (tok, lit) = self.consume(Context::Values);
        }
        if tok != Token::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        if let Some(e) = validate_label_key(&lit, &FieldPath::nil()) {
            return Err(e);
        }
        let (t, _) = self.lookahead(Context::Values);
        if (t == Token::EndOfString || t == Token::Comma) && operator.is_none() {
            operator = Some(Operator::Exists);
        }
        Ok((lit, operator))
    }

    fn parse_operator(&mut self) -> Result<Operator, String> {
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        Ok(match tok {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => return Err(format!("found '{lit}', expected: {BINARY_OPERATORS}")),
        })
    }

    fn parse_values(&mut self) -> Result<BTreeSet<String>, String> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let set = self.parse_identifiers_list()?;
                let (tok, _) = self.consume(Context::Values);
                if tok != Token::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(set)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(BTreeSet::from([String::new()]))
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<BTreeSet<String>, String> {
        let mut set = BTreeSet::new();
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Token::Identifier => {
                    set.insert(lit);
                    let (tok2, lit2) = self.lookahead(Context::Values);
                    match tok2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(set),
                        _ => return Err(format!("found '{lit2}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    let (tok2, _) = self.lookahead(Context::Values);
                    if tok2 == Token::ClosedPar {
                        set.insert(String::new());
                        return Ok(set);
                    }
                    if tok2 == Token::Comma {
                        set.insert(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<BTreeSet<String>, String> {
        let (tok, _) = self.lookahead(Context::Values);
        if tok == Token::EndOfString || tok == Token::Comma {
            return Ok(BTreeSet::from([String::new()]));
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Token::Identifier {
            Ok(BTreeSet::from([lit]))
        } else {
            Err(format!("found '{lit}', expected: identifier"))
        }
    }
}

#[cfg(test)]
#[path = "labels_tests.rs"]
mod tests;

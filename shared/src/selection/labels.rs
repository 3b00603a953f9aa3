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

use crate::registry::validation::field_error::{
    aggregate_strings, go_quote, FieldError, FieldPath,
};
use crate::registry::validation::names;

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
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn parse(s: &str) -> LabelSelector {
        match LabelSelector::parse(s) {
            Ok(sel) => sel,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    #[test]
    fn parses_good_selectors() {
        for s in [
            "x=a,y=b,z=c",
            "",
            "x!=a,y=b",
            "x=",
            "x= ",
            "x=,z= ",
            "x= ,z= ",
            "!x",
            "x>1",
            "x>1,z<5",
            "x in (a)",
            "x notin (a,b)",
            "x in ()",
            "x in (,a)",
            "x in (a,)",
            "x in (a,,b)",
            "in in (in)",
            "notin notin (notin)",
            "  x  =  a  ",
            "example.com/key=value",
            "x\t=\ta",
        ] {
            assert!(
                LabelSelector::parse(s).is_ok(),
                "{s}: {:?}",
                LabelSelector::parse(s)
            );
        }
    }

    #[test]
    fn canonical_string_forms() {
        let cases = [
            ("x=a,y=b,z=c", "x=a,y=b,z=c"),
            ("z=c,y=b,x=a", "x=a,y=b,z=c"),
            ("x==a", "x==a"),
            ("x!=a", "x!=a"),
            ("x in (b,a,b)", "x in (a,b)"),
            ("x notin (c)", "x notin (c)"),
            ("x in ()", "x in ()"),
            ("x in (,a)", "x in (,a)"),
            ("!x", "!x"),
            ("x", "x"),
            ("x>1", "x>1"),
            ("x<1", "x<1"),
            ("x=", "x="),
            ("  a   ,  !b  ", "a,!b"),
            ("b,a", "a,b"),
            ("", ""),
        ];
        for (input, canonical) in cases {
            assert_eq!(parse(input).to_string(), canonical, "{input}");
        }
    }

    #[test]
    fn syntax_errors_use_upstream_messages() {
        let cases = [
            ("x=a,", "found '', expected: identifier after ','"),
            ("x=a,,y=b", "found ',', expected: identifier after ','"),
            (
                ",x=a",
                "found ',', expected: !, identifier, or 'end of string'",
            ),
            (
                "x in a",
                "unable to parse requirement: found 'a' expected: '('",
            ),
            (
                "x in (a",
                "unable to parse requirement: found '', expected: ',' or ')'",
            ),
            (
                "x in (a b)",
                "unable to parse requirement: found 'b', expected: ',' or ')'",
            ),
            (
                "x in (=)",
                "unable to parse requirement: found '=', expected: ',', ')' or identifier",
            ),
            (
                "x in (a,=)",
                "unable to parse requirement: found '=', expected: ',', or identifier",
            ),
            (
                "x y",
                "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt",
            ),
            (
                "x=(a)",
                "unable to parse requirement: found '(', expected: identifier",
            ),
            (
                "!",
                "unable to parse requirement: found '', expected: identifier",
            ),
            ("!x=a", "found '=', expected: ',' or 'end of string'"),
            ("x=a y=b", "found 'y', expected: ',' or 'end of string'"),
            (
                "=a",
                "found '=', expected: !, identifier, or 'end of string'",
            ),
            (
                "x>=1",
                "unable to parse requirement: found '=', expected: identifier",
            ),
        ];
        for (input, msg) in cases {
            assert_eq!(LabelSelector::parse(input), Err(msg.to_string()), "{input}");
        }
    }

    #[test]
    fn validation_errors_use_upstream_messages() {
        assert_eq!(
            LabelSelector::parse("-x=a"),
            Err("unable to parse requirement: <nil>: Invalid value: \"-x\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".to_string())
        );
        assert_eq!(
            LabelSelector::parse("x=-a"),
            Err("unable to parse requirement: values[0][x]: Invalid value: \"-a\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".to_string())
        );
        assert_eq!(
            LabelSelector::parse("x>a"),
            Err("unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer".to_string())
        );
        let err = LabelSelector::parse("x<-a-").unwrap_err();
        assert!(err.starts_with("unable to parse requirement: [values[0]: Invalid value: \"-a-\": for 'Gt', 'Lt' operators, the value must be an integer, values[0][x]: Invalid value: \"-a-\": a valid label"), "{err}");
        assert!(err.ends_with("')]"), "{err}");
        let long = "a".repeat(64);
        assert_eq!(
            LabelSelector::parse(&format!("x={long}")),
            Err(format!("unable to parse requirement: values[0][x]: Invalid value: \"{long}\": must be no more than 63 characters"))
        );
        // Multiple key problems are joined with "; ".
        let err = LabelSelector::parse(&format!("{}-", "a".repeat(64))).unwrap_err();
        assert!(
            err.contains("name part must be no more than 63 characters; name part must consist"),
            "{err}"
        );
    }

    #[test]
    fn keywords_are_values_in_value_context() {
        let sel = parse("in in (in, notin)");
        assert_eq!(sel.requirements()[0].key(), "in");
        assert_eq!(sel.requirements()[0].operator(), Operator::In);
        assert_eq!(
            sel.requirements()[0].values(),
            &["in".to_string(), "notin".to_string()]
        );
        let sel = parse("x=in");
        assert_eq!(sel.requirements()[0].values(), &["in".to_string()]);
    }

    #[test]
    fn operator_inference() {
        let r = |s: &str| parse(s).requirements()[0].operator();
        assert_eq!(r("x"), Operator::Exists);
        assert_eq!(r("!x"), Operator::DoesNotExist);
        assert_eq!(r("x=a"), Operator::Equals);
        assert_eq!(r("x==a"), Operator::DoubleEquals);
        assert_eq!(r("x!=a"), Operator::NotEquals);
        assert_eq!(r("x in (a)"), Operator::In);
        assert_eq!(r("x notin (a)"), Operator::NotIn);
        assert_eq!(r("x>1"), Operator::GreaterThan);
        assert_eq!(r("x<1"), Operator::LessThan);
        assert_eq!(parse("x=").requirements()[0].values(), &[String::new()]);
    }

    #[test]
    fn matching_follows_upstream() {
        let ls = labels(json!({"x": "a", "n": "5", "s": "abc"}));
        let yes = [
            "",
            "x",
            "x=a",
            "x==a",
            "x!=b",
            "y!=b",
            "!y",
            "x in (a,b)",
            "x notin (b)",
            "y notin (b)",
            "n>4",
            "n<6",
            "x=a,n>1",
        ];
        let no = [
            "y",
            "!x",
            "x=b",
            "x!=a",
            "x in (b)",
            "x notin (a)",
            "y in (a)",
            "n>5",
            "n<5",
            "s>1",
            "y>1",
            "x=a,n>9",
        ];
        for s in yes {
            assert!(parse(s).matches(&ls), "{s}");
        }
        for s in no {
            assert!(!parse(s).matches(&ls), "{s}");
        }
        assert!(parse("x=").matches(&labels(json!({"x": ""}))));
        assert!(!parse("x=").matches(&Map::new()));
        assert!(parse("!x").matches(&Map::new()));
    }

    #[test]
    fn empty_and_nothing() {
        assert!(parse("").is_empty());
        assert!(LabelSelector::everything().is_empty());
        assert!(LabelSelector::everything().matches(&Map::new()));
        let n = LabelSelector::nothing();
        assert!(!n.is_empty());
        assert!(n.matches_nothing());
        assert!(!n.matches(&Map::new()));
        assert_eq!(n.to_string(), "");
    }

    #[test]
    fn exact_match() {
        let sel = parse("a=1,b in (2),c in (3,4),d!=5,e==6");
        assert_eq!(sel.requires_exact_match("a"), Some("1"));
        assert_eq!(sel.requires_exact_match("b"), Some("2"));
        assert_eq!(sel.requires_exact_match("c"), None);
        assert_eq!(sel.requires_exact_match("d"), None);
        assert_eq!(sel.requires_exact_match("e"), Some("6"));
        assert_eq!(sel.requires_exact_match("z"), None);
    }

    #[test]
    fn from_json_selector() {
        assert!(from_label_selector_json(&Value::Null).is_ok_and(|s| s.matches_nothing()));
        assert!(from_label_selector_json(&json!({})).is_ok_and(|s| s.is_empty()));
        assert!(from_label_selector_json(&json!({"matchLabels": {}})).is_ok_and(|s| s.is_empty()));
        let sel = from_label_selector_json(&json!({
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["fe", "be"]},
                {"key": "env", "operator": "NotIn", "values": ["prod"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "app", "operator": "Exists"}
            ]
        }))
        .unwrap_or_default();
        assert_eq!(
            sel.to_string(),
            "app=web,app,!canary,env notin (prod),tier in (be,fe)"
        );
        assert!(sel.matches(&labels(json!({"app": "web", "tier": "fe"}))));
        assert!(!sel.matches(&labels(json!({"app": "web", "tier": "fe", "canary": "1"}))));
        assert!(!sel.matches(&labels(json!({"app": "db", "tier": "fe"}))));
    }

    #[test]
    fn from_json_errors() {
        assert_eq!(
            from_label_selector_json(
                &json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})
            ),
            Err("\"Gt\" is not a valid pod selector operator".to_string())
        );
        assert_eq!(
            from_label_selector_json(&json!({"matchExpressions": [{"key": "a", "operator": "In"}]})),
            Err("values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty".to_string())
        );
        assert_eq!(
            from_label_selector_json(&json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})),
            Err("values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not exist".to_string())
        );
        let err = from_label_selector_json(&json!({"matchLabels": {"-a": "b"}})).unwrap_err();
        assert!(
            err.starts_with("key: Invalid value: \"-a\": name part must consist"),
            "{err}"
        );
        let err = from_label_selector_json(&json!({"matchLabels": {"a": "-b"}})).unwrap_err();
        assert!(
            err.starts_with("values[0][a]: Invalid value: \"-b\": a valid label"),
            "{err}"
        );
        assert!(from_label_selector_json(&json!("x")).is_err());
        assert!(from_label_selector_json(&json!({"matchLabels": {"a": 1}})).is_err());
    }

    #[test]
    fn requirement_constructor() {
        let r = Requirement::new("a", Operator::Equals, vec!["b".into()]);
        assert!(r.is_ok_and(|r| r.to_string() == "a=b"));
        assert_eq!(
            Requirement::new("a", Operator::Equals, vec![]),
            Err("values: Invalid value: []string{}: exact-match compatibility requires one single value".to_string())
        );
        assert_eq!(
            Requirement::new("a", Operator::GreaterThan, vec!["1".into(), "2".into()]),
            Err("values: Invalid value: []string{\"1\", \"2\"}: for 'Gt', 'Lt' operators, exactly one value is required".to_string())
        );
        assert_eq!(Operator::GreaterThan.as_str(), "gt");
    }
}

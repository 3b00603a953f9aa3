//! Field selectors (`?fieldSelector=`), after upstream's
//! `k8s.io/apimachinery/pkg/fields` (`ParseSelector`).
//!
//! Syntax: comma-separated terms ANDed together, each `field=value`,
//! `field==value` or `field!=value`. In values, `\,`, `\=` and `\\` escape
//! `,`, `=` and `\`; any other escape, or an unescaped `,`/`=` inside a
//! value, is an error. Field names are taken literally up to the first
//! operator.

use std::fmt;

/// The comparison of one term.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldOperator {
    /// `=` or `==`: the field equals the value.
    Equals,
    /// `!=`: the field differs from the value.
    NotEquals,
}

/// One `field<op>value` term (the value unescaped).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldTerm {
    /// The field path, e.g. `metadata.name`.
    pub field: String,
    /// The comparison.
    pub operator: FieldOperator,
    /// The literal (unescaped) value.
    pub value: String,
}

impl FieldTerm {
    /// Whether the term holds for a field whose value is `actual` (an absent
    /// field reads as the empty string, as upstream's `Fields.Get`).
    pub fn matches(&self, actual: &str) -> bool {
        match self.operator {
            FieldOperator::Equals => actual == self.value,
            FieldOperator::NotEquals => actual != self.value,
        }
    }
}

impl fmt::Display for FieldTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.operator {
            FieldOperator::Equals => "=",
            FieldOperator::NotEquals => "!=",
        };
        write!(f, "{}{}{}", self.field, op, escape_value(&self.value))
    }
}

/// A parsed field selector: an AND of terms. The empty selector matches
/// everything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FieldSelector {
    terms: Vec<FieldTerm>,
}

impl FieldSelector {
    /// The selector that matches everything.
    pub fn everything() -> Self {
        FieldSelector::default()
    }

    /// A selector of the single term `field=value`.
    pub fn one_term_equal(field: &str, value: &str) -> Self {
        FieldSelector {
            terms: vec![FieldTerm {
                field: field.to_string(),
                operator: FieldOperator::Equals,
                value: value.to_string(),
            }],
        }
    }

    /// Parses a selector as upstream's `fields.ParseSelector`; the error is
    /// upstream's message (e.g. `invalid selector: 'a'; can't understand 'a'`).
    pub fn parse(selector: &str) -> Result<FieldSelector, String> {
        let mut parts = split_terms(selector);
        parts.sort();
        let mut terms = Vec::new();
        for part in parts {
            if part.is_empty() {
                continue;
            }
            let Some((lhs, op, rhs)) = split_term(part) else {
                return Err(format!(
                    "invalid selector: '{selector}'; can't understand '{part}'"
                ));
            };
            let value = unescape_value(rhs)?;
            // Upstream's identity Transform drops terms whose field and value
            // are both empty.
            if lhs.is_empty() && value.is_empty() {
                continue;
            }
            terms.push(FieldTerm {
                field: lhs.to_string(),
                operator: op,
                value,
            });
        }
        Ok(FieldSelector { terms })
    }

    /// Whether the selector places no restriction.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The terms, in canonical (sorted) order.
    pub fn terms(&self) -> &[FieldTerm] {
        &self.terms
    }

    /// The fields the selector refers to, in term order (possibly repeated).
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.terms.iter().map(|t| t.field.as_str())
    }

    /// If a term requires `field` to equal a single value, that value
    /// (upstream's `RequiresExactMatch`; `!=` terms never qualify).
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.terms
            .iter()
            .find(|t| t.field == field && t.operator == FieldOperator::Equals)
            .map(|t| t.value.as_str())
    }

    /// Whether every term holds; `get` returns a field's value, `None` for
    /// an absent field (compared as the empty string, as upstream).
    pub fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        self.terms
            .iter()
            .all(|t| t.matches(&get(&t.field).unwrap_or_default()))
    }

    /// Rewrites every term's field and value (upstream's `Transform`), e.g.
    /// to map legacy field names; a term rewritten to an empty field and
    /// value is dropped.
    pub fn transform(
        &self,
        f: impl Fn(&str, &str) -> Result<(String, String), String>,
    ) -> Result<FieldSelector, String> {
        let mut terms = Vec::with_capacity(self.terms.len());
        for t in &self.terms {
            let (field, value) = f(&t.field, &t.value)?;
            if field.is_empty() && value.is_empty() {
                continue;
            }
            terms.push(FieldTerm {
                field,
                operator: t.operator,
                value,
            });
        }
        Ok(FieldSelector { terms })
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{t}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for FieldSelector {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FieldSelector::parse(s)
    }
}

/// Escapes `\`, `,` and `=` in a value (upstream's `EscapeValue`).
pub fn escape_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Unescapes a value (upstream's `UnescapeValue`), with upstream's errors.
pub fn unescape_value(s: &str) -> Result<String, String> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            match c {
                '\\' | ',' | '=' => out.push(c),
                _ => {
                    return Err(format!(
                        "invalid field selector: invalid escape sequence: \\{c}"
                    ))
                }
            }
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            // Go prints the rune with %v, i.e. as its code point number.
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                ))
            }
            _ => out.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_string());
    }
    Ok(out)
}

/// Splits on commas not escaped by a backslash (escapes kept).
fn split_terms(selector: &str) -> Vec<&str> {
    if selector.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in selector.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&selector[start..i]);
            start = i + 1;
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// Splits a term at the first operator (`!=`, `==`, then `=` at each position).
fn split_term(term: &str) -> Option<(&str, FieldOperator, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for (op, kind) in [
            ("!=", FieldOperator::NotEquals),
            ("==", FieldOperator::Equals),
            ("=", FieldOperator::Equals),
        ] {
            if let Some(rhs) = rest.strip_prefix(op) {
                return Some((&term[..i], kind, rhs));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> FieldSelector {
        match FieldSelector::parse(s) {
            Ok(sel) => sel,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    #[test]
    fn parses_valid_selectors() {
        let cases = [
            ("", ""),
            ("a=b", "a=b"),
            ("a==b", "a=b"),
            ("a!=b", "a!=b"),
            ("x=a,y=b,z=c", "x=a,y=b,z=c"),
            ("z=c,x=a,y=b", "x=a,y=b,z=c"),
            ("x=a||y,y=b", "x=a||y,y=b"),
            ("x=,z= ", "x=,z= "),
            ("x= ,z= ", "x= ,z= "),
            ("!x=a", "!x=a"),
            ("x=a,", "x=a"),
            (",x=a", "x=a"),
            ("a=b\\,c", "a=b\\,c"),
            ("a=b\\=c", "a=b\\=c"),
            ("a=b\\\\c", "a=b\\\\c"),
            (
                "metadata.name=foo,status.phase!=Running",
                "metadata.name=foo,status.phase!=Running",
            ),
            ("=", ""),
        ];
        for (input, canonical) in cases {
            assert_eq!(parse(input).to_string(), canonical, "{input}");
        }
    }

    #[test]
    fn unescapes_values() {
        let sel = parse("a=b\\,c\\=d\\\\e");
        assert_eq!(sel.terms()[0].value, "b,c=d\\e");
        assert_eq!(sel.to_string(), "a=b\\,c\\=d\\\\e");
        assert_eq!(escape_value("a,b=c\\"), "a\\,b\\=c\\\\");
        assert_eq!(unescape_value("plain"), Ok("plain".to_string()));
    }

    #[test]
    fn rejects_invalid_selectors_with_upstream_messages() {
        assert_eq!(
            FieldSelector::parse("a"),
            Err("invalid selector: 'a'; can't understand 'a'".to_string())
        );
        assert_eq!(
            FieldSelector::parse("x=a,b"),
            Err("invalid selector: 'x=a,b'; can't understand 'b'".to_string())
        );
        assert_eq!(
            FieldSelector::parse("metadata.name=name1,foo"),
            Err("invalid selector: 'metadata.name=name1,foo'; can't understand 'foo'".to_string())
        );
        assert_eq!(
            FieldSelector::parse("a=b=c"),
            Err("invalid field selector: unescaped character in value: 61".to_string())
        );
        assert_eq!(
            FieldSelector::parse("a!==b"),
            Err("invalid field selector: unescaped character in value: 61".to_string())
        );
        assert_eq!(
            FieldSelector::parse("a=b\\x"),
            Err("invalid field selector: invalid escape sequence: \\x".to_string())
        );
        assert_eq!(
            FieldSelector::parse("a=b\\!"),
            Err("invalid field selector: invalid escape sequence: \\!".to_string())
        );
        assert_eq!(
            FieldSelector::parse("a=b\\"),
            Err("invalid field selector: invalid escape sequence: \\".to_string())
        );
    }

    #[test]
    fn exact_match_and_fields() {
        let sel = parse("metadata.name=foo,spec.nodeName!=n1");
        assert_eq!(sel.requires_exact_match("metadata.name"), Some("foo"));
        assert_eq!(sel.requires_exact_match("spec.nodeName"), None);
        assert_eq!(sel.requires_exact_match("other"), None);
        assert_eq!(
            sel.fields().collect::<Vec<_>>(),
            vec!["metadata.name", "spec.nodeName"]
        );
        assert!(!sel.is_empty());
        assert!(parse("").is_empty());
        assert!(FieldSelector::everything().is_empty());
        assert_eq!(
            FieldSelector::one_term_equal("a", "b,c").to_string(),
            "a=b\\,c"
        );
    }

    #[test]
    fn matching() {
        let sel = parse("metadata.name=foo,status.phase!=Running");
        let get = |phase: &'static str| {
            move |f: &str| match f {
                "metadata.name" => Some("foo".to_string()),
                "status.phase" => Some(phase.to_string()),
                _ => None,
            }
        };
        assert!(sel.matches(get("Pending")));
        assert!(!sel.matches(get("Running")));
        // Absent fields compare as "".
        assert!(parse("spec.x=").matches(|_| None));
        assert!(!parse("spec.x=y").matches(|_| None));
        assert!(parse("spec.x!=y").matches(|_| None));
        assert!(parse("").matches(|_| None));
    }

    #[test]
    fn transform_rewrites_and_drops() {
        let sel = parse("spec.host=n1,drop=me");
        let out = sel
            .transform(|f, v| match f {
                "spec.host" => Ok(("spec.nodeName".to_string(), v.to_string())),
                "drop" => Ok((String::new(), String::new())),
                _ => Err(format!("{f:?} is not a known field selector")),
            })
            .unwrap_or_default();
        assert_eq!(out.to_string(), "spec.nodeName=n1");
        assert!(parse("bad=x")
            .transform(|_, _| Err("no".to_string()))
            .is_err());
    }
}

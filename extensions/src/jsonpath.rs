//! The subset of kubectl's JSONPath used by printer columns and scale paths:
//! `.a.b`, `.a[0]`, `.a[*].b`, `.a[?(@.type=="Ready")].status`, with
//! `\.` escaping dots in keys (`.metadata.labels.app\.kubernetes\.io/name`).

use serde_json::Value;

/// One step of a path.
#[derive(Clone, Debug, PartialEq)]
enum Step {
    Field(String),
    Index(usize),
    All,
    /// `[?(@.<path>=="<value>")]` (also `!=`).
    Filter(Vec<String>, bool, Value),
}

/// A parsed JSONPath.
#[derive(Clone, Debug)]
pub struct JsonPath {
    steps: Vec<Step>,
}

impl JsonPath {
    /// Parses `{.a.b}` or `.a.b`; an error says what is unsupported.
    pub fn parse(src: &str) -> Result<JsonPath, String> {
        let s = src.trim();
        let s = s
            .strip_prefix('{')
            .and_then(|x| x.strip_suffix('}'))
            .unwrap_or(s);
        let s = s.strip_prefix('$').unwrap_or(s);
        let chars: Vec<char> = s.chars().collect();
        let mut steps = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '.' => {
                    i += 1;
                    let mut key = String::new();
                    while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                        if chars[i] == '\\' && i + 1 < chars.len() {
                            i += 1;
                        }
                        key.push(chars[i]);
                        i += 1;
                    }
                    if !key.is_empty() {
                        steps.push(Step::Field(key));
                    }
                }
                '[' => {
                    let end =
                        find_close(&chars, i).ok_or_else(|| format!("unclosed [ in {src}"))?;
                    let inner: String = chars[i + 1..end].iter().collect();
                    steps.push(parse_bracket(inner.trim(), src)?);
                    i = end + 1;
                }
                c => return Err(format!("unexpected {c:?} in {src}")),
            }
        }
        Ok(JsonPath { steps })
    }

    /// Every value the path selects.
    pub fn find<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        let mut cur = vec![root];
        for step in &self.steps {
            let mut next = Vec::new();
            for v in cur {
                match step {
                    Step::Field(k) => {
                        if let Some(x) = v.get(k) {
                            next.push(x);
                        }
                    }
                    Step::Index(n) => {
                        if let Some(x) = v.get(*n) {
                            next.push(x);
                        }
                    }
                    Step::All => match v {
                        Value::Array(a) => next.extend(a.iter()),
                        Value::Object(m) => next.extend(m.values()),
                        _ => {}
                    },
                    Step::Filter(path, eq, want) => {
                        if let Value::Array(a) = v {
                            for item in a {
                                let got = path.iter().try_fold(item, |x, k| x.get(k));
                                if (got == Some(want)) == *eq {
                                    next.push(item);
                                }
                            }
                        }
                    }
                }
            }
            cur = next;
        }
        cur
    }
}

fn find_close(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0;
    let mut quote: Option<char> = None;
    for (j, c) in chars.iter().enumerate().skip(open) {
        match (quote, c) {
            (Some(q), c) if *c == q => quote = None,
            (Some(_), _) => {}
            (None, '"') | (None, '\'') => quote = Some(*c),
            (None, '[') => depth += 1,
            (None, ']') => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

fn parse_bracket(inner: &str, src: &str) -> Result<Step, String> {
    if inner == "*" {
        return Ok(Step::All);
    }
    if let Ok(n) = inner.parse::<usize>() {
        return Ok(Step::Index(n));
    }
    if let Some(q) = inner
        .strip_prefix('\'')
        .and_then(|x| x.strip_suffix('\''))
        .or_else(|| inner.strip_prefix('"').and_then(|x| x.strip_suffix('"')))
    {
        return Ok(Step::Field(q.to_string()));
    }
    if let Some(f) = inner.strip_prefix("?(").and_then(|x| x.strip_suffix(')')) {
        let (lhs, rhs, eq) = if let Some((l, r)) = f.split_once("==") {
            (l, r, true)
        } else if let Some((l, r)) = f.split_once("!=") {
            (l, r, false)
        } else {
            return Err(format!("unsupported filter in {src}"));
        };
        let lhs = lhs
            .trim()
            .strip_prefix("@.")
            .ok_or_else(|| format!("unsupported filter in {src}"))?;
        let rhs = rhs.trim();
        let want = if let Some(s) = rhs
            .strip_prefix('"')
            .and_then(|x| x.strip_suffix('"'))
            .or_else(|| rhs.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
        {
            Value::String(s.to_string())
        } else {
            serde_json::from_str(rhs).map_err(|_| format!("unsupported filter value in {src}"))?
        };
        return Ok(Step::Filter(
            lhs.split('.').map(str::to_string).collect(),
            eq,
            want,
        ));
    }
    Err(format!("unsupported subscript [{inner}] in {src}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths() {
        let obj = json!({"spec": {"a": [{"b": 1}, {"b": 2}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "X", "status": "False"}]},
            "metadata": {"labels": {"app.kubernetes.io/name": "n"}}});
        let get = |p: &str| {
            JsonPath::parse(p)
                .unwrap()
                .find(&obj)
                .into_iter()
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(get(".spec.a[1].b"), vec![json!(2)]);
        assert_eq!(get(".spec.a[*].b"), vec![json!(1), json!(2)]);
        assert_eq!(
            get(".status.conditions[?(@.type==\"Ready\")].status"),
            vec![json!("True")]
        );
        assert_eq!(
            get(".metadata.labels.app\\.kubernetes\\.io/name"),
            vec![json!("n")]
        );
        assert_eq!(get("{.spec.missing}"), Vec::<Value>::new());
        assert!(JsonPath::parse(".a[?(@.x>1)]").is_err());
    }
}

//! A bound on how deeply a CEL expression can nest, checked on its text
//! before the `cel` crate parses it.
//!
//! The crate's parser, checker, cost estimator and evaluator all recurse
//! over the expression tree, so `1 + 1 + … + 1` with ten thousand operators
//! overflows a runtime thread's stack while a CRD or a policy is being
//! written. Upstream's cel-go parser refuses expressions nested more than
//! 250 levels (`MaxRecursionDepth`); this check refuses the same class of
//! input without parsing it: it never recurses and costs one pass.
//!
//! The estimate is an upper bound on the depth of the tree the crate
//! builds: inside one bracket group (`(…)`, `[…]`, `{…}`) each operator
//! can add at most one level above its deepest operand, so a group's depth
//! is at most its operator count plus its deepest inner group plus one.
//! String and bytes literals are skipped. Legitimate rules are far below the
//! bound (a rule with 50 clauses of three operators each estimates ~200).

/// The deepest nesting accepted, as upstream's parser recursion limit.
pub const MAX_NESTING: usize = 250;

/// The estimated nesting depth of `src` (see the module documentation).
pub fn estimate(src: &str) -> usize {
    let bytes = src.as_bytes();
    // For each open group: operators seen in it, deepest closed child.
    let mut groups: Vec<(usize, usize)> = vec![(0, 0)];
    let mut deepest = 0;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'"' | b'\'' => {
                i = skip_string(bytes, i);
                continue;
            }
            b'(' | b'[' | b'{' => groups.push((0, 0)),
            b')' | b']' | b'}' => {
                if groups.len() > 1 {
                    if let Some((ops, child)) = groups.pop() {
                        let depth = ops + child + 1;
                        if let Some(parent) = groups.last_mut() {
                            parent.1 = parent.1.max(depth);
                        }
                    }
                }
            }
            b'+' | b'-' | b'*' | b'/' | b'%' | b'!' | b'<' | b'>' | b'=' | b'?' | b'.' | b'&'
            | b'|' | b',' => {
                // Two-character operators (`&&`, `==`, `<=`, …) count once.
                let two = bytes.get(i + 1).copied();
                let pair = matches!(
                    (c, two),
                    (b'&', Some(b'&'))
                        | (b'|', Some(b'|'))
                        | (b'=', Some(b'='))
                        | (b'!', Some(b'='))
                        | (b'<', Some(b'='))
                        | (b'>', Some(b'='))
                );
                // Commas separate siblings; they do not nest.
                if c != b',' {
                    if let Some(g) = groups.last_mut() {
                        g.0 += 1;
                    }
                }
                if pair {
                    i += 1;
                }
            }
            _ if c.is_ascii_alphabetic() => {
                // The keyword operator `in`.
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                if &bytes[start..i] == b"in" {
                    if let Some(g) = groups.last_mut() {
                        g.0 += 1;
                    }
                }
                continue;
            }
            _ => {}
        }
        let now: usize = groups
            .iter()
            .map(|(ops, child)| ops + child + 1)
            .max()
            .unwrap_or(0);
        // The depth reachable so far: each open group sits inside its parent.
        let open: usize = groups.iter().map(|(ops, _)| ops + 1).sum::<usize>()
            + groups.last().map(|g| g.1).unwrap_or(0);
        deepest = deepest.max(now).max(open);
        if deepest > MAX_NESTING {
            return deepest;
        }
        i += 1;
    }
    deepest
}

/// Skips a string or bytes literal starting at the quote at `i` (single,
/// double or triple quoted; a raw prefix only disables escapes, which a
/// skip need not honour exactly since an escaped quote cannot end a raw
/// string either way). Returns the index just past its end.
fn skip_string(bytes: &[u8], i: usize) -> usize {
    let q = bytes[i];
    let triple = bytes.get(i + 1) == Some(&q) && bytes.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < bytes.len() {
        let c = bytes[j];
        if c == b'\\' {
            j += 2;
            continue;
        }
        if c == q {
            if !triple {
                return j + 1;
            }
            if bytes.get(j + 1) == Some(&q) && bytes.get(j + 2) == Some(&q) {
                return j + 3;
            }
        }
        if c == b'\n' && !triple {
            return j + 1;
        }
        j += 1;
    }
    bytes.len()
}

/// The error for an expression nested beyond [`MAX_NESTING`], worded as
/// cel-go's parser words it.
pub fn check(src: &str) -> Result<(), String> {
    if estimate(src) > MAX_NESTING {
        return Err(format!(
            "ERROR: <input>:1:1: expression recursion limit exceeded: {MAX_NESTING}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_and_brackets_are_estimated_above_their_depth() {
        assert!(estimate("1") <= 2);
        assert!(estimate(&("1 + ".repeat(300) + "1")) > MAX_NESTING);
        assert!(estimate(&format!("{}1{}", "(".repeat(300), ")".repeat(300))) > MAX_NESTING);
        assert!(estimate(&format!("{}x", "!".repeat(300))) > MAX_NESTING);
        assert!(estimate(&format!("self{}", ".a".repeat(300))) > MAX_NESTING);
        assert!(estimate(&("1 in ".repeat(300) + "[1]")) > MAX_NESTING);
    }

    #[test]
    fn operators_inside_strings_do_not_count() {
        let s = format!("'{}' == \"{}\"", "+".repeat(1000), "(".repeat(1000));
        assert!(estimate(&s) < 10, "{}", estimate(&s));
        let s = format!("'''{}''' == r'\\'", "'+".repeat(1000));
        assert!(estimate(&s) < 10, "{}", estimate(&s));
    }

    #[test]
    fn realistic_rules_pass() {
        let rule = "self.minReplicas <= self.maxReplicas && \
                    self.spec.containers.all(c, c.image.startsWith('registry.example/')) && \
                    (has(self.metadata.labels) ? 'app' in self.metadata.labels : true)";
        assert!(check(rule).is_ok(), "{}", estimate(rule));
        let clauses: Vec<String> = (0..50).map(|i| format!("self.f{i} > 0")).collect();
        assert!(check(&clauses.join(" && ")).is_ok());
    }
}

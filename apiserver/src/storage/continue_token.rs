//! List continue tokens in upstream's wire format
//! (`k8s.io/apiserver/pkg/storage/continue.go`).
//!
//! A token is `base64.RawURLEncoding` (URL-safe alphabet, no padding) of the
//! JSON object `{"v":"meta.k8s.io/v1","rv":<int64>,"start":"<key suffix>"}`,
//! where `start` is the next key to read *relative to the list prefix*.
//! Tokens are produced and consumed by every apiserver sharing the etcd, so
//! the format must stay byte-compatible with upstream.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::StorageError;

/// The only token version upstream understands.
pub const CONTINUE_TOKEN_VERSION: &str = "meta.k8s.io/v1";

/// Encoded form; field order matches upstream's Go struct.
#[derive(Serialize)]
struct EncodedToken<'a> {
    v: &'a str,
    rv: i64,
    start: &'a str,
}

/// Decoded form. Like Go's `encoding/json`, missing fields (and `null`) read
/// as their zero value and unknown fields are ignored.
#[derive(Deserialize)]
struct DecodedToken {
    #[serde(default)]
    v: Option<String>,
    #[serde(default)]
    rv: Option<i64>,
    #[serde(default)]
    start: Option<String>,
}

/// Encodes a token that resumes a list at `resource_version`, starting at the
/// key `list_prefix + key_suffix` (inclusive).
///
/// Upstream passes `lastKey + "\x00"` (minus the prefix) so the next page
/// starts strictly after the last returned key; [`encode_continue_after`] does
/// that computation. The JSON is escaped like Go's `json.Marshal` (`<`, `>`,
/// `&`, U+2028 and U+2029 as `\uXXXX`) so tokens are byte-identical to
/// upstream's.
pub fn encode_continue(resource_version: i64, key_suffix: &str) -> String {
    let token = EncodedToken {
        v: CONTINUE_TOKEN_VERSION,
        rv: resource_version,
        start: key_suffix,
    };
    // Serializing a struct of strings and an integer cannot fail.
    let json = serde_json::to_string(&token).unwrap_or_default();
    URL_SAFE_NO_PAD.encode(go_html_escape(&json))
}

/// Encodes the token for the page after one whose last key was `last_key`,
/// as upstream's `EncodeContinue(lastKey+"\x00", keyPrefix, rv)`.
///
/// Fails with [`StorageError::Internal`] if `last_key` is not under
/// `list_prefix` (a trailing `/` is added to the prefix as for lists), which
/// would otherwise produce a token escaping the listed collection.
pub fn encode_continue_after(
    list_prefix: &str,
    last_key: &str,
    resource_version: i64,
) -> Result<String, StorageError> {
    let prefix = super::normalize_prefix(list_prefix);
    match last_key.strip_prefix(prefix.as_str()) {
        Some(suffix) => Ok(encode_continue(resource_version, &format!("{suffix}\x00"))),
        None => Err(StorageError::Internal(format!(
            "unable to encode next field: the key and key prefix do not match {prefix} {last_key}"
        ))),
    }
}

/// Decodes a continue token for a list over `list_prefix`, returning the
/// revision to read at and the full (inclusive) start key.
///
/// Applies upstream's checks, all reported as
/// [`StorageError::InvalidContinue`]: valid unpadded URL-safe base64 of a JSON
/// object; version `meta.k8s.io/v1`; `rv >= 1` (upstream rejects 0, and a
/// negative revision could only make etcd fail); a non-empty `start` that is
/// already a clean path (no `..`, `.`, empty segments or trailing `/`), so the
/// resulting key can never lie outside `list_prefix`.
pub fn decode_continue(token: &str, list_prefix: &str) -> Result<(i64, String), StorageError> {
    let invalid = |detail: String| {
        StorageError::InvalidContinue(format!("continue key is not valid: {detail}"))
    };
    let data = URL_SAFE_NO_PAD
        .decode(token.as_bytes())
        .map_err(|e| invalid(e.to_string()))?;
    let decoded: DecodedToken =
        serde_json::from_slice(&data).map_err(|e| invalid(e.to_string()))?;
    let version = decoded.v.unwrap_or_default();
    if version != CONTINUE_TOKEN_VERSION {
        return Err(invalid(format!(
            "server does not recognize this encoded version {version}"
        )));
    }
    // A negative revision is an inconsistent token (offered with a 410 when
    // the original revision was compacted): it reads the latest revision.
    let rv = decoded.rv.unwrap_or_default();
    if rv == 0 {
        return Err(invalid(format!(
            "incorrect encoded start resourceVersion (version {CONTINUE_TOKEN_VERSION})"
        )));
    }
    let start = decoded.start.unwrap_or_default();
    if start.is_empty() {
        return Err(invalid(format!(
            "encoded start key empty (version {CONTINUE_TOKEN_VERSION})"
        )));
    }
    let rooted = if start.starts_with('/') {
        start.clone()
    } else {
        format!("/{start}")
    };
    if !is_clean_rooted_path(&rooted) {
        return Err(invalid(start));
    }
    let prefix = super::normalize_prefix(list_prefix);
    Ok((rv, format!("{prefix}{}", &rooted[1..])))
}

/// Whether Go's `path.Clean(p) == p` for a path starting with `/`: either `/`
/// itself, or every segment after the root is non-empty and not `.`/`..`.
fn is_clean_rooted_path(p: &str) -> bool {
    if p == "/" {
        return true;
    }
    p[1..]
        .split('/')
        .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
}

/// Escapes the characters Go's `json.Marshal` escapes by default. Inside
/// serde_json output these characters can only occur within string literals,
/// so a textual replacement is exact.
fn go_html_escape(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> String {
        URL_SAFE_NO_PAD.encode(json)
    }

    fn assert_invalid(token: &str) {
        match decode_continue(token, "/registry/pods/") {
            Err(StorageError::InvalidContinue(msg)) => {
                assert!(msg.starts_with("continue key is not valid"), "{msg}")
            }
            other => panic!("expected InvalidContinue for {token:?}, got {other:?}"),
        }
    }

    #[test]
    fn round_trip() {
        let token = encode_continue_after("/registry/pods/", "/registry/pods/ns/b", 42).unwrap();
        let (rv, key) = decode_continue(&token, "/registry/pods/").unwrap();
        assert_eq!(rv, 42);
        assert_eq!(key, "/registry/pods/ns/b\x00");
        // A prefix without trailing slash behaves the same.
        let (rv, key) = decode_continue(&token, "/registry/pods").unwrap();
        assert_eq!((rv, key.as_str()), (42, "/registry/pods/ns/b\x00"));
    }

    #[test]
    fn matches_upstream_bytes() {
        // What Go's EncodeContinue("/registry/pods/ns/b\x00", "/registry/pods/", 42) yields.
        let token = encode_continue(42, "ns/b\x00");
        let json = URL_SAFE_NO_PAD.decode(&token).unwrap();
        assert_eq!(
            String::from_utf8(json).unwrap(),
            r#"{"v":"meta.k8s.io/v1","rv":42,"start":"ns/b\u0000"}"#
        );
        assert!(!token.contains('=') && !token.contains('+') && !token.contains('/'));
        let escaped = URL_SAFE_NO_PAD
            .decode(encode_continue(1, "a<b>&c"))
            .unwrap();
        assert_eq!(
            String::from_utf8(escaped).unwrap(),
            r#"{"v":"meta.k8s.io/v1","rv":1,"start":"a\u003cb\u003e\u0026c"}"#
        );
    }

    #[test]
    fn decodes_upstream_token() {
        // Accepts a leading slash, unknown fields, and any field order.
        let token = raw(r#"{"start":"/ns/x","rv":7,"v":"meta.k8s.io/v1","extra":1}"#);
        let (rv, key) = decode_continue(&token, "/registry/pods/").unwrap();
        assert_eq!((rv, key.as_str()), (7, "/registry/pods/ns/x"));
    }

    #[test]
    fn rejects_tampered_tokens() {
        let good = encode_continue(5, "ns/a\x00");
        // Flip a character in the middle: invalid JSON or base64.
        let mut bytes = good.clone().into_bytes();
        bytes[3] = if bytes[3] == b'A' { b'B' } else { b'A' };
        assert_invalid(&String::from_utf8(bytes).unwrap());
        assert_invalid(&format!("{good}=")); // padding is not allowed
        assert_invalid("%%%");
        assert_invalid(&raw("not json"));
        assert_invalid(&raw("null"));
        assert_invalid(&raw(r#"{"v":"meta.k8s.io/v2","rv":5,"start":"a"}"#));
        assert_invalid(&raw(r#"{"rv":5,"start":"a"}"#));
        assert_invalid(&raw(r#"{"v":"meta.k8s.io/v1","rv":0,"start":"a"}"#));
        // Negative: an inconsistent token, read at the latest revision.
        let (rv, key) = decode_continue(
            &raw(r#"{"v":"meta.k8s.io/v1","rv":-1,"start":"a"}"#),
            "/registry/pods/",
        )
        .expect("an inconsistent continue token");
        assert_eq!((rv, key.as_str()), (-1, "/registry/pods/a"));
        assert_invalid(&raw(r#"{"v":"meta.k8s.io/v1","rv":"5","start":"a"}"#));
        assert_invalid(&raw(r#"{"v":"meta.k8s.io/v1","rv":5,"start":""}"#));
        assert_invalid(&raw(r#"{"v":"meta.k8s.io/v1","rv":5}"#));
        // Path traversal and non-clean paths.
        for start in ["../secrets/x", "a/../../b", "a//b", "./a", "a/", "a/."] {
            let token = raw(&format!(
                r#"{{"v":"meta.k8s.io/v1","rv":5,"start":"{start}"}}"#
            ));
            assert_invalid(&token);
        }
    }

    #[test]
    fn encode_after_requires_prefix() {
        assert!(matches!(
            encode_continue_after("/registry/pods/", "/registry/secrets/a", 1),
            Err(StorageError::Internal(_))
        ));
    }

    #[test]
    fn clean_path_check() {
        assert!(is_clean_rooted_path("/"));
        assert!(is_clean_rooted_path("/a/b\x00"));
        assert!(is_clean_rooted_path("/a..b"));
        assert!(!is_clean_rooted_path("/a/"));
        assert!(!is_clean_rooted_path("//a"));
        assert!(!is_clean_rooted_path("/a/.."));
    }
}

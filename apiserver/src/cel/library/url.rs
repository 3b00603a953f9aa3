//! The URL library (upstream `library.URLs`): `url(s)`, `isURL(s)`, and on
//! a `kubernetes.URL`: `getScheme`, `getHost`, `getHostname`, `getPort`,
//! `getEscapedPath`, `getQuery`.
//!
//! Parsing follows Go's `url.ParseRequestURI`, which upstream uses: an
//! absolute URI (`scheme:...`) or an absolute path (`/...`); no fragment
//! handling; the host may be an IPv6 literal in brackets; a port must be
//! digits.

use std::collections::HashMap;

use ::cel::common::types::{CelBool, CelList, CelMap, CelMapKey, CelString};
use ::cel::common::value::Val;
use ::cel::{DeclarationError, Env, ExecutionError};

use super::{fail, object_type};

/// A parsed `kubernetes.URL`.
#[derive(Clone, Debug, PartialEq)]
pub struct Url {
    scheme: String,
    /// `host[:port]` as written (brackets kept).
    host: String,
    /// The path as written (escaped).
    path: String,
    query: String,
}

object_type!(Url, URL_TYPE, "kubernetes.URL");

fn valid_escapes(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if !(b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
            {
                return false;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    true
}

fn parse_host(authority: &str, s: &str) -> Result<String, String> {
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let port_ok = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if let Some(rest) = host.strip_prefix('[') {
        let (ip6, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("parse {s:?}: missing ']' in host"))?;
        if ip6
            .split('%')
            .next()
            .and_then(|a| a.parse::<std::net::Ipv6Addr>().ok())
            .is_none()
        {
            return Err(format!("parse {s:?}: invalid IPv6 host"));
        }
        match after.strip_prefix(':') {
            None if after.is_empty() => {}
            Some(p) if port_ok(p) => {}
            _ => return Err(format!("parse {s:?}: invalid port {after:?} after host")),
        }
    } else if let Some((_, port)) = host.rsplit_once(':') {
        if !port_ok(port) {
            return Err(format!("parse {s:?}: invalid port \":{port}\" after host"));
        }
    }
    if host
        .bytes()
        .any(|b| b == b' ' || b == b'%' && !valid_escapes(host))
    {
        return Err(format!("parse {s:?}: invalid character in host name"));
    }
    Ok(host.to_string())
}

/// Parses `s` as Go's `url.ParseRequestURI` does.
pub fn parse_url(s: &str) -> Result<Url, String> {
    if s.is_empty() {
        return Err("parse \"\": empty url".into());
    }
    if s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err(format!(
            "parse {s:?}: net/url: invalid control character in URL"
        ));
    }
    let mut scheme = String::new();
    let mut rest = s;
    if let Some(i) = s.find(':') {
        let cand = &s[..i];
        let valid = cand.bytes().enumerate().all(|(j, b)| {
            b.is_ascii_alphabetic() || (j > 0 && (b.is_ascii_digit() || b"+-.".contains(&b)))
        });
        if valid && !cand.is_empty() {
            scheme = cand.to_ascii_lowercase();
            rest = &s[i + 1..];
        } else if i == 0 {
            return Err(format!("parse {s:?}: missing protocol scheme"));
        }
    }
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, q.to_string()),
        None => (rest, String::new()),
    };
    if !rest.starts_with('/') {
        if scheme.is_empty() {
            return Err(format!("parse {s:?}: invalid URI for request"));
        }
        // An opaque URI such as `mailto:a@b`.
        return Ok(Url {
            scheme,
            host: String::new(),
            path: String::new(),
            query,
        });
    }
    let (host, path) = match rest.strip_prefix("//") {
        Some(auth_path) if !scheme.is_empty() => {
            let (authority, path) = match auth_path.find('/') {
                Some(i) => auth_path.split_at(i),
                None => (auth_path, ""),
            };
            (parse_host(authority, s)?, path)
        }
        _ => (String::new(), rest),
    };
    if !valid_escapes(path) {
        return Err(format!("parse {s:?}: invalid URL escape"));
    }
    Ok(Url {
        scheme,
        host,
        path: path.to_string(),
        query,
    })
}

impl Url {
    fn hostname(&self) -> &str {
        if let Some(rest) = self.host.strip_prefix('[') {
            return rest.split(']').next().unwrap_or("");
        }
        self.host.rsplit_once(':').map_or(&self.host, |(h, _)| h)
    }

    fn port(&self) -> &str {
        let after = match self.host.rfind(']') {
            Some(i) => &self.host[i + 1..],
            None => &self.host,
        };
        after.rsplit_once(':').map_or("", |(_, p)| p)
    }
}

/// Decodes `%xx` and `+` of a query component; `None` on a bad escape.
fn unescape_query(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = s.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

fn url(s: &CelString<'_>) -> Result<Url, ExecutionError> {
    parse_url(s).map_err(|e| fail("url", e))
}

fn is_url(s: &CelString<'_>) -> CelBool {
    parse_url(s).is_ok().into()
}

fn get_scheme(u: &Url) -> CelString<'static> {
    u.scheme.clone().into()
}

fn get_host(u: &Url) -> CelString<'static> {
    u.host.clone().into()
}

fn get_hostname(u: &Url) -> CelString<'static> {
    u.hostname().to_string().into()
}

fn get_port(u: &Url) -> CelString<'static> {
    u.port().to_string().into()
}

fn get_escaped_path(u: &Url) -> CelString<'static> {
    u.path.clone().into()
}

/// The query as Go's `url.Query()`: a map from each key to its values, in
/// order; pairs that do not decode are skipped.
fn get_query(u: &Url) -> CelMap<'static> {
    let mut map: HashMap<String, Vec<Box<dyn Val>>> = HashMap::new();
    for pair in u.query.split(['&']).filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if let (Some(k), Some(v)) = (unescape_query(k), unescape_query(v)) {
            map.entry(k).or_default().push(Box::new(CelString::from(v)));
        }
    }
    let map: HashMap<CelMapKey<'static>, Box<dyn Val>> = map
        .into_iter()
        .map(|(k, v)| {
            (
                CelMapKey::from(k),
                Box::new(CelList::from(v)) as Box<dyn Val>,
            )
        })
        .collect();
    CelMap::from(map)
}

/// Registers the URL library.
pub fn register(env: &mut Env) -> Result<(), DeclarationError> {
    ::cel::add_overload!(env, fn url: (CelString) -> Result<Url>)?;
    ::cel::add_overload!(env, fn is_url: (CelString) -> CelBool, name = "isURL")?;
    ::cel::add_member_overload!(env, fn get_scheme: (Url) -> CelString)?;
    ::cel::add_member_overload!(env, fn get_host: (Url) -> CelString)?;
    ::cel::add_member_overload!(env, fn get_hostname: (Url) -> CelString)?;
    ::cel::add_member_overload!(env, fn get_port: (Url) -> CelString)?;
    ::cel::add_member_overload!(env, fn get_escaped_path: (Url) -> CelString)?;
    ::cel::add_member_overload!(env, fn get_query: (Url) -> CelMap)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_err, assert_true};

    #[test]
    fn url_functions() {
        assert_true(&[
            "isURL('https://example.com:80/path?x=1') && isURL('/absolute-path') && !isURL('relative') && !isURL('')",
            "!isURL('https://example.com:port/') && !isURL('https://[::1/')",
            "url('https://example.com:80/').getScheme() == 'https'",
            "url('/path').getScheme() == '' && url('/path').getHost() == ''",
            "url('https://example.com:80/').getHost() == 'example.com:80'",
            "url('https://[::1]:80/').getHost() == '[::1]:80'",
            "url('https://[::1]:80/').getHostname() == '::1' && url('https://[::1]/').getPort() == ''",
            "url('https://example.com:80/').getHostname() == 'example.com'",
            "url('https://example.com:80/').getPort() == '80' && url('https://example.com/').getPort() == ''",
            "url('https://example.com/with%20space/').getEscapedPath() == '/with%20space/'",
            "url('https://example.com/path?k1=a&k2=b&k2=c%20d').getQuery() == {'k1': ['a'], 'k2': ['b', 'c d']}",
            "url('https://example.com/').getQuery() == {}",
            "url('https://example.com/') == url('https://example.com/')",
        ]);
        assert_err(&[("url('not a url')", "invalid URI for request")]);
    }
}

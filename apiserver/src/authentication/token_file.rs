//! Static bearer tokens from `--token-auth-file`, in upstream's CSV format:
//! `token,user,uid,"group1,group2"` (groups optional; lines starting with `#` ignored).

use std::collections::HashMap;

use super::{AuthOutcome, AuthRequest, Authenticator, UserInfo};

/// Authenticates `Authorization: Bearer <token>` against a fixed table.
pub struct TokenFileAuthenticator {
    tokens: HashMap<String, UserInfo>,
}

impl TokenFileAuthenticator {
    /// Parses the CSV file contents.
    pub fn parse(contents: &str) -> anyhow::Result<Self> {
        let mut tokens = HashMap::new();
        for (n, line) in contents.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields = split_csv(line);
            if fields.len() < 3 {
                anyhow::bail!("token file line {}: need at least token,user,uid", n + 1);
            }
            if fields[0].is_empty() {
                anyhow::bail!("token file line {}: empty token", n + 1);
            }
            let groups = fields
                .get(3)
                .map(|g| {
                    g.split(',')
                        .map(str::trim)
                        .filter(|g| !g.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let user = UserInfo {
                name: fields[1].clone(),
                uid: fields[2].clone(),
                groups,
                ..Default::default()
            };
            tokens.insert(fields[0].clone(), user);
        }
        Ok(TokenFileAuthenticator { tokens })
    }
}

/// Splits one CSV line, honouring double quotes (`""` inside quotes is a quote).
fn split_csv(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    fields.push(cur);
    fields
}

/// The bearer token of a request, if it has one.
pub fn bearer_token(headers: &http::HeaderMap) -> Option<&str> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = token.trim();
    (!token.is_empty()).then_some(token)
}

impl Authenticator for TokenFileAuthenticator {
    fn authenticate(&self, req: &AuthRequest<'_>) -> AuthOutcome {
        let Some(token) = bearer_token(req.headers) else {
            return AuthOutcome::NotApplicable;
        };
        match self.tokens.get(token) {
            Some(user) => AuthOutcome::Authenticated(user.clone()),
            None => AuthOutcome::Failed("invalid bearer token".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_upstream_format() {
        let a = TokenFileAuthenticator::parse("# c\nabc,alice,1,\"g1,g2\"\nxyz,bob,2\n").unwrap();
        assert_eq!(a.tokens["abc"].groups, vec!["g1", "g2"]);
        assert_eq!(a.tokens["xyz"].name, "bob");
        assert!(TokenFileAuthenticator::parse("onlytoken").is_err());
    }

    #[test]
    fn bearer_parsing() {
        let mut h = http::HeaderMap::new();
        h.insert("authorization", "Bearer  abc ".parse().unwrap());
        assert_eq!(bearer_token(&h), Some("abc"));
        h.insert("authorization", "Basic abc".parse().unwrap());
        assert_eq!(bearer_token(&h), None);
    }
}

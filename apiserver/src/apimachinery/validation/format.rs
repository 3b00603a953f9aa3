//! String formats checked by validation, as upstream's `strfmt` registry
//! (those kube-openapi enables for CRDs). Unknown formats are not checked.

use std::net::{Ipv4Addr, Ipv6Addr};

use base64::Engine;

/// Whether `s` is valid in `format`; `None` when the format is not checked.
pub fn check(format: &str, s: &str) -> Option<bool> {
    Some(match format {
        "uuid" => is_uuid(s, None),
        "uuid3" => is_uuid(s, Some('3')),
        "uuid4" => is_uuid(s, Some('4')),
        "uuid5" => is_uuid(s, Some('5')),
        "ipv4" => s.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(s),
        "mac" => is_mac(s),
        "hostname" => is_hostname(s),
        "date" => is_date(s),
        "date-time" | "datetime" => s.parse::<jiff::Timestamp>().is_ok(),
        "byte" => base64::engine::general_purpose::STANDARD.decode(s).is_ok(),
        "email" => is_email(s),
        _ => return None,
    })
}

fn is_uuid(s: &str, version: Option<char>) -> bool {
    let b = s.as_bytes();
    if b.len() != 36 {
        return false;
    }
    for (i, c) in s.chars().enumerate() {
        let ok = match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        };
        if !ok {
            return false;
        }
    }
    match version {
        Some(v) => s.chars().nth(14) == Some(v),
        None => true,
    }
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    if ip.parse::<Ipv4Addr>().is_ok() {
        bits <= 32
    } else if ip.parse::<Ipv6Addr>().is_ok() {
        bits <= 128
    } else {
        false
    }
}

fn is_mac(s: &str) -> bool {
    let sep = if s.contains(':') { ':' } else { '-' };
    let parts: Vec<&str> = s.split(sep).collect();
    matches!(parts.len(), 6 | 8 | 20)
        && parts
            .iter()
            .all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit()))
}

fn is_hostname(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && s.trim_end_matches('.').split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

fn is_date(s: &str) -> bool {
    s.len() == 10 && s.parse::<jiff::civil::Date>().is_ok()
}

fn is_email(s: &str) -> bool {
    match s.rsplit_once('@') {
        Some((local, domain)) => !local.is_empty() && is_hostname(domain),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn formats() {
        assert_eq!(
            check("uuid", "123e4567-e89b-12d3-a456-426614174000"),
            Some(true)
        );
        assert_eq!(check("uuid", "nope"), Some(false));
        assert_eq!(check("ipv4", "10.0.0.1"), Some(true));
        assert_eq!(check("ipv4", "10.0.0.300"), Some(false));
        assert_eq!(check("cidr", "10.0.0.0/8"), Some(true));
        assert_eq!(check("cidr", "10.0.0.0/33"), Some(false));
        assert_eq!(check("date-time", "2024-01-02T03:04:05Z"), Some(true));
        assert_eq!(check("date", "2024-13-02"), Some(false));
        assert_eq!(check("byte", "aGVsbG8="), Some(true));
        assert_eq!(check("whatever", "x"), None);
    }
}

//! Go's `time.ParseDuration`, for query parameters such as `?timeout=`.
//!
//! A duration is an optionally signed sequence of decimal numbers, each with
//! an optional fraction and a unit (`ns`, `us`/`µs`/`μs`, `ms`, `s`, `m`,
//! `h`): `300ms`, `-1.5h`, `2h45m`, `0`. Errors carry Go's messages, e.g.
//! `time: invalid duration "x"`.

use std::time::Duration;

const NANOSECOND: u64 = 1;
const MICROSECOND: u64 = 1000 * NANOSECOND;
const MILLISECOND: u64 = 1000 * MICROSECOND;
const SECOND: u64 = 1000 * MILLISECOND;
const MINUTE: u64 = 60 * SECOND;
const HOUR: u64 = 60 * MINUTE;

fn unit_nanos(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => NANOSECOND,
        "us" | "\u{b5}s" | "\u{3bc}s" => MICROSECOND,
        "ms" => MILLISECOND,
        "s" => SECOND,
        "m" => MINUTE,
        "h" => HOUR,
        _ => return None,
    })
}

/// Go's `time` package quoting: printable ASCII kept (with `"` and `\`
/// escaped), every other byte as `\xNN`.
fn go_time_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if (c as u32) >= 0x80 || c < ' ' {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

fn invalid(orig: &str) -> String {
    format!("time: invalid duration {}", go_time_quote(orig))
}

const LIMIT: u64 = 1 << 63;

/// Consumes leading decimal digits; `Err` on overflow past 2^63.
fn leading_int(s: &[u8]) -> Result<(u64, &[u8]), ()> {
    let mut x: u64 = 0;
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        if x > LIMIT / 10 {
            return Err(());
        }
        x = x * 10 + u64::from(s[i] - b'0');
        if x > LIMIT {
            return Err(());
        }
        i += 1;
    }
    Ok((x, &s[i..]))
}

/// Consumes leading fraction digits; digits past the precision are dropped.
fn leading_fraction(s: &[u8]) -> (u64, f64, &[u8]) {
    let mut x: u64 = 0;
    let mut scale = 1.0f64;
    let mut overflow = false;
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        if !overflow {
            if x > (LIMIT - 1) / 10 {
                overflow = true;
            } else {
                let y = x * 10 + u64::from(s[i] - b'0');
                if y > LIMIT {
                    overflow = true;
                } else {
                    x = y;
                    scale *= 10.0;
                }
            }
        }
        i += 1;
    }
    (x, scale, &s[i..])
}

/// Parses a Go duration into signed nanoseconds, exactly as Go's
/// `time.ParseDuration` (including its overflow rules and messages).
pub fn parse_go_duration_nanos(s: &str) -> Result<i64, String> {
    let orig = s;
    let mut rest = s.as_bytes();
    let mut neg = false;
    if let Some(&c) = rest.first() {
        if c == b'-' || c == b'+' {
            neg = c == b'-';
            rest = &rest[1..];
        }
    }
    if rest == b"0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid(orig));
    }
    let mut d: u64 = 0;
    while !rest.is_empty() {
        let c = rest[0];
        if !(c == b'.' || c.is_ascii_digit()) {
            return Err(invalid(orig));
        }
        let before = rest.len();
        let (mut v, after) = leading_int(rest).map_err(|_| invalid(orig))?;
        rest = after;
        let pre = before != rest.len();

        let mut post = false;
        let (mut f, mut scale) = (0u64, 1.0f64);
        if rest.first() == Some(&b'.') {
            rest = &rest[1..];
            let before = rest.len();
            let (ff, sc, after) = leading_fraction(rest);
            f = ff;
            scale = sc;
            rest = after;
            post = before != rest.len();
        }
        if !pre && !post {
            return Err(invalid(orig));
        }

        let unit_len = rest
            .iter()
            .position(|&b| b == b'.' || b.is_ascii_digit())
            .unwrap_or(rest.len());
        if unit_len == 0 {
            return Err(format!(
                "time: missing unit in duration {}",
                go_time_quote(orig)
            ));
        }
        let unit_str = String::from_utf8_lossy(&rest[..unit_len]).into_owned();
        rest = &rest[unit_len..];
        let Some(unit) = unit_nanos(&unit_str) else {
            return Err(format!(
                "time: unknown unit {} in duration {}",
                go_time_quote(&unit_str),
                go_time_quote(orig)
            ));
        };
        if v > LIMIT / unit {
            return Err(invalid(orig));
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(invalid(orig));
            }
        }
        d += v;
        if d > LIMIT {
            return Err(invalid(orig));
        }
    }
    if neg {
        // d <= 2^63 here, so the negation always fits.
        return Ok((d as i128).wrapping_neg() as i64);
    }
    if d > LIMIT - 1 {
        return Err(invalid(orig));
    }
    Ok(d as i64)
}

/// Parses a Go duration (`30s`, `1m30s`, `1.5h`, `300ms`, `2h45m`, `0`).
/// Negative durations, which Go accepts, are returned as zero (callers treat
/// a non-positive `?timeout=` like an absent one, as upstream does).
pub fn parse_go_duration(s: &str) -> Result<Duration, String> {
    let nanos = parse_go_duration_nanos(s)?;
    Ok(Duration::from_nanos(u64::try_from(nanos).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_go() {
        let cases: &[(&str, i64)] = &[
            ("0", 0),
            ("5s", 5 * SECOND as i64),
            ("30s", 30 * SECOND as i64),
            ("1478s", 1478 * SECOND as i64),
            ("-5s", -5 * SECOND as i64),
            ("+5s", 5 * SECOND as i64),
            ("-0", 0),
            ("+0", 0),
            ("5.0s", 5 * SECOND as i64),
            ("5.6s", 5 * SECOND as i64 + 600 * MILLISECOND as i64),
            ("5.s", 5 * SECOND as i64),
            (".5s", 500 * MILLISECOND as i64),
            ("1.0s", SECOND as i64),
            ("1.00s", SECOND as i64),
            ("1.004s", SECOND as i64 + 4 * MILLISECOND as i64),
            ("1.0040s", SECOND as i64 + 4 * MILLISECOND as i64),
            ("100.00100s", 100 * SECOND as i64 + MILLISECOND as i64),
            ("10ns", 10),
            ("11us", 11 * MICROSECOND as i64),
            ("12µs", 12 * MICROSECOND as i64),
            ("12μs", 12 * MICROSECOND as i64),
            ("13ms", 13 * MILLISECOND as i64),
            ("14s", 14 * SECOND as i64),
            ("15m", 15 * MINUTE as i64),
            ("16h", 16 * HOUR as i64),
            ("3h30m", 3 * HOUR as i64 + 30 * MINUTE as i64),
            (
                "10.5s4m",
                4 * MINUTE as i64 + 10 * SECOND as i64 + 500 * MILLISECOND as i64,
            ),
            (
                "-2m3.4s",
                -(2 * MINUTE as i64 + 3 * SECOND as i64 + 400 * MILLISECOND as i64),
            ),
            (
                "1h2m3s4ms5us6ns",
                (HOUR + 2 * MINUTE + 3 * SECOND + 4 * MILLISECOND + 5 * MICROSECOND + 6) as i64,
            ),
            (
                "39h9m14.425s",
                (39 * HOUR + 9 * MINUTE + 14 * SECOND + 425 * MILLISECOND) as i64,
            ),
            ("52763797000ns", 52763797000),
            ("0.3333333333333333333h", 20 * MINUTE as i64),
            ("9007199254740993ns", (1i64 << 53) + 1),
            ("9223372036854775807ns", i64::MAX),
            ("9223372036854775.807us", i64::MAX),
            ("9223372036s854ms775us807ns", i64::MAX),
            ("-9223372036854775808ns", i64::MIN),
            ("-9223372036854775.808us", i64::MIN),
            ("0.100000000000000000000h", 6 * MINUTE as i64),
            (
                "0.830103483285477580700h",
                49 * MINUTE as i64 + 48 * SECOND as i64 + 372539827,
            ),
            ("1.5h", HOUR as i64 + 30 * MINUTE as i64),
            ("2h45m", 2 * HOUR as i64 + 45 * MINUTE as i64),
            ("300ms", 300 * MILLISECOND as i64),
            ("1m30s", 90 * SECOND as i64),
        ];
        for &(input, want) in cases {
            assert_eq!(parse_go_duration_nanos(input), Ok(want), "{input}");
        }
    }

    #[test]
    fn rejects_like_go() {
        let cases: &[(&str, &str)] = &[
            ("", "time: invalid duration \"\""),
            ("3", "time: missing unit in duration \"3\""),
            ("-", "time: invalid duration \"-\""),
            ("s", "time: invalid duration \"s\""),
            (".", "time: invalid duration \".\""),
            ("-.", "time: invalid duration \"-.\""),
            (".s", "time: invalid duration \".s\""),
            ("+.s", "time: invalid duration \"+.s\""),
            ("1d", "time: unknown unit \"d\" in duration \"1d\""),
            ("x", "time: invalid duration \"x\""),
            ("1s x", "time: unknown unit \"s x\" in duration \"1s x\""),
            (
                "\u{85}\u{85}",
                "time: invalid duration \"\\xc2\\x85\\xc2\\x85\"",
            ),
            ("\u{FFFD}", "time: invalid duration \"\\xef\\xbf\\xbd\""),
            (
                "9223372036854775808ns",
                "time: invalid duration \"9223372036854775808ns\"",
            ),
            (
                "9223372036854775.808us",
                "time: invalid duration \"9223372036854775.808us\"",
            ),
            (
                "9223372036854ms775us808ns",
                "time: invalid duration \"9223372036854ms775us808ns\"",
            ),
            (
                "-9223372036854775809ns",
                "time: invalid duration \"-9223372036854775809ns\"",
            ),
            (
                "1\"s",
                "time: unknown unit \"\\\"s\" in duration \"1\\\"s\"",
            ),
        ];
        for &(input, msg) in cases {
            assert_eq!(
                parse_go_duration_nanos(input),
                Err(msg.to_string()),
                "{input:?}"
            );
        }
    }

    #[test]
    fn std_duration_wrapper() {
        assert_eq!(parse_go_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_go_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_go_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_go_duration("300ms"), Ok(Duration::from_millis(300)));
        assert_eq!(parse_go_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_go_duration("-5s"), Ok(Duration::ZERO));
        assert_eq!(
            parse_go_duration("x"),
            Err("time: invalid duration \"x\"".to_string())
        );
    }
}

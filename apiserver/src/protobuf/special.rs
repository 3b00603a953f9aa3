//! JSON renderings of the messages that upstream's JSON encoder writes as
//! something other than an object: times and durations.

/// Formats a `meta.v1.Time` the way upstream's `Time.MarshalJSON` does:
/// RFC 3339 in UTC with whole seconds (`2006-01-02T15:04:05Z`); with
/// `micro`, a `MicroTime`: six fractional digits
/// (`2006-01-02T15:04:05.000000Z`).
///
/// `nanos` may be outside `0..1e9` (Go's `time.Unix` normalises it);
/// times outside the years -9999..=9999 are an error.
pub(crate) fn format_time(seconds: i64, nanos: i64, micro: bool) -> Result<String, String> {
    let seconds = seconds
        .checked_add(nanos.div_euclid(1_000_000_000))
        .ok_or_else(|| "timestamp out of range".to_owned())?;
    let nanos = nanos.rem_euclid(1_000_000_000);
    let timestamp = jiff::Timestamp::from_second(seconds)
        .map_err(|_| format!("timestamp {seconds}s is out of range"))?;
    let civil = timestamp.to_zoned(jiff::tz::TimeZone::UTC);
    let mut out = civil.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    if micro {
        out.push_str(&format!(".{:06}", nanos / 1000));
    }
    out.push('Z');
    Ok(out)
}

/// Formats nanoseconds as Go's `time.Duration.String` does: `1h2m3.5s`,
/// `1.5ms`, `2µs`, `0s`.
pub(crate) fn format_duration(nanos: i64) -> String {
    let negative = nanos < 0;
    let mut u = nanos.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        if u == 0 {
            return "0s".to_owned();
        }
        let (precision, unit) = if u < 1_000 {
            (0, "ns")
        } else if u < 1_000_000 {
            (3, "\u{b5}s")
        } else {
            (6, "ms")
        };
        out.push_str(&format_fraction(u, precision));
        out.push_str(unit);
    } else {
        let fraction = fraction_suffix(u % 1_000_000_000, 9);
        u /= 1_000_000_000;
        let seconds = u % 60;
        u /= 60;
        if u > 0 {
            let minutes = u % 60;
            u /= 60;
            if u > 0 {
                out.push_str(&format!("{u}h"));
            }
            out.push_str(&format!("{minutes}m"));
        }
        out.push_str(&format!("{seconds}{fraction}s"));
    }
    if negative {
        out.insert(0, '-');
    }
    out
}

/// `v / 10^precision` with the fraction's trailing zeros (and a bare
/// point) removed: `format_fraction(1500, 3)` is `1.5`.
fn format_fraction(v: u64, precision: u32) -> String {
    let scale = 10u64.pow(precision);
    format!("{}{}", v / scale, fraction_suffix(v % scale, precision))
}

/// `.ddd` for a fraction of `precision` digits without trailing zeros, or
/// nothing when it is zero.
fn fraction_suffix(fraction: u64, precision: u32) -> String {
    if fraction == 0 {
        return String::new();
    }
    let digits = format!("{fraction:0width$}", width = precision as usize);
    format!(".{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(
            format_time(0, 0, false).as_deref(),
            Ok("1970-01-01T00:00:00Z")
        );
        assert_eq!(
            format_time(1_700_000_000, 123_456_789, false).as_deref(),
            Ok("2023-11-14T22:13:20Z")
        );
        assert_eq!(
            format_time(1_700_000_000, 123_456_789, true).as_deref(),
            Ok("2023-11-14T22:13:20.123456Z")
        );
        assert_eq!(
            format_time(10, -1, true).as_deref(),
            Ok("1970-01-01T00:00:09.999999Z")
        );
        assert!(format_time(i64::MAX, 0, false).is_err());
        assert!(format_time(i64::MAX, i64::MAX, false).is_err());
    }

    #[test]
    fn durations() {
        let cases = [
            (0, "0s"),
            (1, "1ns"),
            (1_100, "1.1\u{b5}s"),
            (2_200_000, "2.2ms"),
            (1_000_000_000, "1s"),
            (1_500_000_000, "1.5s"),
            (60_000_000_000, "1m0s"),
            (3_600_000_000_000, "1h0m0s"),
            (3_723_000_000_001, "1h2m3.000000001s"),
            (-1_500_000_000, "-1.5s"),
            (i64::MIN, "-2562047h47m16.854775808s"),
        ];
        for (nanos, want) in cases {
            assert_eq!(format_duration(nanos), want, "{nanos}");
        }
    }
}

//! Resource quantities (upstream's `resource.Quantity`): `100m`, `1Gi`,
//! `1.5k`, `2e3`, held exactly as `unscaled × 10^scale`, parsed with
//! upstream's grammar and messages, rounded up to nano precision as
//! upstream does, compared and added exactly, and printed in upstream's
//! canonical form. Values beyond an `i128` mantissa are refused (upstream
//! accepts them with arbitrary precision).

use std::cmp::Ordering;

/// An exact decimal quantity: `unscaled × 10^scale`, normalised (no trailing
/// zeros in `unscaled`, zero has scale 0).
#[derive(Clone, Debug)]
pub struct Quantity {
    pub(crate) unscaled: i128,
    pub(crate) scale: i32,
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

pub(crate) const FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
pub(crate) const NUMERIC: &str = "unable to parse numeric part of quantity";
pub(crate) const SUFFIX: &str = "unable to parse quantity's suffix";

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

impl Quantity {
    /// `unscaled × 10^scale`.
    pub fn new(unscaled: i128, scale: i32) -> Quantity {
        let (mut u, mut s) = (unscaled, scale);
        if u == 0 {
            return Quantity {
                unscaled: 0,
                scale: 0,
            };
        }
        while u % 10 == 0 {
            u /= 10;
            s += 1;
        }
        Quantity {
            unscaled: u,
            scale: s,
        }
    }

    /// Parses a quantity string with upstream's grammar and messages.
    pub fn parse(s: &str) -> Result<Quantity, &'static str> {
        let (negative, rest) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            Some(_) => (false, s),
            None => return Err(FORMAT_WRONG),
        };
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, suffix) = rest.split_at(num_len);
        if num.is_empty() {
            return Err(FORMAT_WRONG);
        }
        let letters = suffix
            .find(|c: char| !"eEinumkKMGTP".contains(c))
            .unwrap_or(suffix.len());
        let tail = suffix[letters..].trim_start_matches(['+', '-']);
        if suffix.len() - letters - tail.len() > 1 || !tail.bytes().all(|b| b.is_ascii_digit()) {
            return Err(FORMAT_WRONG);
        }
        let (int, frac) = num.split_once('.').unwrap_or((num, ""));
        if frac.contains('.') || (int.is_empty() && frac.is_empty()) {
            return Err(NUMERIC);
        }
        let mut unscaled: i128 = 0;
        for b in int.bytes().chain(frac.bytes()) {
            unscaled = unscaled
                .checked_mul(10)
                .and_then(|u| u.checked_add(i128::from(b - b'0')))
                .ok_or(NUMERIC)?;
        }
        let mut scale = -(frac.len() as i32);
        match suffix {
            "" => {}
            "n" => scale -= 9,
            "u" => scale -= 6,
            "m" => scale -= 3,
            "k" => scale += 3,
            "M" => scale += 6,
            "G" => scale += 9,
            "T" => scale += 12,
            "P" => scale += 15,
            "E" => scale += 18,
            "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => {
                let power = match suffix {
                    "Ki" => 1,
                    "Mi" => 2,
                    "Gi" => 3,
                    "Ti" => 4,
                    "Pi" => 5,
                    _ => 6,
                };
                unscaled = unscaled.checked_mul(1i128 << (10 * power)).ok_or(NUMERIC)?;
            }
            _ => {
                let exp = suffix
                    .strip_prefix(['e', 'E'])
                    .filter(|e| !e.is_empty())
                    .and_then(|e| e.parse::<i32>().ok())
                    .filter(|e| e.abs() <= 1000)
                    .ok_or(SUFFIX)?;
                scale += exp;
            }
        }
        // Upstream rounds anything finer than nano up (away from zero).
        if scale < -9 {
            let drop = (-9 - scale) as u32;
            unscaled = match pow10(drop) {
                Some(d) => {
                    let q = unscaled / d;
                    if unscaled % d != 0 {
                        q + 1
                    } else {
                        q
                    }
                }
                None => i128::from(unscaled != 0),
            };
            scale = -9;
        }
        if negative {
            unscaled = -unscaled;
        }
        Ok(Quantity::new(unscaled, scale))
    }

    /// -1, 0 or 1.
    pub fn sign(&self) -> i64 {
        self.unscaled.signum() as i64
    }

    /// The value as an `i64`, if it is an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        if self.scale < 0 {
            return None;
        }
        let v = self.unscaled.checked_mul(pow10(self.scale as u32)?)?;
        i64::try_from(v).ok()
    }

    /// The nearest `f64`.
    pub fn as_f64(&self) -> f64 {
        self.unscaled as f64 * 10f64.powi(self.scale)
    }

    /// Both mantissas at the smaller scale, if they fit.
    fn aligned(&self, other: &Quantity) -> Option<(i128, i128, i32)> {
        let scale = self.scale.min(other.scale);
        let up = |q: &Quantity| {
            let d = u32::try_from(q.scale - scale).ok()?;
            q.unscaled.checked_mul(pow10(d)?)
        };
        Some((up(self)?, up(other)?, scale))
    }

    /// Compares values exactly.
    pub fn cmp(&self, other: &Quantity) -> Ordering {
        match self.aligned(other) {
            Some((a, b, _)) => a.cmp(&b),
            // The one that does not fit at the smaller scale is the larger
            // magnitude.
            None if self.scale > other.scale => self.unscaled.signum().cmp(&0),
            None => 0.cmp(&other.unscaled.signum()),
        }
    }

    /// The exact sum, `None` on overflow.
    pub fn checked_add(&self, other: &Quantity) -> Option<Quantity> {
        let (a, b, scale) = self.aligned(other)?;
        Some(Quantity::new(a.checked_add(b)?, scale))
    }

    /// The value with the opposite sign.
    pub fn negated(&self) -> Quantity {
        Quantity {
            unscaled: -self.unscaled,
            scale: self.scale,
        }
    }
}

impl Quantity {
    /// Zero.
    pub fn zero() -> Quantity {
        Quantity::new(0, 0)
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.unscaled == 0
    }

    /// The canonical form upstream prints: binary suffixes (`Ki` ... `Ei`)
    /// for a value written in binary-SI that is a whole multiple of one,
    /// else decimal-SI with the largest suffix that keeps the mantissa an
    /// integer (`1500`, `1k`, `500m`).
    pub fn to_canonical(&self, binary_si: bool) -> String {
        if binary_si && self.scale >= 0 {
            if let Some(v) = pow10(self.scale as u32).and_then(|p| self.unscaled.checked_mul(p)) {
                const SUFFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
                let mut k = 0usize;
                while k < 6 && v != 0 && v % (1i128 << (10 * (k + 1))) == 0 {
                    k += 1;
                }
                return format!("{}{}", v >> (10 * k), SUFFIXES[k]);
            }
        }
        let exp = (self.scale.div_euclid(3) * 3).clamp(-9, 18);
        let mantissa = match pow10((self.scale - exp) as u32) {
            Some(p) => self.unscaled.saturating_mul(p),
            None => i128::MAX,
        };
        let suffix = match exp {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            18 => "E",
            _ => "",
        };
        format!("{mantissa}{suffix}")
    }
}

/// Whether a quantity string uses a binary-SI suffix (`Ki` ... `Ei`), the
/// format upstream keeps when it adds to it.
pub fn is_binary_si(s: &str) -> bool {
    ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
        .iter()
        .any(|x| s.ends_with(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        Quantity::parse(s).unwrap().to_canonical(is_binary_si(s))
    }

    #[test]
    fn canonical_forms() {
        assert_eq!(canon("1500"), "1500");
        assert_eq!(canon("1000"), "1k");
        assert_eq!(canon("2000m"), "2");
        assert_eq!(canon("0.5"), "500m");
        assert_eq!(canon("1.5Gi"), "1536Mi");
        assert_eq!(canon("1024Ki"), "1Mi");
        assert_eq!(canon("0"), "0");
        assert_eq!(canon("100m"), "100m");
        assert_eq!(canon("1e3"), "1k");
        let sum = Quantity::parse("1Gi")
            .unwrap()
            .checked_add(&Quantity::parse("512Mi").unwrap())
            .unwrap();
        assert_eq!(sum.to_canonical(true), "1536Mi");
    }
}

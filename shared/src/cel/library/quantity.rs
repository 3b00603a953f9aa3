//! The quantity library (upstream `library.Quantity`): `quantity(s)`,
//! `isQuantity(s)`, and on a `kubernetes.Quantity`: `sign`, `isInteger`,
//! `asInteger`, `asApproximateFloat`, `compareTo`, `isGreaterThan`,
//! `isLessThan`, `add` and `sub` (with a quantity or an int).
//!
//! A quantity is held exactly as `unscaled × 10^scale` (normalised, so `==`
//! compares values: `quantity('1') == quantity('1000m')`), parsed with
//! upstream's grammar and rounded up to nano precision as upstream does.
//! Values beyond an `i128` mantissa are refused (upstream accepts them with
//! arbitrary precision).

use std::cmp::Ordering;

use ::cel::common::types::{CelBool, CelDouble, CelInt, CelString};
use ::cel::{DeclarationError, Env, ExecutionError};

use super::{fail, object_type};

/// An exact decimal quantity: `unscaled × 10^scale`, normalised (no trailing
/// zeros in `unscaled`, zero has scale 0).
#[derive(Clone, Debug)]
pub struct Quantity {
    unscaled: i128,
    scale: i32,
}

object_type!(Quantity, QUANTITY_TYPE, "kubernetes.Quantity");

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

const FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const NUMERIC: &str = "unable to parse numeric part of quantity";
const SUFFIX: &str = "unable to parse quantity's suffix";

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

impl Quantity {
    fn new(unscaled: i128, scale: i32) -> Quantity {
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

    fn checked_add(&self, other: &Quantity) -> Option<Quantity> {
        let (a, b, scale) = self.aligned(other)?;
        Some(Quantity::new(a.checked_add(b)?, scale))
    }

    fn negated(&self) -> Quantity {
        Quantity {
            unscaled: -self.unscaled,
            scale: self.scale,
        }
    }
}

fn quantity(s: &CelString<'_>) -> Result<Quantity, ExecutionError> {
    Quantity::parse(s).map_err(|e| fail("quantity", e))
}

fn is_quantity(s: &CelString<'_>) -> CelBool {
    Quantity::parse(s).is_ok().into()
}

fn sign(q: &Quantity) -> CelInt {
    q.sign().into()
}

fn is_integer(q: &Quantity) -> CelBool {
    q.as_i64().is_some().into()
}

fn as_integer(q: &Quantity) -> Result<CelInt, ExecutionError> {
    q.as_i64()
        .map(CelInt::from)
        .ok_or_else(|| fail("asInteger", "cannot convert value to integer"))
}

fn as_approximate_float(q: &Quantity) -> CelDouble {
    q.as_f64().into()
}

fn compare_to(q: &Quantity, o: &Quantity) -> CelInt {
    (q.cmp(o) as i64).into()
}

fn is_greater_than(q: &Quantity, o: &Quantity) -> CelBool {
    (q.cmp(o) == Ordering::Greater).into()
}

fn is_less_than(q: &Quantity, o: &Quantity) -> CelBool {
    (q.cmp(o) == Ordering::Less).into()
}

fn overflow() -> ExecutionError {
    fail("add", "quantity overflow")
}

fn add(q: &Quantity, o: &Quantity) -> Result<Quantity, ExecutionError> {
    q.checked_add(o).ok_or_else(overflow)
}

fn add_int(q: &Quantity, o: &CelInt) -> Result<Quantity, ExecutionError> {
    add(q, &Quantity::new(i128::from(*o.inner()), 0))
}

fn sub(q: &Quantity, o: &Quantity) -> Result<Quantity, ExecutionError> {
    add(q, &o.negated())
}

fn sub_int(q: &Quantity, o: &CelInt) -> Result<Quantity, ExecutionError> {
    add(q, &Quantity::new(-i128::from(*o.inner()), 0))
}

/// Registers the quantity library.
pub fn register(env: &mut Env) -> Result<(), DeclarationError> {
    ::cel::add_overload!(env, fn quantity: (CelString) -> Result<Quantity>)?;
    ::cel::add_overload!(env, fn is_quantity: (CelString) -> CelBool)?;
    ::cel::add_member_overload!(env, fn sign: (Quantity) -> CelInt)?;
    ::cel::add_member_overload!(env, fn is_integer: (Quantity) -> CelBool)?;
    ::cel::add_member_overload!(env, fn as_integer: (Quantity) -> Result<CelInt>)?;
    ::cel::add_member_overload!(env, fn as_approximate_float: (Quantity) -> CelDouble)?;
    ::cel::add_member_overload!(env, fn compare_to: (Quantity, Quantity) -> CelInt)?;
    ::cel::add_member_overload!(env, fn is_greater_than: (Quantity, Quantity) -> CelBool)?;
    ::cel::add_member_overload!(env, fn is_less_than: (Quantity, Quantity) -> CelBool)?;
    ::cel::add_member_overload!(env, fn add: (Quantity, Quantity) -> Result<Quantity>)?;
    ::cel::add_member_overload!(env, fn add_int: (Quantity, CelInt) -> Result<Quantity>, name = "add")?;
    ::cel::add_member_overload!(env, fn sub: (Quantity, Quantity) -> Result<Quantity>)?;
    ::cel::add_member_overload!(env, fn sub_int: (Quantity, CelInt) -> Result<Quantity>, name = "sub")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_err, assert_true};
    use super::*;

    #[test]
    fn parses_upstream_grammar() {
        let q = |s: &str| Quantity::parse(s).map(|q| (q.unscaled, q.scale));
        assert_eq!(q("100m"), Ok((1, -1)));
        assert_eq!(q("1Gi"), Ok((1 << 30, 0)));
        assert_eq!(q("1.5k"), Ok((15, 2)));
        assert_eq!(q("-2e3"), Ok((-2, 3)));
        assert_eq!(q(".5"), Ok((5, -1)));
        assert_eq!(q("0.0000000001"), Ok((1, -9)), "rounded up to nano");
        assert_eq!(q("abc"), Err(FORMAT_WRONG));
        assert_eq!(q("1Zi"), Err(FORMAT_WRONG));
        assert_eq!(q(""), Err(FORMAT_WRONG));
        assert_eq!(q("512Gu"), Err(SUFFIX));
        assert_eq!(q("1.2.3"), Err(NUMERIC));
    }

    #[test]
    fn cel_functions() {
        assert_true(&[
            "isQuantity('1Gi') && !isQuantity('1Zi') && !isQuantity('')",
            "quantity('1') == quantity('1000m')",
            "quantity('1Gi') != quantity('1G')",
            "quantity('1Gi').isGreaterThan(quantity('1G'))",
            "quantity('100m').isLessThan(quantity('1'))",
            "quantity('2').compareTo(quantity('2000m')) == 0",
            "quantity('1').compareTo(quantity('2')) == -1",
            "quantity('1k').asInteger() == 1000",
            "quantity('1.5').isInteger() == false && quantity('1Ei').isInteger()",
            "quantity('100Ei').isInteger() == false",
            "quantity('500m').asApproximateFloat() == 0.5",
            "quantity('-3').sign() == -1 && quantity('0').sign() == 0 && quantity('5m').sign() == 1",
            "quantity('1').add(quantity('500m')) == quantity('1.5')",
            "quantity('1').add(2) == quantity('3')",
            "quantity('1').sub(quantity('1500m')) == quantity('-0.5')",
            "quantity('10').sub(3).asInteger() == 7",
        ]);
        assert_err(&[
            (
                "quantity('abc')",
                "quantities must match the regular expression",
            ),
            (
                "quantity('1.5').asInteger()",
                "cannot convert value to integer",
            ),
        ]);
    }
}

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

use ::cel::common::types::{CelBool, CelDouble, CelInt, CelString};
use ::cel::{DeclarationError, Env, ExecutionError};

use super::{fail, object_type};

use std::cmp::Ordering;

pub use crate::apimachinery::quantity::Quantity;
#[cfg(test)]
use crate::apimachinery::quantity::{FORMAT_WRONG, NUMERIC, SUFFIX};

object_type!(Quantity, QUANTITY_TYPE, "kubernetes.Quantity");

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

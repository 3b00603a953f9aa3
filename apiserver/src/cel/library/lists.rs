//! The Kubernetes lists library (upstream `library.Lists`): on a list,
//! `isSorted()`, `sum()`, `min()`, `max()`, `indexOf(x)`, `lastIndexOf(x)`.
//! (`slice`, `flatten`, `distinct`, `reverse`, `sort` come from the `cel`
//! crate's lists extension.)
//!
//! Elements are compared and added with their own CEL operators, so a list
//! of ints, doubles, strings, durations or quantities-like comparables works;
//! a list that mixes incomparable types is an error, as upstream.

use std::cmp::Ordering;

use ::cel::common::types::{CelInt, DYN_TYPE, LIST_TYPE};
use ::cel::common::value::{CowVal, Val};
use ::cel::ExecutionError;
use ::cel::{DeclarationError, Env};

use super::fail;

fn elements<'b, 'v>(
    list: &'b (dyn Val + 'v),
    function: &str,
) -> Result<Vec<&'b (dyn Val + 'v)>, ExecutionError> {
    let it = list
        .as_iterable()
        .ok_or_else(|| fail(function, "receiver is not a list"))?;
    let mut iter = it.iter();
    let mut out = Vec::new();
    while let Some(v) = iter.next() {
        out.push(v);
    }
    Ok(out)
}

fn compare(function: &str, a: &dyn Val, b: &dyn Val) -> Result<Ordering, ExecutionError> {
    a.as_comparer()
        .ok_or_else(|| {
            fail(
                function,
                format!(
                    "no such overload: {} < {}",
                    a.get_type().name(),
                    b.get_type().name()
                ),
            )
        })?
        .compare(b)
}

fn receiver<'b, 'v>(
    args: &'b [CowVal<'b, 'v>],
    n: usize,
) -> Result<&'b (dyn Val + 'v), ExecutionError> {
    if args.len() != n {
        return Err(ExecutionError::invalid_argument_count(n, args.len()));
    }
    Ok(args[0].as_ref())
}

fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = elements(receiver(&args, 1)?, "isSorted")?;
    for w in list.windows(2) {
        if compare("isSorted", w[0], w[1])? == Ordering::Greater {
            return Ok(CowVal::owned(::cel::common::types::CelBool::from(false)));
        }
    }
    Ok(CowVal::owned(::cel::common::types::CelBool::from(true)))
}

fn extreme<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    function: &str,
    want: Ordering,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = elements(receiver(&args, 1)?, function)?;
    let mut best = *list
        .first()
        .ok_or_else(|| fail(function, format!("{function} called on empty list")))?;
    for v in &list[1..] {
        if compare(function, *v, best)? == want {
            best = *v;
        }
    }
    Ok(CowVal::from(best.clone_as_boxed()))
}

fn min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "min", Ordering::Less)
}

fn max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "max", Ordering::Greater)
}

fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = elements(receiver(&args, 1)?, "sum")?;
    let Some((first, rest)) = list.split_first() else {
        // Upstream returns the zero value of the element type; without a
        // type checker the element type of an empty list is unknown: int.
        return Ok(CowVal::owned(CelInt::from(0)));
    };
    let mut total: Box<dyn Val + 'v> = first.clone_as_boxed();
    for v in rest {
        let adder = total.as_adder().ok_or_else(|| {
            fail(
                "sum",
                format!(
                    "no such overload: {} + {}",
                    total.get_type().name(),
                    v.get_type().name()
                ),
            )
        })?;
        let next = adder.add(*v)?.into_owned();
        total = next;
    }
    Ok(CowVal::from(total))
}

fn position<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    function: &str,
    last: bool,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = elements(receiver(&args, 2)?, function)?;
    let needle = args[1].as_ref();
    let found = if last {
        list.iter().rposition(|v| v.equals(needle))
    } else {
        list.iter().position(|v| v.equals(needle))
    };
    Ok(CowVal::owned(CelInt::from(found.map_or(-1, |i| i as i64))))
}

fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    position(args, "indexOf", false)
}

fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    position(args, "lastIndexOf", true)
}

/// Registers the lists library.
pub fn register(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload("isSorted", "list.isSorted()", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list.sum()", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list.min()", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list.max()", LIST_TYPE, vec![], max)?;
    env.add_member_overload(
        "indexOf",
        "list.indexOf(dyn)",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list.lastIndexOf(dyn)",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_err, assert_true};

    #[test]
    fn list_functions() {
        assert_true(&[
            "[1, 2, 2, 3].isSorted() && ![2, 1].isSorted() && [].isSorted() && ['a', 'b'].isSorted()",
            "[1, 2, 3].sum() == 6 && [1.5, 2.5].sum() == 4.0 && [].sum() == 0",
            "[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3 && ['b', 'a'].min() == 'a'",
            "[1, 2, 3, 2].indexOf(2) == 1 && [1, 2, 3, 2].lastIndexOf(2) == 3 && [1].indexOf(5) == -1",
            "['a', 'b'].indexOf('b') == 1 && 'abcb'.indexOf('b') == 1",
        ]);
        assert_err(&[
            ("[].min()", "min called on empty list"),
            ("[1, 'a'].max()", ""),
        ]);
    }
}

//! The regex library (upstream `library.Regex`): `s.find(re)` (the first
//! match, or `''`), `s.findAll(re)` and `s.findAll(re, n)` (at most `n`
//! matches; a negative `n` means all).

use ::cel::common::types::{CelInt, CelList, CelString};
use ::cel::common::value::Val;
use ::cel::{DeclarationError, Env, ExecutionError};

use super::fail;

fn compile(function: &str, re: &str) -> Result<regex::Regex, ExecutionError> {
    regex::Regex::new(re).map_err(|e| fail(function, format!("'{re}' not a valid regex:\n{e}")))
}

fn find(s: &CelString<'_>, re: &CelString<'_>) -> Result<CelString<'static>, ExecutionError> {
    let re = compile("find", re)?;
    Ok(re
        .find(s)
        .map(|m| m.as_str().to_string())
        .unwrap_or_default()
        .into())
}

fn find_all_n(
    s: &CelString<'_>,
    re: &CelString<'_>,
    n: &CelInt,
) -> Result<CelList<'static>, ExecutionError> {
    let re = compile("findAll", re)?;
    let limit = usize::try_from(*n.inner()).unwrap_or(usize::MAX);
    let items: Vec<Box<dyn Val>> = re
        .find_iter(s)
        .take(limit)
        .map(|m| Box::new(CelString::from(m.as_str().to_string())) as Box<dyn Val>)
        .collect();
    Ok(CelList::from(items))
}

fn find_all(s: &CelString<'_>, re: &CelString<'_>) -> Result<CelList<'static>, ExecutionError> {
    find_all_n(s, re, &CelInt::from(-1))
}

/// Registers the regex library.
pub fn register(env: &mut Env) -> Result<(), DeclarationError> {
    ::cel::add_member_overload!(env, fn find: (CelString, CelString) -> Result<CelString>)?;
    ::cel::add_member_overload!(env, fn find_all: (CelString, CelString) -> Result<CelList>)?;
    ::cel::add_member_overload!(env, fn find_all_n: (CelString, CelString, CelInt) -> Result<CelList>, name = "findAll")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_err, assert_true};

    #[test]
    fn find_and_find_all() {
        assert_true(&[
            "'abc 123'.find('[0-9]+') == '123'",
            "'abc'.find('[0-9]+') == ''",
            "'123 abc 456'.findAll('[0-9]+') == ['123', '456']",
            "'123 abc 456'.findAll('[0-9]+', 1) == ['123']",
            "'123 abc 456'.findAll('[0-9]+', 0) == []",
            "'123 abc 456'.findAll('[0-9]+', -1) == ['123', '456']",
        ]);
        assert_err(&[("'abc'.find('[')", "not a valid regex")]);
    }
}

//! The format library (upstream `library.Format`): `format.dns1123Label()`,
//! `format.dns1123Subdomain()`, `format.dns1035Label()`,
//! `format.qualifiedName()`, the `...Prefix()` variants, `format.labelValue()`,
//! `format.uri()`, `format.uuid()`, `format.byte()`, `format.date()`,
//! `format.datetime()`, `format.named(name)` (an optional format), and
//! `<format>.validate(s)`: `optional.none()` when `s` is valid, otherwise an
//! optional list of the error messages (upstream's name-validation messages).

use ::cel::common::types::{CelList, CelOptional, CelString};
use ::cel::common::value::{CowVal, Val};
use ::cel::{DeclarationError, Env, ExecutionError};

use super::object_type;
use crate::apimachinery::validation::names;

/// A `kubernetes.NamedFormat`.
#[derive(Clone, Debug, PartialEq)]
pub struct Format(&'static str);

object_type!(Format, FORMAT_TYPE, "kubernetes.NamedFormat");

/// Every format name `format.named` knows.
const NAMES: &[&str] = &[
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

/// The errors of `s` in `format` (empty: valid).
pub fn errors(format: &str, s: &str) -> Vec<String> {
    let fmt = |name: &str, msg: &str| match crate::apimachinery::validation::format::check(name, s)
    {
        Some(false) => vec![msg.to_string()],
        _ => vec![],
    };
    match format {
        "dns1123Label" => names::is_dns1123_label(s),
        "dns1123Subdomain" => names::is_dns1123_subdomain(s),
        "dns1035Label" => names::is_dns1035_label(s),
        "qualifiedName" => names::is_qualified_name(s),
        "dns1123LabelPrefix" => names::name_is_dns_label(s, true),
        "dns1123SubdomainPrefix" => names::name_is_dns_subdomain(s, true),
        "dns1035LabelPrefix" => names::name_is_dns1035_label(s, true),
        "labelValue" => names::is_valid_label_value(s),
        "uri" => match super::url::parse_url(s) {
            Ok(_) => vec![],
            Err(_) => vec!["invalid URI".to_string()],
        },
        "uuid" => fmt("uuid", "does not match the UUID format"),
        "byte" => fmt("byte", "invalid base64"),
        "date" => fmt("date", "invalid date"),
        "datetime" => fmt("date-time", "invalid datetime"),
        _ => vec![],
    }
}

macro_rules! format_constructors {
    ($($f:ident => $name:literal),* $(,)?) => {
        $(
            fn $f<'b, 'v>(_: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
                Ok(CowVal::owned(Format($name)))
            }
        )*
        const CONSTRUCTORS: &[(&str, ::cel::common::functions::Function)] = &[
            $(($name, $f)),*
        ];
    };
}

format_constructors!(
    dns1123_label => "dns1123Label",
    dns1123_subdomain => "dns1123Subdomain",
    dns1035_label => "dns1035Label",
    qualified_name => "qualifiedName",
    dns1123_label_prefix => "dns1123LabelPrefix",
    dns1123_subdomain_prefix => "dns1123SubdomainPrefix",
    dns1035_label_prefix => "dns1035LabelPrefix",
    label_value => "labelValue",
    uri => "uri",
    uuid => "uuid",
    byte => "byte",
    date => "date",
    datetime => "datetime",
);

fn named(name: &CelString<'_>) -> CelOptional<'static> {
    match NAMES.iter().find(|n| **n == name.inner()) {
        Some(n) => CelOptional::of(Box::new(Format(n))),
        None => CelOptional::none(),
    }
}

fn validate(f: &Format, s: &CelString<'_>) -> CelOptional<'static> {
    let errs = errors(f.0, s);
    if errs.is_empty() {
        return CelOptional::none();
    }
    let list: Vec<Box<dyn Val>> = errs
        .into_iter()
        .map(|e| Box::new(CelString::from(e)) as Box<dyn Val>)
        .collect();
    CelOptional::of(Box::new(CelList::from(list)))
}

/// Registers the format library.
pub fn register(env: &mut Env) -> Result<(), DeclarationError> {
    for (name, f) in CONSTRUCTORS {
        let function = format!("format.{name}");
        env.add_overload(&function, &format!("{function}()"), vec![], *f)?;
    }
    ::cel::add_overload!(env, fn named: (CelString) -> CelOptional, name = "format.named")?;
    ::cel::add_member_overload!(env, fn validate: (Format, CelString) -> CelOptional)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::assert_true;

    #[test]
    fn format_validate() {
        assert_true(&[
            "!format.dns1123Label().validate('my-name').hasValue()",
            "format.dns1123Label().validate('My_Name').hasValue()",
            "format.dns1123Label().validate('My_Name').value()[0].startsWith('a lowercase RFC 1123 label must consist of')",
            "!format.dns1123Subdomain().validate('a.b.c').hasValue()",
            "format.dns1035Label().validate('1abc').hasValue()",
            "!format.qualifiedName().validate('example.com/name').hasValue()",
            "!format.dns1123LabelPrefix().validate('prefix-').hasValue()",
            "!format.labelValue().validate('').hasValue()",
            "!format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()",
            "format.uuid().validate('nope').hasValue()",
            "format.named('dns1123Label').hasValue() && !format.named('nope').hasValue()",
            "!format.named('dns1123Label').value().validate('ok').hasValue()",
            "format.date().validate('2024-13-01').hasValue() && !format.datetime().validate('2024-01-01T00:00:00Z').hasValue()",
        ]);
    }
}

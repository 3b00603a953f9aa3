//! The Kubernetes CEL libraries (upstream `k8s.io/apiserver/pkg/cel/library`)
//! written on the `cel` crate's extension API: quantity, IP/CIDR, URL, regex
//! (`find`, `findAll`), lists (`isSorted`, `sum`, `min`, `max`, `indexOf`,
//! `lastIndexOf`) and format (`format.dns1123Label().validate(s)`, ...). The
//! strings extension functions (`charAt`, `indexOf`, `lowerAscii`, `split`,
//! `join`, ...) come from the `cel` crate's own `strings` extension.
//!
//! Each library is a function that registers its overloads on an
//! [`Env`](::cel::Env); [`register`] adds them all.

pub mod authz;
pub mod format;
pub mod lists;
pub mod net;
pub mod quantity;
pub mod regex;
pub mod url;

use ::cel::{DeclarationError, Env, ExecutionError};

/// Registers every Kubernetes library on `env` (which must already hold the
/// standard library).
pub fn register(env: &mut Env) -> Result<(), DeclarationError> {
    quantity::register(env)?;
    authz::register(env)?;
    net::register(env)?;
    url::register(env)?;
    regex::register(env)?;
    lists::register(env)?;
    format::register(env)?;
    Ok(())
}

/// A function error, reported as `<function>: <message>` by the crate.
pub(crate) fn fail(function: &str, message: impl ToString) -> ExecutionError {
    ExecutionError::function_error(function, message)
}

/// Implements [`Val`](::cel::common::value::Val) for a `'static` Rust type
/// of our own (a Kubernetes library object such as `kubernetes.Quantity`), so
/// that overloads can take and return it; `==` uses the type's `PartialEq`.
macro_rules! object_type {
    ($ty:ident, $type_static:ident, $name:literal) => {
        /// The CEL type of this library's objects.
        pub static $type_static: ::cel::common::types::Type =
            ::cel::common::types::Type::new_unspecified_type($name);

        impl ::cel::common::value::Val for $ty {
            fn get_type(&self) -> &::cel::common::types::Type {
                &$type_static
            }
            fn cel_type() -> &'static ::cel::common::types::Type {
                &$type_static
            }
            fn equals(&self, other: &dyn ::cel::common::value::Val) -> bool {
                other.downcast_ref::<$ty>().is_some_and(|o| o == self)
            }
            fn clone_as_boxed<'v>(&self) -> Box<dyn ::cel::common::value::Val + 'v> {
                Box::new(self.clone())
            }
            fn as_any(&self) -> Option<&dyn std::any::Any> {
                Some(self)
            }
        }
        impl ::cel::common::value::StaticVal for $ty {}
    };
}
pub(crate) use object_type;

#[cfg(test)]
pub(crate) mod test_support {
    use std::sync::Arc;

    /// Evaluates `expr` in the validation-rule environment.
    pub fn eval(expr: &str) -> Result<::cel::Value, String> {
        let env = super::super::env();
        let program = super::super::compile(expr)?;
        let ctx = ::cel::Context::with_env(Arc::clone(&env));
        program.execute(&ctx).map_err(|e| e.to_string())
    }

    /// Asserts that each expression evaluates to `true`.
    pub fn assert_true(exprs: &[&str]) {
        for e in exprs {
            assert_eq!(eval(e), Ok(::cel::Value::Bool(true)), "{e}");
        }
    }

    /// Asserts that each expression fails with an error containing `msg`.
    pub fn assert_err(cases: &[(&str, &str)]) {
        for (e, msg) in cases {
            match eval(e) {
                Err(got) => assert!(got.contains(msg), "{e}: {got}"),
                Ok(v) => panic!("{e}: expected an error, got {v:?}"),
            }
        }
    }
}

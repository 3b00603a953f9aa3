//! CEL: the environment with Kubernetes' libraries ([`library`]), cost
//! estimation ([`cost`]), compiled expressions with typed variables
//! ([`expression`], used by admission policies and match conditions). Type
//! checking against OpenAPI schemas is [`crate::schema::typecheck`]; the schema's
//! `x-kubernetes-validations` rules are evaluated by [`crate::schema::cel`].

pub mod cost;
pub mod expression;
pub mod library;
pub mod nesting;

use std::sync::Arc;

use serde_json::Value;

/// Upstream's `PerCallLimit`.
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// Upstream's `RuntimeCELCostBudget` per object.
pub const RUNTIME_BUDGET: u64 = 10_000_000;
/// Upstream's `StaticEstimatedCostLimit`: the most one rule may cost (times
/// the number of times it can run) when a CRD is written.
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// Upstream's `StaticEstimatedCRDCostLimit`: the most all rules of a schema
/// may cost together.
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;

/// The CEL environment of validation rules: the standard library, the
/// `cel` crate's strings, lists and math extensions (cel-go's, which
/// Kubernetes enables too), and the Kubernetes libraries of [`library`]
/// (quantity, IP/CIDR, URL, regex, lists, format).
pub(crate) fn env() -> Arc<::cel::Env> {
    static ENV: std::sync::OnceLock<Arc<::cel::Env>> = std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = ::cel::Env::stdlib();
        for ext in [
            ::cel::extensions::strings
                as fn(&mut ::cel::Env) -> Result<(), ::cel::DeclarationError>,
            ::cel::extensions::lists,
            ::cel::extensions::math,
        ] {
            if let Err(e) = env.add_extension(ext) {
                tracing::warn!(error = %e, "CEL extension not available");
            }
        }
        if let Err(e) = library::register(&mut env) {
            tracing::warn!(error = %e, "Kubernetes CEL libraries not available");
        }
        Arc::new(env)
    })
    .clone()
}

/// Compiles `src` in [`env`], refusing first what nests beyond
/// [`nesting::MAX_NESTING`] (the crate's parser and every walk over its tree
/// recurse). Every compilation of request-supplied CEL goes through here.
pub(crate) fn compile(src: &str) -> Result<::cel::Program, String> {
    nesting::check(src)?;
    env().compile(src).map_err(|e| e.to_string())
}

pub(crate) fn compile_rule(src: &str) -> Result<::cel::Program, String> {
    compile(src)
}

/// A JSON value as a CEL value (integers as `int`).
pub fn to_cel(v: &Value) -> ::cel::Value {
    match v {
        Value::Null => ::cel::Value::Null,
        Value::Bool(b) => ::cel::Value::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => ::cel::Value::Int(i),
            (None, Some(u)) => ::cel::Value::UInt(u),
            _ => ::cel::Value::Float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => ::cel::Value::String(Arc::new(s.clone())),
        Value::Array(a) => ::cel::Value::List(Arc::new(a.iter().map(to_cel).collect())),
        Value::Object(m) => {
            let map: std::collections::HashMap<String, ::cel::Value> =
                m.iter().map(|(k, v)| (k.clone(), to_cel(v))).collect();
            ::cel::Value::from(map)
        }
    }
}

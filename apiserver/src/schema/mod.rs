//! The structural-schema engine: one compiled OpenAPI v3 schema (as CRDs
//! declare them in `openAPIV3Schema`) that validates objects with upstream's
//! messages and field paths, prunes unknown fields and applies defaults.
//!
//! It is independent of CRDs: a [`Schema`] is compiled from any JSON schema
//! value, so built-in kinds can be validated, pruned and defaulted by the same
//! code once their schemas are fed to it.
//!
//! - [`Schema::validate`]: types, formats, enums, bounds, patterns, required,
//!   list types (`set`/`map` uniqueness), `allOf`/`anyOf`/`oneOf`/`not`
//!   (after upstream's kube-openapi validator and `schema/listtype`);
//! - [`Schema::prune`]: drops fields the schema does not declare, honouring
//!   `x-kubernetes-preserve-unknown-fields` and embedded resources
//!   (`schema/pruning`), and reports what was dropped;
//! - [`Schema::apply_defaults`]: fills `default:` values (`schema/defaulting`);
//! - [`structural::check`]: whether a schema is structural and uses only the
//!   keywords CRDs allow (`schema/validation.go`);
//! - [`ratchet::ratchet`]: on update, errors about unchanged values are dropped.

pub mod cel;
pub mod compile;
pub mod openapi;
pub mod prune;
pub mod ratchet;
pub mod structural;
pub mod typecheck;
pub mod validate;

pub use compile::Schema;

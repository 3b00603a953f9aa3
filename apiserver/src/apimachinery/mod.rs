//! API machinery: the vocabulary every other layer speaks, and a leaf that
//! imports nothing else of this crate (after upstream's `k8s.io/apimachinery`).
//!
//! - [`errors`]: `metav1.Status` errors ([`errors::ApiError`]) with upstream's
//!   codes, reasons and messages. Storage and the registry return them as
//!   domain errors; only the endpoints turn one into an HTTP response.
//! - [`validation`]: field errors and paths, name formats, `ObjectMeta` rules;
//! - [`meta`]: reading and writing `metadata` of a JSON object;
//! - [`labels`] and [`fields`]: label and field selectors;
//! - [`quantity`] and [`duration`]: `resource.Quantity` and Go durations.

pub mod duration;
pub mod errors;
pub mod fields;
pub mod labels;
pub mod meta;
pub mod quantity;
pub mod validation;

//! Validation helpers shared by all kinds: field errors and paths
//! ([`field_error`]), name and label formats ([`names`]) and `ObjectMeta`
//! rules ([`object_meta`]), after upstream's apimachinery validation
//! packages, with upstream's exact messages.

pub mod field_error;
pub mod format;
pub mod names;
pub mod object_meta;

pub use field_error::{aggregate_message, go_quote, FieldError, FieldErrorType, FieldPath};
pub use object_meta::{
    prepare_object_meta_for_update, validate_label_selector, validate_object_meta,
    validate_object_meta_generic, validate_object_meta_update, validate_object_meta_update_generic,
    NameRule,
};

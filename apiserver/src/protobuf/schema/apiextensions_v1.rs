//! apiextensions.k8s.io/v1 messages: CustomResourceDefinition (and its
//! list) with the recursive `JSONSchemaProps`, written from upstream's
//! `k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/generated.proto`
//! (JSON names from the Go struct tags in `types.go` and
//! `types_jsonschema.go`).
//!
//! The JSON-polymorphic helpers (`JSON`, `JSONSchemaPropsOrArray`,
//! `JSONSchemaPropsOrBool`, `JSONSchemaPropsOrStringArray`) are [`Kind`]s
//! of their own, handled in `decode.rs` and `encode.rs`.

use super::*;

/// The recursive schema message the polymorphic kinds carry.
pub(crate) const JSON_SCHEMA_PROPS: &str = "apiextensions.v1.JSONSchemaProps";

/// A `JSON` {raw=1}: the bytes are JSON text.
const fn json(tag: u32, name: &'static str) -> Field {
    field(tag, name, Kind::Json, Card::Single)
}
/// `repeated JSON`.
const fn rjson(tag: u32, name: &'static str) -> Field {
    field(tag, name, Kind::Json, Card::Repeated)
}
/// A pointer `double`.
const fn dp(tag: u32, name: &'static str) -> Field {
    field(tag, name, Kind::Double, Card::Single)
}

/// apiextensions.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    top_level(
        "apiextensions.v1.CustomResourceDefinition",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "apiextensions.v1.CustomResourceDefinitionSpec"),
            m(
                3,
                "status",
                "apiextensions.v1.CustomResourceDefinitionStatus",
            ),
        ],
    ),
    msg(
        "apiextensions.v1.CustomResourceDefinitionSpec",
        &[
            s(1, "group"),
            m(3, "names", "apiextensions.v1.CustomResourceDefinitionNames"),
            s(4, "scope"),
            rm(
                7,
                "versions",
                "apiextensions.v1.CustomResourceDefinitionVersion",
            ),
            m(9, "conversion", "apiextensions.v1.CustomResourceConversion"),
            b(10, "preserveUnknownFields"),
        ],
    ),
    msg(
        "apiextensions.v1.CustomResourceDefinitionNames",
        &[
            s(1, "plural"),
            s(2, "singular"),
            rs(3, "shortNames"),
            s(4, "kind"),
            s(5, "listKind"),
            rs(6, "categories"),
        ],
    ),
    msg(
        "apiextensions.v1.CustomResourceConversion",
        &[
            s(1, "strategy"),
            m(2, "webhook", "apiextensions.v1.WebhookConversion"),
        ],
    ),
    msg(
        "apiextensions.v1.WebhookConversion",
        &[
            m(2, "clientConfig", "apiextensions.v1.WebhookClientConfig"),
            rs(3, "conversionReviewVersions"),
        ],
    ),
    msg(
        "apiextensions.v1.WebhookClientConfig",
        &[
            sp(3, "url"),
            m(1, "service", "apiextensions.v1.ServiceReference"),
            by(2, "caBundle"),
        ],
    ),
    msg(
        "apiextensions.v1.ServiceReference",
        &[
            s(1, "namespace"),
            s(2, "name"),
            sp(3, "path"),
            int32p(4, "port"),
        ],
    ),
    msg(
        "apiextensions.v1.CustomResourceDefinitionVersion",
        &[
            s(1, "name"),
            // `served` and `storage` have no omitempty: false is written.
            bp(2, "served"),
            bp(3, "storage"),
            b(7, "deprecated"),
            sp(8, "deprecationWarning"),
            m(4, "schema", "apiextensions.v1.CustomResourceValidation"),
            m(
                5,
                "subresources",
                "apiextensions.v1.CustomResourceSubresources",
            ),
            rm(
                6,
                "additionalPrinterColumns",
                "apiextensions.v1.CustomResourceColumnDefinition",
            ),
            rm(9, "selectableFields", "apiextensions.v1.SelectableField"),
        ],
    ),
    msg(
        "apiextensions.v1.CustomResourceValidation",
        &[m(1, "openAPIV3Schema", JSON_SCHEMA_PROPS)],
    ),
    msg(
        "apiextensions.v1.CustomResourceSubresources",
        &[
            m(
                1,
                "status",
                "apiextensions.v1.CustomResourceSubresourceStatus",
            ),
            m(
                2,
                "scale",
                "apiextensions.v1.CustomResourceSubresourceScale",
            ),
        ],
    ),
    msg("apiextensions.v1.CustomResourceSubresourceStatus", &[]),
    msg(
        "apiextensions.v1.CustomResourceSubresourceScale",
        &[
            s(1, "specReplicasPath"),
            s(2, "statusReplicasPath"),
            sp(3, "labelSelectorPath"),
        ],
    ),
    msg(
        "apiextensions.v1.CustomResourceColumnDefinition",
        &[
            s(1, "name"),
            s(2, "type"),
            s(3, "format"),
            s(4, "description"),
            int32(5, "priority"),
            s(6, "jsonPath"),
        ],
    ),
    msg("apiextensions.v1.SelectableField", &[s(1, "jsonPath")]),
    msg(
        "apiextensions.v1.CustomResourceDefinitionStatus",
        &[
            rm(
                1,
                "conditions",
                "apiextensions.v1.CustomResourceDefinitionCondition",
            ),
            m(
                2,
                "acceptedNames",
                "apiextensions.v1.CustomResourceDefinitionNames",
            ),
            rs(3, "storedVersions"),
            int64(4, "observedGeneration"),
        ],
    ),
    msg(
        "apiextensions.v1.CustomResourceDefinitionCondition",
        &[
            s(1, "type"),
            s(2, "status"),
            time(3, "lastTransitionTime"),
            s(4, "reason"),
            s(5, "message"),
            int64(6, "observedGeneration"),
        ],
    ),
    msg(
        JSON_SCHEMA_PROPS,
        &[
            s(1, "id"),
            s(2, "$schema"),
            sp(3, "$ref"),
            s(4, "description"),
            s(5, "type"),
            s(6, "format"),
            s(7, "title"),
            json(8, "default"),
            dp(9, "maximum"),
            b(10, "exclusiveMaximum"),
            dp(11, "minimum"),
            b(12, "exclusiveMinimum"),
            int64p(13, "maxLength"),
            int64p(14, "minLength"),
            s(15, "pattern"),
            int64p(16, "maxItems"),
            int64p(17, "minItems"),
            b(18, "uniqueItems"),
            dp(19, "multipleOf"),
            rjson(20, "enum"),
            int64p(21, "maxProperties"),
            int64p(22, "minProperties"),
            rs(23, "required"),
            field(24, "items", Kind::SchemaOrArray, Card::Single),
            rm(25, "allOf", JSON_SCHEMA_PROPS),
            rm(26, "oneOf", JSON_SCHEMA_PROPS),
            rm(27, "anyOf", JSON_SCHEMA_PROPS),
            m(28, "not", JSON_SCHEMA_PROPS),
            msm(29, "properties", JSON_SCHEMA_PROPS),
            field(30, "additionalProperties", Kind::SchemaOrBool, Card::Single),
            msm(31, "patternProperties", JSON_SCHEMA_PROPS),
            field(32, "dependencies", Kind::SchemaOrStringArray, Card::Map),
            field(33, "additionalItems", Kind::SchemaOrBool, Card::Single),
            msm(34, "definitions", JSON_SCHEMA_PROPS),
            m(35, "externalDocs", "apiextensions.v1.ExternalDocumentation"),
            json(36, "example"),
            b(37, "nullable"),
            bp(38, "x-kubernetes-preserve-unknown-fields"),
            b(39, "x-kubernetes-embedded-resource"),
            b(40, "x-kubernetes-int-or-string"),
            rs(41, "x-kubernetes-list-map-keys"),
            sp(42, "x-kubernetes-list-type"),
            sp(43, "x-kubernetes-map-type"),
            rm(
                44,
                "x-kubernetes-validations",
                "apiextensions.v1.ValidationRule",
            ),
        ],
    ),
    msg(
        "apiextensions.v1.ExternalDocumentation",
        &[s(1, "description"), s(2, "url")],
    ),
    msg(
        "apiextensions.v1.ValidationRule",
        &[
            s(1, "rule"),
            s(2, "message"),
            s(3, "messageExpression"),
            sp(4, "reason"),
            s(5, "fieldPath"),
            bp(6, "optionalOldSelf"),
        ],
    ),
];

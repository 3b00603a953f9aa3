//! Content negotiation: what the client accepts, what it sent.
//!
//! kubectl asks for `application/json;as=Table;v=v1;g=meta.k8s.io`, the
//! metadata client for `as=PartialObjectMetadataList`, most clients for plain
//! `application/json`. The first acceptable entry of `Accept` wins, as upstream.
//!
//! Bodies are JSON, YAML (`application/yaml`) or, for the kinds the
//! protobuf tables cover (built-in kinds, `Status`,
//! `PartialObjectMetadata(List)` of any resource), Kubernetes protobuf
//! (`application/vnd.kubernetes.protobuf`). `Table` is JSON or YAML only:
//! it has no protobuf message upstream either.

use crate::apimachinery::errors::ApiError;
use crate::registry::table::IncludeObject;

/// The shape of a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// The object or list itself.
    Object,
    /// `meta.k8s.io/v1` Table.
    Table,
    /// `PartialObjectMetadata` (single object).
    PartialObjectMetadata,
    /// `PartialObjectMetadataList`.
    PartialObjectMetadataList,
}

/// The serialization of a response body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// `application/json`, the default.
    #[default]
    Json,
    /// `application/yaml`.
    Yaml,
    /// `application/vnd.kubernetes.protobuf` (`;stream=watch` for watches).
    Protobuf,
}

impl Format {
    /// The `Content-Type` of a response body in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Yaml => "application/yaml",
            Format::Protobuf => crate::protobuf::CONTENT_TYPE,
        }
    }
}

/// A negotiated response format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Negotiated {
    pub output: Output,
    pub include_object: IncludeObject,
    pub pretty: bool,
    /// How the body is serialized.
    pub format: Format,
}

/// Media types this server produces for kinds without protobuf (custom
/// resources), for 406 messages.
pub const SUPPORTED: &[&str] = &["application/json", "application/yaml"];

/// Media types this server produces for kinds with protobuf, for 406
/// messages.
pub const SUPPORTED_WITH_PROTOBUF: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// The format of a media range's type, if this server writes it.
fn range_format(type_: &str) -> Option<Format> {
    match type_.to_ascii_lowercase().as_str() {
        "application/json" | "application/*" | "*/*" | "*" => Some(Format::Json),
        "application/yaml" => Some(Format::Yaml),
        "application/vnd.kubernetes.protobuf" => Some(Format::Protobuf),
        _ => None,
    }
}

/// The format of error (`Status`) bodies for a request's `Accept`: the
/// first entry without an `as=` transformation this server writes, as
/// upstream's error negotiation does (Status has a protobuf message), or
/// JSON.
pub fn error_format(accept: Option<&str>) -> Format {
    accept
        .map(parse_accept)
        .unwrap_or_default()
        .iter()
        .filter(|range| {
            !range
                .params
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("as"))
        })
        .find_map(|range| range_format(range.type_))
        .unwrap_or_default()
}

struct MediaRange<'a> {
    type_: &'a str,
    params: Vec<(&'a str, &'a str)>,
}

fn parse_accept(header: &str) -> Vec<MediaRange<'_>> {
    header
        .split(',')
        .filter_map(|part| {
            let mut pieces = part.split(';').map(str::trim);
            let type_ = pieces.next().filter(|t| !t.is_empty())?;
            let params = pieces
                .filter_map(|p| {
                    p.split_once('=')
                        .map(|(k, v)| (k.trim(), v.trim().trim_matches('"')))
                })
                .collect();
            Some(MediaRange { type_, params })
        })
        .collect()
}

/// Picks the response format for a request whose kind has no protobuf
/// encoding (see [`negotiate_for`]).
pub fn negotiate(
    accept: Option<&str>,
    is_list: bool,
    include_object: Option<&str>,
    pretty: bool,
) -> Result<Negotiated, ApiError> {
    negotiate_for(accept, is_list, include_object, pretty, false)
}

/// Picks the response format for a request.
///
/// `is_list`: the request returns a collection (list or watch).
/// `include_object`: the `includeObject` query parameter, if any.
/// `protobuf`: the resource's objects can be encoded as protobuf
/// (built-in kinds); `PartialObjectMetadata(List)` can be for every kind.
/// Nothing acceptable → 406 NotAcceptable listing what is served.
pub fn negotiate_for(
    accept: Option<&str>,
    is_list: bool,
    include_object: Option<&str>,
    pretty: bool,
    protobuf: bool,
) -> Result<Negotiated, ApiError> {
    let include = match include_object {
        None | Some("") | Some("Metadata") => IncludeObject::Metadata,
        Some("None") => IncludeObject::None,
        Some("Object") => IncludeObject::Object,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "unable to convert to Table: includeObject: Unsupported value: \"{other}\": supported values: \"Metadata\", \"None\", \"Object\""
            )))
        }
    };
    let plain = Negotiated {
        output: Output::Object,
        include_object: include,
        pretty,
        format: Format::Json,
    };
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
        return Ok(plain);
    };
    for range in parse_accept(accept) {
        let Some(format) = range_format(range.type_) else {
            continue;
        };
        let param = |k: &str| {
            range
                .params
                .iter()
                .find(|(pk, _)| pk.eq_ignore_ascii_case(k))
                .map(|(_, v)| *v)
        };
        match param("as") {
            None if format == Format::Protobuf && !protobuf => continue,
            None => return Ok(Negotiated { format, ..plain }),
            Some(as_) => {
                let (g, v) = (param("g").unwrap_or(""), param("v").unwrap_or(""));
                if g != "meta.k8s.io" || !(v == "v1" || v == "v1beta1") {
                    continue;
                }
                let output = match as_ {
                    // Table has no protobuf message.
                    "Table" if format == Format::Protobuf => continue,
                    "Table" => Output::Table,
                    "PartialObjectMetadata" if !is_list => Output::PartialObjectMetadata,
                    "PartialObjectMetadataList" if is_list => Output::PartialObjectMetadataList,
                    _ => continue,
                };
                return Ok(Negotiated {
                    output,
                    include_object: include,
                    pretty,
                    format,
                });
            }
        }
    }
    Err(ApiError::not_acceptable(if protobuf {
        SUPPORTED_WITH_PROTOBUF
    } else {
        SUPPORTED
    }))
}

/// The body formats a write accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyFormat {
    Json,
    /// `application/yaml`: read as the JSON it denotes.
    Yaml,
    /// `application/vnd.kubernetes.protobuf` (built-in kinds; kubectl's
    /// `create` subcommands send it).
    Protobuf,
    JsonPatch,
    MergePatch,
    StrategicMergePatch,
    ApplyPatch,
}

/// Classifies a request body's `Content-Type`.
pub fn body_format(content_type: Option<&str>) -> Result<BodyFormat, ApiError> {
    let ct = content_type.unwrap_or("application/json");
    let media = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match media.as_str() {
        "" | "application/json" => Ok(BodyFormat::Json),
        "application/yaml" => Ok(BodyFormat::Yaml),
        "application/vnd.kubernetes.protobuf" => Ok(BodyFormat::Protobuf),
        "application/json-patch+json" => Ok(BodyFormat::JsonPatch),
        "application/merge-patch+json" => Ok(BodyFormat::MergePatch),
        "application/strategic-merge-patch+json" => Ok(BodyFormat::StrategicMergePatch),
        "application/apply-patch+yaml" => Ok(BodyFormat::ApplyPatch),
        _ => Err(ApiError::unsupported_media_type(ct, &["application/json"])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KUBECTL_GET: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

    #[test]
    fn kubectl_table() {
        let n = negotiate(Some(KUBECTL_GET), true, None, false).unwrap();
        assert_eq!(n.output, Output::Table);
        assert_eq!(n.include_object, IncludeObject::Metadata);
    }

    #[test]
    fn metadata_client() {
        let a = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
        assert_eq!(
            negotiate(Some(a), true, None, false).unwrap().output,
            Output::PartialObjectMetadataList
        );
        // the single form on a get falls through to plain JSON
        assert_eq!(
            negotiate(Some(a), false, None, false).unwrap().output,
            Output::Object
        );
    }

    #[test]
    fn protobuf_for_built_in_kinds() {
        let pb = "application/vnd.kubernetes.protobuf";
        let n = negotiate_for(Some(pb), false, None, false, true).unwrap();
        assert_eq!((n.output, n.format), (Output::Object, Format::Protobuf));
        // client-go's protobuf clients list JSON second.
        let both = "application/vnd.kubernetes.protobuf, application/json";
        assert_eq!(
            negotiate_for(Some(both), true, None, false, true)
                .unwrap()
                .format,
            Format::Protobuf
        );
        // Custom resources: JSON when also acceptable, else 406.
        assert_eq!(
            negotiate_for(Some(both), true, None, false, false)
                .unwrap()
                .format,
            Format::Json
        );
        let e = negotiate_for(Some(pb), false, None, false, false).unwrap_err();
        assert_eq!(e.code, 406);
        assert_eq!(
            e.message,
            "only the following media types are accepted: application/json, application/yaml"
        );
        // The metadata client gets protobuf, even for custom resources.
        let meta = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
        let n = negotiate_for(Some(meta), true, None, false, false).unwrap();
        assert_eq!(
            (n.output, n.format),
            (Output::PartialObjectMetadataList, Format::Protobuf)
        );
        // No Table in protobuf: the next entry wins.
        let table =
            "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,application/json";
        let n = negotiate_for(Some(table), true, None, false, true).unwrap();
        assert_eq!((n.output, n.format), (Output::Object, Format::Json));
        let e = negotiate_for(
            Some("application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1"),
            true,
            None,
            false,
            true,
        )
        .unwrap_err();
        assert_eq!(e.code, 406);
        assert!(e.message.ends_with("application/vnd.kubernetes.protobuf"));
        // YAML.
        let n = negotiate_for(Some("application/yaml"), false, None, false, false).unwrap();
        assert_eq!(n.format, Format::Yaml);
        let n = negotiate_for(
            Some("application/yaml;as=Table;g=meta.k8s.io;v=v1"),
            true,
            None,
            false,
            false,
        )
        .unwrap();
        assert_eq!((n.output, n.format), (Output::Table, Format::Yaml));
        assert_eq!(
            negotiate_for(Some("text/html"), false, None, false, true)
                .unwrap_err()
                .code,
            406
        );
    }

    #[test]
    fn errors_follow_the_first_plain_entry() {
        assert_eq!(error_format(None), Format::Json);
        assert_eq!(
            error_format(Some(
                "application/vnd.kubernetes.protobuf, application/json"
            )),
            Format::Protobuf
        );
        assert_eq!(error_format(Some("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")), Format::Json);
        assert_eq!(error_format(Some("application/yaml")), Format::Yaml);
        assert_eq!(error_format(Some("text/html")), Format::Json);
    }

    #[test]
    fn protobuf_only_is_406() {
        let e = negotiate(
            Some("application/vnd.kubernetes.protobuf"),
            false,
            None,
            false,
        )
        .unwrap_err();
        assert_eq!(e.code, 406);
    }

    #[test]
    fn body_formats() {
        assert_eq!(
            body_format(Some("application/merge-patch+json")).unwrap(),
            BodyFormat::MergePatch
        );
        assert_eq!(
            body_format(Some("application/json; charset=utf-8")).unwrap(),
            BodyFormat::Json
        );
        assert_eq!(body_format(Some("text/plain")).unwrap_err().code, 415);
        assert_eq!(
            body_format(Some("application/yaml")).unwrap(),
            BodyFormat::Yaml
        );
    }
}

//! Content negotiation: what the client accepts, what it sent.
//!
//! kubectl asks for `application/json;as=Table;v=v1;g=meta.k8s.io`, the
//! metadata client for `as=PartialObjectMetadataList`, most clients for plain
//! `application/json`. The first acceptable entry of `Accept` wins, as upstream.

use crate::endpoints::status::ApiError;
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

/// A negotiated response format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Negotiated {
    pub output: Output,
    pub include_object: IncludeObject,
    pub pretty: bool,
}

/// Media types this server produces, for 406 messages.
pub const SUPPORTED: &[&str] = &["application/json", "application/yaml"];

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

/// Picks the response format for a request.
///
/// `is_list`: the request returns a collection (list or watch).
/// `include_object`: the `includeObject` query parameter, if any.
pub fn negotiate(
    accept: Option<&str>,
    is_list: bool,
    include_object: Option<&str>,
    pretty: bool,
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
    };
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
        return Ok(plain);
    };
    for range in parse_accept(accept) {
        let json_like = matches!(
            range.type_,
            "application/json" | "application/*" | "*/*" | "*" | "application/yaml"
        );
        if !json_like {
            continue;
        }
        let param = |k: &str| {
            range
                .params
                .iter()
                .find(|(pk, _)| pk.eq_ignore_ascii_case(k))
                .map(|(_, v)| *v)
        };
        match param("as") {
            None => return Ok(plain),
            Some(as_) => {
                let (g, v) = (param("g").unwrap_or(""), param("v").unwrap_or(""));
                if g != "meta.k8s.io" || !(v == "v1" || v == "v1beta1") {
                    continue;
                }
                let output = match as_ {
                    "Table" => Output::Table,
                    "PartialObjectMetadata" if !is_list => Output::PartialObjectMetadata,
                    "PartialObjectMetadataList" if is_list => Output::PartialObjectMetadataList,
                    _ => continue,
                };
                return Ok(Negotiated {
                    output,
                    include_object: include,
                    pretty,
                });
            }
        }
    }
    Err(ApiError::not_acceptable(SUPPORTED))
}

/// The body formats a write accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyFormat {
    Json,
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
    }
}

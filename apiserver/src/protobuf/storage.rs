//! The encoding of objects in etcd, as upstream stores them: built-in kinds
//! as protobuf with the `k8s\0` envelope (upstream's default
//! `--storage-media-type`), everything else (custom resources, kinds the
//! tables do not cover) as JSON. Reading accepts both, so data written as
//! JSON by earlier versions, or by upstream for custom resources, keeps
//! working, and an etcd written by upstream kube-apiserver is read as is.

use serde_json::Value;

use super::{can_encode, decode_object, encode_object, EncodeError, MAGIC};

/// Encodes an object (with `apiVersion` and `kind`) for etcd: protobuf for
/// kinds with a protobuf message, JSON otherwise.
///
/// Fails with [`EncodeError::Invalid`] when a field of a built-in kind
/// holds a JSON value its type cannot carry (upstream would have rejected
/// such an object when decoding it).
pub fn encode_for_storage(object: &Value) -> Result<Vec<u8>, EncodeError> {
    let api_version = object.get("apiVersion").and_then(Value::as_str);
    let kind = object.get("kind").and_then(Value::as_str);
    match (api_version, kind) {
        (Some(api_version), Some(kind)) if can_encode(api_version, kind) => encode_object(object),
        _ => serde_json::to_vec(object).map_err(|e| EncodeError::Invalid {
            path: String::new(),
            reason: e.to_string(),
        }),
    }
}

/// Decodes a value read from etcd: protobuf when it starts with the
/// `k8s\0` magic, JSON otherwise. The error names what is wrong.
pub fn decode_from_storage(bytes: &[u8]) -> Result<Value, String> {
    if bytes.starts_with(&MAGIC) {
        decode_object(bytes).map_err(|e| e.to_string())
    } else {
        serde_json::from_slice(bytes).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn built_in_kinds_are_protobuf_custom_resources_json() {
        let cm = json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "c", "namespace": "d", "uid": "u", "creationTimestamp": "2024-01-01T00:00:00Z"},
            "data": {"a": "b"}});
        let stored = encode_for_storage(&cm).expect("encode");
        assert!(stored.starts_with(b"k8s\0"));
        assert_eq!(decode_from_storage(&stored), Ok(cm));

        let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w"}, "spec": {"size": 3}});
        let stored = encode_for_storage(&widget).expect("encode");
        assert_eq!(stored, serde_json::to_vec(&widget).expect("json"));
        assert_eq!(decode_from_storage(&stored), Ok(widget));

        // Values written as JSON before keep being read.
        let old = br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"old"}}"#;
        assert_eq!(
            decode_from_storage(old).expect("json")["metadata"]["name"],
            "old"
        );
        assert!(decode_from_storage(b"k8s\0\xff").is_err());
        assert!(decode_from_storage(b"{").is_err());

        let bad = json!({"kind": "ConfigMap", "apiVersion": "v1", "data": {"a": 1}});
        assert!(matches!(
            encode_for_storage(&bad),
            Err(EncodeError::Invalid { .. })
        ));
    }
}

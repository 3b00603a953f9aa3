//! Malformed protobuf: bad envelopes, broken wire data, deep nesting and
//! random or mutated inputs all end in a `DecodeError` (a 400 Status for the
//! client), never a panic.

use super::tests::*;
use super::*;
use serde_json::json;

#[test]
fn envelope_errors() {
    assert_eq!(decode_object(b""), Err(DecodeError::BadMagic));
    assert_eq!(decode_object(b"{\"kind\":1}"), Err(DecodeError::BadMagic));
    let mut wrong = namespace_demo();
    wrong[3] = 1;
    assert_eq!(decode_object(&wrong), Err(DecodeError::BadMagic));

    let no_kind = {
        let unknown = Enc::new().msg(1, Enc::new().string(1, "v1")).bytes(2, b"");
        [&MAGIC[..], &unknown.0].concat()
    };
    assert_eq!(
        decode_object(&no_kind),
        Err(DecodeError::MissingTypeMeta("kind"))
    );

    let unknown_kind = envelope("example.com/v1", "Widget", &Enc::new());
    let err = decode_object(&unknown_kind);
    assert_eq!(
        err,
        Err(DecodeError::UnknownKind {
            api_version: "example.com/v1".into(),
            kind: "Widget".into()
        })
    );
    assert!(!is_known("example.com/v1", "Widget"));
    assert!(is_known("v1", "Namespace"));
    assert!(is_known("batch/v1", "CronJob"));
    assert!(!is_known("v1", "Deployment"));

    let gzip = {
        let unknown = Enc::new()
            .msg(1, Enc::new().string(1, "v1").string(2, "Namespace"))
            .string(3, "gzip");
        [&MAGIC[..], &unknown.0].concat()
    };
    assert_eq!(
        decode_object(&gzip),
        Err(DecodeError::UnsupportedEncoding("gzip".into()))
    );
}

#[test]
fn wire_errors() {
    // Truncated varint inside the object.
    let mut raw = Enc::new();
    raw.key(7, 0);
    raw.0.push(0x80);
    let (path, reason) = malformed_reason(decode_object(&envelope("v1", "Namespace", &raw)));
    assert_eq!(
        (path.as_str(), reason.as_str()),
        ("Namespace", "truncated varint")
    );

    // Truncated varint in the envelope itself.
    let (path, reason) = malformed_reason(decode_object(b"k8s\0\x0a\x80"));
    assert_eq!(
        (path.as_str(), reason.as_str()),
        ("Unknown", "truncated varint")
    );

    // Wrong wire type: ObjectMeta.name as a varint.
    let ns = Enc::new().msg(1, Enc::new().int(1, 5));
    let err = decode_object(&envelope("v1", "Namespace", &ns));
    assert_eq!(
        err.as_ref().map_err(ToString::to_string).err().as_deref(),
        Some("invalid protobuf at Namespace.metadata.name: expected wire type length-delimited, got varint")
    );

    // Wrong wire type in a repeated message field, with its index.
    let spec = Enc::new()
        .msg(2, container("a", "b"))
        .msg(2, Enc::new().msg(6, Enc::new().string(3, "80")));
    let pod = Enc::new().msg(2, spec);
    let (path, _) = malformed_reason(decode_object(&envelope("v1", "Pod", &pod)));
    assert_eq!(path, "Pod.spec.containers[1].ports[0].containerPort");

    // Huge length.
    let mut raw = Enc::new();
    raw.key(1, 2);
    raw.raw_varint(u64::MAX);
    let (_, reason) = malformed_reason(decode_object(&envelope("v1", "Namespace", &raw)));
    assert!(reason.contains("bytes but only"), "{reason}");

    // Length past the end.
    let mut raw = Enc::new();
    raw.key(1, 2);
    raw.raw_varint(1000);
    raw.0.extend_from_slice(b"abc");
    assert!(decode_object(&envelope("v1", "Namespace", &raw)).is_err());

    // Groups and invalid wire types.
    for bad in [0x0b_u8, 0x0c, 0x0e, 0x0f] {
        let raw = Enc(vec![bad, 0]);
        assert!(decode_object(&envelope("v1", "Namespace", &raw)).is_err());
    }

    // Field number 0.
    let raw = Enc(vec![0x00, 0x00]);
    assert!(decode_object(&envelope("v1", "Namespace", &raw)).is_err());

    // Invalid IntOrString type.
    let port = Enc::new().msg(4, Enc::new().int(1, 7));
    let svc = Enc::new().msg(2, Enc::new().msg(1, port));
    let (path, reason) = malformed_reason(decode_object(&envelope("v1", "Service", &svc)));
    assert_eq!(path, "Service.spec.ports[0].targetPort");
    assert_eq!(reason, "invalid IntOrString type 7");
}

/// ControllerRevisions nested `levels` deep through `data`.
fn nested_revisions(levels: usize) -> Vec<u8> {
    let mut body = envelope("apps/v1", "ControllerRevision", &Enc::new());
    for _ in 0..levels {
        let revision = Enc::new().msg(2, Enc::new().bytes(1, &body));
        body = envelope("apps/v1", "ControllerRevision", &revision);
    }
    body
}

#[test]
fn deep_nesting_is_limited() {
    let mut value = match decode_object(&nested_revisions(10)) {
        Ok(value) => value,
        Err(e) => panic!("{e}"),
    };
    for _ in 0..10 {
        value = value["data"].take();
    }
    assert_eq!(
        value,
        json!({"kind": "ControllerRevision", "apiVersion": "apps/v1"})
    );
    let (_, reason) = malformed_reason(decode_object(&nested_revisions(200)));
    assert!(reason.contains("nest deeper than 64"), "{reason}");
}

/// xorshift64*: deterministic pseudo-random numbers without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn random_and_mutated_inputs_never_panic() {
    let seeds: Vec<Vec<u8>> = {
        let pod = Enc::new()
            .msg(1, object_meta("nginx", "ns", &[("run", "nginx")]))
            .msg(2, pod_spec(vec![container("nginx", "nginx")], "Always"));
        vec![
            namespace_demo(),
            envelope("v1", "Pod", &pod),
            nested_revisions(3),
            envelope(
                "v1",
                "ConfigMap",
                &Enc::new()
                    .msg(1, object_meta("c", "", &[]))
                    .entry(2, "a", "b"),
            ),
        ]
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut ok = 0;
    for i in 0..10_000 {
        let mut input = seeds[i % seeds.len()].clone();
        match i % 5 {
            // Pure noise after the magic.
            0 => {
                input.truncate(4);
                for _ in 0..rng.below(200) {
                    input.push(rng.next() as u8);
                }
            }
            // Flip a few bytes.
            1 | 2 => {
                for _ in 0..=rng.below(4) {
                    let at = rng.below(input.len());
                    if let Some(byte) = input.get_mut(at) {
                        *byte = rng.next() as u8;
                    }
                }
            }
            // Truncate.
            3 => {
                let len = rng.below(input.len());
                input.truncate(len);
            }
            // Insert random bytes.
            _ => {
                let at = rng.below(input.len());
                for _ in 0..=rng.below(8) {
                    input.insert(at, rng.next() as u8);
                }
            }
        }
        if decode_object(&input).is_ok() {
            ok += 1;
        }
    }
    // Some mutations land in skipped or string bytes and still decode.
    assert!(ok > 0);
}

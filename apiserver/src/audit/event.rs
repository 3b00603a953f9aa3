//! The audit record (`audit.k8s.io/v1` `Event`) and its encoding.
//!
//! A record is encoded once per stage ([`Encoded`]) however many backends
//! take it; a truncating backend asks for the smaller form (no request or
//! response object, annotated `audit.k8s.io/truncated`) only when the full
//! one is over its limit.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

use super::{Level, Stage};
use crate::authentication::UserInfo;

/// A time with microseconds, as upstream's `metav1.MicroTime` writes it
/// (`2006-01-02T15:04:05.000000Z`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct MicroTime(String);

impl MicroTime {
    /// Now.
    pub fn now() -> Self {
        MicroTime::from(jiff::Timestamp::now())
    }
}

impl From<jiff::Timestamp> for MicroTime {
    fn from(t: jiff::Timestamp) -> Self {
        MicroTime(format!(
            "{}.{:06}Z",
            t.strftime("%Y-%m-%dT%H:%M:%S"),
            t.subsec_microsecond()
        ))
    }
}

/// The user of a record (`authentication.k8s.io/v1` `UserInfo`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct User {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub username: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

impl From<&UserInfo> for User {
    fn from(u: &UserInfo) -> Self {
        User {
            username: u.name.clone(),
            uid: u.uid.clone(),
            groups: u.groups.clone(),
            extra: u.extra.clone(),
        }
    }
}

/// What a request was about.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

/// The answer's status: its code, and for a `Status` answer (errors) the
/// bounded fields of it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ResponseStatus {
    pub metadata: serde_json::Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    pub code: u16,
}

impl ResponseStatus {
    /// A status with only a code.
    pub fn code(code: u16) -> Self {
        ResponseStatus {
            code,
            ..Default::default()
        }
    }

    /// The status of a `Status` body answered with `code`.
    pub fn from_status(code: u16, status: &Value) -> Self {
        let text = |k: &str| status.get(k).and_then(Value::as_str).map(str::to_string);
        ResponseStatus {
            metadata: Default::default(),
            status: text("status"),
            message: text("message"),
            reason: text("reason").filter(|r| !r.is_empty()),
            details: status.get("details").cloned(),
            code,
        }
    }
}

/// One audit record.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub kind: &'static str,
    pub api_version: &'static str,
    pub level: Level,
    #[serde(rename = "auditID")]
    pub audit_id: String,
    pub stage: Stage,
    #[serde(rename = "requestURI")]
    pub request_uri: String,
    pub verb: String,
    pub user: User,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impersonated_user: Option<User>,
    #[serde(rename = "sourceIPs", skip_serializing_if = "Vec::is_empty")]
    pub source_ips: Vec<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub user_agent: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_ref: Option<ObjectReference>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_status: Option<ResponseStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_object: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_object: Option<Value>,
    pub request_received_timestamp: MicroTime,
    pub stage_timestamp: MicroTime,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl Event {
    /// A record at `level` received at `received`, at stage `RequestReceived`.
    pub fn new(level: Level, audit_id: String, received: MicroTime) -> Self {
        Event {
            kind: "Event",
            api_version: "audit.k8s.io/v1",
            level,
            audit_id,
            stage: Stage::RequestReceived,
            request_uri: String::new(),
            verb: String::new(),
            user: User::default(),
            impersonated_user: None,
            source_ips: Vec::new(),
            user_agent: String::new(),
            object_ref: None,
            response_status: None,
            request_object: None,
            response_object: None,
            stage_timestamp: received.clone(),
            request_received_timestamp: received,
            annotations: BTreeMap::new(),
        }
    }
}

/// The annotation a truncated record carries.
pub const TRUNCATED_ANNOTATION: &str = "audit.k8s.io/truncated";

/// A record with its JSON encoding, made on first use.
pub struct Encoded<'a> {
    event: &'a Event,
    json: OnceLock<Bytes>,
}

impl<'a> Encoded<'a> {
    /// Wraps a record; nothing is encoded yet.
    pub fn new(event: &'a Event) -> Self {
        Encoded {
            event,
            json: OnceLock::new(),
        }
    }

    /// The record.
    pub fn event(&self) -> &Event {
        self.event
    }

    /// The record as one line of JSON (no newline).
    pub fn json(&self) -> &Bytes {
        self.json.get_or_init(|| encode(self.event))
    }

    /// The record in at most `max` bytes: as it is, or without its request
    /// and response objects; `None` when even that is larger.
    pub fn within(&self, max: usize) -> Option<Bytes> {
        let full = self.json();
        if full.len() <= max {
            return Some(full.clone());
        }
        if self.event.request_object.is_none() && self.event.response_object.is_none() {
            return None;
        }
        let mut small = self.event.clone();
        small.request_object = None;
        small.response_object = None;
        small
            .annotations
            .insert(TRUNCATED_ANNOTATION.to_string(), "true".to_string());
        let small = encode(&small);
        (small.len() <= max).then_some(small)
    }
}

fn encode(event: &Event) -> Bytes {
    // Serializing plain data into a Vec cannot fail.
    Bytes::from(serde_json::to_vec(event).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_encodes_as_upstream_writes_it() {
        let t: jiff::Timestamp = "2026-12-05T06:33:55.123456789Z".parse().unwrap();
        let mut ev = Event::new(Level::Metadata, "a1".into(), MicroTime::from(t));
        ev.stage = Stage::ResponseComplete;
        ev.verb = "create".into();
        ev.request_uri = "/api/v1/namespaces/default/configmaps".into();
        ev.user = User {
            username: "alice".into(),
            groups: vec!["system:authenticated".into()],
            ..Default::default()
        };
        ev.object_ref = Some(ObjectReference {
            resource: "configmaps".into(),
            namespace: "default".into(),
            name: "c".into(),
            api_version: "v1".into(),
            ..Default::default()
        });
        ev.response_status = Some(ResponseStatus::code(201));
        let v: Value = serde_json::from_slice(Encoded::new(&ev).json()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
                "auditID": "a1", "stage": "ResponseComplete",
                "requestURI": "/api/v1/namespaces/default/configmaps", "verb": "create",
                "user": {"username": "alice", "groups": ["system:authenticated"]},
                "objectRef": {"resource": "configmaps", "namespace": "default", "name": "c", "apiVersion": "v1"},
                "responseStatus": {"metadata": {}, "code": 201},
                "requestReceivedTimestamp": "2026-12-05T06:33:55.123456Z",
                "stageTimestamp": "2026-12-05T06:33:55.123456Z",
            })
        );
    }

    #[test]
    fn a_large_record_drops_its_objects_first() {
        let mut ev = Event::new(Level::RequestResponse, "a".into(), MicroTime::now());
        ev.request_object = Some(serde_json::json!({"data": "x".repeat(1000)}));
        let enc = Encoded::new(&ev);
        assert!(enc.json().len() > 1000);
        let small = enc.within(900).expect("fits without the object");
        let v: Value = serde_json::from_slice(&small).unwrap();
        assert!(v.get("requestObject").is_none());
        assert_eq!(v["annotations"][TRUNCATED_ANNOTATION], "true");
        assert!(enc.within(50).is_none());
        assert_eq!(enc.within(100_000).as_deref(), Some(&enc.json()[..]));
    }
}

//! The priority and fairness configuration, kept in step with the API
//! (upstream's APF config controller and its bootstrap ensurer).
//!
//! The FlowSchemas and PriorityLevelConfigurations live in the tier that
//! serves `flowcontrol.apiserver.k8s.io` (kube-core); the front door reads
//! them through that tier's API: a LIST of each, then WATCHes that trigger a
//! new LIST on any change (and every 30 s regardless), so every replica
//! follows a change within a fraction of a second.
//!
//! At start the bootstrap objects are ensured, as upstream does: a missing
//! mandatory or suggested object is created; one carrying
//! `apf.kubernetes.io/autoupdate-spec: "true"` whose spec differs from the
//! bootstrap spec is updated (mandatory objects always are). Objects an
//! administrator changed and marked `"false"` are left alone. Every
//! replica may ensure: creates of an existing object and updates that lose
//! a race fail harmlessly and are retried in the next pass.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use serde_json::Value;

use crate::authentication::UserInfo;
use crate::flowcontrol::{bootstrap, FlowControl};
use crate::proxy::Delegate;

const BASE: &str = "/apis/flowcontrol.apiserver.k8s.io/v1";
const KINDS: [&str; 2] = ["prioritylevelconfigurations", "flowschemas"];
const TIMEOUT: Duration = Duration::from_secs(10);

/// Whether `have` holds everything `want` says (a server may add defaults).
fn contains(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::Object(h), Value::Object(w)) => w
            .iter()
            .all(|(k, wv)| h.get(k).is_some_and(|hv| contains(hv, wv))),
        (Value::Array(h), Value::Array(w)) => {
            h.len() == w.len() && h.iter().zip(w).all(|(h, w)| contains(h, w))
        }
        _ => have == want,
    }
}

async fn ensure_one(
    delegate: &Delegate,
    user: &UserInfo,
    kind: &str,
    want: &Value,
    mandatory: bool,
) -> Result<(), String> {
    let name = want
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let path = format!("{BASE}/{kind}/{name}");
    let (code, have) = delegate
        .call_json(http::Method::GET, &path, None, Some(user), None, TIMEOUT)
        .await?;
    match code {
        404 => {
            let (code, body) = delegate
                .call_json(
                    http::Method::POST,
                    &format!("{BASE}/{kind}"),
                    Some(want),
                    Some(user),
                    None,
                    TIMEOUT,
                )
                .await?;
            if code < 300 || code == 409 {
                Ok(())
            } else {
                Err(format!("creating {kind}/{name}: {code} {body}"))
            }
        }
        200 => {
            let auto = have
                .pointer(&format!(
                    "/metadata/annotations/{}",
                    bootstrap::AUTO_UPDATE_ANNOTATION.replace('/', "~1")
                ))
                .and_then(Value::as_str)
                .map(|v| v == "true")
                .unwrap_or(true);
            let spec_ok = match (have.get("spec"), want.get("spec")) {
                (Some(h), Some(w)) => contains(h, w),
                _ => false,
            };
            if spec_ok || !(auto || mandatory) {
                return Ok(());
            }
            let mut next = have.clone();
            next["spec"] = want["spec"].clone();
            let (code, body) = delegate
                .call_json(
                    http::Method::PUT,
                    &path,
                    Some(&next),
                    Some(user),
                    None,
                    TIMEOUT,
                )
                .await?;
            if code < 300 || code == 409 {
                Ok(())
            } else {
                Err(format!("updating {kind}/{name}: {code} {body}"))
            }
        }
        _ => Err(format!("reading {kind}/{name}: {code}")),
    }
}

/// Creates or updates the bootstrap objects, each set's objects at once
/// (priority levels before the schemas that name them); the first error
/// fails the pass (it is retried).
pub async fn ensure_bootstrap(delegate: &Delegate, user: &UserInfo) -> Result<(), String> {
    let sets = [
        (
            "prioritylevelconfigurations",
            bootstrap::mandatory_priority_levels(),
            true,
        ),
        (
            "prioritylevelconfigurations",
            bootstrap::suggested_priority_levels(),
            false,
        ),
        ("flowschemas", bootstrap::mandatory_flow_schemas(), true),
        ("flowschemas", bootstrap::suggested_flow_schemas(), false),
    ];
    for (kind, objects, mandatory) in sets {
        let passes = objects
            .iter()
            .map(|o| ensure_one(delegate, user, kind, o, mandatory));
        for result in futures_util::future::join_all(passes).await {
            result?;
        }
    }
    Ok(())
}

async fn list(
    delegate: &Delegate,
    user: &UserInfo,
    kind: &str,
) -> Result<(Vec<Value>, String), String> {
    let (code, body) = delegate
        .call_json(
            http::Method::GET,
            &format!("{BASE}/{kind}"),
            None,
            Some(user),
            None,
            TIMEOUT,
        )
        .await?;
    if code != 200 {
        return Err(format!("listing {kind}: {code}"));
    }
    let rv = body
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let items = body
        .get("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    Ok((items, rv))
}

/// Resolves at the first event of a watch of `kind` from `rv` (or when the
/// watch ends).
async fn changed(delegate: &Delegate, user: &UserInfo, kind: &str, rv: &str) {
    let uri = format!("{BASE}/{kind}?watch=true&resourceVersion={rv}&timeoutSeconds=300");
    let Ok(req) = http::Request::builder()
        .method("GET")
        .uri(uri)
        .header(http::header::ACCEPT, "application/json")
        .body(crate::body::empty())
    else {
        return;
    };
    let resp = delegate.forward(req, Some(user)).await;
    if !resp.status().is_success() {
        tokio::time::sleep(Duration::from_secs(1)).await;
        return;
    }
    let mut body = resp.into_body();
    while let Some(Ok(frame)) = body.frame().await {
        if frame.data_ref().is_some_and(|d| !d.is_empty()) {
            return;
        }
    }
}

/// Ensures the bootstrap objects (retrying until it succeeds), then keeps
/// `fc` configured from the API, for as long as the process runs.
pub async fn run(fc: Arc<FlowControl>, delegate: Delegate, user: UserInfo) {
    let ensurer = {
        let delegate = delegate.clone();
        let user = user.clone();
        async move {
            loop {
                match ensure_bootstrap(&delegate, &user).await {
                    Ok(()) => {
                        tracing::info!("priority and fairness bootstrap configuration ensured");
                        return;
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, "ensuring the priority and fairness configuration");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                }
            }
        }
    };
    tokio::spawn(ensurer);
    loop {
        let lists = futures_util::future::join(
            list(&delegate, &user, KINDS[0]),
            list(&delegate, &user, KINDS[1]),
        )
        .await;
        let (levels, schemas) = match lists {
            (Ok(l), Ok(s)) => (l, s),
            (Err(e), _) | (_, Err(e)) => {
                tracing::debug!(error = %e, "reading the priority and fairness configuration");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        fc.apply(&schemas.0, &levels.0);
        tokio::select! {
            _ = changed(&delegate, &user, KINDS[0], &levels.1) => {}
            _ = changed(&delegate, &user, KINDS[1], &schemas.1) => {}
            _ = tokio::time::sleep(Duration::from_secs(30)) => {}
        }
        // Changes often come in bursts (the ensurer's pass): read once.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_defaults_do_not_count_as_a_difference() {
        let have = json!({"a": 1, "b": {"c": [1, {"d": 2, "e": 3}]}, "x": true});
        assert!(contains(&have, &json!({"b": {"c": [1, {"d": 2}]}})));
        assert!(!contains(&have, &json!({"b": {"c": [1]}})));
        assert!(!contains(&have, &json!({"a": 2})));
    }
}

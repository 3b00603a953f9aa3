//! Defaulting and validation of the workload kinds (apps/v1 and batch/v1),
//! after upstream's `pkg/apis/{apps,batch}/v1/defaults.go` and
//! `pkg/apis/{apps,batch}/validation`.

use apiserver::apimachinery::validation::object_meta::validate_immutable_field;
use apiserver::apimachinery::validation::{validate_label_selector, FieldError, FieldPath};
use apiserver::registry::strategy::Strategy;
use serde_json::{json, Map, Value};

use super::pod_spec::{default_pod_spec, validate_pod_spec, validate_template_metadata};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Deployment,
    ReplicaSet,
    StatefulSet,
    DaemonSet,
    Job,
    CronJob,
    ReplicationController,
}

/// The strategy of one workload kind: defaults, validation, immutable
/// selectors and generation tracking.
#[derive(Clone, Copy)]
pub struct WorkloadStrategy(Kind);

impl WorkloadStrategy {
    pub const DEPLOYMENT: WorkloadStrategy = WorkloadStrategy(Kind::Deployment);
    pub const REPLICA_SET: WorkloadStrategy = WorkloadStrategy(Kind::ReplicaSet);
    pub const STATEFUL_SET: WorkloadStrategy = WorkloadStrategy(Kind::StatefulSet);
    pub const DAEMON_SET: WorkloadStrategy = WorkloadStrategy(Kind::DaemonSet);
    pub const JOB: WorkloadStrategy = WorkloadStrategy(Kind::Job);
    pub const CRON_JOB: WorkloadStrategy = WorkloadStrategy(Kind::CronJob);
    pub const REPLICATION_CONTROLLER: WorkloadStrategy =
        WorkloadStrategy(Kind::ReplicationController);

    fn name(self) -> &'static str {
        match self.0 {
            Kind::Deployment => "deployment",
            Kind::ReplicaSet => "replicaset",
            Kind::StatefulSet => "statefulset",
            Kind::DaemonSet => "daemonset",
            Kind::Job => "job",
            Kind::CronJob => "cronjob",
            Kind::ReplicationController => "replicationcontroller",
        }
    }
}

fn obj_mut<'a>(m: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    let v = m.entry(key).or_insert_with(|| json!({}));
    if v.is_null() {
        *v = json!({});
    }
    v.as_object_mut()
}

/// Defaults a `spec` holding `template` (pod template) and workload fields.
fn default_template(spec: &mut Map<String, Value>) {
    if let Some(t) = obj_mut(spec, "template") {
        if let Some(meta) = obj_mut(t, "metadata") {
            meta.entry("creationTimestamp").or_insert(Value::Null);
        }
        if let Some(ps) = t.get_mut("spec") {
            default_pod_spec(ps);
        }
    }
}

fn default_job_spec(spec: &mut Map<String, Value>) {
    if spec.get("completions").is_none() && spec.get("parallelism").is_none() {
        spec.insert("completions".into(), json!(1));
        spec.insert("parallelism".into(), json!(1));
    }
    spec.entry("parallelism").or_insert(json!(1));
    spec.entry("backoffLimit").or_insert(json!(6));
    spec.entry("completionMode").or_insert(json!("NonIndexed"));
    spec.entry("suspend").or_insert(json!(false));
    if spec.get("podFailurePolicy").is_none() {
        spec.entry("podReplacementPolicy")
            .or_insert(json!("TerminatingOrFailed"));
    }
    default_template(spec);
}

impl Strategy for WorkloadStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Value::Object(m) = obj {
            m.insert("status".into(), json!({}));
        }
        self.apply_defaults(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        self.apply_defaults(new);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let spec = obj.get("spec").cloned().unwrap_or(json!({}));
        let path = FieldPath::new("spec");
        let mut errs = Vec::new();
        match self.0 {
            Kind::CronJob => {
                if spec
                    .get("schedule")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .is_empty()
                {
                    errs.push(FieldError::required(path.child("schedule"), ""));
                }
                if let Some(v) = spec.get("concurrencyPolicy").and_then(Value::as_str) {
                    if !["Allow", "Forbid", "Replace"].contains(&v) {
                        errs.push(FieldError::not_supported(
                            path.child("concurrencyPolicy"),
                            json!(v),
                            &["Allow", "Forbid", "Replace"],
                        ));
                    }
                }
                for k in [
                    "successfulJobsHistoryLimit",
                    "failedJobsHistoryLimit",
                    "startingDeadlineSeconds",
                ] {
                    nonnegative(&spec, k, &path, &mut errs);
                }
                let js = spec
                    .pointer("/jobTemplate/spec")
                    .cloned()
                    .unwrap_or(json!({}));
                errs.extend(validate_job_spec(
                    &js,
                    &path.child("jobTemplate").child("spec"),
                    false,
                ));
            }
            Kind::Job => errs.extend(validate_job_spec(&spec, &path, true)),
            Kind::ReplicationController => {
                for k in ["replicas", "minReadySeconds"] {
                    nonnegative(&spec, k, &path, &mut errs);
                }
                let sel = spec.get("selector").cloned().unwrap_or(json!({}));
                if sel.as_object().is_none_or(|m| m.is_empty()) {
                    errs.push(FieldError::required(path.child("selector"), ""));
                } else {
                    errs.extend(
                        apiserver::apimachinery::validation::object_meta::validate_labels(
                            &sel,
                            &path.child("selector"),
                        ),
                    );
                }
                let tpath = path.child("template");
                match spec.get("template").filter(|t| !t.is_null()) {
                    None => errs.push(FieldError::required(tpath, "")),
                    Some(t) => {
                        errs.extend(validate_template_metadata(t, &tpath));
                        let labels = t.pointer("/metadata/labels").cloned().unwrap_or(json!({}));
                        if errs.is_empty()
                            && !selector_matches(&json!({"matchLabels": sel}), &labels)
                        {
                            errs.push(FieldError::invalid(
                                tpath.child("metadata").child("labels"),
                                labels,
                                "`selector` does not match template `labels`",
                            ));
                        }
                        errs.extend(validate_pod_spec(
                            t.get("spec").unwrap_or(&Value::Null),
                            &tpath.child("spec"),
                        ));
                    }
                }
            }
            _ => {
                for k in ["replicas", "revisionHistoryLimit", "minReadySeconds"] {
                    nonnegative(&spec, k, &path, &mut errs);
                }
                errs.extend(self.validate_selector_and_template(&spec, &path));
                let tp = path.child("template").child("spec");
                if let Some(rp) = spec
                    .pointer("/template/spec/restartPolicy")
                    .and_then(Value::as_str)
                {
                    if rp != "Always" {
                        errs.push(FieldError::not_supported(
                            tp.child("restartPolicy"),
                            json!(rp),
                            &["Always"],
                        ));
                    }
                }
                if self.0 == Kind::Deployment {
                    errs.extend(validate_deployment_strategy(&spec, &path));
                }
                if self.0 == Kind::StatefulSet {
                    if let Some(v) = spec.get("podManagementPolicy").and_then(Value::as_str) {
                        if !["OrderedReady", "Parallel"].contains(&v) {
                            errs.push(FieldError::not_supported(
                                path.child("podManagementPolicy"),
                                json!(v),
                                &["OrderedReady", "Parallel"],
                            ));
                        }
                    }
                }
            }
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        let ns = new.get("spec").cloned().unwrap_or(Value::Null);
        let os = old.get("spec").cloned().unwrap_or(Value::Null);
        let path = FieldPath::new("spec");
        match self.0 {
            Kind::Deployment | Kind::ReplicaSet | Kind::DaemonSet | Kind::Job => {
                errs.extend(validate_immutable_field(
                    ns.get("selector").unwrap_or(&Value::Null),
                    os.get("selector").unwrap_or(&Value::Null),
                    &path.child("selector"),
                ));
            }
            Kind::StatefulSet => {
                let mut a = ns.clone();
                let mut b = os.clone();
                for v in [&mut a, &mut b] {
                    if let Value::Object(m) = v {
                        for k in [
                            "replicas",
                            "ordinals",
                            "template",
                            "updateStrategy",
                            "revisionHistoryLimit",
                            "persistentVolumeClaimRetentionPolicy",
                            "minReadySeconds",
                        ] {
                            m.remove(k);
                        }
                    }
                }
                if a != b {
                    errs.push(FieldError::forbidden(
                        "spec",
                        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
                    ));
                }
            }
            Kind::CronJob | Kind::ReplicationController => {}
        }
        if self.0 == Kind::Job {
            for k in ["completionMode", "podFailurePolicy", "backoffLimitPerIndex"] {
                errs.extend(validate_immutable_field(
                    ns.get(k).unwrap_or(&Value::Null),
                    os.get(k).unwrap_or(&Value::Null),
                    &path.child(k),
                ));
            }
            let suspended = os.get("suspend").and_then(Value::as_bool) == Some(true);
            if !suspended {
                errs.extend(validate_immutable_field(
                    ns.get("template").unwrap_or(&Value::Null),
                    os.get("template").unwrap_or(&Value::Null),
                    &path.child("template"),
                ));
            }
        }
        errs
    }

    fn tracks_generation(&self) -> bool {
        true
    }
}

impl WorkloadStrategy {
    /// Upstream's defaults of the kind, applied on create and update.
    fn apply_defaults(&self, obj: &mut Value) {
        let uid = obj
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let Value::Object(m) = obj else { return };
        let obj_labels_empty = m
            .get("metadata")
            .and_then(|md| md.get("labels"))
            .and_then(Value::as_object)
            .is_none_or(|l| l.is_empty());
        let Some(spec) = obj_mut(m, "spec") else {
            return;
        };
        let mut copy_labels = None;
        match self.0 {
            Kind::ReplicationController => {
                spec.entry("replicas").or_insert(json!(1));
                let tl = spec
                    .get("template")
                    .and_then(|t| t.pointer("/metadata/labels"))
                    .cloned();
                let empty = spec
                    .get("selector")
                    .and_then(Value::as_object)
                    .is_none_or(|s| s.is_empty());
                if let (true, Some(tl)) = (empty, tl.clone()) {
                    spec.insert("selector".into(), tl);
                }
                if obj_labels_empty {
                    copy_labels = tl;
                }
                default_template(spec);
            }
            Kind::Deployment => {
                spec.entry("replicas").or_insert(json!(1));
                spec.entry("revisionHistoryLimit").or_insert(json!(10));
                spec.entry("progressDeadlineSeconds").or_insert(json!(600));
                if let Some(st) = obj_mut(spec, "strategy") {
                    st.entry("type").or_insert(json!("RollingUpdate"));
                    if st.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
                        if let Some(ru) = obj_mut(st, "rollingUpdate") {
                            ru.entry("maxUnavailable").or_insert(json!("25%"));
                            ru.entry("maxSurge").or_insert(json!("25%"));
                        }
                    }
                }
                default_template(spec);
            }
            Kind::ReplicaSet => {
                spec.entry("replicas").or_insert(json!(1));
                default_template(spec);
            }
            Kind::StatefulSet => {
                spec.entry("replicas").or_insert(json!(1));
                spec.entry("podManagementPolicy")
                    .or_insert(json!("OrderedReady"));
                spec.entry("revisionHistoryLimit").or_insert(json!(10));
                if let Some(st) = obj_mut(spec, "updateStrategy") {
                    st.entry("type").or_insert(json!("RollingUpdate"));
                    if st.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
                        if let Some(ru) = obj_mut(st, "rollingUpdate") {
                            ru.entry("partition").or_insert(json!(0));
                        }
                    }
                }
                if let Some(p) = obj_mut(spec, "persistentVolumeClaimRetentionPolicy") {
                    p.entry("whenDeleted").or_insert(json!("Retain"));
                    p.entry("whenScaled").or_insert(json!("Retain"));
                }
                default_template(spec);
            }
            Kind::DaemonSet => {
                spec.entry("revisionHistoryLimit").or_insert(json!(10));
                if let Some(st) = obj_mut(spec, "updateStrategy") {
                    st.entry("type").or_insert(json!("RollingUpdate"));
                    if st.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
                        if let Some(ru) = obj_mut(st, "rollingUpdate") {
                            ru.entry("maxUnavailable").or_insert(json!(1));
                            ru.entry("maxSurge").or_insert(json!(0));
                        }
                    }
                }
                default_template(spec);
            }
            Kind::Job => {
                let manual = spec.get("manualSelector").and_then(Value::as_bool) == Some(true);
                if !manual && !uid.is_empty() {
                    let labels = json!({
                        "batch.kubernetes.io/controller-uid": uid,
                        "batch.kubernetes.io/job-name": name,
                        "controller-uid": uid,
                        "job-name": name,
                    });
                    if spec.get("selector").is_none() {
                        spec.insert(
                            "selector".into(),
                            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}),
                        );
                    }
                    if let Some(t) = obj_mut(spec, "template") {
                        if let Some(meta) = obj_mut(t, "metadata") {
                            if let Some(l) = obj_mut(meta, "labels") {
                                if let Value::Object(add) = labels {
                                    for (k, v) in add {
                                        l.entry(k).or_insert(v);
                                    }
                                }
                            }
                        }
                    }
                }
                default_job_spec(spec);
            }
            Kind::CronJob => {
                spec.entry("concurrencyPolicy").or_insert(json!("Allow"));
                spec.entry("suspend").or_insert(json!(false));
                spec.entry("successfulJobsHistoryLimit").or_insert(json!(3));
                spec.entry("failedJobsHistoryLimit").or_insert(json!(1));
                if let Some(jt) = obj_mut(spec, "jobTemplate") {
                    if let Some(js) = obj_mut(jt, "spec") {
                        default_job_spec(js);
                    }
                }
            }
        }
        if let (Some(labels), Some(meta)) = (copy_labels, obj_mut(m, "metadata")) {
            meta.insert("labels".into(), labels);
        }
    }
}

impl WorkloadStrategy {
    fn validate_selector_and_template(&self, spec: &Value, path: &FieldPath) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let selector = spec.get("selector").filter(|s| !s.is_null());
        match selector {
            None => errs.push(FieldError::required(path.child("selector"), "")),
            Some(sel) => {
                errs.extend(validate_label_selector(sel, &path.child("selector")));
                let empty = sel
                    .get("matchLabels")
                    .and_then(Value::as_object)
                    .is_none_or(|m| m.is_empty())
                    && sel
                        .get("matchExpressions")
                        .and_then(Value::as_array)
                        .is_none_or(|a| a.is_empty());
                if empty {
                    errs.push(FieldError::invalid(
                        path.child("selector"),
                        sel.clone(),
                        format!("empty selector is invalid for {}", self.name()),
                    ));
                }
            }
        }
        let template = spec.get("template").cloned().unwrap_or(Value::Null);
        if template.is_null() {
            errs.push(FieldError::required(path.child("template"), ""));
            return errs;
        }
        let tpath = path.child("template");
        errs.extend(validate_template_metadata(&template, &tpath));
        let labels = template
            .pointer("/metadata/labels")
            .cloned()
            .unwrap_or(json!({}));
        if let Some(sel) = selector {
            if errs.is_empty() && !selector_matches(sel, &labels) {
                errs.push(FieldError::invalid(
                    tpath.child("metadata").child("labels"),
                    labels,
                    "`selector` does not match template `labels`",
                ));
            }
        }
        errs.extend(validate_pod_spec(
            template.get("spec").unwrap_or(&Value::Null),
            &tpath.child("spec"),
        ));
        errs
    }
}

fn nonnegative(spec: &Value, key: &str, path: &FieldPath, errs: &mut Vec<FieldError>) {
    if let Some(n) = spec.get(key).and_then(Value::as_i64) {
        if n < 0 {
            errs.push(FieldError::invalid(
                path.child(key),
                json!(n),
                "must be greater than or equal to 0",
            ));
        }
    }
}

fn validate_deployment_strategy(spec: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let sp = path.child("strategy");
    let ty = spec
        .pointer("/strategy/type")
        .and_then(Value::as_str)
        .unwrap_or("");
    match ty {
        "RollingUpdate" => {
            let ru = spec.pointer("/strategy/rollingUpdate");
            let rp = sp.child("rollingUpdate");
            let pct = |v: Option<&Value>| match v {
                Some(Value::Number(n)) => n.as_i64().map(|n| (n, false)),
                Some(Value::String(s)) => s
                    .strip_suffix('%')
                    .and_then(|p| p.parse::<i64>().ok())
                    .map(|n| (n, true)),
                _ => None,
            };
            let mu = ru.and_then(|r| r.get("maxUnavailable"));
            let ms = ru.and_then(|r| r.get("maxSurge"));
            for (k, v) in [("maxUnavailable", mu), ("maxSurge", ms)] {
                if let Some(v) = v {
                    match pct(Some(v)) {
                        None => errs.push(FieldError::invalid(
                            rp.child(k),
                            v.clone(),
                            "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                        )),
                        Some((n, _)) if n < 0 => errs.push(FieldError::invalid(
                            rp.child(k),
                            v.clone(),
                            "must be greater than or equal to 0",
                        )),
                        Some((n, true)) if k == "maxUnavailable" && n > 100 => {
                            errs.push(FieldError::invalid(
                                rp.child(k),
                                v.clone(),
                                "must not be greater than 100%",
                            ))
                        }
                        _ => {}
                    }
                }
            }
            if let (Some((0, _)), Some((0, _))) = (pct(mu), pct(ms)) {
                errs.push(FieldError::invalid(
                    rp.child("maxUnavailable"),
                    mu.cloned().unwrap_or(Value::Null),
                    "may not be 0 when `maxSurge` is 0",
                ));
            }
        }
        "Recreate" => {
            if spec
                .pointer("/strategy/rollingUpdate")
                .is_some_and(|v| !v.is_null())
            {
                errs.push(FieldError::forbidden(
                    sp.child("rollingUpdate"),
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            sp.child("type"),
            json!(other),
            &["Recreate", "RollingUpdate"],
        )),
    }
    if let (Some(pd), min) = (
        spec.get("progressDeadlineSeconds").and_then(Value::as_i64),
        spec.get("minReadySeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0),
    ) {
        if pd <= min {
            errs.push(FieldError::invalid(
                path.child("progressDeadlineSeconds"),
                json!(pd),
                "must be greater than minReadySeconds",
            ));
        }
    }
    errs
}

fn validate_job_spec(spec: &Value, path: &FieldPath, is_job: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for k in [
        "parallelism",
        "completions",
        "backoffLimit",
        "activeDeadlineSeconds",
        "ttlSecondsAfterFinished",
    ] {
        nonnegative(spec, k, path, &mut errs);
    }
    if let Some(v) = spec.get("completionMode").and_then(Value::as_str) {
        if !["NonIndexed", "Indexed"].contains(&v) {
            errs.push(FieldError::not_supported(
                path.child("completionMode"),
                json!(v),
                &["NonIndexed", "Indexed"],
            ));
        }
    }
    let template = spec.get("template").cloned().unwrap_or(Value::Null);
    let tpath = path.child("template");
    if template.is_null() {
        errs.push(FieldError::required(tpath, ""));
        return errs;
    }
    errs.extend(validate_template_metadata(&template, &tpath));
    if is_job {
        if let Some(sel) = spec.get("selector").filter(|s| !s.is_null()) {
            errs.extend(validate_label_selector(sel, &path.child("selector")));
            let labels = template
                .pointer("/metadata/labels")
                .cloned()
                .unwrap_or(json!({}));
            if errs.is_empty() && !selector_matches(sel, &labels) {
                errs.push(FieldError::invalid(
                    tpath.child("metadata").child("labels"),
                    labels,
                    "`selector` does not match template `labels`",
                ));
            }
        } else {
            errs.push(FieldError::required(path.child("selector"), ""));
        }
    }
    let ps = template.get("spec").cloned().unwrap_or(Value::Null);
    errs.extend(validate_pod_spec(&ps, &tpath.child("spec")));
    let rp = ps
        .get("restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or("");
    if rp != "OnFailure" && rp != "Never" {
        errs.push(FieldError::not_supported(
            tpath.child("spec").child("restartPolicy"),
            json!(rp),
            &["OnFailure", "Never"],
        ));
    }
    errs
}

/// Whether a label selector (`matchLabels`, `matchExpressions`) selects `labels`.
pub fn selector_matches(sel: &Value, labels: &Value) -> bool {
    let get = |k: &str| labels.get(k).and_then(Value::as_str);
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            if get(k) != v.as_str() {
                return false;
            }
        }
    }
    for e in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let ok = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" => get(key).is_some_and(|v| values.contains(&v)),
            "NotIn" => get(key).is_none_or(|v| !values.contains(&v)),
            "Exists" => get(key).is_some(),
            "DoesNotExist" => get(key).is_none(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

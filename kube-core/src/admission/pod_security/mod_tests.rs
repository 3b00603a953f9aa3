//! Tests of the evaluation flow and its messages.

use super::policy::{LevelVersion, Version};
use super::*;
use apiserver::registry::resource::ResourceDef;
use apiserver::request::Warnings;
use serde_json::json;

fn lv(level: Level, version: Version) -> LevelVersion {
    LevelVersion { level, version }
}

fn policy_of(labels: Value) -> Policy {
    policy_to_evaluate(labels.as_object(), &Policy::default()).0
}

fn privileged_pod() -> Value {
    json!({"metadata": {"name": "x"}, "spec": {"containers": [
        {"name": "app", "image": "nginx", "securityContext": {"privileged": true}}]}})
}

#[test]
fn enforce_refuses_with_upstreams_message_and_no_warning() {
    let p = policy_of(json!({"pod-security.kubernetes.io/enforce": "restricted"}));
    let d = evaluate_pod(
        &Configuration::default(),
        &p,
        &PodView::of_pod(&privileged_pod()),
        true,
    );
    assert_eq!(
        d.denied.as_deref(),
        Some(
            "violates PodSecurity \"restricted:latest\": privileged (container \"app\" must not set securityContext.privileged=true), \
             allowPrivilegeEscalation != false (container \"app\" must set securityContext.allowPrivilegeEscalation=false), \
             unrestricted capabilities (container \"app\" must set securityContext.capabilities.drop=[\"ALL\"]), \
             runAsNonRoot != true (pod or container \"app\" must set securityContext.runAsNonRoot=true), \
             seccompProfile (pod or container \"app\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")"
        )
    );
    assert!(d.warnings.is_empty());
}

#[test]
fn warn_only_gives_the_warning() {
    let p = policy_of(json!({"pod-security.kubernetes.io/warn": "baseline"}));
    let pod = json!({"spec": {"hostNetwork": true, "containers": [{"name": "a"}]}});
    let d = evaluate_pod(&Configuration::default(), &p, &PodView::of_pod(&pod), true);
    assert_eq!(d.denied, None);
    assert_eq!(
        d.warnings,
        ["would violate PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true)"]
    );
    // Pinned versions are printed as such.
    let p = policy_of(json!({"pod-security.kubernetes.io/warn": "baseline",
        "pod-security.kubernetes.io/warn-version": "v1.30"}));
    let d = evaluate_pod(&Configuration::default(), &p, &PodView::of_pod(&pod), true);
    assert_eq!(
        d.warnings,
        ["would violate PodSecurity \"baseline:v1.30\": host namespaces (hostNetwork=true)"]
    );
}

#[test]
fn controllers_are_not_enforced_but_warned_at_the_enforce_level() {
    // enforce=restricted raises warn to restricted.
    let p = policy_of(json!({"pod-security.kubernetes.io/enforce": "restricted"}));
    assert_eq!(p.warn, lv(Level::Restricted, Version::Latest));
    let d = evaluate_pod(
        &Configuration::default(),
        &p,
        &PodView::of_pod(&privileged_pod()),
        false,
    );
    assert_eq!(d.denied, None);
    assert_eq!(d.warnings.len(), 1);
    assert!(d.warnings[0].starts_with(
        "would violate PodSecurity \"restricted:latest\": privileged (container \"app\""
    ));
}

#[test]
fn enforce_baseline_warn_restricted() {
    let p = policy_of(json!({"pod-security.kubernetes.io/enforce": "baseline",
        "pod-security.kubernetes.io/warn": "restricted"}));
    let pod = json!({"spec": {"containers": [{"name": "a"}]}});
    let d = evaluate_pod(&Configuration::default(), &p, &PodView::of_pod(&pod), true);
    assert_eq!(d.denied, None);
    assert_eq!(d.warnings.len(), 1);
    assert!(d.warnings[0].starts_with(
        "would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false"
    ));
}

#[test]
fn exempt_runtime_classes_are_not_evaluated() {
    let config = Configuration {
        exemptions: config::Exemptions {
            runtime_classes: vec!["kata".into()],
            ..Default::default()
        },
        ..Default::default()
    };
    let p = policy_of(json!({"pod-security.kubernetes.io/enforce": "restricted"}));
    let mut pod = privileged_pod();
    pod["spec"]["runtimeClassName"] = json!("kata");
    assert_eq!(
        evaluate_pod(&config, &p, &PodView::of_pod(&pod), true),
        Decision::default()
    );
}

#[test]
fn only_image_and_container_changes_are_significant() {
    let old = json!({"metadata": {"labels": {"a": "b"}}, "spec": {
        "containers": [{"name": "a", "image": "x"}],
        "initContainers": [{"name": "i", "image": "y"}],
        "ephemeralContainers": [{"name": "e", "image": "z"}]}});
    let mut labels = old.clone();
    labels["metadata"]["labels"]["c"] = json!("d");
    labels["spec"]["activeDeadlineSeconds"] = json!(5);
    assert!(!significant_pod_update(&labels, &old));
    let mut image = old.clone();
    image["spec"]["containers"][0]["image"] = json!("x2");
    assert!(significant_pod_update(&image, &old));
    let mut init = old.clone();
    init["spec"]["initContainers"][0]["image"] = json!("y2");
    assert!(significant_pod_update(&init, &old));
    let mut added = old.clone();
    added["spec"]["ephemeralContainers"]
        .as_array_mut()
        .expect("list")
        .push(json!({"name": "debug", "image": "busybox"}));
    assert!(significant_pod_update(&added, &old));
    let mut fewer = old.clone();
    fewer["spec"]["containers"] = json!([]);
    assert!(significant_pod_update(&fewer, &old));
}

#[test]
fn templates_of_upstreams_pod_controllers() {
    assert_eq!(
        template_pointer("apps", "deployments"),
        Some("/spec/template")
    );
    assert_eq!(
        template_pointer("apps", "statefulsets"),
        Some("/spec/template")
    );
    assert_eq!(
        template_pointer("apps", "daemonsets"),
        Some("/spec/template")
    );
    assert_eq!(
        template_pointer("apps", "replicasets"),
        Some("/spec/template")
    );
    assert_eq!(template_pointer("batch", "jobs"), Some("/spec/template"));
    assert_eq!(
        template_pointer("batch", "cronjobs"),
        Some("/spec/jobTemplate/spec/template")
    );
    assert_eq!(
        template_pointer("", "replicationcontrollers"),
        Some("/spec/template")
    );
    assert_eq!(template_pointer("", "podtemplates"), Some("/template"));
    assert_eq!(template_pointer("", "configmaps"), None);
}

fn attrs<'a>(
    def: &'a ResourceDef,
    op: Operation,
    name: &'a str,
    object: &'a Value,
    old: Option<&'a Value>,
    warnings: &'a Warnings,
) -> Attributes<'a> {
    Attributes {
        operation: op,
        resource: def,
        subresource: "",
        namespace: "",
        name,
        object: Some(object),
        old_object: old,
        user: None,
        dry_run: false,
        warnings: Some(warnings),
        started: None,
        kind: None,
    }
}

#[tokio::test]
async fn invalid_namespace_labels_are_refused() {
    let plugin = PodSecurity::new(Arc::new(ObjectReader::default()));
    let def = ResourceDef::new("", "v1", "Namespace", "namespaces");
    let warnings = Warnings::default();
    let ns = json!({"metadata": {"name": "n", "labels": {
        "pod-security.kubernetes.io/enforce": "strict"}}});
    let a = attrs(&def, Operation::Create, "n", &ns, None, &warnings);
    let err = plugin.validate(&a).await.expect_err("invalid");
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "Namespace \"n\" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"strict\": must be one of privileged, baseline, restricted"
    );
    // The same invalid labels as before may stay (a change elsewhere).
    let a = attrs(&def, Operation::Update, "n", &ns, Some(&ns), &warnings);
    assert!(plugin.validate(&a).await.is_ok());
    // Two bad labels at once.
    let both = json!({"metadata": {"name": "n", "labels": {
        "pod-security.kubernetes.io/enforce": "strict",
        "pod-security.kubernetes.io/warn-version": "1.2"}}});
    let a = attrs(&def, Operation::Update, "n", &both, Some(&ns), &warnings);
    let err = plugin.validate(&a).await.expect_err("invalid");
    assert_eq!(
        err.message,
        "Namespace \"n\" is invalid: [metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"strict\": must be one of privileged, baseline, restricted, metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: \"1.2\": must be \"latest\" or \"v1.x\"]"
    );
}

#[tokio::test]
async fn relaxing_or_keeping_enforce_checks_no_pods() {
    // The reader has no stores: a pod listing would warn that it failed.
    let plugin = PodSecurity::new(Arc::new(ObjectReader::default()));
    let def = ResourceDef::new("", "v1", "Namespace", "namespaces");
    let ns = |level: &str, version: &str| {
        json!({"metadata": {"name": "n", "labels": {
            "pod-security.kubernetes.io/enforce": level,
            "pod-security.kubernetes.io/enforce-version": version}}})
    };
    let cases = [
        (ns("restricted", "latest"), ns("baseline", "latest"), false),
        (
            ns("restricted", "latest"),
            ns("restricted", "latest"),
            false,
        ),
        (ns("baseline", "v1.2"), ns("privileged", "latest"), false),
        (ns("privileged", "latest"), ns("baseline", "latest"), true),
        (ns("baseline", "latest"), ns("restricted", "latest"), true),
        (ns("restricted", "v1.2"), ns("restricted", "latest"), true),
    ];
    for (old, new, checks) in cases {
        let warnings = Warnings::default();
        let a = attrs(&def, Operation::Update, "n", &new, Some(&old), &warnings);
        assert!(plugin.validate(&a).await.is_ok());
        let expected: Vec<String> = if checks {
            vec![namespace::LIST_FAILED.to_string()]
        } else {
            Vec::new()
        };
        assert_eq!(warnings.to_vec(), expected, "{old} -> {new}");
    }
}

#[tokio::test]
async fn an_unreadable_namespace_fails_pods_but_not_controllers() {
    let plugin = PodSecurity::new(Arc::new(ObjectReader::default()));
    let warnings = Warnings::default();
    let pods = ResourceDef::new("", "v1", "Pod", "pods");
    let pod = privileged_pod();
    let mut a = attrs(&pods, Operation::Create, "x", &pod, None, &warnings);
    a.namespace = "ns";
    let err = plugin.validate(&a).await.expect_err("internal");
    assert_eq!(err.code, 500);
    assert_eq!(
        err.message,
        "Internal error occurred: failed to lookup namespace \"ns\""
    );
    // Ignored subresources and deletes never look.
    a.subresource = "status";
    assert!(plugin.validate(&a).await.is_ok());
    a.subresource = "";
    a.operation = Operation::Delete;
    assert!(plugin.validate(&a).await.is_ok());

    let deployments = ResourceDef::new("apps", "v1", "Deployment", "deployments");
    let d = json!({"spec": {"template": pod}});
    let mut a = attrs(&deployments, Operation::Create, "d", &d, None, &warnings);
    a.namespace = "ns";
    assert!(plugin.validate(&a).await.is_ok());
    assert!(warnings.to_vec().is_empty());
}

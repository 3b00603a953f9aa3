//! Tests of the bootstrap policy.

use super::*;
use apiserver::authentication::UserInfo;
use apiserver::authorization::rbac::RbacIndex;
use apiserver::authorization::Decision;
use apiserver::request::info::RequestInfo;

fn index() -> RbacIndex {
    let objs = objects();
    let of = |r: &str| {
        objs.iter()
            .filter(|(k, _)| *k == r)
            .map(|(_, v)| v)
            .collect::<Vec<_>>()
    };
    RbacIndex::build(
        of("clusterroles"),
        of("roles"),
        of("clusterrolebindings"),
        of("rolebindings"),
    )
}

#[test]
fn authenticated_users_get_discovery_and_self_reviews_only() {
    let idx = index();
    let bob = UserInfo {
        name: "bob".into(),
        groups: vec!["system:authenticated".into()],
        ..Default::default()
    };
    let path = |p: &str| RequestInfo {
        is_resource_request: false,
        verb: "get".into(),
        path: p.into(),
        ..Default::default()
    };
    assert_eq!(idx.decide(&bob, &path("/apis/apps/v1")), Decision::Allow);
    assert_eq!(idx.decide(&bob, &path("/version")), Decision::Allow);
    assert!(matches!(
        idx.decide(&bob, &path("/metrics")),
        Decision::NoOpinion(_)
    ));
    let ssar = RequestInfo {
        is_resource_request: true,
        verb: "create".into(),
        api_group: "authorization.k8s.io".into(),
        resource: "selfsubjectaccessreviews".into(),
        ..Default::default()
    };
    assert_eq!(idx.decide(&bob, &ssar), Decision::Allow);
    let pods = RequestInfo {
        resource: "pods".into(),
        api_group: String::new(),
        namespace: "default".into(),
        verb: "list".into(),
        ..ssar
    };
    assert!(matches!(idx.decide(&bob, &pods), Decision::NoOpinion(_)));
}

#[test]
fn every_object_passes_rbac_validation() {
    use apiserver::registry::strategy::Strategy;
    for (resource, obj) in objects() {
        let errs = match resource {
            "clusterroles" => crate::resources::rbac::RoleStrategy { cluster: true }.validate(&obj),
            "roles" => crate::resources::rbac::RoleStrategy { cluster: false }.validate(&obj),
            _ => vec![],
        };
        assert!(errs.is_empty(), "{}: {errs:?}", obj["metadata"]["name"]);
    }
}

//! The handler chain, assembled in one place, in upstream's order
//! (`DefaultBuildHandlerChain`; the request passes through top to bottom).

use std::sync::Arc;
use std::time::Duration;

use tower::ServiceBuilder;

use crate::audit::Auditor;
use crate::authentication::request_header::RequestHeaderNames;
use crate::authentication::union::UnionAuthenticator;
use crate::authorization::Authorizer;
use crate::filters::audit::Audit;
use crate::filters::audit_id::AuditId;
use crate::filters::authentication::Authentication;
use crate::filters::authorization::Authorization;
use crate::filters::body_limit::BodyLimit;
use crate::filters::cache_control::CacheControl;
use crate::filters::httplog::HttpLog;
use crate::filters::impersonation::Impersonation;
use crate::filters::max_in_flight::MaxInFlight;
use crate::filters::panic_recovery::PanicRecovery;
use crate::filters::priority_and_fairness::PriorityAndFairness;
use crate::filters::request_info::WithRequestInfo;
use crate::filters::request_metrics::RequestMetrics;
use crate::filters::timeout::RequestTimeout;
use crate::filters::tracing::Tracing;
use crate::filters::{FilterLayer, HttpService};

/// What the chain needs.
#[derive(Clone)]
pub struct ChainConfig {
    pub authenticator: Arc<UnionAuthenticator>,
    pub header_names: Arc<RequestHeaderNames>,
    pub authorizer: Arc<dyn Authorizer>,
    /// See [`Authorization::trust_front_proxy`].
    pub trust_front_proxy_authorization: bool,
    pub request_timeout: Duration,
    pub max_request_body_bytes: usize,
    /// Auditing, when an audit policy is configured.
    pub auditor: Option<Arc<Auditor>>,
    /// Tracing, when a tracing configuration is given.
    pub tracer: Option<Arc<crate::traces::Tracer>>,
    /// How concurrent requests are limited.
    pub in_flight: InFlightLimits,
}

/// The overload protection of a server: API Priority and Fairness (the
/// front door's), or the plain in-flight limits.
#[derive(Clone)]
pub enum InFlightLimits {
    PriorityAndFairness(Arc<crate::flowcontrol::FlowControl>),
    MaxInFlight(MaxInFlight),
}

/// Wraps `handler` in every filter.
pub fn build_handler_chain(handler: HttpService, cfg: &ChainConfig) -> HttpService {
    let svc = ServiceBuilder::new()
        .layer(FilterLayer(PanicRecovery))
        .layer(FilterLayer(AuditId))
        .layer(FilterLayer(WithRequestInfo))
        .layer(FilterLayer(Tracing {
            tracer: cfg.tracer.clone(),
        }))
        .layer(FilterLayer(HttpLog))
        .layer(FilterLayer(RequestMetrics))
        .layer(FilterLayer(CacheControl))
        .layer(FilterLayer(RequestTimeout {
            default: cfg.request_timeout,
        }))
        .layer(FilterLayer(BodyLimit {
            max_bytes: cfg.max_request_body_bytes,
        }))
        .layer(FilterLayer(Authentication {
            authenticator: cfg.authenticator.clone(),
            header_names: cfg.header_names.clone(),
            auditor: cfg.auditor.clone(),
        }))
        .layer(FilterLayer(Audit {
            auditor: cfg.auditor.clone(),
        }))
        .layer(FilterLayer(Impersonation {
            authorizer: cfg.authorizer.clone(),
        }))
        .option_layer(match &cfg.in_flight {
            InFlightLimits::PriorityAndFairness(fc) => Some(FilterLayer(PriorityAndFairness {
                flow_control: fc.clone(),
            })),
            InFlightLimits::MaxInFlight(_) => None,
        })
        .option_layer(match &cfg.in_flight {
            InFlightLimits::MaxInFlight(m) => Some(FilterLayer(m.clone())),
            InFlightLimits::PriorityAndFairness(_) => None,
        })
        .layer(FilterLayer(Authorization {
            authorizer: cfg.authorizer.clone(),
            trust_front_proxy: cfg.trust_front_proxy_authorization,
        }))
        .service(handler);
    HttpService::new(svc)
}

//! The `--audit-*` flags, with upstream's names, defaults and meaning
//! (`k8s.io/apiserver/pkg/server/options/audit.go`). Auditing is on when
//! `--audit-policy-file` is set and at least one backend is
//! (`--audit-log-path`, `--audit-webhook-config-file`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;

use super::options::parse_duration;
use crate::audit::backends::buffered::BatchConfig;
use crate::audit::backends::rotate::Rotation;
use crate::audit::backends::{log, webhook, Mode, Truncate};
use crate::audit::{Auditor, Policy, Sink, Union};

fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse()
}

/// `--audit-policy-file` and the two backends' flags.
#[derive(clap::Args, Clone, Debug)]
pub struct AuditOptions {
    /// Path to the file that defines the audit policy configuration.
    #[arg(long, help_heading = "Auditing flags")]
    pub audit_policy_file: Option<PathBuf>,

    /// If set, all requests coming to the apiserver will be logged to this file. '-' means standard out.
    #[arg(long, help_heading = "Auditing flags")]
    pub audit_log_path: Option<PathBuf>,
    /// The maximum number of days to retain old audit log files based on the timestamp encoded in their filename.
    #[arg(long, default_value_t = 0, help_heading = "Auditing flags")]
    pub audit_log_maxage: u64,
    /// The maximum number of old audit log files to retain. Setting a value of 0 will mean there's no restriction on the number of files.
    #[arg(long, default_value_t = 0, help_heading = "Auditing flags")]
    pub audit_log_maxbackup: usize,
    /// The maximum size in megabytes of the audit log file before it gets rotated.
    #[arg(long, default_value_t = 0, help_heading = "Auditing flags")]
    pub audit_log_maxsize: u64,
    /// Format of saved audits. "json" indicates structured json format (the only one served).
    #[arg(long, default_value = "json", help_heading = "Auditing flags")]
    pub audit_log_format: String,
    /// If set, the rotated log files will be compressed using gzip (not served: refused).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, help_heading = "Auditing flags")]
    pub audit_log_compress: bool,
    /// Strategy for sending audit events: blocking, blocking-strict or batch.
    #[arg(long, default_value = "blocking", value_parser = parse_mode, help_heading = "Auditing flags")]
    pub audit_log_mode: Mode,
    /// The size of the buffer to store events before batching and writing. Only used in batch mode.
    #[arg(long, default_value_t = 10000, help_heading = "Auditing flags")]
    pub audit_log_batch_buffer_size: usize,
    /// The maximum size of a batch. Only used in batch mode.
    #[arg(long, default_value_t = 1, help_heading = "Auditing flags")]
    pub audit_log_batch_max_size: usize,
    /// The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode.
    #[arg(long, default_value = "0s", value_parser = parse_duration, help_heading = "Auditing flags")]
    pub audit_log_batch_max_wait: Duration,
    /// Whether batching throttling is enabled. Only used in batch mode.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, help_heading = "Auditing flags")]
    pub audit_log_batch_throttle_enable: bool,
    /// Maximum average number of batches per second. Only used in batch mode.
    #[arg(long, default_value_t = 0.0, help_heading = "Auditing flags")]
    pub audit_log_batch_throttle_qps: f64,
    /// Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.
    #[arg(long, default_value_t = 0, help_heading = "Auditing flags")]
    pub audit_log_batch_throttle_burst: usize,
    /// Whether event and batch truncating is enabled.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, help_heading = "Auditing flags")]
    pub audit_log_truncate_enabled: bool,
    /// Maximum size of the batch sent to the underlying backend.
    #[arg(long, default_value_t = 10 * 1024 * 1024, help_heading = "Auditing flags")]
    pub audit_log_truncate_max_batch_size: usize,
    /// Maximum size of the audit event sent to the underlying backend.
    #[arg(long, default_value_t = 100 * 1024, help_heading = "Auditing flags")]
    pub audit_log_truncate_max_event_size: usize,
    /// API group and version used for serializing audit events written to log.
    #[arg(
        long,
        default_value = "audit.k8s.io/v1",
        help_heading = "Auditing flags"
    )]
    pub audit_log_version: String,

    /// Path to a kubeconfig formatted file that defines the audit webhook configuration.
    #[arg(long, help_heading = "Auditing flags")]
    pub audit_webhook_config_file: Option<PathBuf>,
    /// The amount of time to wait before retrying the first failed request.
    #[arg(long, default_value = "10s", value_parser = parse_duration, help_heading = "Auditing flags")]
    pub audit_webhook_initial_backoff: Duration,
    /// Strategy for sending audit events: blocking, blocking-strict or batch.
    #[arg(long, default_value = "batch", value_parser = parse_mode, help_heading = "Auditing flags")]
    pub audit_webhook_mode: Mode,
    /// The size of the buffer to store events before batching and writing. Only used in batch mode.
    #[arg(long, default_value_t = 10000, help_heading = "Auditing flags")]
    pub audit_webhook_batch_buffer_size: usize,
    /// The maximum size of a batch. Only used in batch mode.
    #[arg(long, default_value_t = 400, help_heading = "Auditing flags")]
    pub audit_webhook_batch_max_size: usize,
    /// The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode.
    #[arg(long, default_value = "30s", value_parser = parse_duration, help_heading = "Auditing flags")]
    pub audit_webhook_batch_max_wait: Duration,
    /// Whether batching throttling is enabled. Only used in batch mode.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, help_heading = "Auditing flags")]
    pub audit_webhook_batch_throttle_enable: bool,
    /// Maximum average number of batches per second. Only used in batch mode.
    #[arg(long, default_value_t = 10.0, help_heading = "Auditing flags")]
    pub audit_webhook_batch_throttle_qps: f64,
    /// Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.
    #[arg(long, default_value_t = 15, help_heading = "Auditing flags")]
    pub audit_webhook_batch_throttle_burst: usize,
    /// Whether event and batch truncating is enabled.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, help_heading = "Auditing flags")]
    pub audit_webhook_truncate_enabled: bool,
    /// Maximum size of the batch sent to the underlying backend.
    #[arg(long, default_value_t = 10 * 1024 * 1024, help_heading = "Auditing flags")]
    pub audit_webhook_truncate_max_batch_size: usize,
    /// Maximum size of the audit event sent to the underlying backend.
    #[arg(long, default_value_t = 100 * 1024, help_heading = "Auditing flags")]
    pub audit_webhook_truncate_max_event_size: usize,
    /// API group and version used for serializing audit events written to webhook.
    #[arg(
        long,
        default_value = "audit.k8s.io/v1",
        help_heading = "Auditing flags"
    )]
    pub audit_webhook_version: String,
}

fn truncate(enabled: bool, max_event_bytes: usize, max_batch_bytes: usize) -> Option<Truncate> {
    enabled.then_some(Truncate {
        max_event_bytes,
        max_batch_bytes,
    })
}

impl AuditOptions {
    /// The tier's auditing: `None` without a policy or without a backend.
    /// Batching backends start their tasks on the current runtime.
    pub fn build(&self) -> anyhow::Result<Option<Arc<Auditor>>> {
        for (flag, v) in [
            ("--audit-log-version", &self.audit_log_version),
            ("--audit-webhook-version", &self.audit_webhook_version),
        ] {
            if v != "audit.k8s.io/v1" {
                bail!("{flag}: unsupported version {v:?} (audit.k8s.io/v1 is served)");
            }
        }
        if self.audit_log_format != "json" {
            bail!(
                "--audit-log-format {:?}: only \"json\" is served",
                self.audit_log_format
            );
        }
        if self.audit_log_compress {
            bail!("--audit-log-compress: compressing rotated audit logs is not served");
        }
        let Some(policy_file) = &self.audit_policy_file else {
            if self.audit_log_path.is_some() || self.audit_webhook_config_file.is_some() {
                tracing::warn!("an audit backend is configured without --audit-policy-file: nothing is audited");
            }
            return Ok(None);
        };
        let policy = Policy::load(policy_file)?;
        let mut sinks: Vec<Arc<dyn Sink>> = Vec::new();
        if let Some(path) = &self.audit_log_path {
            let file = log::LogFile::open(
                path,
                Rotation {
                    max_size_mb: self.audit_log_maxsize,
                    max_backups: self.audit_log_maxbackup,
                    max_age_days: self.audit_log_maxage,
                },
            )
            .map_err(|e| anyhow::anyhow!("opening --audit-log-path {}: {e}", path.display()))?;
            sinks.push(log::backend(
                file,
                self.audit_log_mode,
                BatchConfig {
                    buffer_size: self.audit_log_batch_buffer_size,
                    max_batch_size: self.audit_log_batch_max_size,
                    max_batch_wait: self.audit_log_batch_max_wait,
                    throttle: self.audit_log_batch_throttle_enable.then_some((
                        self.audit_log_batch_throttle_qps,
                        self.audit_log_batch_throttle_burst,
                    )),
                },
                truncate(
                    self.audit_log_truncate_enabled,
                    self.audit_log_truncate_max_event_size,
                    self.audit_log_truncate_max_batch_size,
                ),
            ));
        }
        if let Some(path) = &self.audit_webhook_config_file {
            let hook = webhook::Webhook::from_kubeconfig(path, self.audit_webhook_initial_backoff)?;
            sinks.push(webhook::backend(
                hook,
                self.audit_webhook_mode,
                BatchConfig {
                    buffer_size: self.audit_webhook_batch_buffer_size,
                    max_batch_size: self.audit_webhook_batch_max_size,
                    max_batch_wait: self.audit_webhook_batch_max_wait,
                    throttle: self.audit_webhook_batch_throttle_enable.then_some((
                        self.audit_webhook_batch_throttle_qps,
                        self.audit_webhook_batch_throttle_burst,
                    )),
                },
                truncate(
                    self.audit_webhook_truncate_enabled,
                    self.audit_webhook_truncate_max_event_size,
                    self.audit_webhook_truncate_max_batch_size,
                ),
            ));
        }
        if sinks.is_empty() {
            tracing::warn!("--audit-policy-file is set without --audit-log-path or --audit-webhook-config-file: nothing is audited");
            return Ok(None);
        }
        let sink: Arc<dyn Sink> = if sinks.len() == 1 {
            sinks.remove(0)
        } else {
            Arc::new(Union(sinks))
        };
        Ok(Some(Arc::new(Auditor { policy, sink })))
    }
}

//! The `--tracing-config-file` (`apiserver.config.k8s.io` `TracingConfiguration`):
//! `endpoint` of the OTLP collector (default `localhost:4317`) and
//! `samplingRatePerMillion` (default 0: only requests that arrive sampled).

use std::path::Path;

use anyhow::{bail, Context};
use serde::Deserialize;

/// A parsed configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracingConfiguration {
    pub endpoint: String,
    pub sampling_rate_per_million: u32,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Document {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    endpoint: Option<String>,
    sampling_rate_per_million: Option<i64>,
}

impl TracingConfiguration {
    /// Reads and validates a configuration file (YAML or JSON).
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading --tracing-config-file {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("--tracing-config-file {}", path.display()))
    }

    /// Parses and validates a configuration.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let doc: Document = serde_saphyr::from_str(text).context("decoding")?;
        match doc.api_version.as_str() {
            "apiserver.config.k8s.io/v1"
            | "apiserver.config.k8s.io/v1beta1"
            | "apiserver.config.k8s.io/v1alpha1" => {}
            other => bail!("unsupported apiVersion {other:?} (want apiserver.config.k8s.io/v1)"),
        }
        if doc.kind != "TracingConfiguration" {
            bail!("kind is {:?}, not \"TracingConfiguration\"", doc.kind);
        }
        let rate = doc.sampling_rate_per_million.unwrap_or(0);
        if !(0..=1_000_000).contains(&rate) {
            bail!("samplingRatePerMillion: {rate}: must be between 0 and 1000000");
        }
        let endpoint = doc.endpoint.unwrap_or_else(|| "localhost:4317".to_string());
        if endpoint.is_empty() {
            bail!("endpoint: must not be empty");
        }
        Ok(TracingConfiguration {
            endpoint,
            sampling_rate_per_million: rate as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_upstreams_file() {
        let c = TracingConfiguration::parse(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:4318\nsamplingRatePerMillion: 100\n",
        )
        .unwrap();
        assert_eq!(c.endpoint, "127.0.0.1:4318");
        assert_eq!(c.sampling_rate_per_million, 100);
        let d = TracingConfiguration::parse(
            "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\n",
        )
        .unwrap();
        assert_eq!(d.endpoint, "localhost:4317");
        assert!(TracingConfiguration::parse("apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nsamplingRatePerMillion: 2000000\n").is_err());
        assert!(TracingConfiguration::parse("kind: TracingConfiguration\n").is_err());
    }
}

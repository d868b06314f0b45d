//! The node agent's TOML file (`--config FILE`): the OTLP endpoint,
//! headers, resource attributes and queue sizes, so a systemd unit or a
//! DaemonSet can keep them in one reviewed file rather than in a command
//! line. What the command line gives wins over the file, and the file
//! over the `OTEL_*` variables.
//!
//! ```toml
//! [otlp]
//! endpoint = "http://127.0.0.1:4318"
//! service = "checkout"              # optional: else each process's name
//! compression = "gzip"              # or "none"
//! timeout_ms = 10000
//! headers = { "x-tenant" = "shop" }
//! resource_attributes = { "deployment.environment" = "prod" }
//!
//! [otlp.queue]
//! max_batch_records = 4096
//! max_batch_age_ms = 1000
//! memory_cap_mib = 64
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use serde::Deserialize;
use usertrace_output::otlp::config::{COMPRESSION_VAR, ENDPOINT_VAR, HEADERS_VAR, RESOURCE_ATTRIBUTES_VAR, TIMEOUT_VAR};

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The `[otlp]` table.
    #[serde(default)]
    pub otlp: OtlpTable,
}

/// `[otlp]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OtlpTable {
    pub endpoint: Option<String>,
    pub service: Option<String>,
    pub compression: Option<String>,
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub resource_attributes: BTreeMap<String, String>,
    #[serde(default)]
    pub queue: QueueTable,
}

/// `[otlp.queue]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueTable {
    pub max_batch_records: Option<usize>,
    pub max_batch_age_ms: Option<u64>,
    pub memory_cap_mib: Option<usize>,
}

impl ConfigFile {
    /// Reads and parses `path`.
    pub fn read(path: &Path) -> Result<ConfigFile, ConfigFileError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigFileError { path: path.into(), why: e.to_string() })?;
        toml::from_str(&text).map_err(|e| ConfigFileError { path: path.into(), why: e.to_string() })
    }

    /// The file's value of the standard variable `name`, written as the
    /// variable would be, so the file and the environment share one
    /// parser (and one set of error messages).
    pub fn var(&self, name: &str) -> Option<String> {
        let pairs = |map: &BTreeMap<String, String>| {
            (!map.is_empty()).then(|| {
                map.iter().map(|(k, v)| format!("{k}={}", utf8_percent_encode(v, NON_ALPHANUMERIC))).collect::<Vec<_>>().join(",")
            })
        };
        let o = &self.otlp;
        match name {
            ENDPOINT_VAR => o.endpoint.clone(),
            COMPRESSION_VAR => o.compression.clone(),
            TIMEOUT_VAR => o.timeout_ms.map(|ms| ms.to_string()),
            HEADERS_VAR => pairs(&o.headers),
            RESOURCE_ATTRIBUTES_VAR => pairs(&o.resource_attributes),
            _ => None,
        }
    }
}

/// A config file that could not be read or is not valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFileError {
    /// The file.
    pub path: PathBuf,
    /// What was wrong (the parser's message names the line and key).
    pub why: String,
}

impl fmt::Display for ConfigFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot use the config file {}: {} (see `usertrace record --help` for its keys)", self.path.display(), self.why.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_reads_as_the_standard_variables_would() {
        let file: ConfigFile = toml::from_str(
            r#"
            [otlp]
            endpoint = "http://c:4318"
            compression = "gzip"
            timeout_ms = 2500
            headers = { "x-tenant" = "a b", "x-key" = "k=1" }
            resource_attributes = { "deployment.environment" = "prod" }
            [otlp.queue]
            memory_cap_mib = 8
            "#,
        )
        .unwrap();
        assert_eq!(file.var(ENDPOINT_VAR).as_deref(), Some("http://c:4318"));
        assert_eq!(file.var(TIMEOUT_VAR).as_deref(), Some("2500"));
        assert_eq!(file.var(HEADERS_VAR).as_deref(), Some("x-key=k%3D1,x-tenant=a%20b"));
        assert_eq!(file.var(RESOURCE_ATTRIBUTES_VAR).as_deref(), Some("deployment.environment=prod"));
        assert_eq!(file.otlp.queue.memory_cap_mib, Some(8));
    }

    #[test]
    fn the_shipped_agent_config_is_valid() {
        let file: ConfigFile = toml::from_str(include_str!("../../deploy/agent.toml")).unwrap();
        assert_eq!(file.var(ENDPOINT_VAR).as_deref(), Some("http://127.0.0.1:4318"));
        assert_eq!(file.otlp.queue.memory_cap_mib, Some(64));
    }

    #[test]
    fn an_unknown_key_or_unreadable_file_is_named() {
        let e = toml::from_str::<ConfigFile>("[otlp]\nendpoitn = \"x\"\n").unwrap_err();
        assert!(e.to_string().contains("endpoitn"), "{e}");
        let e = ConfigFile::read(Path::new("/nonexistent/usertrace.toml")).unwrap_err();
        assert!(e.to_string().starts_with("cannot use the config file /nonexistent/usertrace.toml: "), "{e}");
    }
}

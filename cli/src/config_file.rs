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
//! command_line = false              # leave process.command_line out
//! certificate = "/etc/usertrace/ca.pem"           # CAs to trust over https
//! client_certificate = "/etc/usertrace/client.pem" # mutual TLS
//! client_key = "/etc/usertrace/client.key"
//!
//! [otlp.queue]
//! max_batch_records = 4096
//! max_batch_age_ms = 1000
//! memory_cap_mib = 64
//!
//! [record]
//! containers = ["pod:1b4f0d2e-7c3a-4e5b-9c2e-0a1b2c3d4e5f"]  # as --containers
//! ```
//!
//! The file may hold secrets (an `authorization` header), so an error in
//! it is told by line, column and key, never by quoting its text.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use serde::Deserialize;
use usertrace_consumer::{ContainerSelector, SelectorError};
use usertrace_output::otlp::config::{
    CERTIFICATE_VAR, CLIENT_CERTIFICATE_VAR, CLIENT_KEY_VAR, COMPRESSION_VAR, ENDPOINT_VAR, HEADERS_VAR, RESOURCE_ATTRIBUTES_VAR, TIMEOUT_VAR,
};

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The `[otlp]` table.
    #[serde(default)]
    pub otlp: OtlpTable,
    /// The `[record]` table.
    #[serde(default)]
    pub record: RecordTable,
}

/// `[record]`: what the agent records, as `record`'s options say it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordTable {
    /// `--containers`: the selectors, each as the option takes one.
    #[serde(default)]
    pub containers: Vec<String>,
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
    /// `false`: leave `process.command_line` out of every resource.
    pub command_line: Option<bool>,
    /// PEM file of CA certificates to trust besides the platform's.
    pub certificate: Option<String>,
    /// PEM file of the client certificate chain (mutual TLS).
    pub client_certificate: Option<String>,
    /// PEM file of the client's private key (mutual TLS).
    pub client_key: Option<String>,
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
        toml::from_str(&text).map_err(|e| ConfigFileError { path: path.into(), why: describe(&text, e) })
    }

    /// `[record] containers`, parsed as `--containers` parses its values
    /// (one parser, one set of messages).
    pub fn containers(&self) -> Result<Vec<ContainerSelector>, SelectorError> {
        self.record.containers.iter().map(|s| s.parse()).collect()
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
            CERTIFICATE_VAR => o.certificate.clone(),
            CLIENT_CERTIFICATE_VAR => o.client_certificate.clone(),
            CLIENT_KEY_VAR => o.client_key.clone(),
            _ => None,
        }
    }
}

/// A parse error by where it is and what is wrong: toml's own message
/// quotes the line, and serde's quotes a misplaced value, either of which
/// may be a secret, so neither is shown.
fn describe(text: &str, mut e: toml::de::Error) -> String {
    let place = e.span().map(|span| {
        let before = &text.as_bytes()[..span.start.min(text.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        format!("line {line}, column {column}: ")
    });
    // Without the input, toml says what is wrong and in which key.
    e.set_input(None);
    let what = hide_quoted(e.to_string().trim_end()).replace('\n', " ");
    format!("{}{what}", place.unwrap_or_default())
}

/// `text` with everything between double quotes hidden.
fn hide_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, part) in text.split('"').enumerate() {
        match i % 2 {
            0 => out.push_str(part),
            _ => out.push_str("\"(not shown)\""),
        }
    }
    out
}

/// A config file that could not be read or is not valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFileError {
    /// The file.
    pub path: PathBuf,
    /// What was wrong: the line, column and key, never the text.
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
    fn every_key_the_shipped_agent_config_shows_in_a_comment_is_taken() {
        let shipped = include_str!("../../deploy/agent.toml");
        let uncommented: Vec<String> = shipped
            .lines()
            .map(|line| match line.strip_prefix("# ").and_then(|rest| rest.split_once(" = ")) {
                Some((key, _)) if !key.is_empty() && key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') => line[2..].to_owned(),
                _ => line.to_owned(),
            })
            .collect();
        assert!(uncommented.len() == shipped.lines().count() && uncommented.iter().any(|l| l == "command_line = false"));
        let file: ConfigFile = toml::from_str(&uncommented.join("\n")).unwrap();
        assert_eq!((file.otlp.command_line, file.var(CERTIFICATE_VAR).as_deref()), (Some(false), Some("/etc/usertrace/collector-ca.pem")));
        assert_eq!(file.var(CLIENT_KEY_VAR).as_deref(), Some("/etc/usertrace/client.key"));
    }

    #[test]
    fn record_containers_are_parsed_as_the_option_parses_them() {
        let file: ConfigFile = toml::from_str("[record]\ncontainers = [\"cgroup:/kubepods.slice\", \"id:0123456789ab\"]\n").unwrap();
        let expected = vec![ContainerSelector::CgroupPrefix("/kubepods.slice".into()), ContainerSelector::ContainerId("0123456789ab".into())];
        assert_eq!(file.containers(), Ok(expected));
        let file: ConfigFile = toml::from_str("[record]\ncontainers = [\"web\"]\n").unwrap();
        assert!(file.containers().unwrap_err().to_string().contains("expected cgroup:PATH"));
        assert_eq!(ConfigFile::default().containers(), Ok(Vec::new()));
    }

    #[test]
    fn an_unknown_key_or_unreadable_file_is_named() {
        let text = "[otlp]\nendpoitn = \"x\"\n";
        let e = describe(text, toml::from_str::<ConfigFile>(text).unwrap_err());
        assert!(e.starts_with("line 2, column 1: unknown field `endpoitn`"), "{e}");
        let e = ConfigFile::read(Path::new("/nonexistent/usertrace.toml")).unwrap_err();
        assert!(e.to_string().starts_with("cannot use the config file /nonexistent/usertrace.toml: "), "{e}");
    }
}

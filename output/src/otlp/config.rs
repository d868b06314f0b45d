//! Where and how to export: the endpoint, headers, timeout and compression,
//! from the command line first, then the standard `OTEL_EXPORTER_OTLP_*`
//! variables, checked before any recording starts so that a typo is an
//! error now rather than a silent loss later.
//!
//! References: the OpenTelemetry specification, "OpenTelemetry Protocol
//! Exporter" (protocol/exporter.md) and "Environment Variable
//! Specification" (configuration/sdk-environment-variables.md).

use std::fmt;
use std::time::Duration;

use percent_encoding::percent_decode_str;

/// The variables read, so tests and callers can pass their own.
pub const ENDPOINT_VAR: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
/// `key=value,key2=value2`, values percent-encoded.
pub const HEADERS_VAR: &str = "OTEL_EXPORTER_OTLP_HEADERS";
/// Milliseconds per request.
pub const TIMEOUT_VAR: &str = "OTEL_EXPORTER_OTLP_TIMEOUT";
/// `gzip` or `none`.
pub const COMPRESSION_VAR: &str = "OTEL_EXPORTER_OTLP_COMPRESSION";
/// `key=value,...` added to every resource.
pub const RESOURCE_ATTRIBUTES_VAR: &str = "OTEL_RESOURCE_ATTRIBUTES";
/// The `service.name` of every process.
pub const SERVICE_NAME_VAR: &str = "OTEL_SERVICE_NAME";

/// The specification's default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How request bodies are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// As they are.
    #[default]
    None,
    /// gzip, with `Content-Encoding: gzip`.
    Gzip,
}

impl Compression {
    /// `gzip` or `none` (what the variable and `--compression` take).
    pub fn parse(value: &str) -> Result<Compression, ConfigError> {
        match value.trim() {
            "gzip" => Ok(Compression::Gzip),
            "none" | "" => Ok(Compression::None),
            other => Err(ConfigError::UnknownCompression(other.into())),
        }
    }
}

/// A checked export configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `<base>/v1/traces`.
    pub traces_url: String,
    /// `<base>/v1/logs`.
    pub logs_url: String,
    /// Sent with every request.
    pub headers: Vec<(String, String)>,
    /// Per request.
    pub timeout: Duration,
    /// Of request bodies.
    pub compression: Compression,
}

/// What the command line says; `None` falls back to the variable.
#[derive(Debug, Clone, Default)]
pub struct EndpointArgs {
    /// `--otlp URL`: the base URL (the signal paths are appended).
    pub url: Option<String>,
    /// `--compression`.
    pub compression: Option<String>,
}

impl Endpoint {
    /// The configuration from `args`, then the variables `var` gives
    /// (`std::env::var` in use; a map in tests).
    pub fn resolve(args: &EndpointArgs, var: impl Fn(&str) -> Option<String>) -> Result<Endpoint, ConfigError> {
        let base = args.url.clone().or_else(|| var(ENDPOINT_VAR)).ok_or(ConfigError::NoEndpoint)?;
        check_base(&base)?;
        let base = base.trim_end_matches('/');
        let headers = match var(HEADERS_VAR) {
            Some(h) => parse_pairs(&h).map_err(ConfigError::BadHeader)?,
            None => Vec::new(),
        };
        for (name, value) in &headers {
            let valid = !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic() && b != b':');
            if !valid || value.bytes().any(|b| b.is_ascii_control()) {
                return Err(ConfigError::BadHeader(format!("{name}={value}")));
            }
        }
        let timeout = match var(TIMEOUT_VAR) {
            Some(ms) => match ms.trim().parse::<u64>() {
                Ok(ms) if ms > 0 => Duration::from_millis(ms),
                _ => return Err(ConfigError::BadTimeout(ms)),
            },
            None => DEFAULT_TIMEOUT,
        };
        let compression = match args.compression.clone().or_else(|| var(COMPRESSION_VAR)) {
            Some(c) => Compression::parse(&c)?,
            None => Compression::None,
        };
        Ok(Endpoint { traces_url: format!("{base}/v1/traces"), logs_url: format!("{base}/v1/logs"), headers, timeout, compression })
    }
}

/// An http or https URL with a host, and nothing ureq would refuse later.
fn check_base(url: &str) -> Result<(), ConfigError> {
    let bad = |why: &str| ConfigError::BadEndpoint { url: url.into(), why: why.into() };
    let uri: ureq::http::Uri = url.parse().map_err(|e: ureq::http::uri::InvalidUri| bad(&e.to_string()))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        Some(other) => return Err(bad(&format!("the scheme is {other}, not http or https"))),
        None => return Err(bad("it has no scheme: write http://HOST:4318")),
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(bad("it has no host"));
    }
    if uri.query().is_some() {
        return Err(bad("it has a query; the signal paths /v1/traces and /v1/logs are appended to it"));
    }
    Ok(())
}

/// `OTEL_RESOURCE_ATTRIBUTES` (or any `key=value,...` variable) as pairs,
/// values percent-decoded as the specification says.
pub fn parse_resource_attributes(value: &str) -> Result<Vec<(String, String)>, ConfigError> {
    parse_pairs(value).map_err(ConfigError::BadResourceAttribute)
}

/// `k=v,k2=v2`: keys trimmed, values percent-decoded; an entry without
/// `=` or with an empty key is returned as the error.
fn parse_pairs(value: &str) -> Result<Vec<(String, String)>, String> {
    value
        .split(',')
        .filter(|entry| !entry.trim().is_empty())
        .map(|entry| {
            let (k, v) = entry.split_once('=').ok_or_else(|| entry.to_owned())?;
            let k = k.trim();
            if k.is_empty() {
                return Err(entry.to_owned());
            }
            let v = percent_decode_str(v.trim()).decode_utf8().map_err(|_| entry.to_owned())?;
            Ok((k.to_owned(), v.into_owned()))
        })
        .collect()
}

/// A configuration that cannot work, found before recording starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// Neither `--otlp` nor `OTEL_EXPORTER_OTLP_ENDPOINT` was given.
    NoEndpoint,
    /// The endpoint is not an http(s) URL with a host.
    BadEndpoint {
        /// As given.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// An `OTEL_EXPORTER_OTLP_HEADERS` entry is not `name=value` with a
    /// valid header name and value.
    BadHeader(String),
    /// `OTEL_EXPORTER_OTLP_TIMEOUT` is not a positive number of ms.
    BadTimeout(String),
    /// Compression other than `gzip` or `none`.
    UnknownCompression(String),
    /// An `OTEL_RESOURCE_ATTRIBUTES` entry is not `key=value`.
    BadResourceAttribute(String),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::NoEndpoint => write!(f, "no OTLP endpoint: give --otlp http://HOST:4318 or set {ENDPOINT_VAR}"),
            ConfigError::BadEndpoint { url, why } => {
                write!(f, "the OTLP endpoint {url:?} is not usable: {why} (give a base URL such as http://127.0.0.1:4318)")
            }
            ConfigError::BadHeader(entry) => {
                write!(f, "{HEADERS_VAR} has a bad entry {entry:?}: write name=value pairs separated by commas, values percent-encoded")
            }
            ConfigError::BadTimeout(v) => write!(f, "{TIMEOUT_VAR}={v:?} is not a positive number of milliseconds"),
            ConfigError::UnknownCompression(v) => write!(f, "unknown OTLP compression {v:?}: use gzip or none"),
            ConfigError::BadResourceAttribute(entry) => {
                write!(f, "{RESOURCE_ATTRIBUTES_VAR} has a bad entry {entry:?}: write key=value pairs separated by commas, values percent-encoded")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    fn args(url: &str) -> EndpointArgs {
        EndpointArgs { url: Some(url.into()), compression: None }
    }

    #[test]
    fn the_command_line_wins_over_the_variables_and_paths_are_appended() {
        let e = Endpoint::resolve(
            &EndpointArgs { url: Some("http://a:4318/".into()), compression: Some("gzip".into()) },
            env(&[(ENDPOINT_VAR, "http://b:4318"), (COMPRESSION_VAR, "none"), (TIMEOUT_VAR, "2500"), (HEADERS_VAR, "x-a=1, Authorization=Bearer%20t")]),
        )
        .unwrap();
        assert_eq!((e.traces_url.as_str(), e.logs_url.as_str()), ("http://a:4318/v1/traces", "http://a:4318/v1/logs"));
        assert_eq!(e.compression, Compression::Gzip);
        assert_eq!(e.timeout, Duration::from_millis(2500));
        assert_eq!(e.headers, [("x-a".into(), "1".into()), ("Authorization".into(), "Bearer t".into())]);
        let e = Endpoint::resolve(&EndpointArgs::default(), env(&[(ENDPOINT_VAR, "https://c/otlp")])).unwrap();
        assert_eq!((e.traces_url.as_str(), e.timeout, e.compression), ("https://c/otlp/v1/traces", DEFAULT_TIMEOUT, Compression::None));
    }

    #[test]
    fn bad_settings_are_named() {
        let none = env(&[]);
        assert_eq!(Endpoint::resolve(&EndpointArgs::default(), &none), Err(ConfigError::NoEndpoint));
        for bad in ["localhost:4318", "ftp://h/", "http://", "not a url", "http://h:4318/?x=1"] {
            match Endpoint::resolve(&args(bad), &none) {
                Err(ConfigError::BadEndpoint { url, .. }) => assert_eq!(url, bad),
                other => panic!("{bad}: {other:?}"),
            }
        }
        let e = Endpoint::resolve(&EndpointArgs { url: Some("http://h".into()), compression: Some("zstd".into()) }, &none);
        assert_eq!(e, Err(ConfigError::UnknownCompression("zstd".into())));
        assert_eq!(Endpoint::resolve(&args("http://h"), env(&[(HEADERS_VAR, "novalue")])), Err(ConfigError::BadHeader("novalue".into())));
        assert!(matches!(Endpoint::resolve(&args("http://h"), env(&[(HEADERS_VAR, "a b=1")])), Err(ConfigError::BadHeader(_))));
        assert_eq!(Endpoint::resolve(&args("http://h"), env(&[(TIMEOUT_VAR, "0")])), Err(ConfigError::BadTimeout("0".into())));
        assert!(ConfigError::UnknownCompression("zstd".into()).to_string().contains("gzip or none"));
    }

    #[test]
    fn resource_attributes_are_percent_decoded_pairs() {
        assert_eq!(
            parse_resource_attributes("deployment.environment=prod, team=a%2Cb,,").unwrap(),
            [("deployment.environment".into(), "prod".into()), ("team".into(), "a,b".into())]
        );
        assert_eq!(parse_resource_attributes("=x"), Err(ConfigError::BadResourceAttribute("=x".into())));
    }
}

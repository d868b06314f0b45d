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

use base64::prelude::{Engine as _, BASE64_STANDARD};
use percent_encoding::percent_decode_str;

mod tls;
pub use tls::{Tls, CERTIFICATE_VAR, CLIENT_CERTIFICATE_VAR, CLIENT_KEY_VAR};

/// The variables read, so tests and callers can pass their own.
pub const ENDPOINT_VAR: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
/// `key=value,key2=value2`, values percent-encoded.
pub const HEADERS_VAR: &str = "OTEL_EXPORTER_OTLP_HEADERS";
/// Milliseconds per request.
pub const TIMEOUT_VAR: &str = "OTEL_EXPORTER_OTLP_TIMEOUT";
/// `gzip` or `none`.
pub const COMPRESSION_VAR: &str = "OTEL_EXPORTER_OTLP_COMPRESSION";
/// `key=value,...` added to every resource.
pub const RESOURCE_ATTRIBUTES_VAR: &str = usertrace::resource::RESOURCE_ATTRIBUTES_VAR;
/// The `service.name` of every process.
pub const SERVICE_NAME_VAR: &str = usertrace::resource::SERVICE_NAME_VAR;

/// The specification's default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest per-request timeout taken: past it a hung collector would
/// hold the exporter (and a shutdown) for longer than anyone waits.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);

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
    /// `<base>/v1/traces`, without credentials (those given in the URL
    /// are sent as an `Authorization` header), so it can be shown.
    pub traces_url: String,
    /// `<base>/v1/logs`, likewise.
    pub logs_url: String,
    /// Sent with every request. Their values are never shown.
    pub headers: Vec<(String, String)>,
    /// Per request.
    pub timeout: Duration,
    /// Of request bodies.
    pub compression: Compression,
    /// Whom to trust over https, and what to show (mutual TLS).
    pub tls: Tls,
}

/// What the command line says; `None` falls back to the variable.
#[derive(Debug, Clone, Default)]
pub struct EndpointArgs {
    /// `--otlp URL`: the base URL (the signal paths are appended).
    pub url: Option<String>,
    /// `--compression`.
    pub compression: Option<String>,
    /// `--otlp-certificate FILE`: CA certificates to trust.
    pub certificate: Option<String>,
    /// `--otlp-client-certificate FILE`: for mutual TLS.
    pub client_certificate: Option<String>,
    /// `--otlp-client-key FILE`: for mutual TLS.
    pub client_key: Option<String>,
}

impl Endpoint {
    /// The configuration from `args`, then the variables `var` gives
    /// (`std::env::var` in use; a map in tests).
    pub fn resolve(args: &EndpointArgs, var: impl Fn(&str) -> Option<String>) -> Result<Endpoint, ConfigError> {
        let base = args.url.clone().or_else(|| var(ENDPOINT_VAR)).ok_or(ConfigError::NoEndpoint)?;
        check_base(&base)?;
        let (base, credentials) = split_credentials(base.trim_end_matches('/'));
        let mut headers = match var(HEADERS_VAR) {
            Some(h) => parse_headers(&h)?,
            None => Vec::new(),
        };
        if let Some(credentials) = credentials {
            if headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("authorization")) {
                return Err(ConfigError::TwoCredentials);
            }
            headers.push(("Authorization".into(), credentials));
        }
        let timeout = match var(TIMEOUT_VAR) {
            Some(ms) => match ms.trim().parse::<u64>() {
                Ok(ms) if ms > 0 && Duration::from_millis(ms) <= MAX_TIMEOUT => Duration::from_millis(ms),
                _ => return Err(ConfigError::BadTimeout(ms)),
            },
            None => DEFAULT_TIMEOUT,
        };
        let compression = match args.compression.clone().or_else(|| var(COMPRESSION_VAR)) {
            Some(c) => Compression::parse(&c)?,
            None => Compression::None,
        };
        let tls = Tls::resolve(args, &var)?;
        Ok(Endpoint { traces_url: format!("{base}/v1/traces"), logs_url: format!("{base}/v1/logs"), headers, timeout, compression, tls })
    }
}

/// An http or https URL with a host, and nothing ureq would refuse later.
fn check_base(url: &str) -> Result<(), ConfigError> {
    let bad = |why: &str| ConfigError::BadEndpoint { url: redact_url(url), why: why.into() };
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

/// `url` without the `user:password@` of its authority, if any, so that
/// it can be shown (a `Location`, an endpoint in a message).
pub fn redact_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) if url.contains("://") => format!("{scheme}://{}", &rest[at + 1..]),
        _ => url.to_owned(),
    }
}

/// A base URL (checked) without its credentials, and those as the value
/// of the `Authorization: Basic` header they stand for (RFC 7617), user
/// and password percent-decoded.
fn split_credentials(url: &str) -> (String, Option<String>) {
    let shown = redact_url(url);
    if shown == url {
        return (shown, None);
    }
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let userinfo = &rest[..rest.rfind('@').unwrap_or(0)];
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let decode = |s: &str| percent_decode_str(s).collect::<Vec<u8>>();
    let mut pair = decode(user);
    pair.push(b':');
    pair.extend(decode(password));
    (shown, Some(format!("Basic {}", BASE64_STANDARD.encode(pair))))
}

/// `OTEL_EXPORTER_OTLP_HEADERS`: `name=value,...` with header names of
/// RFC 9110 token characters and values percent-decoded, without control
/// characters. An error names the entry by its place, and by its name if
/// that is valid, but never shows a value: it is often a secret.
fn parse_headers(value: &str) -> Result<Vec<(String, String)>, ConfigError> {
    let bad = |entry: usize, name: Option<&str>, why: HeaderProblem| ConfigError::BadHeader { entry, name: name.map(str::to_owned), why };
    let mut headers = Vec::new();
    for (i, entry) in value.split(',').filter(|entry| !entry.trim().is_empty()).enumerate() {
        let entry_number = i + 1;
        let Some((name, value)) = entry.split_once('=') else { return Err(bad(entry_number, None, HeaderProblem::NoEquals)) };
        let name = name.trim();
        if name.is_empty() {
            return Err(bad(entry_number, None, HeaderProblem::NoName));
        }
        if !name.bytes().all(is_token_char) {
            return Err(bad(entry_number, None, HeaderProblem::BadName));
        }
        let Ok(value) = percent_decode_str(value.trim()).decode_utf8() else {
            return Err(bad(entry_number, Some(name), HeaderProblem::NotUtf8));
        };
        if value.chars().any(char::is_control) {
            return Err(bad(entry_number, Some(name), HeaderProblem::ControlCharacter));
        }
        headers.push((name.to_owned(), value.into_owned()));
    }
    Ok(headers)
}

/// RFC 9110 `tchar`: what a header name is made of.
fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// `OTEL_RESOURCE_ATTRIBUTES` (or any `key=value,...` variable) as pairs,
/// values percent-decoded, by the core's rule, which also reads each
/// recorded process's own variables.
pub fn parse_resource_attributes(value: &str) -> Result<Vec<(String, String)>, ConfigError> {
    usertrace::resource::parse_attributes(value).map_err(|bad| ConfigError::BadResourceAttribute(bad.0))
}

/// What is wrong with an `OTEL_EXPORTER_OTLP_HEADERS` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderProblem {
    /// No `=` between name and value.
    NoEquals,
    /// Nothing before the `=`.
    NoName,
    /// The name has a character a header name cannot have.
    BadName,
    /// The value does not percent-decode to UTF-8.
    NotUtf8,
    /// The value holds a control character (a line break, say).
    ControlCharacter,
}

impl fmt::Display for HeaderProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HeaderProblem::NoEquals => "it has no '='",
            HeaderProblem::NoName => "it has no name before the '='",
            HeaderProblem::BadName => "its name is not a header name (letters, digits and !#$%&'*+-.^_`|~ only)",
            HeaderProblem::NotUtf8 => "its value does not percent-decode to UTF-8",
            HeaderProblem::ControlCharacter => "its value holds a control character",
        })
    }
}

/// A configuration that cannot work, found before recording starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// Neither `--otlp` nor `OTEL_EXPORTER_OTLP_ENDPOINT` was given.
    NoEndpoint,
    /// The endpoint is not an http(s) URL with a host.
    BadEndpoint {
        /// As given, less any credentials.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// An `OTEL_EXPORTER_OTLP_HEADERS` entry is not `name=value` with a
    /// valid header name and value.
    BadHeader {
        /// Its place, from 1.
        entry: usize,
        /// Its name, when that is a valid one (never its value).
        name: Option<String>,
        /// What is wrong.
        why: HeaderProblem,
    },
    /// The endpoint URL has credentials and the headers an
    /// `Authorization` too.
    TwoCredentials,
    /// `OTEL_EXPORTER_OTLP_TIMEOUT` is not a number of ms from 1 to
    /// [`MAX_TIMEOUT`].
    BadTimeout(String),
    /// Compression other than `gzip` or `none`.
    UnknownCompression(String),
    /// An `OTEL_RESOURCE_ATTRIBUTES` entry is not `key=value`.
    BadResourceAttribute(String),
    /// A certificate or key file cannot be read or holds no PEM of its kind.
    BadCertificateFile {
        /// The flag or variable that named it.
        setting: String,
        /// As given.
        path: String,
        /// What is wrong with it.
        why: String,
    },
    /// A client certificate without its key, or a key without its
    /// certificate.
    HalfAClientCertificate {
        /// The flag or variable that was given.
        given: String,
    },
    /// The traces and logs variants of a TLS variable name different
    /// files, but one connection carries both signals.
    SignalsDisagree {
        /// The traces variable.
        traces: String,
        /// The logs variable.
        logs: String,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::NoEndpoint => write!(f, "no OTLP endpoint: give --otlp http://HOST:4318 or set {ENDPOINT_VAR}"),
            ConfigError::BadEndpoint { url, why } => {
                write!(f, "the OTLP endpoint {url:?} is not usable: {why} (give a base URL such as http://127.0.0.1:4318)")
            }
            ConfigError::BadHeader { entry, name, why } => {
                write!(f, "{HEADERS_VAR} entry {entry}")?;
                if let Some(name) = name {
                    write!(f, " ({name})")?;
                }
                write!(f, " is not usable: {why}; write name=value pairs separated by commas, values percent-encoded (values are not shown)")
            }
            ConfigError::TwoCredentials => write!(
                f,
                "the OTLP endpoint URL has a user and password and {HEADERS_VAR} an Authorization header too: give only one of them"
            ),
            ConfigError::BadTimeout(v) => write!(
                f,
                "{TIMEOUT_VAR}={v:?} is not a number of milliseconds from 1 to {} (10 minutes)",
                MAX_TIMEOUT.as_millis()
            ),
            ConfigError::UnknownCompression(v) => write!(f, "unknown OTLP compression {v:?}: use gzip or none"),
            ConfigError::BadResourceAttribute(entry) => write!(f, "{}", usertrace::resource::BadAttribute(entry.clone())),
            ConfigError::BadCertificateFile { setting, path, why } => write!(f, "{setting} names {path:?}, which is not usable: {why}"),
            ConfigError::HalfAClientCertificate { given } => write!(
                f,
                "{given} is given without its pair: mutual TLS needs both a client certificate and its key \
                 (--otlp-client-certificate and --otlp-client-key, or {CLIENT_CERTIFICATE_VAR} and {CLIENT_KEY_VAR})"
            ),
            ConfigError::SignalsDisagree { traces, logs } => write!(
                f,
                "{traces} and {logs} name different files, but traces and logs go over one connection: set only one of them, or the variable without TRACES_/LOGS_"
            ),
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
        EndpointArgs { url: Some(url.into()), ..EndpointArgs::default() }
    }

    #[test]
    fn the_command_line_wins_over_the_variables_and_paths_are_appended() {
        let e = Endpoint::resolve(
            &EndpointArgs { url: Some("http://a:4318/".into()), compression: Some("gzip".into()), ..EndpointArgs::default() },
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
        let e = Endpoint::resolve(&EndpointArgs { url: Some("http://h".into()), compression: Some("zstd".into()), ..EndpointArgs::default() }, &none);
        assert_eq!(e, Err(ConfigError::UnknownCompression("zstd".into())));
        let header_error = |h: &str| Endpoint::resolve(&args("http://h"), env(&[(HEADERS_VAR, h)])).unwrap_err();
        assert_eq!(header_error("novalue"), ConfigError::BadHeader { entry: 1, name: None, why: HeaderProblem::NoEquals });
        assert_eq!(header_error("x=1,a b=1"), ConfigError::BadHeader { entry: 2, name: None, why: HeaderProblem::BadName });
        assert_eq!(header_error("k=%ff"), ConfigError::BadHeader { entry: 1, name: Some("k".into()), why: HeaderProblem::NotUtf8 });
        assert_eq!(header_error("k=a%0Ab"), ConfigError::BadHeader { entry: 1, name: Some("k".into()), why: HeaderProblem::ControlCharacter });
        for timeout in ["0", "600001", "soon", "-1"] {
            assert_eq!(Endpoint::resolve(&args("http://h"), env(&[(TIMEOUT_VAR, timeout)])), Err(ConfigError::BadTimeout(timeout.into())));
        }
        assert_eq!(Endpoint::resolve(&args("http://h"), env(&[(TIMEOUT_VAR, "600000")])).unwrap().timeout, MAX_TIMEOUT);
        assert!(ConfigError::UnknownCompression("zstd".into()).to_string().contains("gzip or none"));
    }

    #[test]
    fn no_message_shows_a_header_value_or_the_credentials_of_a_url() {
        let secret = "Authorization: Bearer s3cret=";
        let e = Endpoint::resolve(&args("http://h"), env(&[(HEADERS_VAR, secret)])).unwrap_err().to_string();
        assert!(!e.contains("s3cret") && e.contains("entry 1 is not usable: its name is not a header name"), "{e}");
        let e = Endpoint::resolve(&args("http://h"), env(&[(HEADERS_VAR, "x-key=s3cret%0A")])).unwrap_err().to_string();
        assert!(!e.contains("s3cret") && e.contains("entry 1 (x-key) is not usable: its value holds a control character"), "{e}");
        let e = Endpoint::resolve(&args("ftp://user:s3cret@h/"), env(&[])).unwrap_err().to_string();
        assert!(!e.contains("s3cret") && e.contains("\"ftp://h/\""), "{e}");
    }

    #[test]
    fn credentials_in_the_url_become_an_authorization_header_and_leave_the_url() {
        let e = Endpoint::resolve(&args("https://alice:p%40ss@c:4318/otlp"), env(&[(HEADERS_VAR, "x-a=1")])).unwrap();
        assert_eq!((e.traces_url.as_str(), e.logs_url.as_str()), ("https://c:4318/otlp/v1/traces", "https://c:4318/otlp/v1/logs"));
        // base64("alice:p@ss")
        assert_eq!(e.headers, [("x-a".into(), "1".into()), ("Authorization".into(), "Basic YWxpY2U6cEBzcw==".into())]);
        let both = Endpoint::resolve(&args("https://alice:pw@c"), env(&[(HEADERS_VAR, "authorization=Bearer%20t")]));
        assert_eq!(both, Err(ConfigError::TwoCredentials));
        assert_eq!(redact_url("http://u:p@h:1/a@b"), "http://h:1/a@b");
        assert_eq!(redact_url("/relative@x"), "/relative@x");
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

//! Arbitrary values of the OTLP settings (the endpoint from the command
//! line, and OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, _TIMEOUT, _COMPRESSION
//! and OTEL_RESOURCE_ATTRIBUTES): resolving them must give an endpoint or
//! a typed error, never panic; the URLs an endpoint shows never hold
//! credentials; an error never shows a header's value.
//!
//! The certificate variables are left unset: they name files, and the
//! fuzzer must not read arbitrary paths.
#![no_main]

use libfuzzer_sys::fuzz_target;
use usertrace_output::otlp::config::{parse_resource_attributes, redact_url, COMPRESSION_VAR, ENDPOINT_VAR, HEADERS_VAR, TIMEOUT_VAR};
use usertrace_output::otlp::{ConfigError, Endpoint, EndpointArgs};

fuzz_target!(|data: &[u8]| {
    // NUL-separated: the --otlp URL (empty: none), then the variables.
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\0').map(str::to_owned);
    let url = parts.next().filter(|u| !u.is_empty());
    let vars: Vec<(&str, String)> =
        [ENDPOINT_VAR, HEADERS_VAR, TIMEOUT_VAR, COMPRESSION_VAR].into_iter().zip(parts.by_ref()).filter(|(_, v)| !v.is_empty()).collect();
    let args = EndpointArgs { url, ..EndpointArgs::default() };
    match Endpoint::resolve(&args, |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone())) {
        Ok(endpoint) => {
            for url in [&endpoint.traces_url, &endpoint.logs_url] {
                assert_eq!(&redact_url(url), url, "a URL shown holds credentials");
            }
        }
        Err(e) => {
            let message = e.to_string();
            if let (ConfigError::BadHeader { entry, name, why }, Some((_, headers))) = (&e, vars.iter().find(|(k, _)| *k == HEADERS_VAR)) {
                // What the message says with no name, and the name: a
                // value found in either is there by chance, not shown.
                let template = ConfigError::BadHeader { entry: *entry, name: None, why: *why }.to_string();
                let shown = name.clone().unwrap_or_default();
                for (_, value) in headers.split(',').filter_map(|entry| entry.split_once('=')) {
                    let value = value.trim();
                    let by_chance = value.len() < 8 || template.contains(value) || shown.contains(value) || value.contains(['(', ')']);
                    assert!(by_chance || !message.contains(value), "{message:?} shows the header value {value:?}");
                }
            }
        }
    }
    let url = vars.iter().find(|(k, _)| *k == ENDPOINT_VAR).map_or(&text[..], |(_, v)| v.as_str());
    let once = redact_url(url);
    assert_eq!(redact_url(&once), once, "redacting is not idempotent");
    // What is left is an OTEL_RESOURCE_ATTRIBUTES value.
    let rest: String = parts.collect::<Vec<_>>().join("\0");
    if let Ok(attributes) = parse_resource_attributes(&rest) {
        assert!(attributes.iter().all(|(k, _)| !k.is_empty()));
    }
});

//! One OTLP/HTTP request: a protobuf body, gzip'd if asked, POSTed with
//! the configured headers; the answer sorted into sent, retry later, or
//! rejected for good.
//!
//! References: the OTLP specification, "OTLP/HTTP" (protocol/otlp.md):
//! `Content-Type: application/x-protobuf`; 429, 502, 503 and 504 are
//! retryable, with `Retry-After`; other 4xx and 5xx are not. A 404 means
//! the endpoint lacks the signal's path altogether.
//!
//! Redirects are not followed. A 301, 302 or 303 would turn the POST into
//! a bodiless GET whose 200 looks like a delivery, and any redirect would
//! carry the configured headers (API keys) to a host nobody configured,
//! https or not. A 3xx is a failure for good that names where it points,
//! so the endpoint can be set there.

use std::io::Write;
use std::time::Duration;

use flate2::write::GzEncoder;
use prost::Message;

use super::backoff::parse_retry_after;
use super::config::{redact_url, Compression, Endpoint, CERTIFICATE_VAR};

/// What became of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The collector took it (2xx).
    Sent,
    /// Try again later: throttled, unavailable, or unreachable.
    Retry {
        /// What happened, for the summary.
        why: String,
        /// How long the collector asked us to wait.
        retry_after: Option<Duration>,
    },
    /// The endpoint has no such path (HTTP 404): it does not take this
    /// signal at all (Jaeger takes traces, not logs).
    NoSuchSignal,
    /// The collector refused it for good (a bad request, say).
    Rejected {
        /// What happened, for the summary.
        why: String,
    },
}

/// An HTTP client for one endpoint.
pub struct Transport {
    agent: ureq::Agent,
    endpoint: Endpoint,
}

impl Transport {
    /// A client with the endpoint's timeout per request.
    pub fn new(endpoint: Endpoint) -> Transport {
        let mut config = ureq::Agent::config_builder();
        // Only https reads the platform's trust store.
        if endpoint.traces_url.starts_with("https://") {
            config = config.tls_config(endpoint.tls.agent_config());
        }
        let agent: ureq::Agent = config
            .timeout_global(Some(endpoint.timeout))
            // A 429 or 503 is an answer to read (Retry-After), not an error.
            .http_status_as_error(false)
            // Never resend the request, or its headers, anywhere else.
            .max_redirects(0)
            .build()
            .into();
        Transport { agent, endpoint }
    }

    /// The endpoint it sends to.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Sends `message` to `url` (the endpoint's traces or logs URL),
    /// waiting at most the endpoint's timeout, or `limit` if shorter (what
    /// is left of a shutdown's grace period).
    pub fn send(&self, url: &str, message: &impl Message, limit: Option<Duration>) -> Outcome {
        let mut body = message.encode_to_vec();
        let mut request = self.agent.post(url).header("Content-Type", "application/x-protobuf");
        if self.endpoint.compression == Compression::Gzip {
            let mut gz = GzEncoder::new(Vec::with_capacity(body.len() / 4), flate2::Compression::default());
            // Writing to a Vec cannot fail.
            let _ = gz.write_all(&body);
            body = gz.finish().unwrap_or_default();
            request = request.header("Content-Encoding", "gzip");
        }
        for (name, value) in &self.endpoint.headers {
            request = request.header(name, value);
        }
        if let Some(limit) = limit.filter(|l| *l < self.endpoint.timeout) {
            request = request.config().timeout_global(Some(limit)).build();
        }
        match request.send(&body[..]) {
            Ok(response) => {
                let status = response.status().as_u16();
                let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok());
                if (300..=399).contains(&status) {
                    return redirected(status, header("location"));
                }
                classify(status, header("retry-after").and_then(parse_retry_after))
            }
            Err(e) => classify_error(&e),
        }
    }
}

fn classify(status: u16, retry_after: Option<Duration>) -> Outcome {
    match status {
        200..=299 => Outcome::Sent,
        429 | 502 | 503 | 504 => Outcome::Retry { why: format!("HTTP {status}"), retry_after },
        404 => Outcome::NoSuchSignal,
        _ => Outcome::Rejected { why: format!("HTTP {status}") },
    }
}

/// A redirect, refused: the `Location` it names is shown without any
/// credentials in it.
fn redirected(status: u16, location: Option<&str>) -> Outcome {
    let to = location.map_or_else(|| "nowhere (no Location)".to_owned(), redact_url);
    Outcome::Rejected {
        why: format!("HTTP {status}: redirects to {to}, and redirects are not followed (they would resend the headers there); set the endpoint to where it points"),
    }
}

/// A collector that is down, restarting or slow is retried; anything
/// else would fail the same way every time. rustls reports a failed
/// handshake (a certificate not trusted, a client certificate missing) as
/// invalid data: retrying cannot help, so it is said once.
fn classify_error(e: &ureq::Error) -> Outcome {
    use ureq::Error as E;
    match e {
        E::Io(io) if io.kind() == std::io::ErrorKind::InvalidData => Outcome::Rejected {
            why: format!(
                "TLS: {e} (trust the collector's CA with --otlp-certificate or {CERTIFICATE_VAR}; \
                 if it asks for a client certificate, give --otlp-client-certificate and --otlp-client-key)"
            ),
        },
        E::Rustls(_) | E::Tls(_) | E::Pem(_) => Outcome::Rejected { why: format!("TLS: {e}") },
        E::Io(_) | E::Timeout(_) | E::ConnectionFailed | E::HostNotFound | E::Protocol(_) | E::BodyStalled => {
            Outcome::Retry { why: e.to_string(), retry_after: None }
        }
        _ => Outcome::Rejected { why: e.to_string() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttling_and_unavailability_are_retried_other_errors_are_not() {
        assert_eq!(classify(200, None), Outcome::Sent);
        assert_eq!(classify(429, Some(Duration::from_secs(2))), Outcome::Retry { why: "HTTP 429".into(), retry_after: Some(Duration::from_secs(2)) });
        assert!(matches!(classify(503, None), Outcome::Retry { .. }));
        assert_eq!(classify(400, None), Outcome::Rejected { why: "HTTP 400".into() });
        assert_eq!(classify(404, None), Outcome::NoSuchSignal);
        assert!(matches!(classify(500, None), Outcome::Rejected { .. }));
    }
}

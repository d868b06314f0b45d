//! Over https the exporter trusts the CA certificates of
//! `OTEL_EXPORTER_OTLP_CERTIFICATE` besides the platform's and the
//! bundled roots, shows the client certificate of
//! `OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE` and `..._CLIENT_KEY` to a
//! collector that asks for one, and takes a certificate it cannot verify
//! as a failure for good, not one to retry. A certificate file that
//! cannot be used is an error of the settings, naming the file.
//!
//! The collector is a TLS server of the test's own on 127.0.0.1
//! (otlp_https/mod.rs): one made to present a certificate of a CA made
//! here, and to require a client certificate.

mod otlp_https;

use otlp_https::{HttpsServer, Pki};
use usertrace_output::otlp::config::{CERTIFICATE_VAR, CLIENT_CERTIFICATE_VAR, CLIENT_KEY_VAR};
use usertrace_output::otlp::proto::collector::trace::v1::ExportTraceServiceRequest;
use usertrace_output::otlp::transport::{Outcome, Transport};
use usertrace_output::otlp::{ConfigError, Endpoint, EndpointArgs};

fn resolve(url: &str, vars: &[(&str, &std::path::Path)]) -> Result<Endpoint, ConfigError> {
    let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| ((*k).to_owned(), v.to_str().unwrap().to_owned())).collect();
    let args = EndpointArgs { url: Some(url.to_owned()), ..EndpointArgs::default() };
    Endpoint::resolve(&args, |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
}

fn send(endpoint: Endpoint) -> Outcome {
    let transport = Transport::new(endpoint);
    let url = transport.endpoint().traces_url.clone();
    transport.send(&url, &ExportTraceServiceRequest::default(), None)
}

#[test]
fn a_collector_signed_by_the_configured_ca_is_sent_to() {
    let pki = Pki::new("https-ca");
    let server = HttpsServer::start(&pki, false);
    assert_eq!(send(resolve(&server.url(), &[(CERTIFICATE_VAR, &pki.ca_pem)]).unwrap()), Outcome::Sent);
    assert_eq!(server.served(), 1);
}

#[test]
fn an_untrusted_collector_is_one_failure_for_good() {
    let pki = Pki::new("https-untrusted");
    let server = HttpsServer::start(&pki, false);
    let outcome = send(resolve(&server.url(), &[]).unwrap());
    let Outcome::Rejected { why } = &outcome else { panic!("{outcome:?} would be retried") };
    assert!(why.starts_with("TLS: ") && why.contains("UnknownIssuer") && why.contains("--otlp-certificate"), "{why}");
    assert_eq!((server.handshakes(), server.served()), (1, 0));
}

#[test]
fn a_collector_that_asks_for_a_client_certificate_gets_the_configured_one() {
    let pki = Pki::new("https-mutual");
    let server = HttpsServer::start(&pki, true);
    let outcome = send(resolve(&server.url(), &[(CERTIFICATE_VAR, &pki.ca_pem)]).unwrap());
    assert!(matches!(&outcome, Outcome::Rejected { why } if why.starts_with("TLS: ")), "without a client certificate: {outcome:?}");
    assert_eq!(server.served(), 0);
    let with_client = [(CERTIFICATE_VAR, pki.ca_pem.as_path()), (CLIENT_CERTIFICATE_VAR, &pki.client_pem), (CLIENT_KEY_VAR, &pki.client_key_pem)];
    assert_eq!(send(resolve(&server.url(), &with_client).unwrap()), Outcome::Sent);
    assert_eq!(server.served(), 1);
}

#[test]
fn a_certificate_file_that_cannot_be_used_is_named() {
    let pki = Pki::new("https-bad-files");
    let missing = pki.dir.join("missing.pem");
    let e = resolve("https://127.0.0.1:1", &[(CERTIFICATE_VAR, &missing)]).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{CERTIFICATE_VAR} names {:?}, which is not usable: cannot read it: ", missing.to_str().unwrap())), "{e}");
    let e = resolve("https://127.0.0.1:1", &[(CERTIFICATE_VAR, &pki.client_key_pem)]).unwrap_err().to_string();
    assert!(e.contains("which is not usable: it holds no PEM certificate"), "{e}");
    let e = resolve("https://127.0.0.1:1", &[(CLIENT_KEY_VAR, &pki.ca_pem), (CLIENT_CERTIFICATE_VAR, &pki.client_pem)]).unwrap_err().to_string();
    assert!(e.contains("ca.pem\", which is not usable: it holds no PEM private key"), "{e}");
    let e = resolve("https://127.0.0.1:1", &[(CLIENT_CERTIFICATE_VAR, &pki.client_pem)]).unwrap_err();
    assert_eq!(e, ConfigError::HalfAClientCertificate { given: CLIENT_CERTIFICATE_VAR.into() });
    let e = resolve("https://127.0.0.1:1", &[("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", &pki.ca_pem), ("OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE", &pki.client_pem)]);
    assert!(matches!(e, Err(ConfigError::SignalsDisagree { .. })), "{e:?}");
    let e = resolve("https://127.0.0.1:1", &[("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", &pki.ca_pem)]).unwrap();
    assert_eq!(e.tls.extra_roots.len(), 1, "a signal's variable stands in for the general one");
}

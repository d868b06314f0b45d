//! Over https the exporter trusts the platform's store as OpenSSL reads
//! it, `SSL_CERT_FILE` included: a collector signed by a company CA that
//! the host trusts is sent to without further settings.
//!
//! The collector is a TLS server of the test's own on 127.0.0.1
//! (otlp_https/mod.rs), presenting a certificate of a CA made here. This
//! file holds one test: it sets `SSL_CERT_FILE` for its whole process.

mod otlp_https;

use otlp_https::{HttpsServer, Pki};
use usertrace_output::otlp::proto::collector::trace::v1::ExportTraceServiceRequest;
use usertrace_output::otlp::transport::{Outcome, Transport};
use usertrace_output::otlp::{Endpoint, EndpointArgs};

#[test]
fn a_collector_signed_by_a_ca_in_ssl_cert_file_is_sent_to() {
    let pki = Pki::new("https-ssl-cert-file");
    let server = HttpsServer::start(&pki, false);
    let args = EndpointArgs { url: Some(server.url()), ..EndpointArgs::default() };
    let endpoint = Endpoint::resolve(&args, |_| None).unwrap();
    // The only test of this process, and no other thread reads the
    // environment while it is set.
    std::env::set_var("SSL_CERT_FILE", &pki.ca_pem);
    let transport = Transport::new(endpoint);
    std::env::remove_var("SSL_CERT_FILE");
    let url = transport.endpoint().traces_url.clone();
    assert_eq!(transport.send(&url, &ExportTraceServiceRequest::default(), None), Outcome::Sent);
    assert_eq!(server.served(), 1);
}

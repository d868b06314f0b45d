//! A collector URL that answers with a redirect is a failure, not
//! retried, that names where it pointed (without the credentials in it);
//! the request is not sent again elsewhere, so the configured headers
//! (API keys) reach only the configured endpoint, and a POST turned into a
//! bodiless GET is never counted as delivered.
//!
//! Both servers are local stubs on 127.0.0.1 (tiny_http), because a real
//! collector cannot be made to answer 302 or 307 on demand.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use usertrace_output::otlp::config::HEADERS_VAR;
use usertrace_output::otlp::proto::collector::trace::v1::ExportTraceServiceRequest;
use usertrace_output::otlp::transport::{Outcome, Transport};
use usertrace_output::otlp::{Endpoint, EndpointArgs};

/// What a stub was sent: each request's method, path and headers.
type Seen = Arc<Mutex<Vec<String>>>;

/// A stub answering every request with `status` and, if given, a
/// `Location`; it records what it receives.
struct Stub {
    addr: String,
    seen: Seen,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl Stub {
    fn start(status: u16, location: Option<String>) -> Stub {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("stub listens"));
        let addr = server.server_addr().to_ip().expect("an IP address").to_string();
        let seen: Seen = Arc::default();
        let (s, log) = (Arc::clone(&server), Arc::clone(&seen));
        let thread = std::thread::spawn(move || {
            for request in s.incoming_requests() {
                let headers: Vec<String> = request.headers().iter().map(|h| format!("{}: {}", h.field, h.value)).collect();
                log.lock().unwrap().push(format!("{} {} {}", request.method(), request.url(), headers.join("; ")));
                let mut response = tiny_http::Response::empty(status);
                if let Some(l) = &location {
                    response.add_header(tiny_http::Header::from_bytes("Location", l.as_bytes()).unwrap());
                }
                let _ = request.respond(response);
            }
        });
        Stub { addr, seen, server, thread: Some(thread) }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn transport_to(addr: &str) -> Transport {
    let args = EndpointArgs { url: Some(format!("http://{addr}")), ..EndpointArgs::default() };
    let endpoint = Endpoint::resolve(&args, |name| (name == HEADERS_VAR).then(|| "x-api-key=s3cret-key".to_owned())).unwrap();
    Transport::new(endpoint)
}

#[test]
fn a_redirect_is_a_failure_naming_its_location_and_the_headers_go_nowhere_else() {
    for status in [301, 302, 303, 307, 308] {
        let elsewhere = Stub::start(200, None);
        let location = format!("http://user:hunter2@{}/v1/traces", elsewhere.addr);
        let collector = Stub::start(status, Some(location));
        let transport = transport_to(&collector.addr);
        let outcome = transport.send(&transport.endpoint().traces_url.clone(), &ExportTraceServiceRequest::default(), None);

        let Outcome::Rejected { why } = outcome else { panic!("HTTP {status}: {outcome:?} is not a failure for good") };
        assert!(why.contains(&format!("HTTP {status}")), "{why}");
        assert!(why.contains(&format!("http://{}/v1/traces", elsewhere.addr)), "{why} does not name the Location");
        assert!(!why.contains("hunter2") && !why.contains("user:"), "{why} shows the Location's credentials");
        assert_eq!(elsewhere.seen(), Vec::<String>::new(), "HTTP {status}: the redirect was followed");
        let asked = collector.seen();
        assert_eq!(asked.len(), 1, "HTTP {status}: {asked:?}");
        assert!(asked[0].starts_with("POST /v1/traces ") && asked[0].contains("x-api-key: s3cret-key"), "{asked:?}");
    }
}

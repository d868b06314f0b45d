//! Requests over real HTTP through a C, a Python, a Java and a Rust
//! service, each on usertrace's own trace context API, then a service on
//! OpenTelemetry's SDK exporting OTLP itself: recorded over shared memory
//! by one `usertrace record --otlp`, each request is one trace in a real
//! Jaeger, parent by parent, with each service's name and the exact ids
//! each program printed (issue 43). The scenario is `http_chain`'s, which
//! the guest's acceptance test runs over user_events.

#[test]
fn each_request_over_http_through_four_languages_is_one_trace_in_jaeger() {
    // Two interpreters and a JVM starting take both cores of a small
    // machine for seconds: never beside the timing-sensitive bursts test.
    let _alone = crate::container::exclusive();
    let rust_service = concat!(module_path!(), "::the_rust_service").split_once("::").unwrap().1;
    crate::http_chain::each_request_is_one_trace_in_jaeger("shm", rust_service);
}

#[test]
#[ignore = "the Rust service the test above records"]
fn the_rust_service() {
    crate::http_chain::rust_service();
}

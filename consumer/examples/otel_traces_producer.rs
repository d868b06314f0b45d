//! A producer nobody here wrote the encoder of: two spans through the
//! OpenTelemetry SDK and its user_events trace exporter
//! (`opentelemetry-user-events-trace`), which writes each finished span as
//! one EventHeader event in Microsoft's Common Schema layout, for the CLI's
//! guest-kernel tests.
//!
//! The exporter registers the provider `UsertraceOtelTraces` (tracepoint
//! `UsertraceOtelTraces_L4K1`). This program prints `ready <pid>`, waits
//! (up to 60 s) for a recorder to enable that tracepoint, then runs the span
//! `checkout` (attribute `user_id` 42) holding `charge` (attribute `amount`
//! 12.5), each with a few milliseconds of sleep around the inner one.
//! Exit status 0, or 2 if nobody enabled the tracepoint in time.

use std::io::Write;
use std::time::{Duration, Instant};

use eventheader_dynamic as ehd;
use opentelemetry::trace::{TraceContextExt, Tracer, TracerProvider};
use opentelemetry::KeyValue;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_user_events_trace::Processor;

const PROVIDER: &str = "UsertraceOtelTraces";

fn main() {
    let processor = Processor::builder(PROVIDER).build().expect("the user_events processor");
    let provider = SdkTracerProvider::builder().with_span_processor(processor).build();
    let tracer = provider.tracer("usertrace-test");

    // The exporter drops spans while nobody listens and says nothing. Its
    // tracepoint's enable bit is shared by every registration of the same
    // name, so a registration of our own tells when a recorder is there.
    let mut probe = ehd::Provider::new(PROVIDER, &ehd::Provider::new_options());
    let set = probe.register_set(ehd::Level::Informational, 1);
    assert_eq!(set.errno(), 0, "registering {PROVIDER}_L4K1");
    println!("ready {}", std::process::id());
    std::io::stdout().flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !set.enabled() {
        if Instant::now() > deadline {
            eprintln!("otel_traces_producer: nobody enabled {PROVIDER}_L4K1 in 60 s");
            std::process::exit(2);
        }
        std::thread::sleep(Duration::from_millis(5));
    }

    tracer.in_span("checkout", |cx| {
        cx.span().set_attribute(KeyValue::new("user_id", 42i64));
        std::thread::sleep(Duration::from_millis(10));
        tracer.in_span("charge", |cx| {
            cx.span().set_attribute(KeyValue::new("amount", 12.5f64));
            std::thread::sleep(Duration::from_millis(20));
        });
        std::thread::sleep(Duration::from_millis(10));
    });
    provider.shutdown().expect("tracer provider shutdown");
    probe.unregister();
}

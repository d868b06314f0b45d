//! A program instrumented with OpenTelemetry's Rust SDK, its Resource
//! built in code, runs for a while before any recorder listens: what its
//! exporter could have written of the resource then went nowhere. A
//! recorder that attaches later (`record -p PID --otlp`) still sends every
//! span it sees under that Resource, not under a name read from the
//! program's environment: the exporter writes the resource before the
//! first span a recorder sees, and again each second.
//!
//! The program is this test binary, run again as the ignored test
//! `the_late_program`.

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::Duration;

use opentelemetry::trace::{Tracer, TracerProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;
use prost::Message;

use super::a_rust_sdk_s_spans_and_logs_arrive_exactly_as_it_exported_them::{assert_the_sdk_s_resource, endpoint, resource_built_in_code, KeptResource};
use crate::support::usertrace;

const PROVIDER_ENV: &str = "UT_OTEL_LATE_PROVIDER";
const RESOURCE_ENV: &str = "UT_OTEL_LATE_RESOURCE";
/// How long the program makes spans, one every 20 ms.
const RUNS_FOR: Duration = Duration::from_secs(3);

/// Keeps only the resource the SDK hands its exporters.
#[derive(Debug, Clone, Default)]
struct ResourceOnly(KeptResource);

impl opentelemetry_sdk::trace::SpanExporter for ResourceOnly {
    async fn export(&self, _batch: Vec<opentelemetry_sdk::trace::SpanData>) -> opentelemetry_sdk::error::OTelSdkResult {
        Ok(())
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.0.set(resource);
    }
}

/// The instrumented program: says `ready`, then makes spans for
/// [`RUNS_FOR`], recorded only while a recorder listens.
#[test]
#[ignore = "the program the next test records late"]
fn the_late_program() {
    let exporter = usertrace_opentelemetry::UsertraceSpanExporter::new(&std::env::var(PROVIDER_ENV).unwrap()).unwrap();
    let kept = ResourceOnly::default();
    let provider = SdkTracerProvider::builder()
        .with_resource(resource_built_in_code())
        .with_sampler(exporter.sampler())
        .with_simple_exporter(exporter)
        .with_simple_exporter(kept.clone())
        .build();
    std::fs::write(std::env::var(RESOURCE_ENV).unwrap(), kept.0.encode()).unwrap();
    let tracer = provider.tracer("late");
    println!("ready");
    let start = std::time::Instant::now();
    while start.elapsed() < RUNS_FOR {
        tracer.in_span("tick", |_| ());
        std::thread::sleep(Duration::from_millis(20));
    }
    provider.shutdown().unwrap();
}

#[test]
fn a_recorder_that_attaches_late_names_a_rust_sdk_s_spans_by_its_resource() {
    let provider = format!("utotellate{}", std::process::id());
    let resource_file = std::env::temp_dir().join(format!("{provider}.resource"));
    let test = concat!(module_path!(), "::the_late_program").split_once("::").unwrap().1;
    let mut program = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--ignored", "--nocapture", "--test-threads", "1"])
        .env(PROVIDER_ENV, &provider)
        .env(RESOURCE_ENV, &resource_file)
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_RESOURCE_ATTRIBUTES")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Its output is read to the end (a closed pipe would fail it); libtest
    // prints `test … ... ` before the program's own, on one line.
    let (ready, said) = std::sync::mpsc::channel();
    let stdout = program.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.ends_with("ready") {
                let _ = ready.send(());
            }
        }
    });
    assert!(said.recv_timeout(Duration::from_secs(60)).is_ok(), "the program never said ready");
    let pid = program.id();
    // Spans the program makes now are not recorded: nobody listens yet.
    std::thread::sleep(Duration::from_millis(500));
    let reaper = std::thread::spawn(move || program.wait().unwrap());
    let (url, received, server) = endpoint();
    let out = Command::new(usertrace())
        .args(["record", "-e", &format!("{provider}_*"), "--otlp", &url, "-p", &pid.to_string(), "--", "sh", "-c"])
        .arg(format!("while kill -0 {pid} 2>/dev/null; do sleep 0.05; done"))
        .output()
        .unwrap();
    assert!(reaper.join().unwrap().success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    server.unblock();
    let sdk_resource = opentelemetry_proto::tonic::resource::v1::Resource::decode(std::fs::read(&resource_file).unwrap().as_slice()).unwrap();
    let _ = std::fs::remove_file(&resource_file);
    let received = received.lock().unwrap();
    let resource_spans: Vec<_> = received.traces.iter().flat_map(|r| &r.resource_spans).collect();
    let spans = resource_spans.iter().flat_map(|r| &r.scope_spans).flat_map(|s| &s.spans).count();
    // 2.5 s of ticks every 20 ms, less what attaching takes.
    assert!(spans >= 20, "{spans} spans arrived: {stderr}");
    for r in resource_spans {
        assert_the_sdk_s_resource(r.resource.as_ref(), &sdk_resource, Some(pid));
    }
}

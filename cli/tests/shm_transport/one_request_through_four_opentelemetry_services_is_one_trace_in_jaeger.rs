//! One request through four services instrumented with OpenTelemetry, each
//! as it would run in production, is one trace in a real Jaeger (issue 44):
//!
//! - `chain-flask`: a Flask app run by `opentelemetry-instrument` with
//!   `OTEL_TRACES_EXPORTER=usertrace`, calling out with urllib;
//! - `chain-java`: a JDK `HttpServer` calling out with
//!   `java.net.http.HttpClient`, under the real OpenTelemetry Java agent
//!   with our extension (`-Dotel.traces.exporter=usertrace`);
//! - `chain-rust`: `opentelemetry_sdk` with `usertrace-opentelemetry`'s
//!   exporter, continuing and passing on the W3C trace context with the
//!   SDK's propagator;
//! - `chain-otlp`: a Python service exporting OTLP itself, straight to
//!   Jaeger, with no usertrace.
//!
//! The first three write their spans into shared memory, and one
//! `usertrace record --otlp` sends them on. Jaeger shows one trace of seven
//! spans, each under its service's name and kind, each SERVER span the
//! child of its caller's CLIENT span, each CLIENT span its own service's
//! SERVER span's. Each span of the three usertrace services is, in Jaeger,
//! what that SDK's second exporter (each binding's test exporter: the
//! Python `usertrace_test_memory`, the Java `seen`, the Rust `Kept`) saw
//! in the same run: name, kind, times, attributes, events, links, status
//! and scope.
//!
//! The Rust service is this test binary, run again as the ignored test
//! `the_rust_service` under the recorder: it starts the other three as its
//! children (so that their exporters, like its own, wait for the recorder
//! through `record`'s attach handshake), sends the one request and stops
//! them, so their SDKs flush.
//!
//! Needs what `harness/test-all` builds before `cargo test`: a venv of
//! `bindings-python/run-tests.sh build`, bindings-java's opentelemetry
//! module packaged with its test classes (`mvn package -DskipTests`) and
//! Jaeger (`harness/build-otel-components`). A missing one fails the test,
//! saying what to run.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{Link, SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags, TraceId, TraceState, Tracer, TracerProvider as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use prost::Message;
use serde_json::{json, Value as Json};

use crate::a_rust_sdk_s_spans_and_logs_arrive_exactly_as_it_exported_them::{frame, unframe, Kept};
use crate::otel_components::jaeger::{as_jaeger_has_it, as_jaeger_shows, hex, parent, tag, trace_id, Jaeger};
use crate::otel_components::services::{get, service_logs, wait_for, Services};
use crate::otel_components::{component, free_port, TempDir};
use crate::support::usertrace;

/// What the test hands the Rust service (JSON): paths, the provider
/// prefix and Jaeger's OTLP endpoint.
const SETUP_ENV: &str = "UT_CHAIN_SETUP";
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
/// How long a service may take to listen: the JVM with the agent takes
/// seconds on a quiet machine, and far more on a loaded one.
const START_LIMIT: Duration = Duration::from_secs(120);
/// The services the Rust one starts, by the names of their logs.
const SERVICES: [&str; 3] = ["flask", "java", "otlp"];
/// A link the Rust service's call carries, to a span of another trace.
const LINKED: (&str, &str) = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");

/// The services' names and their spans' kinds, caller first: each span's
/// parent is the one before it.
const CHAIN: [(&str, &str); 7] = [
    ("chain-flask", "server"),
    ("chain-flask", "client"),
    ("chain-java", "server"),
    ("chain-java", "client"),
    ("chain-rust", "server"),
    ("chain-rust", "client"),
    ("chain-otlp", "server"),
];

/// A span as an SDK saw it, with its scope's name and version.
type Seen = (Span, String, String);

#[test]
fn one_request_through_four_opentelemetry_services_is_one_trace_in_jaeger() {
    // A JVM with the agent and two Python interpreters starting take both
    // cores of a small machine for seconds, as a container's start-up
    // does: never beside the timing-sensitive bursts test.
    let _alone = crate::container::exclusive();
    let needs = Needs::find();
    let jaeger = Jaeger::start(&component("jaeger").expect("build Jaeger: harness/build-otel-components"), "four_services", None);
    let dir = TempDir::new("four-services");
    let provider = format!("utchain{}", std::process::id());
    let setup = json!({
        "dir": dir.0, "provider": provider, "jaeger": jaeger.endpoint(), "python": needs.python, "apps": needs.apps,
        "agent": needs.agent, "extensions": format!("{},{}", needs.extension.display(), needs.seen_jar(&dir.0).display()),
        "classes": needs.classes,
    });
    let (stdout, stderr) = record(&provider, &jaeger, &dir.0, &setup);
    let logs = || format!("{stderr}\n{stdout}\n{}\njaeger:\n{}", service_logs(&dir.0, &SERVICES), jaeger.log());
    // The reply is the traceparent the last service was sent: the trace,
    // and the Rust service's CLIENT span.
    let reply = stdout.lines().find_map(|l| l.strip_prefix("reply=")).unwrap_or_else(|| panic!("no reply: {}", logs()));
    let [_, trace, rust_call, _]: [&str; 4] = reply.split('-').collect::<Vec<_>>().try_into().unwrap_or_else(|_| panic!("{reply}"));
    // Six spans, and each service's resource event (one or more: it is
    // written again after a second), every one of them sent.
    let summary = " events exported (6 spans, 0 log records), 0 dropped (queue full or unsent at exit), 0 failed;";
    assert!(stderr.lines().any(|l| l.starts_with("usertrace record: OTLP: ") && l.contains(summary)), "{}", logs());

    let (spans, processes) = jaeger.trace(trace, CHAIN.len());
    let service = |s: &Json| processes[s["processID"].as_str().unwrap()]["serviceName"].as_str().unwrap().to_owned();
    let at = |(name, kind): (&str, &str)| {
        let found: Vec<&Json> = spans.iter().filter(|s| service(s) == name && tag(s, "span.kind")["value"] == kind).collect();
        assert_eq!(found.len(), 1, "one {kind} span of {name}: {spans:#?}\n{}", logs());
        found[0]
    };
    assert_eq!(spans.len(), CHAIN.len(), "{spans:#?}");
    let chain: Vec<&Json> = CHAIN.into_iter().map(at).collect();
    assert!(spans.iter().all(|s| trace_id(s) == trace), "one trace: {spans:#?}");
    assert_eq!(parent(chain[0]), None, "the request came with no context");
    for pair in chain.windows(2) {
        assert_eq!(parent(pair[1]), pair[0]["spanID"].as_str().map(str::to_owned), "{:#}\nunder\n{:#}", pair[1], pair[0]);
    }
    assert_eq!(chain[5]["spanID"], rust_call, "the context the Rust service sent on");
    let names: Vec<&str> = [0, 2, 4, 6].map(|i| chain[i]["operationName"].as_str().unwrap()).to_vec();
    assert_eq!(names, ["GET /front", "GET /chain", "GET /rust", "GET /end"]);

    let seen = [
        ("chain-flask", python_seen(&dir.0.join("flask-seen.pb"))),
        ("chain-java", java_seen(&dir.0.join("java-seen.pb"))),
        ("chain-rust", rust_seen(&dir.0.join("rust-seen"))),
    ];
    for (name, seen) in seen {
        let in_jaeger: Vec<&Json> = spans.iter().filter(|s| service(s) == name).collect();
        each_is_as_its_sdk_saw_it(name, &in_jaeger, &seen);
    }
}

/// `service`'s spans in Jaeger are those its SDK's second exporter saw,
/// each as Jaeger shows that span.
fn each_is_as_its_sdk_saw_it(service: &str, in_jaeger: &[&Json], seen: &[Seen]) {
    let in_jaeger: BTreeMap<&str, &Json> = in_jaeger.iter().map(|s| (s["spanID"].as_str().unwrap(), *s)).collect();
    let mut ids: Vec<String> = seen.iter().map(|(s, _, _)| hex(&s.span_id)).collect();
    ids.sort();
    assert_eq!(ids, in_jaeger.keys().map(|k| k.to_string()).collect::<Vec<_>>(), "{service}: the spans its SDK saw");
    for (span, scope, version) in seen {
        let got = in_jaeger[hex(&span.span_id).as_str()];
        assert_eq!(as_jaeger_has_it(got), as_jaeger_shows(span, scope, version), "{service}'s {}", span.name);
    }
}

/// Where each prerequisite was built, or a failure saying how to build it.
struct Needs {
    python: PathBuf,
    apps: PathBuf,
    agent: PathBuf,
    extension: PathBuf,
    classes: PathBuf,
}

impl Needs {
    fn find() -> Needs {
        let java = Path::new(ROOT).join("bindings-java/java/opentelemetry/target");
        let built = |p: PathBuf, how: &str| {
            assert!(p.exists(), "no {}: {how}", p.display());
            p
        };
        let mvn = "cd bindings-java && mvn -B package -DskipTests";
        let extension = std::fs::read_dir(&java)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("usertrace-opentelemetry-") && !n.contains("sources") && !n.contains("javadoc") && n.ends_with(".jar")));
        Needs {
            python: venv_python(),
            apps: Path::new(ROOT).join("bindings-python/tests/opentelemetry_apps"),
            agent: built(java.join("opentelemetry-javaagent.jar"), mvn),
            extension: extension.unwrap_or_else(|| panic!("no usertrace-opentelemetry jar in {}: {mvn}", java.display())),
            classes: built(java.join("test-classes/dev/usertrace/opentelemetry/ChainApp.class"), mvn).ancestors().nth(4).unwrap().to_owned(),
        }
    }

    /// The Java `seen` exporter as an agent extension of its own: the
    /// agent loads exporters from extensions, not the application's class
    /// path. Made with the JDK's `jar` from the classes Maven compiled.
    fn seen_jar(&self, dir: &Path) -> PathBuf {
        let jar = dir.join("seen-exporter.jar");
        let service = "META-INF/services/io.opentelemetry.sdk.autoconfigure.spi.traces.ConfigurableSpanExporterProvider";
        let mut command = Command::new("jar");
        command.arg("--create").arg("--file").arg(&jar);
        for entry in ["dev/usertrace/opentelemetry/SeenSpanExporterProvider.class", "dev/usertrace/opentelemetry/SeenSpanExporterProvider$1.class", service] {
            command.arg("-C").arg(&self.classes).arg(entry);
        }
        let out = command.output().expect("the JDK's jar");
        assert!(out.status.success(), "jar: {}", String::from_utf8_lossy(&out.stderr));
        jar
    }
}

/// The newest Python venv of `bindings-python/run-tests.sh build` (in
/// `$USERTRACE_PY_VENVS`, else /tmp/usertrace-python) that has the wheel,
/// Flask, `opentelemetry-instrument` and the OTLP exporter.
fn venv_python() -> PathBuf {
    let venvs = PathBuf::from(std::env::var_os("USERTRACE_PY_VENVS").unwrap_or_else(|| "/tmp/usertrace-python".into()));
    let has = |venv: &Path| {
        let lib = std::fs::read_dir(venv.join("lib")).into_iter().flatten().flatten().map(|e| e.path().join("site-packages")).next();
        venv.join("bin/opentelemetry-instrument").is_file()
            && lib.is_some_and(|l| ["usertrace/opentelemetry", "flask", "opentelemetry/exporter/otlp/proto/http"].iter().all(|p| l.join(p).is_dir()))
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(&venvs).into_iter().flatten().flatten().map(|e| e.path()).filter(|v| has(v)).collect();
    found.sort_by_key(|v| v.file_name().and_then(|n| n.to_str()).and_then(|n| n.parse::<u32>().ok()));
    let venv = found.pop().unwrap_or_else(|| {
        panic!("no venv in {} with usertrace, Flask and OpenTelemetry's OTLP exporter: bindings-python/run-tests.sh build", venvs.display())
    });
    venv.join("bin/python")
}

/// `usertrace record -e '<provider>*' --otlp <jaeger> -- <the Rust
/// service>` over shared memory, in a process group of its own, killed
/// whole if it outlives its limit or leaves anything behind. Its stdout
/// and stderr.
fn record(provider: &str, jaeger: &Jaeger, dir: &Path, setup: &Json) -> (String, String) {
    let test = concat!(module_path!(), "::the_rust_service").split_once("::").unwrap().1;
    let (out, err) = (dir.join("record.out"), dir.join("record.err"));
    let mut recorder = Command::new(usertrace())
        .args(["record", "-e", &format!("{provider}*"), "--otlp", &jaeger.endpoint(), "--", "env", "OTEL_SERVICE_NAME=chain-rust"])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", test, "--ignored", "--nocapture"])
        .env("USERTRACE_TRANSPORT", "shm")
        .env(SETUP_ENV, setup.to_string())
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_RESOURCE_ATTRIBUTES")
        .stdout(File::create(&out).unwrap())
        .stderr(File::create(&err).unwrap())
        .process_group(0)
        .spawn()
        .unwrap();
    let status = wait_for(&mut recorder, Duration::from_secs(300));
    // SAFETY: kill(2) on our recorder's process group: whatever of it is left.
    unsafe { libc::kill(-(recorder.id() as i32), libc::SIGKILL) };
    let (stdout, stderr) = (std::fs::read_to_string(&out).unwrap(), std::fs::read_to_string(&err).unwrap());
    assert!(status.is_some_and(|s| s.success()), "record: {status:?}\n{stderr}\n{stdout}\n{}", service_logs(dir, &SERVICES));
    (stdout, stderr)
}

/// The Rust service, run under the recorder by the test above, with the
/// other three as its children.
#[test]
#[ignore = "the Rust service the test above records"]
fn the_rust_service() {
    let setup: Json = serde_json::from_str(&std::env::var(SETUP_ENV).unwrap()).unwrap();
    let path = |k: &str| PathBuf::from(setup[k].as_str().unwrap());
    let (dir, provider) = (path("dir"), setup["provider"].as_str().unwrap());
    let ports = [free_port(), free_port(), free_port(), free_port()];
    let [flask, java, rust, end] = ports;
    let server = tiny_http::Server::http(("127.0.0.1", rust)).unwrap();
    let mut services = start_services(&setup, provider, ports);
    let kept = Kept::default();
    let exporter = usertrace_opentelemetry::UsertraceSpanExporter::new(&format!("{provider}rs")).unwrap();
    let tracer_provider = SdkTracerProvider::builder().with_simple_exporter(exporter).with_simple_exporter(kept.clone()).build();
    let tracer = tracer_provider.tracer("chain.rust");
    for port in [end, java, flask] {
        services.wait_listening(port);
    }
    let reply = std::thread::scope(|scope| {
        scope.spawn(|| serve(&tracer, server.recv().unwrap(), &format!("http://127.0.0.1:{end}/end")));
        get(&format!("http://127.0.0.1:{flask}/front"), None)
    });
    println!("reply={reply}");
    // Each stopped as an operator would, so its SDK flushes: the Flask app
    // with Ctrl-C's SIGINT, the others with SIGTERM; each must end well
    // (the JVM's 143 is SIGTERM's end after its shutdown hooks).
    let signal = |name: &str| Some(if name == "flask" { libc::SIGINT } else { libc::SIGTERM });
    services.end(signal, |name, status| status.success() || (name == "java" && status.code() == Some(143)));
    tracer_provider.shutdown().unwrap();
    let spans: Vec<u8> = kept.0.lock().unwrap().iter().flat_map(|(s, scope)| frame(&s.encode_to_vec(), scope)).collect();
    std::fs::write(dir.join("rust-seen"), spans).unwrap();
}

/// One request, as a service instrumented by hand handles it: a SERVER span
/// continuing the caller's context, a CLIENT span around the call to
/// `next` (linked to a span of another trace), its context sent on.
fn serve(tracer: &SdkTracer, request: tiny_http::Request, next: &str) {
    let propagator = TraceContextPropagator::new();
    let headers: HashMap<String, String> = request.headers().iter().map(|h| (h.field.as_str().as_str().to_ascii_lowercase(), h.value.as_str().to_owned())).collect();
    let path = request.url().to_owned();
    let server = tracer
        .span_builder(format!("GET {path}"))
        .with_kind(SpanKind::Server)
        .with_attributes([KeyValue::new("http.request.method", "GET"), KeyValue::new("url.path", path)])
        .start_with_context(tracer, &propagator.extract(&headers));
    let cx = Context::current_with_span(server);
    let linked = SpanContext::new(TraceId::from_hex(LINKED.0).unwrap(), SpanId::from_hex(LINKED.1).unwrap(), TraceFlags::SAMPLED, true, TraceState::default());
    let call = tracer.span_builder("GET").with_kind(SpanKind::Client).with_links(vec![Link::with_context(linked)]).start_with_context(tracer, &cx);
    let call = cx.with_span(call);
    let mut sent: HashMap<String, String> = HashMap::new();
    propagator.inject_context(&call, &mut sent);
    let body = get(next, sent.get("traceparent").map(String::as_str));
    call.span().set_attribute(KeyValue::new("http.response.status_code", 200));
    call.span().add_event("reply", vec![KeyValue::new("reply.bytes", body.len() as i64), KeyValue::new("reply.whole", true)]);
    call.span().set_status(Status::Ok);
    call.span().end();
    cx.span().set_attribute(KeyValue::new("http.response.status_code", 200));
    cx.span().end();
    request.respond(tiny_http::Response::from_string(body)).unwrap();
}

fn start_services(setup: &Json, provider: &str, [flask, java, rust, end]: [u16; 4]) -> Services {
    let path = |k: &str| PathBuf::from(setup[k].as_str().unwrap());
    let (dir, python, apps) = (path("dir"), path("python"), path("apps"));
    let mut services = Services::new(&dir, START_LIMIT);
    let mut otlp = Command::new(&python);
    otlp.arg(apps.join("otlp_service.py")).env("APP_PORT", end.to_string()).env("OTEL_SERVICE_NAME", "chain-otlp");
    otlp.env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", format!("{}/v1/traces", setup["jaeger"].as_str().unwrap()));
    services.spawn("otlp", otlp);
    let mut jvm = Command::new("java");
    jvm.arg("-Djava.io.tmpdir=/tmp").arg(format!("-javaagent:{}", path("agent").display()));
    jvm.arg(format!("-Dotel.javaagent.extensions={}", setup["extensions"].as_str().unwrap()));
    jvm.args(["-Dotel.traces.exporter=usertrace,seen", "-Dotel.metrics.exporter=none", "-Dotel.logs.exporter=none", "-Dotel.bsp.schedule.delay=50"]);
    jvm.arg(format!("-Dseen.file={}", dir.join("java-seen.pb").display())).arg("-cp").arg(path("classes"));
    jvm.args(["dev.usertrace.opentelemetry.ChainApp", &java.to_string(), &format!("http://127.0.0.1:{rust}/rust")]);
    jvm.env("OTEL_SERVICE_NAME", "chain-java").env("USERTRACE_OTEL_PROVIDER", format!("{provider}java"));
    services.spawn("java", jvm);
    let mut app = Command::new(python.with_file_name("opentelemetry-instrument"));
    app.arg(&python).arg(apps.join("flask_app.py")).env("PYTHONPATH", &apps).env("APP_PORT", flask.to_string());
    app.env("BACK_URL", format!("http://127.0.0.1:{java}/chain")).env("OTEL_SERVICE_NAME", "chain-flask");
    app.env("OTEL_TRACES_EXPORTER", "usertrace,usertrace_test_memory").env("USERTRACE_OTEL_PROVIDER", format!("{provider}py"));
    app.envs([("OTEL_METRICS_EXPORTER", "none"), ("OTEL_LOGS_EXPORTER", "none"), ("OTEL_BSP_SCHEDULE_DELAY", "50")]);
    app.env("MEMORY_SPANS_FILE", dir.join("flask-seen.pb"));
    services.spawn("flask", app);
    services
}

/// What the Flask app's `usertrace_test_memory` exporter saw: one OTLP
/// request.
fn python_seen(file: &Path) -> Vec<Seen> {
    let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    spans_of(&ExportTraceServiceRequest::decode(bytes.as_slice()).unwrap())
}

/// What the Java agent's `seen` exporter saw: an OTLP request per batch,
/// each after its length (4 bytes, big-endian).
fn java_seen(file: &Path) -> Vec<Seen> {
    let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut rest = bytes.as_slice();
    let mut seen = Vec::new();
    while !rest.is_empty() {
        let len = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
        seen.extend(spans_of(&ExportTraceServiceRequest::decode(&rest[4..4 + len]).unwrap()));
        rest = &rest[4 + len..];
    }
    seen
}

/// What the Rust service's `Kept` saw (its scope has no version).
fn rust_seen(file: &Path) -> Vec<Seen> {
    let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    unframe::<Span>(&bytes).into_iter().map(|(span, scope)| (span, scope, String::new())).collect()
}

fn spans_of(request: &ExportTraceServiceRequest) -> Vec<Seen> {
    let scoped = request.resource_spans.iter().flat_map(|r| &r.scope_spans);
    scoped
        .flat_map(|s| {
            let (name, version) = s.scope.as_ref().map(|c| (c.name.clone(), c.version.clone())).unwrap_or_default();
            s.spans.iter().map(move |span| (span.clone(), name.clone(), version.clone()))
        })
        .collect()
}

//! Requests over real HTTP on 127.0.0.1 through a service in each of the
//! four languages, each on usertrace's own API, then a fifth on the plain
//! OpenTelemetry SDK (issue 43):
//!
//! test client → C → Python → Java → Rust → `http-otlp`
//!
//! - C (`service.c`): plain sockets; `usertrace_trace_context_parse`
//!   of the `traceparent` header, a span begun under it, the span's own
//!   header from `usertrace_trace_context_format`;
//! - Python (`service.py`): `http.server` and urllib;
//!   `usertrace.extract`, `use_context`, a `traced` span, `usertrace.inject`;
//! - Java (`HttpService.java`): the JDK's `HttpServer`
//!   and `HttpClient`; `TraceContext.extract`, `makeCurrent` scopes,
//!   `injectCurrent`;
//! - Rust ([`rust_service`]): a `std::net` server, ureq for its call;
//!   `TraceContext::extract` into the
//!   `tracing` span's `traceparent` field (the bridge), and the bridge's
//!   `traceparent` of the current span for the next call;
//! - `http-otlp`: a Python service on OpenTelemetry's SDK exporting OTLP
//!   itself, straight to Jaeger (`bindings-python/tests/opentelemetry_apps/
//!   otlp_service.py`, which answers with the `traceparent` it was sent).
//!
//! Each usertrace service runs under its own `OTEL_SERVICE_NAME`, prints
//! the trace id and span id it used and the parent span id it got, and
//! answers with what the next answered. One `usertrace record --otlp` to a
//! real Jaeger records the four; the test client sends two requests, each
//! with a `traceparent` of its own trace. Jaeger shows, per request, one
//! trace of five spans: each service's span under its service's name with
//! the exact ids it printed, each the child of the one before (C's of the
//! client's), and the OpenTelemetry service's the child of Rust's. Each
//! service's spans are in those two traces only.
//!
//! The same scenario runs over shared memory on the host
//! (`shm_transport`) and over user_events in the guest (`acceptance`);
//! each test file runs its own binary again as the ignored test
//! `the_rust_service` under the recorder: the Rust service, which starts
//! the others as its children (so that each registers through `record`'s
//! attach handshake), plays the test client, and waits for them to end.
//!
//! Needs what `harness/test-all` builds before `cargo test`: the C library
//! of `ffi-c/run-tests.sh host` (`$USERTRACE_C_BUILD/prefix`, default
//! /tmp/usertrace-c-tests), the Java jar of `bindings-java/run-tests.sh
//! host`, a venv of `bindings-python/run-tests.sh build` and Jaeger
//! (`harness/build-otel-components`). A missing one fails the test, saying
//! what to run. The C program and the Java class are compiled once per
//! version of their sources into the temporary folder, so that the guest
//! (which shares /tmp) finds them compiled by the host's run.
#![allow(dead_code)] // each test binary uses its own part

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};
use usertrace::TraceContext;

use crate::otel_components::jaeger::{parent, trace_id, Jaeger};
use crate::otel_components::services::{get, service_logs, wait_for, Services};
use crate::otel_components::{component, free_port, TempDir};

/// What the test hands the Rust service (JSON): paths and the provider prefix.
const SETUP_ENV: &str = "UT_HTTP_CHAIN_SETUP";
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
const HERE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/http_chain");
/// Requests the test client sends: two, so that each is seen to be a trace of its own.
const REQUESTS: usize = 2;
/// How long a service may take to say its port: a JVM under emulation
/// (the guest, without KVM) takes tens of seconds.
const START_LIMIT: Duration = Duration::from_secs(300);
/// The services the Rust one starts, and itself, by the names of their logs.
const SERVICES: [&str; 5] = ["c", "python", "java", "rust", "otlp"];

/// The services that print their ids, in the order a request passes them.
const NATIVE: [&str; 4] = ["c", "python", "java", "rust"];
/// The last, which exports OTLP itself.
const OTLP: &str = "http-otlp";

fn service_name(service: &str) -> String {
    format!("http-{service}")
}

/// `usertrace record -e '<provider>*' --otlp <a real Jaeger> -- <the Rust
/// service>` with `USERTRACE_TRANSPORT=transport`; then Jaeger's view of
/// each request, checked against what each program printed. `rust_service`
/// is the ignored test (its path in the test binary) that runs
/// [`rust_service`].
pub fn each_request_is_one_trace_in_jaeger(transport: &str, rust_service: &str) {
    let needs = Needs::find();
    let jaeger = Jaeger::start(&component("jaeger").expect("build Jaeger: harness/build-otel-components"), "http_chain", None);
    let dir = TempDir::new("http-chain");
    let provider = format!("uthttp{}", std::process::id());
    let setup = json!({
        "dir": dir.0, "provider": provider, "jaeger": jaeger.endpoint(), "python": needs.python, "jar": needs.jar,
        "c": needs.c, "classes": needs.classes,
    });
    let (out, err) = (dir.0.join("record.out"), dir.0.join("record.err"));
    let mut recorder = Command::new(env!("CARGO_BIN_EXE_usertrace"))
        .args(["record", "-e", &format!("{provider}*"), "--otlp", &jaeger.endpoint(), "--", "env", "OTEL_SERVICE_NAME=http-rust"])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", rust_service, "--ignored", "--nocapture", "--test-threads=1"])
        .env("USERTRACE_TRANSPORT", transport)
        .env(SETUP_ENV, setup.to_string())
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_RESOURCE_ATTRIBUTES")
        .stdout(File::create(&out).unwrap())
        .stderr(File::create(&err).unwrap())
        .process_group(0)
        .spawn()
        .unwrap();
    let status = wait_for(&mut recorder, Duration::from_secs(900));
    // SAFETY: kill(2) on our recorder's process group: whatever of it is left.
    unsafe { libc::kill(-(recorder.id() as i32), libc::SIGKILL) };
    let (stdout, stderr) = (std::fs::read_to_string(&out).unwrap(), std::fs::read_to_string(&err).unwrap());
    let logs = || format!("{stderr}\n{stdout}\n{}\njaeger:\n{}", service_logs(&dir.0, &SERVICES), jaeger.log());
    assert!(status.is_some_and(|s| s.success()), "record: {status:?}\n{}", logs());
    // Four spans a request, each sent.
    let spans = format!("({} spans, 0 log records), 0 dropped (queue full or unsent at exit), 0 failed", NATIVE.len() * REQUESTS);
    assert!(stderr.lines().any(|l| l.starts_with("usertrace record: OTLP: ") && l.contains(&spans)), "{}", logs());

    // What each program printed: its span's ids, request by request.
    let printed: BTreeMap<&str, Vec<Printed>> = NATIVE.iter().map(|s| (*s, printed(&dir.0.join(format!("{s}.log"))))).collect();
    let requests: Vec<Request> = stdout.lines().filter_map(Request::parse).collect();
    assert_eq!(requests.len(), REQUESTS, "{}", logs());
    for (service, spans) in &printed {
        assert_eq!(spans.len(), REQUESTS, "{service} printed a span per request:\n{}", logs());
    }
    for request in &requests {
        // The chain, as its programs printed it: each span in the client's
        // trace, its parent the span before it.
        let mut chain: Vec<(String, &Printed)> = Vec::new();
        let mut parent_id = request.client_span.clone();
        for service in NATIVE {
            let found: Vec<&Printed> = printed[service].iter().filter(|p| p.trace == request.trace).collect();
            assert_eq!(found.len(), 1, "{service}: one span in trace {}:\n{}", request.trace, logs());
            let p = found[0];
            assert_eq!(p.parent, parent_id, "{service} printed the parent its caller sent:\n{}", logs());
            assert_ne!(p.span, p.parent, "{service} began a span of its own:\n{}", logs());
            chain.push((service_name(service), p));
            parent_id = p.span.clone();
        }
        // The OpenTelemetry service answered with the traceparent Rust sent it.
        assert_eq!(request.reply, format!("00-{}-{parent_id}-01", request.trace), "{}", logs());

        // Jaeger: one trace of five spans, each as its program printed it.
        let (spans, processes) = jaeger.trace(&request.trace, NATIVE.len() + 1);
        let service = |s: &Json| processes[s["processID"].as_str().unwrap()]["serviceName"].as_str().unwrap().to_owned();
        assert_eq!(spans.len(), NATIVE.len() + 1, "{spans:#?}\n{}", logs());
        assert!(spans.iter().all(|s| trace_id(s) == request.trace), "one trace: {spans:#?}");
        let of = |name: &str| -> &Json {
            let found: Vec<&Json> = spans.iter().filter(|s| service(s) == name).collect();
            assert_eq!(found.len(), 1, "one span of {name} in trace {}: {spans:#?}", request.trace);
            found[0]
        };
        for (name, p) in &chain {
            let span = of(name);
            assert_eq!(span["spanID"].as_str(), Some(p.span.as_str()), "{name}'s span, as it printed it: {span:#}");
            assert_eq!(parent(span).as_deref(), Some(p.parent.as_str()), "{name}'s parent, as it printed it: {span:#}");
        }
        assert_eq!(parent(of(OTLP)), Some(parent_id), "the OpenTelemetry service's span is the Rust span's child");
    }
    // Every trace a service is in is one of the requests': none began a
    // trace of its own.
    let traces: BTreeSet<String> = requests.iter().map(|r| r.trace.clone()).collect();
    for name in NATIVE.map(service_name).iter().map(String::as_str).chain([OTLP]) {
        // Jaeger lists each trace a service is in, with all of its spans.
        let (spans, _) = jaeger.spans_of(name, REQUESTS);
        let of_name: BTreeSet<String> = spans.iter().map(trace_id).collect();
        assert_eq!(of_name, traces, "the traces {name} is in: {spans:#?}");
    }
}

/// A request the test client sent: its trace, its own span (the parent
/// it sent) and the reply.
#[derive(Debug)]
struct Request {
    trace: String,
    client_span: String,
    reply: String,
}

impl Request {
    /// A `request trace=T client=S reply=R` line (after libtest's `test
    /// NAME ... `, for the first).
    fn parse(line: &str) -> Option<Request> {
        let words: BTreeMap<&str, &str> = line[line.find("request trace=")?..].split(' ').filter_map(|w| w.split_once('=')).collect();
        Some(Request { trace: words["trace"].to_owned(), client_span: words["client"].to_owned(), reply: words["reply"].to_owned() })
    }
}

/// A span as a service printed it: `span trace=T span=S parent=P`.
#[derive(Debug)]
struct Printed {
    trace: String,
    span: String,
    parent: String,
}

fn printed(log: &Path) -> Vec<Printed> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.strip_prefix("span "))
        .map(|l| {
            let words: BTreeMap<&str, &str> = l.split(' ').filter_map(|w| w.split_once('=')).collect();
            Printed { trace: words["trace"].to_owned(), span: words["span"].to_owned(), parent: words["parent"].to_owned() }
        })
        .collect()
}

/// Where each prerequisite was built, or a failure saying how to build it.
struct Needs {
    python: PathBuf,
    jar: PathBuf,
    /// The C service, compiled.
    c: PathBuf,
    /// The folder of `HttpService.class`.
    classes: PathBuf,
}

impl Needs {
    fn find() -> Needs {
        let c_build = std::env::var_os("USERTRACE_C_BUILD").map_or_else(|| PathBuf::from("/tmp/usertrace-c-tests"), PathBuf::from);
        let prefix = c_build.join("prefix");
        assert!(prefix.join("include/usertrace.h").exists(), "no C library in {}: ffi-c/run-tests.sh host", prefix.display());
        let jar = Path::new(ROOT).join(format!("bindings-java/java/usertrace/target/usertrace-{}.jar", env!("CARGO_PKG_VERSION")));
        assert!(jar.exists(), "no {}: bindings-java/run-tests.sh host (or mvn package)", jar.display());
        let built = compiled(&prefix, &jar);
        Needs { python: venv_python(), c: built.join("service"), classes: built.join("java"), jar }
    }
}

/// The C service and the Java class, compiled against `prefix` and `jar`
/// into a folder named by a hash of their sources and of those paths,
/// under the temporary folder: once, for the host's run and the guest's.
fn compiled(prefix: &Path, jar: &Path) -> PathBuf {
    let (c_source, java_source) = (Path::new(HERE).join("service.c"), Path::new(HERE).join("HttpService.java"));
    let mut hash = std::collections::hash_map::DefaultHasher::new();
    for source in [&c_source, &java_source] {
        std::fs::read(source).unwrap().hash(&mut hash);
    }
    (prefix, jar, std::fs::metadata(jar).and_then(|m| m.modified()).ok()).hash(&mut hash);
    let dir = std::env::temp_dir().join(format!("usertrace-http-chain-{:016x}", hash.finish()));
    if dir.join("java/HttpService.class").exists() {
        return dir;
    }
    let building = std::env::temp_dir().join(format!("usertrace-http-chain-building-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    std::fs::create_dir_all(building.join("java")).unwrap();
    let lib = prefix.join("lib");
    let cc = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(building.join("service"))
        .arg(&c_source)
        .arg(format!("-I{}", prefix.join("include").display()))
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lusertrace")
        .output()
        .unwrap();
    assert!(cc.status.success(), "cc: {}", String::from_utf8_lossy(&cc.stderr));
    let javac = Command::new("javac").arg("-d").arg(building.join("java")).arg("-cp").arg(jar).arg(&java_source).output().unwrap();
    assert!(javac.status.success(), "javac: {}", String::from_utf8_lossy(&javac.stderr));
    // Whole or not at all: another run may have finished first.
    if std::fs::rename(&building, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&building);
    }
    dir
}

/// The newest Python venv of `bindings-python/run-tests.sh build` (in
/// `$USERTRACE_PY_VENVS`, else /tmp/usertrace-python) that has the wheel
/// and OpenTelemetry's OTLP/HTTP exporter.
fn venv_python() -> PathBuf {
    let venvs = PathBuf::from(std::env::var_os("USERTRACE_PY_VENVS").unwrap_or_else(|| "/tmp/usertrace-python".into()));
    let has = |venv: &Path| {
        let lib = std::fs::read_dir(venv.join("lib")).into_iter().flatten().flatten().map(|e| e.path().join("site-packages")).next();
        lib.is_some_and(|l| ["usertrace", "opentelemetry/exporter/otlp/proto/http"].iter().all(|p| l.join(p).is_dir()))
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(&venvs).into_iter().flatten().flatten().map(|e| e.path()).filter(|v| has(v)).collect();
    found.sort_by_key(|v| v.file_name().and_then(|n| n.to_str()).and_then(|n| n.parse::<u32>().ok()));
    let venv = found.pop().unwrap_or_else(|| panic!("no venv in {} with usertrace and the OTLP exporter: bindings-python/run-tests.sh build", venvs.display()));
    venv.join("bin/python")
}

/// The Rust service, run under the recorder by the test: starts the
/// others, sends the requests as the test client, serves its own part of
/// each, and waits for the others to end.
pub fn rust_service() {
    use tracing_subscriber::prelude::*;

    let setup: Json = serde_json::from_str(&std::env::var(SETUP_ENV).unwrap()).unwrap();
    let path = |k: &str| PathBuf::from(setup[k].as_str().unwrap());
    let (dir, provider) = (path("dir"), setup["provider"].as_str().unwrap());
    let layer = usertrace_tracing::layer_for(usertrace::Provider::new(format!("{provider}rs")).unwrap());
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer)).unwrap();

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let rust = listener.local_addr().unwrap().port();
    let mut services = Services::new(&dir, START_LIMIT);
    let otlp = free_port();
    let mut command = Command::new(path("python"));
    command.arg(Path::new(ROOT).join("bindings-python/tests/opentelemetry_apps/otlp_service.py"));
    command.env("APP_PORT", otlp.to_string()).env("OTEL_SERVICE_NAME", OTLP);
    command.env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", format!("{}/v1/traces", setup["jaeger"].as_str().unwrap()));
    services.spawn("otlp", command);
    // Each started once the one it calls listens, last first (the
    // OpenTelemetry service starts meanwhile: its port is chosen already).
    let count = REQUESTS.to_string();
    let mut java = Command::new("java");
    // One JIT tier, one compiler thread and the serial collector: under
    // emulation (the guest, without KVM) the JVM's compiler and GC threads
    // took most of its start (to its port: 82 s with the defaults, 26 s so).
    java.args(["-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1", "-XX:+UseSerialGC"]);
    java.arg("-Djava.io.tmpdir=/tmp").arg("-cp").arg(format!("{}:{}", path("jar").display(), path("classes").display()));
    java.args(["HttpService", &format!("{provider}java"), &format!("http://127.0.0.1:{rust}/rust"), &count]);
    let java = start(&mut services, "java", java);
    let mut python = Command::new(path("python"));
    python.arg(Path::new(HERE).join("service.py")).args([&format!("http://127.0.0.1:{java}/java"), &count]);
    python.env("USERTRACE_PROVIDER", format!("{provider}py")).env("PYTHONDONTWRITEBYTECODE", "1");
    let python = start(&mut services, "python", python);
    let mut c = Command::new(path("c"));
    c.args([&format!("{provider}c"), &format!("http://127.0.0.1:{python}/python"), &count]);
    let c = start(&mut services, "c", c);
    services.wait_listening(otlp);

    let next = format!("http://127.0.0.1:{otlp}/end");
    let log = dir.join("rust.log");
    let server = std::thread::spawn(move || serve(&listener, &next, REQUESTS, &log));
    for n in 1..=REQUESTS as u64 {
        // A trace of the test client's own, and its span, for each request.
        let (trace, client) = (format!("{:08x}{:024x}", 0x4a000000 | std::process::id(), n), format!("{:016x}", 0xc1_0000_0000_0000 + n));
        let reply = get(&format!("http://127.0.0.1:{c}/c"), Some(&format!("00-{trace}-{client}-01")));
        println!("request trace={trace} client={client} reply={reply}");
    }
    server.join().unwrap();
    // The native services end after their requests; the OpenTelemetry one
    // is stopped with SIGTERM, so that it shuts its SDK down.
    services.end(|name| (name == "otlp").then_some(libc::SIGTERM), |_, status| status.success());
}

/// Serves `count` requests as the Rust service: a `tracing` span under
/// the caller's context, the next call under the span's.
fn serve(listener: &TcpListener, next: &str, count: usize, log: &Path) {
    let mut lines = String::new();
    for _ in 0..count {
        let (mut stream, _) = listener.accept().unwrap();
        let headers = read_headers(&mut stream);
        let incoming = TraceContext::extract(&headers);
        let traceparent = incoming.as_ref().map(TraceContext::traceparent);
        let span = tracing::info_span!("handle", traceparent = traceparent.as_deref());
        let body = {
            let _entered = span.enter();
            let outgoing = usertrace_tracing::traceparent(&tracing::Span::current());
            get(next, outgoing.as_deref())
        };
        let mine = usertrace_tracing::context(&span);
        drop(span);
        write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).unwrap();
        let hex = |c: &Option<TraceContext>, f: fn(&TraceContext) -> String| c.as_ref().map_or("-".to_owned(), f);
        lines += &format!(
            "span trace={} span={} parent={}\n",
            hex(&mine, |c| format!("{:032x}", c.trace_id)),
            hex(&mine, |c| format!("{:016x}", c.span_id)),
            hex(&incoming, |c| format!("{:016x}", c.span_id)),
        );
    }
    std::fs::write(log, lines).unwrap();
}

/// The headers of one request, read up to their end.
fn read_headers(stream: &mut TcpStream) -> Vec<(String, String)> {
    let mut reader = std::io::BufReader::new(stream);
    let mut headers = Vec::new();
    let mut line = String::new();
    reader.read_line(&mut line).unwrap(); // GET /path HTTP/1.1
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let Some((name, value)) = line.trim_end().split_once(':') else { break };
        headers.push((name.to_owned(), value.trim().to_owned()));
    }
    headers
}

/// Starts the service `name`, under its own service name, and returns the
/// port it says it listens on.
fn start(services: &mut Services, name: &'static str, mut command: Command) -> u16 {
    command.env("OTEL_SERVICE_NAME", service_name(name));
    services.spawn(name, command);
    let deadline = Instant::now() + START_LIMIT;
    loop {
        if let Some(port) = services.printed(name).lines().find_map(|l| l.strip_prefix("port=")) {
            return port.parse().unwrap();
        }
        services.none_exited();
        assert!(Instant::now() < deadline, "{name} said no port in {START_LIMIT:?}:\n{}", services.logs());
        std::thread::sleep(Duration::from_millis(50));
    }
}

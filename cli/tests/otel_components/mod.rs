//! What the tests against real OpenTelemetry components share: finding
//! the binaries harness/build-otel-components built, free ports, scratch
//! folders, and one realistic recording (a C service, a Python worker and
//! a Java app).
#![allow(dead_code)] // each test file uses its own part

pub mod collector;
pub mod jaeger;
pub mod services;

use std::net::TcpListener;
use std::path::{Path, PathBuf};

use usertrace_output::otlp::ids::SpanKey;
use usertrace_output::{EventRecord, ProcessRecord, Record, Value};

/// The component `name` (`jaeger`, `otelcol`): `$USERTRACE_<NAME>`, else
/// `${USERTRACE_CACHE:-$HOME/.cache/usertrace}/bin/<name>`. Missing, it
/// is `None` on a developer's machine, where the test says it skipped, and
/// a failure under CI (`CI` set), which must have built it.
pub fn component(name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(format!("USERTRACE_{}", name.to_uppercase())) {
        return Some(PathBuf::from(p));
    }
    let cache = std::env::var_os("USERTRACE_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/usertrace")));
    let found = cache.map(|c| c.join("bin").join(name)).filter(|p| p.is_file());
    if found.is_none() {
        assert!(std::env::var_os("CI").is_none(), "CI must build {name} first: harness/build-otel-components");
        eprintln!("SKIPPED: no {name} binary; build it with harness/build-otel-components");
    }
    found
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A scratch folder, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("usertrace-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// CLOCK_MONOTONIC now, in ns: the recording's clock, so that the spans
/// land at the present in the components' (wall-clock) windows.
pub fn monotonic_now() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime(2) writes one timespec into the live local.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn event(t: u64, pid: u32, tid: u32, process: &str, name: &str, fields: &[(&str, Value)]) -> Record {
    Record::Event(EventRecord {
        time_ns: t,
        cpu: 0,
        pid,
        tid,
        comm: if tid == pid { process.into() } else { format!("{process}-w{tid}") },
        process: process.into(),
        namespaces: None,
        event: name.into(),
        tracepoint: None,
        fields: fields.iter().map(|(n, v)| ((*n).to_owned(), v.clone())).collect(),
        error: None,
        stack: Vec::new(),
    })
}

pub fn process(t: u64, pid: u32, exe: &str, argv: &[&str], container_id: Option<&str>) -> Record {
    Record::Process(ProcessRecord {
        time_ns: t,
        pid,
        executable: Some(exe.into()),
        command_line: Some(argv.iter().map(|a| (*a).to_owned()).collect()),
        container_id: container_id.map(str::to_owned),
        resource: Default::default(),
        pod_uid: None,
        pid_in_container: None,
    })
}

/// The container the C service of [`recording`] runs in.
pub const ORDER_SERVICE_CONTAINER: &str = "5d0e4c8b9f1a2e3d4c5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f0e1d2c3b4a5f6e7d";

/// A C service, a Python worker and a Java app, as `usertrace record -o
/// FILE.jsonl` would have written them. `t0` is a recent monotonic time.
pub fn recording(t0: u64) -> Vec<Record> {
    let us = |n: u64| t0 + n * 1_000;
    let mut r = vec![
        process(us(0), 4100, "/usr/local/bin/order-service", &["order-service", "--port", "8080"], Some(ORDER_SERVICE_CONTAINER)),
        process(us(0), 4200, "/usr/bin/python3.11", &["python3.11", "worker.py"], None),
        process(us(0), 4300, "/usr/lib/jvm/java-17/bin/java", &["java", "-jar", "shop.jar"], None),
        // C: a request with a nested query, an event inside, and a write
        // handed to another thread.
        event(us(10), 4100, 4100, "order-service", "orders_handle_request", &[("span_begin", Value::Unsigned(1)), ("path", Value::Str("/orders/42".into())), ("method", Value::Str("GET".into()))]),
        event(us(15), 4100, 4100, "order-service", "orders_cache_miss", &[("key", Value::Str("order:42".into()))]),
        event(us(20), 4100, 4100, "order-service", "orders_db_query", &[("span_begin", Value::Unsigned(2)), ("rows", Value::Unsigned(3))]),
        event(us(40), 4100, 4100, "order-service", "orders_span_end", &[("span_end", Value::Unsigned(2))]),
        event(us(50), 4100, 4100, "order-service", "orders_async_write", &[("span_begin", Value::Unsigned(3)), ("bytes", Value::Unsigned(512))]),
        // Python: a job with a fetch that fails.
        event(us(30), 4200, 4200, "python3.11", "worker_process_job", &[("span_begin", Value::Unsigned(1)), ("job_id", Value::Signed(-7)), ("queue", Value::Str("default".into()))]),
        event(us(35), 4200, 4200, "python3.11", "worker_fetch", &[("span_begin", Value::Unsigned(2))]),
        event(us(55), 4200, 4200, "python3.11", "worker_span_error", &[("span_end", Value::Unsigned(2)), ("error", Value::Str("TimeoutError".into()))]),
        // Java: a checkout with a nested charge, and a GC pause.
        event(us(20), 4300, 4301, "java", "shop_checkout", &[("span_begin", Value::Unsigned(1)), ("amount_cents", Value::Unsigned(1299)), ("approved", Value::Bool(true))]),
        event(us(25), 4300, 4301, "java", "shop_charge_card", &[("span_begin", Value::Unsigned(2)), ("fee_ratio", Value::F64(0.25))]),
        event(us(60), 4300, 4301, "java", "shop_span_end", &[("span_end", Value::Unsigned(2))]),
        event(us(80), 4300, 4302, "java", "jvm_gc_pause", &[("span_start_ns", Value::Unsigned(us(70))), ("span_duration_ns", Value::Unsigned(5_000)), ("gc", Value::Str("G1 Young".into()))]),
        event(us(90), 4300, 4301, "java", "shop_span_end", &[("span_end", Value::Unsigned(1))]),
        event(us(80), 4200, 4200, "python3.11", "worker_span_end", &[("span_end", Value::Unsigned(1))]),
        event(us(90), 4100, 4100, "order-service", "orders_span_end", &[("span_end", Value::Unsigned(1))]),
        // The write ends on the C service's I/O thread.
        event(us(120), 4100, 4101, "order-service", "orders_span_end", &[("span_end", Value::Unsigned(3))]),
    ];
    r.sort_by_key(Record::time_ns);
    r
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn span_id(pid: u32, id: u64, tid: u32, start_ns: u64, name: &str) -> String {
    hex(&SpanKey { pid, id, tid, start_ns, name }.span_id())
}

//! Two processes continue one W3C trace: `ut_emit trace-client`, under an
//! upstream `traceparent` (a service nobody records), runs `ut_emit
//! trace-server` with its call span's `traceparent` on the command line,
//! as a request's header would carry it. One `usertrace record --otlp` to
//! a real Jaeger shows one trace of five spans, across both processes,
//! with the exact ids each program printed, parent by parent; the
//! server's span begun by id (saying nothing of its trace) nests in it
//! under its own id. Each process is the service its environment names:
//! the client `ut-trace-client` (`OTEL_SERVICE_NAME`), the server
//! `ut-trace-server` with its `OTEL_RESOURCE_ATTRIBUTES`. JSON lines show
//! each begin's trace fields, and each process's resource. Split into two
//! recordings with different clocks, as two machines make them, and
//! exported apart, it is still one trace.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value as Json;

use crate::otel_components::component;
use crate::otel_components::jaeger::{parent, process_tag, Jaeger};
use crate::support::*;

const UPSTREAM_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const UPSTREAM_SPAN: &str = "00f067aa0ba902b7";

/// A span as its program printed it: trace id, span id, parent id (hex;
/// `None` for what it did not know).
#[derive(Debug, Clone, PartialEq)]
struct Printed {
    trace: Option<String>,
    span: String,
    parent: Option<String>,
}

/// The `span NAME TRACE SPAN PARENT` lines of both programs, by name.
fn printed(stdout: &str) -> BTreeMap<String, Printed> {
    let known = |w: &str| (w != "-").then(|| w.to_owned());
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("span "))
        .map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            (w[0].to_owned(), Printed { trace: known(w[1]), span: w[2].to_owned(), parent: known(w[3]) })
        })
        .collect()
}

fn upstream() -> String {
    format!("00-{UPSTREAM_TRACE}-{UPSTREAM_SPAN}-01")
}

/// One recording at a time: every test here records `ut_trace*`, the
/// names `ut_emit trace-client` and `trace-server` register, and a
/// shared-memory recorder takes each producer whose tracepoints match. Two
/// at once would each record some of the other's spans (it happened: the
/// tests of this file failed together when run side by side).
static ONE_RECORDING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn record(args: &[&str]) -> (String, String) {
    // A test that failed while holding it poisons nothing of ours.
    let _one = ONE_RECORDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let out = Command::new(usertrace())
        .args(["record", "-e", "ut_trace*"])
        .args(args)
        .args(["--", "env", "OTEL_SERVICE_NAME=ut-trace-client"])
        .arg(ut_emit())
        .args(["trace-client", &upstream()])
        .env("USERTRACE_TRANSPORT", "shm")
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_RESOURCE_ATTRIBUTES")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(out.status.success(), "record failed: {stderr}\n{stdout}");
    (stdout, stderr)
}

#[test]
fn one_trace_reaches_jaeger_across_two_processes_with_the_ids_they_printed() {
    let binary = component("jaeger").expect("build jaeger with harness/build-otel-components");
    let jaeger = Jaeger::start(&binary, "trace_across_processes", None);
    let (stdout, stderr) = record(&["--otlp", &format!("http://127.0.0.1:{}", jaeger.otlp_http)]);
    let ids = printed(&stdout);
    assert_eq!(ids.len(), 5, "{stdout}");
    assert!(stderr.contains("usertrace record: OTLP: 10 events exported (5 spans, 0 log records)"), "{stderr}\njaeger:\n{}", jaeger.log());

    let spans = jaeger.spans_named("ut_trace", 5);
    assert_eq!(spans.len(), 5, "{spans:#?}");
    let by_name: BTreeMap<&str, &(Json, Json)> = spans.iter().map(|s| (s.0["operationName"].as_str().unwrap(), s)).collect();
    let span = |name: &str| &by_name.get(name).unwrap_or_else(|| panic!("no {name} in Jaeger: {spans:#?}")).0;
    // One trace, the upstream one, across both processes.
    for (s, _) in &spans {
        assert_eq!(s["traceID"], UPSTREAM_TRACE, "{s:#}");
    }
    let pids: std::collections::BTreeSet<&str> = spans.iter().map(|(s, _)| s["processID"].as_str().unwrap()).collect();
    assert_eq!(pids.len(), 2, "two processes");
    // Each under the service its environment names; the recorder set none.
    for (s, process) in &spans {
        let name = s["operationName"].as_str().unwrap();
        let (service, team, tier) = if name.starts_with("ut_trace_client") {
            ("ut-trace-client", Json::Null, Json::Null)
        } else {
            ("ut-trace-server", Json::from("storage"), Json::from("db/primary"))
        };
        assert_eq!(process["serviceName"], service, "{name}: {process:#}");
        assert_eq!((process_tag(process, "team"), process_tag(process, "tier")), (team, tier), "{name}: {process:#}");
    }
    // Each span with the ids its program printed, parent by parent.
    for (name, p) in ids.iter().filter(|(_, p)| p.trace.is_some()) {
        let s = span(name);
        assert_eq!(s["spanID"].as_str(), Some(p.span.as_str()), "{name}: {s:#}");
        assert_eq!(p.trace.as_deref(), Some(UPSTREAM_TRACE));
        if p.parent.as_deref() != Some(UPSTREAM_SPAN) {
            assert_eq!(parent(s), p.parent, "{name}'s parent");
        }
    }
    assert_eq!(parent(span("ut_trace_client_request")).as_deref(), Some(UPSTREAM_SPAN), "the upstream service, not recorded");
    assert_eq!(parent(span("ut_trace_client_call")), Some(ids["ut_trace_client_request"].span.clone()));
    assert_eq!(parent(span("ut_trace_server_handle")), Some(ids["ut_trace_client_call"].span.clone()), "in the other process");
    assert_eq!(parent(span("ut_trace_server_query")), Some(ids["ut_trace_server_handle"].span.clone()));
    // Begun by id inside the query: nested there, under its own id.
    let db = span("ut_tracedb_db");
    assert_eq!(db["spanID"].as_str(), Some(ids["ut_tracedb_db"].span.as_str()));
    assert_eq!(parent(db), Some(ids["ut_trace_server_query"].span.clone()));
}

#[test]
fn json_lines_show_each_begins_trace_fields() {
    let dir = std::env::temp_dir().join(format!("usertrace-trace-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("trace.jsonl");
    let (stdout, _) = record(&["--format", "json", "-o", file.to_str().unwrap()]);
    let ids = printed(&stdout);
    let text = std::fs::read_to_string(&file).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let resources: BTreeMap<String, Json> = text
        .lines()
        .map(|l| serde_json::from_str::<Json>(l).unwrap())
        .filter(|p| p["type"] == "process")
        .map(|p| (p["command_line"][1].as_str().unwrap_or_default().to_owned(), p["resource"].clone()))
        .collect();
    assert_eq!(resources["trace-client"], serde_json::json!({"service.name": "ut-trace-client"}), "{text}");
    assert_eq!(resources["trace-server"], serde_json::json!({"service.name": "ut-trace-server", "team": "storage", "tier": "db/primary"}));
    let begins: Vec<(&str, Json)> = text
        .lines()
        .map(|l| (l, serde_json::from_str::<Json>(l).unwrap()))
        .filter(|(_, e)| e["type"] == "event" && e["fields"].get("span_begin").is_some())
        .collect();
    assert_eq!(begins.len(), 5, "{text}");
    let hex = |v: &Json| format!("{:016x}", v.as_u64().unwrap());
    for (line, e) in &begins {
        let name = e["event"].as_str().unwrap();
        let p = &ids[name];
        let f = &e["fields"];
        // In the line's own order: the id, then its trace context.
        let at: Vec<usize> = ["\"span_begin\":", "\"trace_id_hi\":", "\"trace_id_lo\":", "\"parent_span_id\":", "\"n\":"]
            .iter()
            .map(|k| line.find(k).unwrap_or_else(|| panic!("no {k} in {line}")))
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{line}");
        assert_eq!(hex(&f["span_begin"]), p.span, "{name}");
        let trace = format!("{}{}", hex(&f["trace_id_hi"]), hex(&f["trace_id_lo"]));
        match &p.trace {
            Some(t) => {
                assert_eq!(&trace, t, "{name}");
                assert_eq!(Some(hex(&f["parent_span_id"])), p.parent, "{name}");
            }
            None => assert_eq!((trace.as_str(), f["parent_span_id"].as_u64()), ("0".repeat(32).as_str(), Some(0)), "{name} said nothing"),
        }
    }
}

/// Two machines, as two recordings: the client's records and the server's
/// apart, each file with its own clock line, the server's on a machine
/// booted a day earlier (CLOCK_MONOTONIC a day ahead, the same wall
/// clock). Each is exported on its own, as each node's agent would; Jaeger
/// shows one trace of five spans across both, parent by parent, and the
/// server's spans inside the client's call in wall time, each recording's
/// times read by its own clock.
#[test]
fn two_machines_recordings_each_with_its_own_clock_export_one_trace() {
    const A_DAY_NS: u64 = 86_400 * 1_000_000_000;
    let dir = std::env::temp_dir().join(format!("usertrace-two-machines-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("both.jsonl");
    let (stdout, _) = record(&["--format", "json", "-o", file.to_str().unwrap()]);
    let ids = printed(&stdout);
    // Lines kept as they are (a span begin's fields are read in their
    // order), but for the time of the server's.
    let text = std::fs::read_to_string(&file).unwrap();
    let parsed: Vec<(&str, Json)> = text.lines().map(|l| (l, serde_json::from_str(l).unwrap())).collect();
    let server_pid = parsed
        .iter()
        .find(|(_, r)| r["type"] == "process" && r["command_line"][1] == "trace-server")
        .map(|(_, r)| r["pid"].clone())
        .expect("the server's process record");
    let a_day_later = |line: &str, record: &Json| {
        let time = record["time_ns"].as_u64().unwrap();
        line.replacen(&format!("\"time_ns\":{time},"), &format!("\"time_ns\":{},", time + A_DAY_NS), 1)
    };
    let (mut client, mut server) = (String::new(), String::new());
    for (line, record) in &parsed {
        if record["type"] == "clock" {
            client += &format!("{line}\n");
            server += &format!("{}\n", a_day_later(line, record));
        } else if record["pid"] == server_pid {
            server += &format!("{}\n", a_day_later(line, record));
        } else {
            client += &format!("{line}\n");
        }
    }
    assert!(server.lines().all(|l| !text.contains(l)), "every server line moved a day on");
    let binary = component("jaeger").expect("build jaeger with harness/build-otel-components");
    let jaeger = Jaeger::start(&binary, "two_machines", None);
    for (name, lines) in [("client.jsonl", &client), ("server.jsonl", &server)] {
        let path = dir.join(name);
        std::fs::write(&path, lines).unwrap();
        let out = Command::new(usertrace())
            .args(["export", path.to_str().unwrap(), "--otlp", &format!("http://127.0.0.1:{}", jaeger.otlp_http)])
            .env_remove("OTEL_SERVICE_NAME")
            .output()
            .unwrap();
        assert!(out.status.success(), "export {name}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let _ = std::fs::remove_dir_all(&dir);

    let spans = jaeger.spans_named("ut_trace", 5);
    assert_eq!(spans.len(), 5, "{spans:#?}");
    let span = |name: &str| spans.iter().map(|s| &s.0).find(|s| s["operationName"] == name).unwrap_or_else(|| panic!("no {name}: {spans:#?}"));
    assert!(spans.iter().all(|(s, _)| s["traceID"] == UPSTREAM_TRACE), "one trace: {spans:#?}");
    let services: std::collections::BTreeSet<&str> = spans.iter().map(|(_, p)| p["serviceName"].as_str().unwrap()).collect();
    assert_eq!(services, ["ut-trace-client", "ut-trace-server"].into());
    let (call, handle) = (span("ut_trace_client_call"), span("ut_trace_server_handle"));
    assert_eq!(parent(handle), Some(ids["ut_trace_client_call"].span.clone()), "across the machines");
    assert_eq!(parent(span("ut_trace_server_query")), Some(ids["ut_trace_server_handle"].span.clone()));
    // Microseconds of wall time: the server's handling lies inside the
    // client's call, as it did.
    let times = |s: &Json| (s["startTime"].as_u64().unwrap(), s["duration"].as_u64().unwrap());
    let ((call_start, call_len), (handle_start, handle_len)) = (times(call), times(handle));
    assert!(call_start <= handle_start && handle_start + handle_len <= call_start + call_len, "{call:#}\n{handle:#}");
}

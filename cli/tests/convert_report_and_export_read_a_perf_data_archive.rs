//! `usertrace convert`, `report` and `export` read a perf.data archive
//! that `record -o FILE.data` wrote in the guest kernel
//! (tests/fixtures/archive.data): its events come back with every field's
//! exact value, in time order, under the name each process had at the
//! time, across a rename and an exec. A copy of it cut short, or with its
//! header's sizes lying, or the zeros a recorder killed with SIGKILL
//! leaves, or one whose format text Microsoft's parser panicked on, is
//! named with what is wrong: exit status 1, no output file, no panic, no
//! hang. Runs on any host.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::{json, Value};

mod support;

/// Long enough for a debug build on a busy machine; a loop runs past it.
const LIMIT: Duration = Duration::from_secs(60);

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/archive.data")
}

fn usertrace(args: &[&str]) -> Output {
    support::usertrace_within(args, LIMIT)
}

fn lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8(stdout.to_vec()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The namespaces of every process of the fixture: the guest's initial ones.
fn namespaces() -> Value {
    json!({"net": 4026531840u64, "uts": 4026531838u64, "ipc": 4026531839u64, "pid": 4026531836u64,
           "user": 4026531837u64, "mnt": 4026531841u64, "cgroup": 4026531835u64})
}

#[test]
fn convert_gives_the_recorded_events_in_time_order_with_exact_values() {
    let fixture = fixture();
    let o = usertrace(&["convert", fixture.to_str().unwrap(), "-", "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = lines(&o.stdout);

    // What each line is, when, and whose: the process of pid 79 is
    // ut_emit, renames itself ut_renamed, then execs as ut-new-79.
    let summary: Vec<_> = lines
        .iter()
        .map(|l| {
            let name = l.get("event").or(l.get("executable")).and_then(Value::as_str).unwrap_or("");
            (l["type"].as_str().unwrap(), l["time_ns"].as_u64().unwrap(), l["pid"].as_u64(), l["comm"].as_str(), name)
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("clock", 7813869430, None, None, ""),
            ("process", 8567354484, Some(77), None, "/work/main/target/debug/examples/ut_emit"),
            ("event", 8567354484, Some(77), Some("ut_emit"), "ut_fix_all"),
            ("exit", 8577053310, Some(77), None, ""),
            ("process", 8840235803, Some(79), None, "/work/main/target/debug/examples/ut_emit"),
            ("event", 8840235803, Some(79), Some("ut_emit"), "ut_fix_ren"),
            ("event", 8841801028, Some(79), Some("ut_renamed"), "ut_fix_ren"),
            ("process", 8869085022, Some(79), None, "/work/main/target/debug/examples/ut_emit"),
            ("event", 8971993749, Some(79), Some("ut-new-79"), "ut_fix_ren"),
            ("exit", 8978684808, Some(79), None, ""),
            ("process", 9254690272, Some(81), None, "/work/main/target/debug/examples/eventheader_producer"),
            // EventHeader events by their own names, as Microsoft's
            // decoders name them; their tracepoints are checked below.
            ("event", 9254690272, Some(81), Some("eventheader_pro"), "UsertraceEhStatic:Every"),
            ("event", 9255518948, Some(81), Some("eventheader_pro"), "UsertraceEhStatic:Work"),
            ("event", 9255658717, Some(81), Some("eventheader_pro"), "UsertraceEhStatic:Work"),
            ("event", 9267699045, Some(81), Some("eventheader_pro"), "UsertraceEhDynamic:Dynamic"),
            ("exit", 9275053704, Some(81), None, ""),
        ]
    );
    assert!(summary.windows(2).all(|w| w[0].1 <= w[1].1), "in time order");
    assert_eq!(lines[0], json!({"type": "clock", "time_ns": 7813869430u64, "unix_ns": 1796236645813961297u64}));

    // Every field type ut_emit writes, each at a value near its limits.
    assert_eq!(
        lines[2],
        json!({"type": "event", "time_ns": 8567354484u64, "cpu": 1, "pid": 77, "tid": 77, "comm": "ut_emit", "process": "ut_emit",
               "namespaces": namespaces(), "event": "ut_fix_all",
               "fields": {"u8v": 250, "u16v": 65000, "u32v": 4000000000u32, "u64v": 18446744073709551614u64,
                          "i8v": -100, "i16v": -30000, "i32v": -2000000000, "i64v": -9223372036854775807i64,
                          "flag": true, "f32v": 1.5, "f64v": -2.25, "arr": "abc", "msg": "héllo wörld", "blob": "deadbeef"}})
    );
    // And in the order the event declares them.
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(
            "\"fields\":{\"u8v\":250,\"u16v\":65000,\"u32v\":4000000000,\"u64v\":18446744073709551614,\"i8v\":-100,\"i16v\":-30000,\
             \"i32v\":-2000000000,\"i64v\":-9223372036854775807,\"flag\":true,\"f32v\":1.5,\"f64v\":-2.25,\"arr\":\"abc\",\
             \"msg\":\"héllo wörld\",\"blob\":\"deadbeef\"}"
        ),
        "{text}"
    );

    // One process across the rename and the exec: the comm each event
    // was emitted under, and a second process line at the exec.
    for (line, stage, comm) in [(5, 1, "ut_emit"), (6, 2, "ut_renamed"), (8, 3, "ut-new-79")] {
        assert_eq!(
            (&lines[line]["tid"], &lines[line]["comm"], &lines[line]["process"], &lines[line]["fields"]),
            (&json!(79), &json!(comm), &json!(comm), &json!({"stage": stage, "note": format!("E{stage}")})),
            "stage {stage}"
        );
    }
    let ut_emit = "/work/main/target/debug/examples/ut_emit";
    assert_eq!(
        lines[1],
        json!({"type": "process", "time_ns": 8567354484u64, "pid": 77, "executable": ut_emit,
               "command_line": ["target/debug/examples/ut_emit", "all", "ut_fix_all"]})
    );
    assert_eq!(
        lines[4],
        json!({"type": "process", "time_ns": 8840235803u64, "pid": 79, "executable": ut_emit,
               "command_line": ["target/debug/examples/ut_emit", "rename", "ut_fix_ren"]})
    );
    assert_eq!(
        lines[7],
        json!({"type": "process", "time_ns": 8869085022u64, "pid": 79, "executable": ut_emit,
               "command_line": ["/tmp/ut-new-79", "exec-target", "ut_fix_ren"]})
    );
    assert_eq!(
        lines[10],
        json!({"type": "process", "time_ns": 9254690272u64, "pid": 81, "executable": "/work/main/target/debug/examples/eventheader_producer"})
    );
    assert_eq!(lines[9], json!({"type": "exit", "time_ns": 8978684808u64, "pid": 79, "tid": 79}));

    // Microsoft's EventHeader encoders: decoded, with their metadata, their
    // arrays as arrays and their structs as objects, nested as written.
    let tracepoints: Vec<_> = lines[11..15].iter().map(|l| l["tracepoint"].as_str()).collect();
    assert_eq!(
        tracepoints,
        [Some("UsertraceEhStatic_L4K1"), Some("UsertraceEhStatic_L4K1"), Some("UsertraceEhStatic_L4K1"), Some("UsertraceEhDynamic_L5K2")]
    );
    assert!(lines[2].get("tracepoint").is_none(), "only where it is not the event's name: {}", lines[2]);
    let every = &lines[11]["fields"];
    assert_eq!(
        (&every["u64"], &every["i64"], &every["f64"], &every["s16"], &every["guid"]),
        (&json!(18446744073709551614u64), &json!(i64::MIN), &json!(-0.25), &json!("wörld €"), &json!("12345678-9abc-def0-0102-030405060708"))
    );
    assert_eq!(
        (&every["arr"], &every["neg"], &every["pt"]),
        (&json!([1, 2, 3]), &json!([-1, -2]), &json!({"x": 7, "inner": {"y": -2, "name": "wörld €"}}))
    );
    assert!(text.contains(r#""pt":{"x":7,"inner":{"y":-2,"name":"wörld €"}}"#), "members in declaration order: {text}");
    assert_eq!((&every["meta.provider"], &every["meta.event"], &every["meta.id"]), (&json!("UsertraceEhStatic"), &json!("Every"), &json!(5)));
    assert_eq!(
        (&lines[12]["fields"]["span_begin"], &lines[13]["fields"]["span_end"], &lines[12]["fields"]["what"]),
        (&json!(578721382704613384u64), &json!(578721382704613384u64), &json!("compile"))
    );
    let dynamic = &lines[14]["fields"];
    assert_eq!(
        (&dynamic["big"], &dynamic["signed"], &dynamic["wide"], &dynamic["names"], &dynamic["floats"], &dynamic["outer"], &dynamic["meta.level"]),
        (
            &json!(u64::MAX),
            &json!(-5),
            &json!("grüße"),
            &json!(["alpha", "beta"]),
            // A float with no fraction prints as an integer (the contract).
            &json!([0.5, -1]),
            &json!({"a": 1, "deep": {"leaf": "end"}}),
            &json!(5)
        )
    );
    assert!(lines[11..15].iter().all(|l| l["namespaces"] == namespaces()));
}

#[test]
fn convert_writes_the_same_lines_to_a_file_and_converts_to_perfetto_and_chrome() {
    let dir = support::scratch("archive-formats");
    let fixture = fixture();
    let input = fixture.to_str().unwrap();
    for out in ["out.jsonl", "out.pftrace", "out.json"] {
        let o = usertrace(&["convert", input, dir.join(out).to_str().unwrap()]);
        assert!(o.status.success(), "{out}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(o.stderr.is_empty(), "{out}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let stdout = usertrace(&["convert", input, "-", "--format", "json"]).stdout;
    assert_eq!(std::fs::read(dir.join("out.jsonl")).unwrap(), stdout);
    assert!(!std::fs::read(dir.join("out.pftrace")).unwrap().is_empty());

    let chrome: Value = serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap();
    let events = chrome["traceEvents"].as_array().unwrap();
    let instants: Vec<_> = events.iter().filter(|e| e["ph"] == "i").map(|e| (e["name"].as_str().unwrap(), e["pid"].as_u64().unwrap())).collect();
    assert_eq!(
        instants,
        [
            ("ut_fix_all", 77),
            ("ut_fix_ren", 79),
            ("ut_fix_ren", 79),
            ("ut_fix_ren", 79),
            ("UsertraceEhStatic:Every", 81),
            ("UsertraceEhDynamic:Dynamic", 81)
        ]
    );
    let span = events.iter().find(|e| e["ph"] == "X").unwrap();
    assert_eq!((&span["name"], &span["ts"], &span["dur"]), (&json!("UsertraceEhStatic:Work"), &json!(9255518.948), &json!(139.769)));
    // The thread's last name is the one after the exec.
    assert!(events.iter().any(|e| e["name"] == "thread_name" && e["tid"] == 79 && e["args"]["name"] == "ut-new-79"));
    assert_eq!(support::entries(&dir), ["out.json", "out.jsonl", "out.pftrace"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn report_counts_the_archives_events_by_name() {
    let fixture = fixture();
    let o = usertrace(&["report", fixture.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["duration_ns"], 1461184274);
    let counts: Vec<_> = report["events"].as_array().unwrap().iter().map(|e| (e["name"].as_str().unwrap(), e["count"].as_u64().unwrap())).collect();
    assert_eq!(
        counts,
        [("UsertraceEhDynamic:Dynamic", 1), ("UsertraceEhStatic:Every", 1), ("UsertraceEhStatic:Work", 2), ("ut_fix_all", 1), ("ut_fix_ren", 3)]
    );
    assert_eq!(
        report["spans"],
        json!([{"name": "UsertraceEhStatic:Work", "count": 1, "unfinished": 0, "p50_ns": 139769, "p90_ns": 139769, "p99_ns": 139769,
                "max_ns": 139769, "histogram": [{"from_ns": 131072, "count": 1}]}])
    );
    assert_eq!(
        report["processes"],
        json!([{"pid": 77, "name": "ut_emit", "events": 1, "spans": 0}, {"pid": 79, "name": "ut_emit", "events": 3, "spans": 0},
               {"pid": 81, "name": "eventheader_producer", "events": 4, "spans": 1}])
    );
    assert_eq!((&report["lost_events"], &report["lost_task_records"], &report["orphan_ends"]), (&json!(0), &json!(0), &json!(0)));
}

#[test]
fn export_sends_the_archives_events_to_an_endpoint() {
    let server = std::sync::Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let url = format!("http://{}", server.server_addr().to_ip().unwrap());
    let paths = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (s, seen) = (server.clone(), paths.clone());
    let stub = std::thread::spawn(move || {
        for mut request in s.incoming_requests() {
            let _ = request.as_reader().read_to_end(&mut Vec::new());
            seen.lock().unwrap().push(request.url().to_owned());
            let _ = request.respond(tiny_http::Response::empty(200));
        }
    });
    let fixture = fixture();
    let o = support::usertrace_without_otel_env(&["export", fixture.to_str().unwrap(), "--otlp", &url, "--timeout", "5"], &[]);
    server.unblock();
    let _ = stub.join();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("8 events exported (1 spans, 6 log records), 0 dropped"), "{stderr}");
    let mut paths = paths.lock().unwrap().clone();
    paths.sort();
    assert_eq!(paths, ["/v1/logs", "/v1/traces"]);
}

/// The fixture with the u64 at `at` set to `value`.
fn with_u64(at: usize, value: u64) -> Vec<u8> {
    let mut bytes = std::fs::read(fixture()).unwrap();
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
    bytes
}

/// Runs convert (to each format), report and export on `bytes` as a file
/// named `case.data`: each must exit 1 with a line naming the file and
/// holding `says`, and never panic; convert and report write no file and
/// print nothing. Returns what export said: it streams, so it may have
/// sent what came before the error.
fn refused_everywhere(case: &str, bytes: &[u8], says: &[&str]) -> String {
    let dir = support::scratch(&format!("archive-{case}"));
    let input = dir.join("case.data");
    std::fs::write(&input, bytes).unwrap();
    let input = input.to_str().unwrap();
    let check = |command: &str, o: &Output| {
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{case}: {command}: {stderr}");
        assert!(!stderr.contains("panicked"), "{case}: {command}: {stderr}");
        let prefix = format!("usertrace {command}: {input}: ");
        let line = stderr.lines().find(|l| l.starts_with(&prefix));
        let line = line.unwrap_or_else(|| panic!("{case}: {command}: no line names the file: {stderr}"));
        for says in says {
            assert!(line.contains(says), "{case}: {command}: wanted {says:?} in {stderr}");
        }
        stderr.into_owned()
    };
    for out in ["out.jsonl", "out.pftrace", "out.json"] {
        let o = usertrace(&["convert", input, dir.join(out).to_str().unwrap()]);
        check("convert", &o);
        assert!(o.stdout.is_empty(), "{case}: {out}");
    }
    let o = usertrace(&["convert", input, "-", "--format", "json"]);
    check("convert", &o);
    assert!(o.stdout.is_empty(), "{case}: convert to standard output: {}", String::from_utf8_lossy(&o.stdout));
    let o = usertrace(&["report", input, "--format", "json"]);
    check("report", &o);
    assert!(o.stdout.is_empty(), "{case}: report");
    // Port 9 refuses: nothing may be sent from a file that cannot be read.
    let o = support::usertrace_without_otel_env(&["export", input, "--otlp", "http://127.0.0.1:9", "--timeout", "1"], &[]);
    let export = check("export", &o);
    assert_eq!(support::entries(&dir), ["case.data"], "{case}");
    std::fs::remove_dir_all(dir).unwrap();
    export
}

const BROKEN: &[&str] = &["the perf.data file is broken", "it is cut short or its sizes are wrong"];

#[test]
fn an_archive_cut_short_is_named_and_leaves_no_file() {
    let whole = std::fs::read(fixture()).unwrap();
    assert_eq!(whole.len(), 32799);
    // Inside the magic's header, after it, in the data, in the attrs and
    // feature sections at the end, and one record short of the end.
    for len in [8, 16, 100, 1000, whole.len() / 2, 25040, whole.len() - 100, whole.len() - 5, whole.len() - 1] {
        let export = refused_everywhere(&format!("cut-{len}"), &whole[..len], BROKEN);
        assert!(!export.contains("OTLP:"), "nothing read, nothing to send: {export}");
    }
}

#[test]
fn an_archive_whose_header_sizes_lie_is_named_and_leaves_no_file() {
    let len = std::fs::read(fixture()).unwrap().len() as u64;
    // perf.data's header: magic, header size (8), attr_size (16), then
    // {offset, size} of attrs (24), data (40) and event_types (56).
    for (case, at, value) in [
        ("attr-size-zero", 16, 0),
        ("attr-size-huge", 16, u64::MAX),
        ("attrs-offset-huge", 24, u64::MAX),
        ("attrs-offset-past-the-end", 24, len + 1),
        ("attrs-size-huge", 32, u64::MAX),
        ("attrs-size-past-the-end", 32, len),
        ("data-offset-huge", 40, u64::MAX),
        ("data-offset-past-the-end", 40, len + 1),
        ("data-offset-zero", 40, 0),
        ("data-size-huge", 48, u64::MAX),
        ("data-size-past-the-end", 48, len),
        ("data-size-one", 48, 1),
        ("event-types-offset-huge", 56, u64::MAX),
        ("event-types-size-huge", 64, u64::MAX),
    ] {
        let export = refused_everywhere(case, &with_u64(at, value), BROKEN);
        assert!(!export.contains("OTLP:"), "{case}: nothing read, nothing to send: {export}");
    }
}

#[test]
fn a_record_whose_size_lies_ends_the_file_with_nothing_written() {
    // The last sample of the data section (at byte 24904), after rounds
    // the reader has already released: its u16 size at 6 made 0 (no
    // record is that short) or 65535 (past the end of the data).
    let whole = std::fs::read(fixture()).unwrap();
    assert_eq!(&whole[24904..24912], [9, 0, 0, 0, 2, 0, 128, 0], "a PERF_RECORD_SAMPLE of 128 bytes");
    for size in [0u16, 65535] {
        let mut bytes = whole.clone();
        bytes[24910..24912].copy_from_slice(&size.to_le_bytes());
        let export = refused_everywhere(&format!("record-size-{size}"), &bytes, BROKEN);
        // Export streams: the 4 events of the rounds before the record were
        // read and queued (and not taken: port 9 refuses), then it stopped.
        assert!(export.contains("OTLP: 0 events exported (0 spans, 0 log records), "), "{export}");
        let count = |word: &str| -> u64 {
            let before = &export[..export.find(&format!(" {word}")).unwrap()];
            before[before.rfind(' ').unwrap() + 1..].parse().unwrap()
        };
        assert_eq!(count("dropped") + count("failed;"), 4, "{export}");
        assert!(export.contains("nothing after it was read"), "{export}");
    }
}

#[test]
fn a_non_ascii_field_declaration_is_a_broken_file_not_a_panic() {
    // `field:u32 pid;` of the usertrace:process format the file carries,
    // made `field:u32 p\u{c7};`: Microsoft's field parser sliced a str
    // inside the character and the program panicked (exit 101), the first
    // crash the archive_reader fuzz target found.
    let mut bytes = std::fs::read(fixture()).unwrap();
    let at = bytes.windows(14).position(|w| w == b"field:u32 pid;").unwrap();
    bytes[at + 11..at + 13].copy_from_slice("\u{c7}".as_bytes());
    let export = refused_everywhere("non-ascii-field", &bytes, &[BROKEN[0], "tracepoint_perf could not parse it: "]);
    assert!(!export.contains("OTLP:"), "{export}");
}

#[test]
fn a_file_of_zeros_is_named_incomplete() {
    // What a recorder killed with SIGKILL leaves: perf.data's header is
    // written last, so the file is all zeros where it goes.
    let says = ["an incomplete perf.data file", "its recorder never wrote its header"];
    for (case, len) in [("zeros", 32799), ("eight-zeros", 8)] {
        let export = refused_everywhere(case, &vec![0u8; len], &says);
        assert!(!export.contains("OTLP:"), "{case}: {export}");
    }
}

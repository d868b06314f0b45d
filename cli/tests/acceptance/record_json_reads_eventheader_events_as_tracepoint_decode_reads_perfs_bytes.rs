//! EventHeader events written by Microsoft's own encoders (consumer's
//! `eventheader_producer`), read by two recorders attached at once:
//! `usertrace record --format json`, and `perf record` (Debian's perf in the
//! guest), whose raw sample bytes perf's own Python scripting hands out.
//! Every field our JSON line gives is what `tracepoint_decode`'s own JSON
//! gives for perf's bytes of the same event, and no field is missing:
//! integers past 2^63, UTF-16 and UTF-32 strings, a 128-bit value, nested
//! structs and arrays included. The process is named as perf names it.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{Map, Value};
// library_json takes these from its parent.
use usertrace_consumer::{EventFormat, FieldValue};

use crate::support::*;

#[path = "../../../consumer/tests/support/eventheader_json.rs"]
// Only `library_fields` is used here: the rest compares the consumer's own
// values, where this test has JSON lines.
#[allow(dead_code)]
mod library_json;

/// The two tracepoints the producer registers, and the patterns that
/// select them by provider, level and keyword.
const TRACEPOINTS: [&str; 2] = ["UsertraceEhStatic_L4K1", "UsertraceEhDynamic_L5K2"];
const PATTERNS: [&str; 2] = ["UsertraceEhStatic:L4K1", "UsertraceEhDynamic:L5K2"];

/// perf's Python handler for events it has no handler of its own for:
/// each sample's event name and its raw bytes (trace_entry and payload), hex.
const RAW_SCRIPT: &str = "\
def trace_unhandled(event_name, context, event_fields_dict, perf_sample_dict):
    print(event_name, perf_sample_dict['raw_buf'].hex())
";

fn eventheader_producer() -> std::path::PathBuf {
    let path = usertrace().parent().unwrap().join("examples/eventheader_producer");
    assert!(path.exists(), "{} is missing: build the consumer's examples (cargo build --examples -p usertrace-consumer)", path.display());
    path
}

#[test]
fn record_json_reads_eventheader_events_as_tracepoint_decode_reads_perfs_bytes() {
    let name = unique("eh");
    let mut producer = Command::new(eventheader_producer())
        .arg("--on-stdin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    BufReader::new(producer.stdout.take().unwrap()).read_line(&mut ready).unwrap();
    let pid: u32 = ready.trim().strip_prefix("ready ").unwrap_or_else(|| panic!("producer said {ready:?}")).parse().unwrap();
    // The formats, read while the tracepoints exist: the library needs the
    // tracepoint's name and where its header starts.
    let formats: Vec<EventFormat> = TRACEPOINTS
        .iter()
        .map(|t| {
            let text = std::fs::read_to_string(format!("/sys/kernel/tracing/events/user_events/{t}/format")).unwrap();
            EventFormat::parse("user_events", &text).unwrap()
        })
        .collect();

    let json = format!("/tmp/{name}.json");
    let mut ours = Command::new(usertrace())
        .args(["record", "-e", PATTERNS[0], "-e", PATTERNS[1], "--format", "json", "-o", &json])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(ours.stderr.take().unwrap());
    // One line per tracepoint attached, in no set order.
    let mut attached = String::new();
    for _ in TRACEPOINTS {
        stderr.read_line(&mut attached).unwrap();
    }
    for t in TRACEPOINTS {
        assert!(attached.contains(&format!("attached user_events:{t}\n")), "usertrace record: {attached}");
    }

    let data = format!("/tmp/{name}.data");
    let events: Vec<String> = TRACEPOINTS.iter().map(|t| format!("user_events:{t}")).collect();
    record_beside_perf(&mut ours, &mut producer, &events, &data);

    let script_path = format!("/tmp/{name}.py");
    std::fs::write(&script_path, RAW_SCRIPT).unwrap();
    let script = Command::new(perf()).args(["script", "-i", &data, "-s", &script_path]).output().unwrap();
    let text = String::from_utf8_lossy(&script.stdout).into_owned();
    let recorded = std::fs::read_to_string(&json).unwrap();
    for f in [&data, &json, &script_path] {
        let _ = std::fs::remove_file(f);
    }

    // perf names a handler `system__event`.
    let perf_events: Vec<(usize, Vec<u8>)> = text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter_map(|(event, hex)| {
            let which = TRACEPOINTS.iter().position(|t| event == format!("user_events__{t}"))?;
            Some((which, hex_bytes(hex)))
        })
        .collect();
    let our_events: Vec<Value> = recorded
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "event")
        .collect();
    // Each event by its own name, `Provider:Event` as Microsoft's decoders
    // name it, with the tracepoint it came through beside it.
    let names = |e: &Value| (e["event"].as_str().unwrap().to_owned(), e["tracepoint"].as_str().unwrap().to_owned());
    assert_eq!(
        our_events.iter().map(names).collect::<Vec<_>>(),
        [
            ("UsertraceEhStatic:Every", "UsertraceEhStatic_L4K1"),
            ("UsertraceEhStatic:Work", "UsertraceEhStatic_L4K1"),
            ("UsertraceEhStatic:Work", "UsertraceEhStatic_L4K1"),
            ("UsertraceEhDynamic:Dynamic", "UsertraceEhDynamic_L5K2"),
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned())),
        "{recorded}"
    );
    assert_eq!(
        perf_events.iter().map(|(which, _)| TRACEPOINTS[*which]).collect::<Vec<_>>(),
        our_events.iter().map(|e| e["tracepoint"].as_str().unwrap()).collect::<Vec<_>>(),
        "perf script:\n{text}"
    );

    for (ours, (which, raw)) in our_events.iter().zip(&perf_events) {
        assert_eq!((ours["pid"].as_u64(), ours["tid"].as_u64()), (Some(pid.into()), Some(pid.into())), "{ours}");
        assert_eq!((ours["comm"].as_str(), ours["process"].as_str()), (Some("eventheader_pro"), Some("eventheader_pro")));
        let fields = ours["fields"].as_object().unwrap();
        let library = library_json::library_fields(&formats[*which], raw);
        assert_same_fields(fields, &library);
    }
    // The values themselves, beyond agreeing: a few the hard cases hang on.
    let every = &our_events[0]["fields"];
    assert_eq!(every["past63"].as_u64(), Some(9_223_372_036_854_775_813));
    assert_eq!(every["u64"].as_u64(), Some(u64::MAX - 1));
    assert_eq!(every["i64"].as_i64(), Some(i64::MIN));
    assert_eq!(every["s16"], "wörld €");
    assert_eq!(every["z32"], "a😀");
    // Arrays and structs nest as the producer wrote them.
    assert_eq!(every["pt"]["inner"]["name"], "wörld €");
    assert_eq!((&every["arr"], &every["neg"]), (&serde_json::json!([1, 2, 3]), &serde_json::json!([-1, -2])));
    assert_eq!(every["bin"], "dead");
    let dynamic = &our_events[3]["fields"];
    assert_eq!(dynamic["v128"], "00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F");
    assert_eq!(dynamic["outer"]["deep"]["leaf"], "end");
    assert_eq!(dynamic["names"], serde_json::json!(["alpha", "beta"]));
    // The activity's start and stop carry one span id.
    assert_eq!(our_events[1]["fields"]["span_begin"], our_events[2]["fields"]["span_end"]);
    assert_eq!(our_events[1]["fields"]["span_begin"].as_u64(), Some(0x0808_0808_0808_0808));
}

fn hex_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect()
}

/// Each field the library names has the value it gives, and ours has no
/// other field but the span id the timeline adds to a start or stop.
fn assert_same_fields(ours: &Map<String, Value>, library: &[(String, Value)]) {
    for (name, theirs) in library {
        let mine = ours.get(name).unwrap_or_else(|| panic!("our JSON lacks {name} ({theirs}): {ours:?}"));
        assert!(same(mine, theirs), "{name}: ours {mine}, tracepoint_decode {theirs}");
    }
    let extra: Vec<&String> =
        ours.keys().filter(|k| !library.iter().any(|(n, _)| n == *k) && *k != "span_begin" && *k != "span_end").collect();
    assert!(extra.is_empty(), "fields tracepoint_decode does not give: {extra:?}");
}

/// Whether our JSON value says what the library's JSON value says: arrays
/// element by element, objects member by member.
fn same(ours: &Value, theirs: &Value) -> bool {
    match (ours, theirs) {
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b)),
        (Value::Object(a), Value::Object(b)) => a.len() == b.len() && a.iter().all(|(k, a)| b.get(k).is_some_and(|b| same(a, b))),
        (Value::Number(a), Value::Number(b)) => match (a.as_u64(), a.as_i64()) {
            (Some(a), _) => b.as_u64() == Some(a),
            (None, Some(a)) => b.as_i64() == Some(a),
            _ => a.as_f64() == b.as_f64() || a.as_f64().map(|a| a as f32) == b.as_f64().map(|b| b as f32),
        },
        // The library gives keyword and tag as hex strings.
        (Value::Number(a), Value::String(b)) => a.as_u64().is_some_and(|a| *b == format!("0x{a:X}")),
        // Our bytes are lowercase hex; the library's hex bytes, spaced capitals.
        (Value::String(a), Value::String(b)) if a != b => {
            a.len() % 2 == 0
                && a.bytes().all(|c| c.is_ascii_hexdigit())
                && *b == (0..a.len()).step_by(2).map(|i| a[i..i + 2].to_uppercase()).collect::<Vec<_>>().join(" ")
        }
        (a, b) => a == b,
    }
}

//! `usertrace record --call-graph fp --call-graph-spans` on a Rust
//! program: each span begin carries its user stack, named from the
//! program's DWARF with Rust's names demangled, through the forked child
//! too (which inherits its parent's mappings); the program's other events
//! carry none. The perf.data file of the same session gives the same
//! stacks to `convert`, `perf script` walks them as its own, and in the
//! Perfetto trace `convert` makes of it, read with Perfetto's own protos,
//! each span's slice has its stack. `report`, of either file, lists under
//! each span name the stack its one begin came from, text and JSON.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

use crate::support::*;

/// The event lines of a JSON-lines file, by time.
fn events(path: &std::path::Path) -> BTreeMap<u64, Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "event")
        .map(|v| (v["time_ns"].as_u64().unwrap(), v))
        .collect()
}

fn functions(event: &Value) -> Vec<&str> {
    event["stack"].as_array().map_or(Vec::new(), |s| s.iter().map(|f| f["function"].as_str().unwrap_or("?")).collect())
}

/// Checks `usertrace report` of `recording`: under each of `spans`, one
/// begin, from a stack in which `ut_emit::spans` is called by
/// `ut_emit::main`, innermost first in the text as in the JSON, the text
/// starting at the caller of usertrace's own frames.
fn report_names_each_begin_stack(recording: &std::path::Path, spans: &[String]) {
    let path = recording.to_str().unwrap();
    let json: Value = serde_json::from_str(&usertrace_ok(&["report", "--format", "json", path])).unwrap();
    let text = usertrace_ok(&["report", path]);
    for span in spans {
        let stats = json["spans"].as_array().unwrap().iter().find(|s| s["name"] == span.as_str()).unwrap_or_else(|| panic!("no span {span} in {json}"));
        let stacks = stats["begin_stacks"].as_array().unwrap_or_else(|| panic!("no begin_stacks: {stats}"));
        assert_eq!((stacks.len(), &stacks[0]["count"], &stats["begins_from_other_stacks"]), (1, &Value::from(1), &Value::from(0)), "{stats}");
        let names: Vec<&str> = stacks[0]["frames"].as_array().unwrap().iter().map(|f| f["function"].as_str().unwrap_or("?")).collect();
        let spans_at = names.iter().position(|f| f.ends_with("ut_emit::spans")).unwrap_or_else(|| panic!("no ut_emit::spans in {names:?}"));
        assert!(names[spans_at..].iter().any(|f| f.ends_with("ut_emit::main")), "main does not call spans in {names:?}");

        // The text: the span's lines, up to the blank line before the next.
        let block: Vec<&str> = text.lines().skip_while(|l| !l.starts_with(&format!("span {span}:"))).take_while(|l| !l.is_empty()).collect();
        let frames: Vec<&str> = block.iter().skip_while(|l| **l != "    1 of 1 begins:").skip(1).map(|l| l.trim()).collect();
        let (spans_line, main_line) = (
            frames.iter().position(|l| l.contains("ut_emit::spans (") && l.contains("ut_emit.rs:")),
            frames.iter().position(|l| l.contains("ut_emit::main")),
        );
        // usertrace's own frames (writev to begin_span) are left out.
        let emit_left_out = frames.first().is_some_and(|l| l.starts_with("... ") && l.ends_with(" frames in usertrace"));
        assert!(
            block.contains(&"  began at (innermost frame first)") && emit_left_out && matches!((spans_line, main_line), (Some(s), Some(m)) if s < m),
            "report of {path}, span {span}: spans above main:\n{}",
            block.join("\n")
        );
    }
}

#[test]
fn span_begins_carry_their_named_stacks_live_in_perf_data_and_converted() {
    let name = unique("cg");
    let dir = std::env::temp_dir().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    let (jsonl, data, converted, pftrace) = (dir.join("rec.jsonl"), dir.join("rec.data"), dir.join("conv.jsonl"), dir.join("rec.pftrace"));
    let out = Command::new(usertrace())
        .args(["record", "--call-graph", "fp", "--call-graph-spans", "-e", &format!("{name}_*"), "-o"])
        .arg(&jsonl)
        .arg("-o")
        .arg(&data)
        .arg("--")
        .arg(ut_emit())
        .args(["spans", &name])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let live = events(&jsonl);
    let begins = ["outer", "inner", "handoff", "orphaned"].map(|s| format!("{name}_{s}"));
    let mut seen = Vec::new();
    for event in live.values() {
        let event_name = event["event"].as_str().unwrap();
        if !begins.iter().any(|b| b == event_name) {
            assert!(event.get("stack").is_none(), "not a span begin, yet a stack: {event}");
            continue;
        }
        seen.push(event_name.to_owned());
        let names = functions(event);
        let spans = names.iter().position(|f| f.ends_with("ut_emit::spans")).unwrap_or_else(|| panic!("no ut_emit::spans frame in {names:?}"));
        assert!(names[spans..].iter().any(|f| f.ends_with("ut_emit::main")), "main does not call spans in {names:?}");
        let frame = &event["stack"][spans];
        assert!(frame["file"].as_str().is_some_and(|f| f.ends_with("ut_emit.rs")) && frame["line"].as_u64().is_some(), "{frame}");
        assert!(frame["module"].as_str().is_some_and(|m| m.ends_with("/ut_emit")), "{frame}");
    }
    seen.sort();
    let mut want = begins.to_vec();
    want.sort();
    assert_eq!(seen, want, "each span begin once, the forked child's orphaned one included");

    report_names_each_begin_stack(&jsonl, &begins);
    report_names_each_begin_stack(&data, &begins);

    // The archive of the same session, named again by convert.
    usertrace_ok(&["convert", data.to_str().unwrap(), converted.to_str().unwrap()]);
    let again = events(&converted);
    for (time, event) in &live {
        assert_eq!(again.get(time).map(|e| &e["stack"]), Some(&event["stack"]), "at {time}: {event}");
    }

    // Perfetto: each span's slice has its begin's stack, outermost first.
    usertrace_ok(&["convert", data.to_str().unwrap(), pftrace.to_str().unwrap()]);
    let out = Command::new(perfetto_python()).arg(pftrace_checker()).arg(&pftrace).output().unwrap();
    assert!(out.status.success(), "check_pftrace: {}", String::from_utf8_lossy(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    let slices = summary["slices"].as_array().unwrap();
    for begin in &begins {
        let slice = slices.iter().find(|s| s["name"] == begin.as_str()).unwrap_or_else(|| panic!("no slice {begin} in {slices:?}"));
        let frames: Vec<&str> = slice["callstack"].as_array().unwrap_or_else(|| panic!("{slice}")).iter().map(|f| f["function"].as_str().unwrap()).collect();
        let main = frames.iter().position(|f| f.ends_with("ut_emit::main")).unwrap_or_else(|| panic!("{frames:?}"));
        assert!(frames[main..].iter().any(|f| f.ends_with("ut_emit::spans")), "outermost first: main, then spans: {frames:?}");
    }

    // perf walks the same stacks from the same file.
    let script = Command::new(perf()).args(["script", "-i"]).arg(&data).output().unwrap();
    assert!(script.status.success(), "{}", String::from_utf8_lossy(&script.stderr));
    let text = String::from_utf8_lossy(&script.stdout);
    let outer = text.split("\n\n").find(|block| block.contains(&format!("{name}_outer:"))).unwrap_or_else(|| panic!("no outer in {text}"));
    assert!(outer.lines().any(|l| l.contains("ut_emit") && l.contains("spans")), "perf script's walk of outer: {outer}");
    std::fs::remove_dir_all(dir).unwrap();
}

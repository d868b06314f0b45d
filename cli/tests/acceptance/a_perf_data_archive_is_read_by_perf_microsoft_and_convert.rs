//! `usertrace record -o FILE.data` writes perf.data. Three readers that
//! did not write it read it: `perf script` (Debian's perf in the guest),
//! Microsoft's `decode_perf_to_json` (the example of the tracepoint_perf
//! crate, built by harness/tracepoint-perf-examples), and our own
//! `convert`, which turns it into the very lines a live recording of the
//! same events printed. `convert` also reads `perf record`'s own file, and
//! calls the file a killed recorder leaves incomplete.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::support::*;

/// A scratch folder of this test's own under /tmp, the guest's writable place.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(format!("/tmp/{name}.dir"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `usertrace record ARGS` with stderr piped, once it says it attached.
fn recorder_attached(args: &[&str]) -> Child {
    let mut child = Command::new(usertrace()).arg("record").args(args).stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.contains("attached"), "usertrace record {args:?}: {line}");
    // Keep draining its stderr, so that it never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    child
}

/// `ut_emit all NAME --on-stdin`, once registered.
fn all_producer(name: &str) -> Child {
    let mut producer = Command::new(ut_emit()).args(["all", name, "--on-stdin"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut ready = String::new();
    BufReader::new(producer.stdout.take().unwrap()).read_line(&mut ready).unwrap();
    assert!(ready.starts_with("ready"), "{ready}");
    producer
}

fn perf_script(data: &Path) -> (String, String) {
    let out = Command::new(perf()).args(["script", "-i"]).arg(data).output().unwrap();
    assert!(out.status.success(), "perf script: {}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// One of Microsoft's tools (the tracepoint_perf crate's examples).
fn microsoft_tool(name: &str) -> PathBuf {
    let folder = std::env::var("USERTRACE_TRACEPOINT_PERF_EXAMPLES").unwrap_or_default();
    let tool = Path::new(&folder).join(name);
    assert!(tool.exists(), "{} is missing: run harness/tracepoint-perf-examples (USERTRACE_TRACEPOINT_PERF_EXAMPLES={folder:?})", tool.display());
    tool
}

/// Microsoft's decoder's JSON of `data`: its events, in the file's order.
fn decode_perf_to_json(data: &Path) -> Vec<Value> {
    let out = Command::new(microsoft_tool("decode_perf_to_json")).arg(data).output().unwrap();
    assert!(out.status.success(), "decode_perf_to_json: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let json: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).unwrap_or_else(|e| panic!("{e}: {text}"));
    json.as_object().unwrap().values().next().unwrap().as_array().unwrap().clone()
}

/// The JSON lines `convert` makes of `input`.
fn converted(input: &Path) -> Vec<String> {
    usertrace_ok(&["convert", input.to_str().unwrap(), "-", "--format", "json"]).lines().map(str::to_owned).collect()
}

#[test]
fn perf_script_reads_every_field_and_every_name_across_exec_late_attach_and_exit() {
    let dir = scratch(&unique("archive_perf"));
    let (all, renamed) = (unique("arch_all"), unique("arch_ren"));
    let data = dir.join("trace.data");
    // Neither event exists when recording starts: both are attached late.
    let script = format!("{0} all {1} >/dev/null && {0} rename {2} >/dev/null", ut_emit().display(), all, renamed);
    let out = Command::new(usertrace())
        .args(["record", "-e", &all, "-e", &renamed, "-o", data.to_str().unwrap(), "--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "only the finished archive is left");

    let (text, errors) = perf_script(&data);
    assert!(!errors.contains("Error") && !errors.contains("arning"), "perf script complained: {errors}");
    // With the archive alone, the recorder only counts events as they pass:
    // its summary counts what the file holds, one `all` and three stages.
    let in_file = text.lines().filter(|l| l.contains(&format!("user_events:{all}:")) || l.contains(&format!("user_events:{renamed}:"))).count();
    assert_eq!(in_file, 4, "{text}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("usertrace record: 4 events, 0 lost"), "{stderr}");
    let line = text.lines().find(|l| l.contains(&format!("user_events:{all}:"))).unwrap_or_else(|| panic!("no {all}:\n{text}"));
    // The process exited before recording ended; it keeps its name.
    assert!(line.trim_start().starts_with("ut_emit "), "{line}");
    let fields = perf_fields(line.split_once(&format!("{all}:")).unwrap().1, &ALL_FIELDS);
    // perf prints s8/s16 without their sign, floats as their IEEE bits,
    // a bool as 0/1 and a __rel_loc u8[] as its location word (length 4).
    let expected: BTreeMap<String, String> = [
        ("u8v", "250".to_owned()),
        ("u16v", "65000".into()),
        ("u32v", "4000000000".into()),
        ("u64v", (u64::MAX - 1).to_string()),
        ("i8v", (-100i8 as u8).to_string()),
        ("i16v", (-30000i16 as u16).to_string()),
        ("i32v", "-2000000000".into()),
        ("i64v", (i64::MIN + 1).to_string()),
        ("flag", "1".into()),
        ("f32v", 1.5f32.to_bits().to_string()),
        ("f64v", (-2.25f64).to_bits().to_string()),
        ("arr", "abc".into()),
        ("msg", "héllo wörld".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    for (field, value) in &expected {
        assert_eq!(fields.get(field), Some(value), "perf's {field} in {line}");
    }
    assert_eq!(fields["blob"].parse::<u32>().unwrap() >> 16, 4, "{line}");

    // One process, renamed, then exec'd: each event under the name it had.
    let stages: Vec<(String, String)> = text
        .lines()
        .filter(|l| l.contains(&format!("user_events:{renamed}:")))
        .map(|l| (l.split_whitespace().next().unwrap().to_owned(), l.split("stage=").nth(1).unwrap().split_whitespace().next().unwrap().to_owned()))
        .collect();
    let pid = text.lines().find(|l| l.contains(&format!("{renamed}:"))).unwrap().split_whitespace().nth(1).unwrap().to_owned();
    assert_eq!(
        stages,
        [("ut_emit".to_owned(), "1".to_owned()), ("ut_renamed".into(), "2".into()), (format!("ut-new-{pid}"), "3".into())],
        "{text}"
    );
    // What perf.data has no place for, as events perf shows.
    let described: Vec<&str> = text.lines().filter(|l| l.contains("usertrace:process:") && l.contains(&format!("pid={pid} "))).collect();
    assert!(described.iter().any(|l| l.contains(&format!("command_line=[\"/tmp/ut-new-{pid}\",\"exec-target\",\"{renamed}\"]"))), "{text}");
    assert!(described.iter().all(|l| l.contains(&format!("executable={}", ut_emit().display()))), "{described:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_archive_converts_to_the_lines_that_the_same_session_printed_live() {
    let dir = scratch(&unique("archive_live"));
    let name = unique("arch_live");
    let (live, data) = (dir.join("live.jsonl"), dir.join("trace.data"));
    // One session, two outputs: the archive and the live JSON lines. A
    // rename and an exec on the way: names and descriptions change.
    let out = Command::new(usertrace())
        .args(["record", "-e", &name, "-o", data.to_str().unwrap(), "-o", live.to_str().unwrap(), "--"])
        .arg(ut_emit())
        .args(["rename", &name])
        .output()
        .unwrap();
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));

    let live_lines: Vec<String> = std::fs::read_to_string(&live).unwrap().lines().map(str::to_owned).collect();
    // The process's own lines, leaving out the exits of its other threads:
    // the producer library's registrar thread ends at the exec and at the
    // exit, and the last one is told only if the kernel ends it before the
    // main thread (a process's threads are told while it is described).
    let parsed: Vec<Value> = live_lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> =
        parsed.iter().filter(|v| v["type"] != "exit" || v["tid"] == v["pid"]).map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["clock", "process", "event", "event", "process", "event", "exit"], "{live_lines:?}");
    // The clock line too: the archive's CLOCK_DATA is the same reading.
    assert_eq!(converted(&data), live_lines, "the archive, converted, is the live recording line for line");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn perf_records_own_file_converts_to_the_events_usertrace_recorded() {
    let dir = scratch(&unique("archive_theirs"));
    let name = unique("arch_theirs");
    let (live, data) = (dir.join("live.jsonl"), dir.join("perf.data"));
    let mut producer = all_producer(&name);
    let mut ours = recorder_attached(&["-e", &name, "-o", live.to_str().unwrap()]);
    record_beside_perf(&mut ours, &mut producer, &[format!("user_events:{name}")], data.to_str().unwrap());

    // perf recorded no namespaces and no executables, and its times are
    // perf's own clock (`perf record -k` not given): the rest is the same.
    let events = |lines: Vec<String>| -> Vec<Value> {
        lines
            .iter()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["type"] == "event")
            .map(|mut v| {
                let line = v.as_object_mut().unwrap();
                line.remove("namespaces");
                line.remove("time_ns");
                v
            })
            .collect()
    };
    let ours = events(std::fs::read_to_string(&live).unwrap().lines().map(str::to_owned).collect());
    let theirs = events(converted(&data));
    assert_eq!(ours.len(), 1, "{ours:?}");
    assert_eq!(theirs, ours);
    assert_eq!(theirs[0]["fields"]["msg"], "héllo wörld");
    assert_eq!(theirs[0]["fields"]["u64v"].as_u64(), Some(u64::MAX - 1));
    // Its process, named by the executable perf saw mapped (the file has
    // no command lines). (Our own live line may lack it: the producer
    // exits right after its one event, often before /proc is read.)
    let pid = &ours[0]["pid"];
    let lines: Vec<Value> = converted(&data).iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    let theirs = lines.iter().find(|v| v["type"] == "process" && &v["pid"] == pid).unwrap_or_else(|| panic!("no process line of {pid}: {lines:?}"));
    assert_eq!(theirs["executable"].as_str(), Some(ut_emit().to_str().unwrap()), "{theirs}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn perf_records_own_file_names_a_process_by_its_executable_at_its_start_and_after_its_exec() {
    let dir = scratch(&unique("archive_theirs_exec"));
    let name = unique("arch_exec");
    let data = dir.join("perf.data");
    // The producer registers, then waits for a tracer: emit, rename, exec
    // (the new program is mapped only after the kernel announces the exec),
    // emit.
    let mut producer = Command::new(ut_emit()).args(["rename", &name, "--on-stdin"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut ready = String::new();
    BufReader::new(producer.stdout.take().unwrap()).read_line(&mut ready).unwrap();
    assert!(ready.starts_with("ready"), "{ready}");
    let event = format!("user_events:{name}");
    let mut perf = Command::new(perf())
        .args(perf_record_args(data.to_str().unwrap()))
        .args(["-e", &event])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // perf enables its event only after synthesizing /proc (slow under TCG).
    std::thread::sleep(std::time::Duration::from_secs(8));
    std::io::Write::write_all(&mut producer.stdin.take().unwrap(), b"go\n").unwrap();
    assert!(producer.wait().unwrap().success());
    std::thread::sleep(std::time::Duration::from_secs(1));
    let _ = Command::new("kill").args(["-INT", &perf.id().to_string()]).status();
    let _ = perf.wait();

    let lines: Vec<Value> = converted(&data).iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    let stages: Vec<u64> = lines.iter().filter(|l| l["type"] == "event").map(|l| l["fields"]["stage"].as_u64().unwrap()).collect();
    assert_eq!(stages, [1, 2, 3], "{lines:?}");
    let pid = &lines.iter().find(|l| l["type"] == "event").unwrap()["pid"];
    // One line when the process is first seen, one at its exec: both name
    // the program perf saw mapped (the exec's symlink resolves to it).
    let executables: Vec<&Value> = lines.iter().filter(|l| l["type"] == "process" && &l["pid"] == pid).map(|l| &l["executable"]).collect();
    assert_eq!(executables, [ut_emit().to_str().unwrap(); 2], "{lines:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn perf_records_own_file_names_a_forked_child_by_its_parents_executable() {
    let dir = scratch(&unique("archive_theirs_fork"));
    let name = unique("arch_fork");
    let data = dir.join("perf.data");
    // The producer registers and waits for a tracer; then forks three
    // children, each emitting once. perf maps a program once, at its
    // start or exec: the children, which do not exec, have no mapping of
    // their own.
    // (Eight seconds after perf sets the enable bit: it enables its event
    // only once it has read /proc, slow under TCG.)
    let mut producer = Command::new(ut_emit()).args(["fork", &name, "3", "8000"]).stdout(Stdio::null()).spawn().unwrap();
    let format = format!("/sys/kernel/tracing/events/user_events/{name}/format");
    let registered = std::time::Instant::now();
    while !Path::new(&format).exists() {
        assert!(registered.elapsed() < std::time::Duration::from_secs(60), "{name} never registered");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let event = format!("user_events:{name}");
    let mut perf = Command::new(perf()).args(perf_record_args(data.to_str().unwrap())).args(["-e", &event]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    assert!(producer.wait().unwrap().success());
    std::thread::sleep(std::time::Duration::from_secs(1));
    let _ = Command::new("kill").args(["-INT", &perf.id().to_string()]).status();
    let _ = perf.wait();

    let lines: Vec<Value> = converted(&data).iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    let children: Vec<&Value> = lines.iter().filter(|l| l["type"] == "event").map(|l| &l["pid"]).collect();
    assert_eq!(children.len(), 3, "{lines:?}");
    for pid in children {
        let executables: Vec<&Value> = lines.iter().filter(|l| l["type"] == "process" && &l["pid"] == pid).map(|l| &l["executable"]).collect();
        assert_eq!(executables, [ut_emit().to_str().unwrap()], "child {pid}: {lines:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn microsofts_decoder_reads_the_archive_and_a_rewrite_by_microsofts_writer_converts_the_same() {
    let dir = scratch(&unique("archive_eh"));
    let data = dir.join("eh.data");
    let producer = usertrace().parent().unwrap().join("examples/eventheader_producer");
    let out = Command::new(usertrace())
        .args(["record", "-e", "UsertraceEhStatic:L4K1", "-e", "UsertraceEhDynamic:L5K2", "-o", data.to_str().unwrap(), "--"])
        .arg(&producer)
        .output()
        .unwrap();
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));

    let events = decode_perf_to_json(&data);
    let named = |n: &str| -> Vec<&Value> { events.iter().filter(|e| e["n"] == n).collect() };
    let every = named("UsertraceEhStatic:Every");
    assert_eq!(every.len(), 1, "{events:?}");
    let every = every[0];
    assert_eq!(every["u64"].as_u64(), Some(u64::MAX - 1));
    assert_eq!(every["past63"].as_u64(), Some((1 << 63) + 5));
    assert_eq!(every["i64"].as_i64(), Some(i64::MIN));
    assert_eq!(every["s16"], "wörld €");
    assert_eq!(every["s32"], "a😀");
    assert_eq!(every["arr"], serde_json::json!([1, 2, 3]));
    assert_eq!(every["pt"], serde_json::json!({"x": 7, "inner": {"y": -2, "name": "wörld €"}}));
    let work: Vec<u64> = named("UsertraceEhStatic:Work").iter().map(|e| e["meta"]["opcode"].as_u64().unwrap()).collect();
    assert_eq!(work, [1, 2], "the activity's start and stop");
    let dynamic = named("UsertraceEhDynamic:Dynamic");
    assert_eq!(dynamic.len(), 1, "{events:?}");
    assert_eq!(dynamic[0]["big"].as_u64(), Some(u64::MAX));
    assert_eq!(dynamic[0]["names"], serde_json::json!(["alpha", "beta"]));
    // Every event is under the producer's pid, as the kernel recorded it.
    let pids: Vec<u64> = events.iter().filter(|e| e.get("n").is_some()).map(|e| e["meta"]["pid"].as_u64().unwrap()).collect();
    assert!(pids.windows(2).all(|w| w[0] == w[1]), "{pids:?}");

    // And ours reads the same values from the same file.
    let lines = converted(&data);
    let every_line = lines.iter().find(|l| l.contains("\"past63\"")).unwrap_or_else(|| panic!("{lines:?}"));
    assert!(every_line.contains(&format!("\"past63\":{}", (1u64 << 63) + 5)), "{every_line}");
    assert!(every_line.contains("\"s16\":\"wörld €\""), "{every_line}");

    // Taken apart and put together again by Microsoft's reader and writer
    // (rewrite_perf writes FILE.rewrite), it still converts line for line.
    let rewrite = Command::new(microsoft_tool("rewrite_perf")).arg(&data).output().unwrap();
    assert!(rewrite.status.success(), "rewrite_perf: {}", String::from_utf8_lossy(&rewrite.stderr));
    assert_eq!(converted(&dir.join("eh.data.rewrite")), lines);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_recorder_killed_with_sigkill_leaves_a_file_that_convert_calls_incomplete() {
    let dir = scratch(&unique("archive_killed"));
    let data = dir.join("trace.data");
    let mut recorder = Command::new(usertrace())
        .args(["record", "-e", &format!("{}*", unique("arch_never")), "-o", data.to_str().unwrap()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(recorder.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.contains("attaching when one is registered"), "{line}");
    recorder.kill().unwrap();
    let _ = recorder.wait();

    assert!(!data.exists(), "an unfinished archive never takes the name asked for");
    let left: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(left.len(), 1, "{left:?}");
    let out = Command::new(usertrace()).args(["convert"]).arg(&left[0]).args([dir.join("out.jsonl").to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("an incomplete perf.data file") && stderr.contains("killed"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!dir.join("out.jsonl").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

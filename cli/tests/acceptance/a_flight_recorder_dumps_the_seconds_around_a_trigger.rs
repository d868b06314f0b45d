//! `usertrace record --flight-recorder`: the last seconds kept in memory,
//! written out as perf.data when a trigger asks. Each dump is read back by
//! `usertrace convert` (and `perf script`), and asserted as a user checks
//! it: which numbers it holds, under which names, and why it was written.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::*;

/// A scratch folder of this test's own under /tmp, the guest's writable place.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(format!("/tmp/{name}.dir"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A running `usertrace record`, its stderr gathered line by line.
pub(crate) struct Recorder {
    pub(crate) child: Child,
    stderr: Arc<Mutex<Vec<String>>>,
    /// Held while it runs: `usertrace dump` asks the one flight recorder
    /// running, so tests that run at once (the host's shared-memory suite
    /// runs them on several threads) take turns.
    _one_at_a_time: MutexGuard<'static, ()>,
}

static ONE_RECORDER_AT_A_TIME: Mutex<()> = Mutex::new(());

impl Recorder {
    /// Starts `usertrace record ARGS` and waits until it says `attached`.
    pub(crate) fn start(args: &[&str]) -> Recorder {
        // A test that failed while holding it poisons it; the next may run.
        let one_at_a_time = ONE_RECORDER_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut child = Command::new(usertrace()).arg("record").args(args).stderr(Stdio::piped()).spawn().unwrap();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let lines = stderr.clone();
        let pipe = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in pipe.lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        let recorder = Recorder { child, stderr, _one_at_a_time: one_at_a_time };
        recorder.wait_for("attached", 1);
        recorder
    }

    /// Waits until `count` lines of stderr contain `needle`; the last.
    pub(crate) fn wait_for(&self, needle: &str, count: usize) -> String {
        let start = Instant::now();
        loop {
            let lines = self.stderr.lock().unwrap().clone();
            let found: Vec<&String> = lines.iter().filter(|l| l.contains(needle)).collect();
            if found.len() >= count {
                return found[count - 1].clone();
            }
            assert!(start.elapsed() < Duration::from_secs(60), "no {count} lines with {needle:?} in:\n{}", lines.join("\n"));
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill(2) on our own child, not yet reaped.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, signal)
        };
    }

    /// Ctrl-C, then its exit status and stderr.
    pub(crate) fn stop(mut self) -> (ExitStatus, String) {
        self.signal(libc::SIGINT);
        let status = self.child.wait().unwrap();
        // The reader thread ends with the pipe.
        std::thread::sleep(Duration::from_millis(200));
        (status, self.stderr.lock().unwrap().join("\n"))
    }
}

/// A test that fails before it stops its recorder leaves none running: a
/// flight recorder left behind would answer the next test's `usertrace
/// dump` too, and fail it for another reason than its own.
impl Drop for Recorder {
    fn drop(&mut self) {
        // Already reaped after `stop`: then both calls fail, harmlessly.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A running `ut_emit`, killed when dropped: a test that fails before it
/// ends an endless producer must not leave one behind, holding the test
/// run's output open long after the run.
pub(crate) struct Producer(Child);

impl Producer {
    pub(crate) fn id(&self) -> u32 {
        self.0.id()
    }

    /// Waits for it to end by itself; whether it succeeded.
    pub(crate) fn finished_ok(mut self) -> bool {
        self.0.wait().unwrap().success()
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        // Already reaped after `finished_ok`: then both calls fail, harmlessly.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `ut_emit ARGS`, once it has registered (it then waits to be enabled).
pub(crate) fn producer(args: &[&str]) -> Producer {
    let mut child = Command::new(ut_emit()).args(args).stdout(Stdio::piped()).spawn().unwrap();
    let mut ready = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut ready).unwrap();
    assert!(ready.starts_with("ready"), "{ready}");
    Producer(child)
}

/// The dumps in `dir`, oldest first: `flight.YYYYMMDDHHMMSSmmm.data`.
pub(crate) fn dumps(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    found.sort();
    for path in &found {
        let name = path.file_name().unwrap().to_str().unwrap();
        let stamp = name.strip_prefix("flight.").and_then(|n| n.strip_suffix(".data")).unwrap_or_else(|| panic!("{name} is not a dump's name"));
        assert!(stamp.len() == 17 && stamp.bytes().all(|b| b.is_ascii_digit()), "{name}: not PATH.YYYYMMDDHHMMSSmmm.data");
    }
    found
}

/// The JSON lines `convert` makes of a dump: its events.
fn events(dump: &Path) -> Vec<Value> {
    usertrace_ok(&["convert", dump.to_str().unwrap(), "-", "--format", "json"])
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "event")
        .collect()
}

fn named<'a>(events: &'a [Value], name: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == name).collect()
}

/// Why the dump was written, as its `usertrace:dump` event says.
fn reason(events: &[Value]) -> String {
    let dump = named(events, "dump");
    assert_eq!(dump.len(), 1, "one usertrace:dump event in each dump: {events:?}");
    dump[0]["fields"]["reason"].as_str().unwrap().to_owned()
}

const SECOND: i64 = 1_000_000_000;

#[test]
fn a_trigger_dumps_a_contiguous_window_with_every_process_named_as_it_was() {
    let dir = scratch(&unique("flight_window"));
    let p = unique("fw");
    let (seq, trig, ren) = (format!("{p}_seq"), format!("{p}_trig"), format!("{p}_ren"));
    // Numbered events every 5 ms, from before the recorder starts: this
    // process's name comes from the window's start, not from a record in it.
    let numbers = producer(&["seq", &seq, "1000000", "5000"]);
    let pattern = format!("{p}_*");
    let output = dir.join("flight.data");
    let recorder = Recorder::start(&[
        "--flight-recorder=5s",
        "--after",
        "1s",
        "--trigger",
        &trig,
        "-e",
        &pattern,
        "-o",
        output.to_str().unwrap(),
    ]);
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs(11));
    // Inside the window to come: a process that renames itself, execs
    // and exits, all before the dump.
    let renamed = producer(&["rename", &ren]);
    let renamed_pid = renamed.id();
    assert!(renamed.finished_ok());
    std::thread::sleep(Duration::from_secs(15).saturating_sub(start.elapsed()));
    let trigger = producer(&["seq", &trig, "1"]);
    assert!(trigger.finished_ok());
    let wrote = recorder.wait_for("wrote ", 1);
    drop(numbers);
    let (status, stderr) = recorder.stop();
    assert!(status.success(), "{stderr}");
    assert!(wrote.contains(&format!("event {trig}")), "the message says what triggered the dump: {wrote}");
    assert!(stderr.contains("1 dump started: 1 written"), "{stderr}");

    let found = dumps(&dir);
    assert_eq!(found.len(), 1, "{found:?}\n{stderr}");
    let events = events(&found[0]);
    let triggers = named(&events, &trig);
    assert_eq!(triggers.len(), 1, "the trigger itself is in the dump");
    let t = triggers[0]["time_ns"].as_i64().unwrap();

    let numbered = named(&events, &seq);
    let ns: Vec<u64> = numbered.iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect();
    let gaps: Vec<(u64, u64)> = ns.windows(2).filter(|w| w[1] != w[0] + 1).map(|w| (w[0], w[1])).collect();
    assert!(gaps.is_empty(), "a contiguous run of numbers: gaps at {gaps:?}");
    let first = numbered.first().unwrap()["time_ns"].as_i64().unwrap();
    let last = numbered.last().unwrap()["time_ns"].as_i64().unwrap();
    // Covered: [trigger - 5 s, trigger + --after], to within the 5 ms
    // between two numbers (100 ms for a slow emulated guest).
    assert!(first <= t - 5 * SECOND + SECOND / 10, "the window starts {} ms after trigger - 5 s", (first - (t - 5 * SECOND)) / 1_000_000);
    assert!(last >= t + SECOND - SECOND / 10, "the window ends {} ms before trigger + 1 s", (t + SECOND - last) / 1_000_000);
    // Nothing older than the window plus the documented slack (one read
    // of the rings: 0.5 s).
    assert!(first >= t - 5 * SECOND - SECOND / 2, "the dump holds {} ms before its window", (t - 5 * SECOND - first) / 1_000_000);
    assert!(numbered.iter().all(|e| e["process"] == "ut_emit" && e["comm"] == "ut_emit"), "{:?}", numbered[0]);

    // Renamed and exec'd inside the window, and gone before the dump:
    // each event under the name it had then.
    let stages: Vec<(u64, &str, &str)> = named(&events, &ren)
        .iter()
        .map(|e| (e["fields"]["stage"].as_u64().unwrap(), e["comm"].as_str().unwrap(), e["process"].as_str().unwrap()))
        .collect();
    let exec_name = format!("ut-new-{renamed_pid}");
    assert_eq!(stages, [(1, "ut_emit", "ut_emit"), (2, "ut_renamed", "ut_renamed"), (3, exec_name.as_str(), exec_name.as_str())]);

    let why = reason(&events);
    assert!(why.contains(&format!("event {trig}")), "{why}");
    let dump = named(&events, "dump");
    assert_eq!(dump[0]["fields"]["trigger_ns"].as_i64(), Some(t), "the dump says when it was triggered");
    assert_eq!(dump[0]["fields"]["window_first_ns"].as_i64(), Some(first.min(t)));
    assert_eq!(dump[0]["fields"]["lost"].as_u64(), Some(0));
    // perf reads the dump too, with no complaint.
    let out = Command::new(perf()).args(["script", "-i"]).arg(&found[0]).output().unwrap();
    let (text, errors) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && !errors.contains("Error") && !errors.contains("arning"), "perf script: {errors}");
    assert!(text.lines().any(|l| l.contains(&format!("user_events:{trig}:"))), "{text}");
    assert!(text.lines().any(|l| l.contains("usertrace:dump:")), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigusr2_usertrace_dump_and_a_field_value_each_make_one_dump() {
    let dir = scratch(&unique("flight_asks"));
    let p = unique("fa");
    let (tick, value) = (format!("{p}_tick"), format!("{p}_value"));
    let ticks = producer(&["seq", &tick, "1000000", "20000"]);
    let pattern = format!("{p}_*");
    let output = dir.join("flight.data");
    let condition = format!("{value}:n==3");
    let recorder = Recorder::start(&[
        "--flight-recorder=3s",
        "--after",
        "200ms",
        "--dump-interval",
        "100ms",
        "--trigger",
        &condition,
        "-e",
        &pattern,
        "-o",
        output.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_secs(1));
    recorder.signal(libc::SIGUSR2);
    let first = recorder.wait_for("wrote ", 1);
    assert!(first.contains("for SIGUSR2"), "{first}");

    // `usertrace dump` finds the recorder by itself, and prints the file.
    let out = Command::new(usertrace()).arg("dump").output().unwrap();
    assert!(out.status.success(), "usertrace dump: {}", String::from_utf8_lossy(&out.stderr));
    let printed = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    assert!(printed.exists(), "{printed:?}");
    assert!(recorder.wait_for("wrote ", 2).contains("for usertrace dump (uid "));

    // n = 0..5: only n == 3 fires.
    let values = producer(&["seq", &value, "6", "300000"]);
    assert!(values.finished_ok());
    let third = recorder.wait_for("wrote ", 3);
    std::thread::sleep(Duration::from_secs(1));
    drop(ticks);
    let (status, stderr) = recorder.stop();
    assert!(status.success(), "{stderr}");
    assert!(third.contains(&format!("event {value} with n=3")), "{third}");
    let found = dumps(&dir);
    assert_eq!(found.len(), 3, "one dump each: {found:?}\n{stderr}");
    assert_eq!(found[1], printed);
    let reasons: Vec<String> = found.iter().map(|d| reason(&events(d))).collect();
    assert_eq!(reasons[0], "SIGUSR2");
    assert!(reasons[1].starts_with("usertrace dump (uid 0 pid "), "{}", reasons[1]);
    assert!(reasons[2].contains(&format!("event {value} with n=3 (pid ")), "{}", reasons[2]);
    // The third dump holds n = 3 and its ticks, and each dump the ticks
    // before it.
    let last = events(&found[2]);
    assert!(named(&last, &value).iter().any(|e| e["fields"]["n"] == 3));
    for d in &found {
        assert!(!named(&events(d), &tick).is_empty(), "{d:?} holds the ticks before it");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_storm_of_a_hundred_triggers_in_a_second_writes_at_most_max_dumps() {
    let dir = scratch(&unique("flight_storm"));
    let p = unique("fs");
    let storm = format!("{p}_storm");
    let output = dir.join("flight.data");
    let pattern = format!("{p}_*");
    let keepalive = producer(&["seq", &format!("{p}_tick"), "1000000", "50000"]);
    let recorder = Recorder::start(&[
        "--flight-recorder=2s",
        "--after",
        "100ms",
        "--dump-interval",
        "100ms",
        "--max-dumps",
        "2",
        "--trigger",
        &storm,
        "-e",
        &pattern,
        "-o",
        output.to_str().unwrap(),
    ]);
    // 100 triggers, 10 ms apart: without --max-dumps, a dump each 100 ms.
    let storm_producer = producer(&["seq", &storm, "100", "10000"]);
    assert!(storm_producer.finished_ok());
    recorder.wait_for("wrote ", 2);
    std::thread::sleep(Duration::from_secs(1));
    drop(keepalive);
    let (status, stderr) = recorder.stop();
    assert!(status.success(), "{stderr}");
    let found = dumps(&dir);
    assert_eq!(found.len(), 2, "{stderr}");
    assert!(stderr.contains("2 dumps started: 2 written; ") && stderr.contains("triggers ignored (--max-dumps, --dump-interval)"), "{stderr}");
    // Gated as the storm asked: the later triggers are refused for what
    // is true, two dumps started, both written.
    assert!(stderr.contains("--max-dumps 2 reached (2 started: "), "{stderr}");
    // Two windows, the second's trigger 100 ms or more after the first's.
    let triggers: Vec<i64> = found.iter().map(|d| named(&events(d), "dump")[0]["fields"]["trigger_ns"].as_i64().unwrap()).collect();
    assert!(triggers[1] - triggers[0] >= SECOND / 10, "{triggers:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A trigger and then nothing: no event, no round with records, for far
/// longer than --after. The dump is written while the recorder runs on,
/// not only when it stops.
#[test]
fn a_dump_whose_trigger_is_followed_by_silence_is_written_while_recording() {
    let dir = scratch(&unique("flight_silence"));
    let p = unique("fq");
    let alone = format!("{p}_alone");
    let output = dir.join("flight.data");
    let pattern = format!("{p}_*");
    // It emits its one event once the recorder enables it, and exits.
    let trigger = producer(&["seq", &alone, "1"]);
    let recorder = Recorder::start(&["--flight-recorder=2s", "--after", "200ms", "--trigger", &alone, "-e", &pattern, "-o", output.to_str().unwrap()]);
    assert!(trigger.finished_ok());
    let wrote = recorder.wait_for("wrote ", 1);
    assert!(wrote.contains(&format!("for event {alone}")), "{wrote}");
    let (status, stderr) = recorder.stop();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("1 dump started: 1 written"), "{stderr}");
    let found = dumps(&dir);
    assert_eq!(found.len(), 1, "{stderr}");
    let numbers: Vec<i64> = named(&events(&found[0]), &alone).iter().map(|e| e["fields"]["n"].as_i64().unwrap()).collect();
    assert_eq!(numbers, [0]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Ctrl-C while a dump waits out its --after: the dump is written before
/// the recorder exits, and the `usertrace dump` that asked for it gets
/// its file.
#[test]
fn a_recorder_stopped_with_a_dump_open_writes_it_and_answers_its_caller() {
    let dir = scratch(&unique("flight_stopped"));
    let p = unique("fo");
    let tick = format!("{p}_tick");
    let ticks = producer(&["seq", &tick, "1000000", "20000"]);
    let output = dir.join("flight.data");
    let pattern = format!("{p}_*");
    let recorder = Recorder::start(&["--flight-recorder=2s", "--after", "10m", "-e", &pattern, "-o", output.to_str().unwrap()]);
    std::thread::sleep(Duration::from_millis(500));
    let caller = Command::new(usertrace()).args(["dump", "--timeout", "60s"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    recorder.wait_for("dump asked for by usertrace dump", 1);
    let (status, stderr) = recorder.stop();
    drop(ticks);
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("1 dump started: 1 written"), "{stderr}");
    let answer = caller.wait_with_output().unwrap();
    assert!(answer.status.success(), "usertrace dump: {}", String::from_utf8_lossy(&answer.stderr));
    let printed = PathBuf::from(String::from_utf8(answer.stdout).unwrap().trim());
    assert_eq!(dumps(&dir), std::slice::from_ref(&printed));
    assert!(!named(&events(&printed), &tick).is_empty(), "it holds the ticks before the stop");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_span_longer_than_its_trigger_dumps_and_a_shorter_one_does_not() {
    let dir = scratch(&unique("flight_span"));
    let p = unique("fp");
    let output = dir.join("flight.data");
    let pattern = format!("{p}_*");
    // The span lasts a little over 200 ms: only the first trigger fires.
    let (slow, never) = (format!("{p}_flood>150ms"), format!("{p}_flood>5s"));
    let spans = producer(&["span-flood", &p, "10"]);
    let recorder = Recorder::start(&[
        "--flight-recorder=3s",
        "--after",
        "200ms",
        "--trigger-span",
        &never,
        "--trigger-span",
        &slow,
        "-e",
        &pattern,
        "-o",
        output.to_str().unwrap(),
    ]);
    assert!(spans.finished_ok());
    let wrote = recorder.wait_for("wrote ", 1);
    std::thread::sleep(Duration::from_secs(1));
    let (status, stderr) = recorder.stop();
    assert!(status.success(), "{stderr}");
    let found = dumps(&dir);
    assert_eq!(found.len(), 1, "{stderr}");
    let why = reason(&events(&found[0]));
    assert!(why.starts_with(&format!("span {p}_flood of 2")) && why.ends_with(" over 150ms"), "{why}");
    assert!(wrote.contains(&why), "{wrote}");
    let held = events(&found[0]);
    assert_eq!(named(&held, &format!("{p}_tick")).len(), 10, "the span's events are in its dump");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn switch_output_files_together_hold_every_number_exactly_once() {
    let dir = scratch(&unique("flight_switch"));
    let p = unique("fo");
    let seq = format!("{p}_seq");
    let output = dir.join("flight.data");
    // 3000 numbers, 1 ms apart: a few seconds, cut into files each second
    // and at a SIGUSR2; --max-files large enough to keep them all.
    let numbers = producer(&["seq", &seq, "3000", "1000"]);
    let recorder = Recorder::start(&["--switch-output=1s", "--max-files", "100", "-e", &seq, "-o", output.to_str().unwrap()]);
    std::thread::sleep(Duration::from_millis(1500));
    recorder.signal(libc::SIGUSR2);
    assert!(numbers.finished_ok());
    std::thread::sleep(Duration::from_millis(500));
    let (status, stderr) = recorder.stop();
    assert!(status.success(), "{stderr}");
    let found = dumps(&dir);
    assert!(found.len() >= 3, "a file a second and one at SIGUSR2: {found:?}\n{stderr}");
    let mut all: Vec<u64> = Vec::new();
    for file in &found {
        let held = events(file);
        let ns: Vec<u64> = named(&held, &seq).iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect();
        // Each file is a run of numbers, and each starts where the one
        // before it ended.
        if let (Some(&last), Some(&first)) = (all.last(), ns.first()) {
            assert_eq!(first, last + 1, "{file:?} starts at {first} after {last}");
        }
        assert!(held.iter().all(|e| e["event"] != seq.as_str() || e["process"] == "ut_emit"), "named in every file");
        all.extend(ns);
    }
    assert_eq!(all, (0..3000).collect::<Vec<u64>>(), "every number once, in order");
    assert!(stderr.contains("for SIGUSR2"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn switch_output_with_max_files_keeps_only_the_newest() {
    let dir = scratch(&unique("flight_maxfiles"));
    let p = unique("fm");
    let seq = format!("{p}_seq");
    let output = dir.join("flight.data");
    let numbers = producer(&["seq", &seq, "2500", "1000"]);
    let recorder = Recorder::start(&["--switch-output=500ms", "--max-files", "2", "-e", &seq, "-o", output.to_str().unwrap()]);
    assert!(numbers.finished_ok());
    // Stopped at once (its last read takes what is left in the rings): a
    // wait as long as a file's 500 ms could see two more files cut after
    // the last number, which would then be the two kept.
    let (status, stderr) = recorder.stop();
    assert!(status.success(), "{stderr}");
    let found = dumps(&dir);
    assert_eq!(found.len(), 2, "{found:?}\n{stderr}");
    // The newest: together they end with the last number, and start past
    // the first (the older files were removed). The last file may hold no
    // number at all: only the producer's exit, after its last event.
    let kept: Vec<u64> =
        found.iter().flat_map(|f| named(&events(f), &seq).iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect::<Vec<_>>()).collect();
    assert_eq!(kept.last(), Some(&2499), "{found:?}");
    assert!(kept[0] > 0, "the oldest files were removed: {found:?}");
    assert_eq!(kept, (kept[0]..2500).collect::<Vec<u64>>());
    assert!(stderr.contains("--max-files"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

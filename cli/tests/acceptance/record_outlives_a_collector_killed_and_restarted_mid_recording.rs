//! `usertrace record --otlp` in the kernel, while the real Collector
//! (harness/build-otel-components' `otelcol`, file exporter) is killed
//! after the first batch and restarted on the same port seconds later:
//! the recording goes on and exits 0, every event the producer emitted
//! reaches one of the two Collectors (those sent while it was away were
//! queued and retried), and the stderr summary says so exactly.
//! A kernel test never passes by skipping: without the Collector it fails.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;

use crate::otel_components::collector::Collector;
use crate::otel_components::{component, free_port, TempDir};

/// The `n` of every log record `collector` wrote so far (a batch the
/// first Collector wrote but could not answer before it died is sent
/// again, so the same `n` may appear in both).
fn ns_written(collector: &Collector) -> Vec<u64> {
    let mut ns = Vec::new();
    for object in collector.written_so_far("logs.json") {
        for resource in object["resourceLogs"].as_array().into_iter().flatten() {
            for scope in resource["scopeLogs"].as_array().into_iter().flatten() {
                for record in scope["logRecords"].as_array().into_iter().flatten() {
                    let n = record["attributes"].as_array().into_iter().flatten().find(|a| a["key"] == "n");
                    // OTLP JSON writes 64-bit ints as strings.
                    ns.push(n.and_then(|a| a["value"]["intValue"].as_str()).and_then(|v| v.parse().ok()).expect("each record has its n"));
                }
            }
        }
    }
    ns
}

#[test]
fn a_collector_killed_and_restarted_mid_recording_still_gets_every_event() {
    let binary = component("otelcol").expect("a kernel test never skips: build otelcol with harness/build-otel-components");
    let name = unique("otlp_restart");
    let scratch = TempDir::new(&name);
    let port = free_port();
    let first = Collector::spawn(&binary, &scratch.0.join("first"), port).wait_listening();

    // 1200 events 25 ms apart: about 30 s, so the Collector is away for a
    // good part of them and back (a restart under emulation takes seconds)
    // well before the producer ends and record's 5 s to send what is queued.
    const COUNT: u64 = 1200;
    let record = Command::new(usertrace())
        .args(["record", "-e", &name, "--otlp", &format!("http://127.0.0.1:{port}"), "--"])
        .arg(ut_emit())
        .args(["seq", &name, &COUNT.to_string(), "25000"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    let deadline = Instant::now() + Duration::from_secs(120);
    while ns_written(&first).is_empty() {
        assert!(Instant::now() < deadline, "no batch reached the first Collector in 120 s:\n{}", first.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut first = first;
    first.kill();
    let before_kill: BTreeSet<u64> = ns_written(&first).into_iter().collect();
    std::thread::sleep(Duration::from_secs(3));
    let restarting = Instant::now();
    let second = Collector::spawn(&binary, &scratch.0.join("second"), port).wait_listening();
    let restart = restarting.elapsed();

    let out = record.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the recording must outlive the Collector: {stderr}");
    // exported + dropped + failed = recorded, whatever the timing.
    let summary = stderr.lines().find(|l| l.starts_with("usertrace record: OTLP: ")).unwrap_or_else(|| panic!("no OTLP summary in {stderr}"));
    let count = |label: &str| -> u64 {
        let at = summary.find(label).unwrap_or_else(|| panic!("no {label:?} in {summary}"));
        summary[..at].split([' ', '(']).rfind(|w| !w.is_empty()).and_then(|n| n.parse().ok()).unwrap()
    };
    let (exported, dropped, failed, retries) = (count(" events exported"), count(" dropped"), count(" failed"), count(" retries"));
    assert_eq!(exported + dropped + failed, COUNT, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "usertrace record: OTLP: {COUNT} events exported (0 spans, {COUNT} log records), 0 dropped (queue full or unsent at exit), 0 failed; "
        )),
        "what was queued while the Collector was away (restarted in {restart:?}) arrives: {stderr}"
    );
    assert!(retries >= 1, "the kill was felt and retried: {stderr}");

    assert!((before_kill.len() as u64) < COUNT, "the first Collector was killed mid-recording, not after it");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let all: BTreeSet<u64> = before_kill.iter().copied().chain(ns_written(&second)).collect();
        if all.len() as u64 == COUNT || Instant::now() > deadline {
            assert_eq!(all, (0..COUNT).collect(), "every event reached one Collector:\n{}", second.log());
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

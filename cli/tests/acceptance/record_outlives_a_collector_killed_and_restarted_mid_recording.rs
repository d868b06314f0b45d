//! `usertrace record --otlp` in the kernel, while the real Collector
//! (harness/build-otel-components' `otelcol`, file exporter) is killed
//! after the first batch and restarted on the same port seconds later:
//! the recording goes on and exits 0, every event the producer emitted
//! reaches one of the two Collectors (those sent while it was away were
//! queued and retried), and the stderr summary says so exactly.
//! A kernel test never passes by skipping: without the Collector it fails.

use std::collections::BTreeSet;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use crate::support::*;

use crate::otel_components::{component, free_port, TempDir};

/// A Collector writing the log records it receives to `dir/logs.json`,
/// killed when dropped.
struct Collector {
    child: Child,
    dir: PathBuf,
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Collector {
    /// Ready (its OTLP port accepts) when it returns.
    fn start(binary: &Path, dir: PathBuf, port: u16) -> Collector {
        std::fs::create_dir_all(&dir).unwrap();
        let config = format!(
            r#"
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{port}
exporters:
  file/logs:
    path: {dir}/logs.json
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [file/logs]
"#,
            dir = dir.display()
        );
        let config_path = dir.join("otelcol.yaml");
        std::fs::write(&config_path, config).unwrap();
        let log = std::fs::File::create(dir.join("otelcol.log")).unwrap();
        let child = Command::new(binary)
            .arg("--config")
            .arg(format!("file:{}", config_path.display()))
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let mut collector = Collector { child, dir };
        // Slow to come up under emulation (the guest without KVM).
        let deadline = Instant::now() + Duration::from_secs(300);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = collector.child.try_wait() {
                panic!("otelcol exited with {status}:\n{}", collector.log());
            }
            assert!(Instant::now() < deadline, "otelcol did not listen in 300 s:\n{}", collector.log());
            std::thread::sleep(Duration::from_millis(200));
        }
        collector
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("otelcol.log")).unwrap_or_default()
    }

    /// The `n` of every log record written so far (a batch the first
    /// Collector wrote but could not answer before it died is sent again,
    /// so the same `n` may appear in both).
    fn ns_written(&self) -> Vec<u64> {
        let text = std::fs::read_to_string(self.dir.join("logs.json")).unwrap_or_default();
        // The last line may be half-written while we read.
        let objects = text.lines().filter_map(|l| serde_json::from_str::<Json>(l).ok());
        let mut ns = Vec::new();
        for object in objects {
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
}

#[test]
fn a_collector_killed_and_restarted_mid_recording_still_gets_every_event() {
    let binary = component("otelcol").expect("a kernel test never skips: build otelcol with harness/build-otel-components");
    let name = unique("otlp_restart");
    let scratch = TempDir::new(&name);
    let port = free_port();
    let first = Collector::start(&binary, scratch.0.join("first"), port);

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
    while first.ns_written().is_empty() {
        assert!(Instant::now() < deadline, "no batch reached the first Collector in 120 s:\n{}", first.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut first = first;
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    let before_kill: BTreeSet<u64> = first.ns_written().into_iter().collect();
    std::thread::sleep(Duration::from_secs(3));
    let restarting = Instant::now();
    let second = Collector::start(&binary, scratch.0.join("second"), port);
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
        let all: BTreeSet<u64> = before_kill.iter().copied().chain(second.ns_written()).collect();
        if all.len() as u64 == COUNT || Instant::now() > deadline {
            assert_eq!(all, (0..COUNT).collect(), "every event reached one Collector:\n{}", second.log());
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

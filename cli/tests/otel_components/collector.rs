//! A real OpenTelemetry Collector (harness/build-otel-components' `otelcol`)
//! with the OTLP receiver and the file exporter: what it receives is
//! written as OTLP JSON, one request a line, to `logs.json` and
//! `traces.json` in its folder. Host and kernel tests start it here.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

/// A Collector process, killed when dropped.
pub struct Collector {
    child: Child,
    pub dir: PathBuf,
    port: u16,
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Collector {
    /// Starts it on 127.0.0.1:`port`, writing into `dir`; it may not
    /// listen yet when this returns (see [`Collector::wait_listening`]).
    pub fn spawn(binary: &Path, dir: &Path, port: u16) -> Collector {
        std::fs::create_dir_all(dir).unwrap();
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
  file/traces:
    path: {dir}/traces.json
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
    traces:
      receivers: [otlp]
      exporters: [file/traces]
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
        Collector { child, dir: dir.to_owned(), port }
    }

    /// Returns once its OTLP port accepts connections.
    pub fn wait_listening(mut self) -> Collector {
        // Slow to come up under emulation (the guest without KVM).
        let deadline = Instant::now() + Duration::from_secs(300);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("otelcol exited with {status}:\n{}", self.log());
            }
            assert!(Instant::now() < deadline, "otelcol did not listen in 300 s:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(200));
        }
        self
    }

    /// Kills it now, as a crash would; what it wrote stays readable.
    pub fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("otelcol.log")).unwrap_or_default()
    }

    /// Every OTLP JSON object written to `file` (`logs.json`,
    /// `traces.json`) so far; a last line still being written is left out.
    pub fn written_so_far(&self, file: &str) -> Vec<Json> {
        let text = std::fs::read_to_string(self.dir.join(file)).unwrap_or_default();
        text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// Every OTLP JSON object written to `file`, once there are `lines`.
    pub fn written(&self, file: &str, lines: usize) -> Vec<Json> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let objects = self.written_so_far(file);
            if objects.len() >= lines {
                return objects;
            }
            assert!(Instant::now() < deadline, "{file} has {} lines, not {lines}; the Collector said:\n{}", objects.len(), self.log());
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

//! The OTLP options `export` and `record` share, and turning them (with
//! the standard `OTEL_*` variables) into exporter settings before any
//! recording or upload starts, so a bad URL is an error now.

use std::time::Duration;

use clap::Args;
use usertrace_output::otlp::config::{self, parse_resource_attributes};
use usertrace_output::otlp::{Clock, ConfigError, Endpoint, EndpointArgs, ExporterSettings, ResourceSettings};

/// How long `record` gives the exporter, after the recording ends, to
/// send what is queued; what is left then is counted as dropped.
pub const RECORD_GRACE: Duration = Duration::from_secs(5);

/// Options of OTLP export.
#[derive(Debug, Clone, Default, Args)]
pub struct OtlpArgs {
    /// Send spans and events to this OTLP/HTTP endpoint (a base URL such
    /// as http://127.0.0.1:4318; /v1/traces and /v1/logs are appended)
    /// [default: $OTEL_EXPORTER_OTLP_ENDPOINT for export]
    #[arg(long = "otlp", value_name = "URL")]
    pub url: Option<String>,

    /// service.name of every process [default: $OTEL_SERVICE_NAME, else
    /// service.name in $OTEL_RESOURCE_ATTRIBUTES, else each process's name]
    #[arg(long, value_name = "NAME")]
    pub service: Option<String>,

    /// gzip or none [default: $OTEL_EXPORTER_OTLP_COMPRESSION, else none]
    #[arg(long, value_name = "COMPRESSION")]
    pub compression: Option<String>,
}

impl OtlpArgs {
    /// The exporter settings, from these options then the environment.
    pub fn settings(&self) -> Result<ExporterSettings, ConfigError> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let endpoint = Endpoint::resolve(&EndpointArgs { url: self.url.clone(), compression: self.compression.clone() }, var)?;
        let attributes = match var(config::RESOURCE_ATTRIBUTES_VAR) {
            Some(v) => parse_resource_attributes(&v)?,
            None => Vec::new(),
        };
        let resource = ResourceSettings { service_name: self.service.clone().or_else(|| var(config::SERVICE_NAME_VAR)), host_name: host_name(), attributes };
        Ok(ExporterSettings::new(endpoint, resource, clock()))
    }
}

/// The kernel's host name (what `hostname` prints).
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_owned()).unwrap_or_default()
}

/// The offset from the recording's clock (CLOCK_MONOTONIC, as perf stamps
/// events) to Unix time, now.
fn clock() -> Clock {
    let read = |id: libc::clockid_t| {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime(2) writes one timespec through the pointer,
        // which points to a live, writable timespec; both clocks exist on
        // every Linux.
        unsafe { libc::clock_gettime(id, &mut ts) };
        i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
    };
    let monotonic = read(libc::CLOCK_MONOTONIC);
    let realtime = read(libc::CLOCK_REALTIME);
    Clock { unix_minus_monotonic_ns: realtime - monotonic }
}

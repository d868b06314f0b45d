//! `usertrace status`: what works, what does not, and what to do about it.
//!
//! The verdict is the core's (`usertrace::status()`), which every language's
//! `status()` gives too: it weighs the tracefs probe against the kernel's
//! build config (`/proc/config.gz`, else `/boot/config-RELEASE`). This
//! command adds what only a recorder needs to know: the config it read,
//! perf's permission, and the transport a program here would take.

use std::process::ExitCode;

use clap::Args;
use serde::Serialize;
use usertrace::{KernelConfig, Status};

use crate::args::Format;
use crate::json::{print_line, RecordingStatus, StatusLine, TransportStatus, UserEventsStatus};
use crate::stdout::outln;

/// CAP_PERFMON's bit in /proc/self/status's CapEff (Linux 5.8+).
const CAP_PERFMON: u32 = 38;
const CAP_SYS_ADMIN: u32 = 21;

/// Say whether user_events tracing works here, and what to do if not
///
/// Says whether programs here can register user_events and whether this
/// user may record them, and what to do if not; the first line is the
/// verdict. The kernel's build config (/proc/config.gz, else
/// /boot/config-RELEASE) is read first. The exit status is 0 when
/// user_events is available, 1 when it is not.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// text: a line per finding, the verdict first; json: one JSON object
    /// (kernel, tracefs, tried, user_events {available, state, message},
    /// recording {allowed, perf_event_paranoid, cap_perfmon, message},
    /// kernel_config {source, user_events, tried})
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: &StatusArgs) -> ExitCode {
    let status = usertrace::status();
    // The config the verdict weighed, or (when the probe alone decided) the
    // same one, read for the `config` line.
    let config = status.kernel_config.clone().unwrap_or_else(KernelConfig::running);
    let findings = Findings::new(&status, config, perf_permission(), transport());
    match args.format {
        Format::Text => {
            for line in findings.text_lines() {
                outln!("{line}");
            }
        }
        Format::Json => print_line(&findings.json()),
    }
    if findings.line.user_events.available {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The transport a program started here would take (the core's choice,
/// under this process's USERTRACE_TRANSPORT), and why.
fn transport() -> TransportStatus {
    match usertrace::transport() {
        Ok(choice) => TransportStatus { name: choice.transport.name(), reason: choice.reason },
        Err(error) => TransportStatus { name: "invalid", reason: error.to_string() },
    }
}

/// Whether perf lets this process open tracepoint events on every CPU with
/// raw samples: CAP_PERFMON (or CAP_SYS_ADMIN), or perf_event_paranoid <= -1.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Permission {
    allowed: bool,
    paranoid: Option<i32>,
    cap_perfmon: bool,
    /// Why, and if not allowed, what to do.
    detail: String,
}

fn perf_permission() -> Permission {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").ok().and_then(|s| s.trim().parse::<i32>().ok());
    let caps = effective_capabilities();
    let has = |cap: u32| caps.is_some_and(|c| c & (1u64 << cap) != 0);
    permission(paranoid, has(CAP_PERFMON) || has(CAP_SYS_ADMIN))
}

fn permission(paranoid: Option<i32>, cap_perfmon: bool) -> Permission {
    let paranoid_text = paranoid.map_or("unknown".to_owned(), |p| p.to_string());
    let (allowed, detail) = if cap_perfmon {
        (true, format!("this process has CAP_PERFMON (perf_event_paranoid is {paranoid_text})"))
    } else if paranoid.is_some_and(|p| p <= -1) {
        (true, format!("perf_event_paranoid is {paranoid_text}"))
    } else {
        (
            false,
            format!(
                "perf_event_paranoid is {paranoid_text} and this process lacks CAP_PERFMON; run as root, \
                 `setcap cap_perfmon+ep $(command -v usertrace)`, or `sysctl kernel.perf_event_paranoid=-1`"
            ),
        )
    };
    Permission { allowed, paranoid, cap_perfmon, detail }
}

fn effective_capabilities() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?.trim();
    u64::from_str_radix(hex, 16).ok()
}

/// Everything `status` says, in the words both formats print.
struct Findings {
    line: StatusLine,
    config: KernelConfig,
}

/// The JSON object: [`StatusLine`]'s fields, then `kernel_config`.
#[derive(Serialize)]
struct StatusJson<'a> {
    #[serde(flatten)]
    line: &'a StatusLine,
    kernel_config: KernelConfigJson,
}

#[derive(Serialize)]
struct KernelConfigJson {
    /// The file read; null when none could be.
    source: Option<String>,
    /// `y`, `not_set`, `absent` or `unreadable`.
    user_events: &'static str,
    tried: Vec<String>,
}

impl Findings {
    fn new(status: &Status, config: KernelConfig, permission: Permission, transport: TransportStatus) -> Findings {
        let line = StatusLine {
            kernel: config.release.clone(),
            tracefs: status.tracefs.as_ref().map(|p| p.display().to_string()),
            tried: status.tried.iter().map(|p| p.display().to_string()).collect(),
            user_events: UserEventsStatus {
                available: status.is_available(),
                state: status.availability.name(),
                message: status.to_string(),
            },
            recording: if transport.name == "shm" {
                recording_shm(permission)
            } else {
                recording(status.user_events_data_exists(), permission)
            },
            transport,
        };
        Findings { line, config }
    }

    fn text_lines(&self) -> Vec<String> {
        let line = &self.line;
        vec![
            format!("user_events:  {}", line.user_events.message),
            format!("kernel:       {}", line.kernel),
            format!("config:       {}", self.config),
            format!("tracefs:      {}", line.tracefs.as_deref().unwrap_or("not found")),
            format!("tried:        {}", line.tried.join(", ")),
            format!("recording:    {}", line.recording.message),
            format!("transport:    {}: {}", line.transport.name, line.transport.reason),
        ]
    }

    fn json(&self) -> StatusJson<'_> {
        let config = &self.config;
        let kernel_config = KernelConfigJson {
            source: config.found.as_ref().map(|(path, _)| path.display().to_string()),
            user_events: config.name(),
            tried: config.tried.iter().map(|p| p.display().to_string()).collect(),
        };
        StatusJson { line: &self.line, kernel_config }
    }
}

/// "allowed" only when there is something to record and perf permits it.
fn recording(recordable: bool, permission: Permission) -> RecordingStatus {
    let Permission { allowed, paranoid, cap_perfmon, detail } = permission;
    let message = match (recordable, allowed) {
        (true, true) => format!("allowed: {detail}"),
        (true, false) => format!("not allowed: {detail}"),
        (false, true) => format!("not possible until user_events is available (see user_events); perf would allow it: {detail}"),
        (false, false) => {
            format!("not possible until user_events is available (see user_events); nor would perf allow it: {detail}")
        }
    };
    RecordingStatus { allowed: recordable && allowed, perf_event_paranoid: paranoid, cap_perfmon, message }
}

/// Recording where producers use shared memory: no user_events needed,
/// only perf's sideband (for names) and ptrace rights over the producers.
fn recording_shm(permission: Permission) -> RecordingStatus {
    let Permission { allowed, paranoid, cap_perfmon, detail } = permission;
    let message = if allowed {
        format!(
            "allowed through shared memory: `usertrace record` finds producers in /dev/shm/usertrace-UID and writes their \
             enable words where the kernel gives it ptrace rights over them (as `perf record -p` needs); {detail}"
        )
    } else {
        format!("not allowed: shared memory would serve, but perf's task records (for names) are refused: {detail}")
    };
    RecordingStatus { allowed, perf_event_paranoid: paranoid, cap_perfmon, message }
}

#[cfg(test)]
mod tests;

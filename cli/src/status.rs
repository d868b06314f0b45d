//! `usertrace status`: what works, what does not, and what to do about it.

use std::process::ExitCode;

use clap::Args;
use usertrace::{Availability, Status};

use crate::args::Format;
use crate::json::{print_line, RecordingStatus, StatusLine, UserEventsStatus};
use crate::stdout::outln;

/// CAP_PERFMON's bit in /proc/self/status's CapEff (Linux 5.8+).
const CAP_PERFMON: u32 = 38;
const CAP_SYS_ADMIN: u32 = 21;

/// Say whether user_events tracing works here, and what to do if not
///
/// Says whether programs here can register user_events and whether this
/// user may record them, and what to do if not. The exit status is 0 when
/// user_events is available, 1 when it is not.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// text: a line per finding; json: one JSON object (kernel, tracefs,
    /// tried, user_events {available, state, message}, recording {allowed,
    /// perf_event_paranoid, cap_perfmon, message})
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: &StatusArgs) -> ExitCode {
    let status = usertrace::status();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let recording = recording_permission();
    match args.format {
        Format::Text => {
            outln!("kernel:       {}", kernel.trim());
            let tried = status.tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
            outln!("tracefs:      {}", status.tracefs.as_ref().map_or("not found".into(), |p| p.display().to_string()));
            outln!("tried:        {tried}");
            outln!("user_events:  {status}");
            outln!("recording:    {}", recording.message);
        }
        Format::Json => print_line(&StatusLine {
            kernel: kernel.trim().to_owned(),
            tracefs: status.tracefs.as_ref().map(|p| p.display().to_string()),
            tried: status.tried.iter().map(|p| p.display().to_string()).collect(),
            user_events: UserEventsStatus {
                available: status.is_available(),
                state: state(&status),
                message: status.to_string(),
            },
            recording,
        }),
    }
    if status.is_available() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The JSON name of the verdict: fixed words scripts can match on.
fn state(status: &Status) -> &'static str {
    match status.availability {
        Availability::Available => "available",
        Availability::TracefsNotMounted => "tracefs_not_mounted",
        Availability::UserEventsMissing => "user_events_missing",
        Availability::PermissionDenied => "permission_denied",
        Availability::OpenFailed => "open_failed",
    }
}

/// Whether `usertrace record` may open tracepoint events on every CPU with
/// raw samples: CAP_PERFMON (or CAP_SYS_ADMIN), or perf_event_paranoid <= -1.
fn recording_permission() -> RecordingStatus {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").ok().and_then(|s| s.trim().parse::<i32>().ok());
    let caps = effective_capabilities();
    let has = |cap: u32| caps.is_some_and(|c| c & (1u64 << cap) != 0);
    let cap_perfmon = has(CAP_PERFMON) || has(CAP_SYS_ADMIN);
    let paranoid_text = paranoid.map_or("unknown".to_owned(), |p| p.to_string());
    let (allowed, message) = if cap_perfmon {
        (true, format!("allowed: this process has CAP_PERFMON (perf_event_paranoid is {paranoid_text})"))
    } else if paranoid.is_some_and(|p| p <= -1) {
        (true, format!("allowed: perf_event_paranoid is {paranoid_text}"))
    } else {
        (
            false,
            format!(
                "not allowed: perf_event_paranoid is {paranoid_text} and this process lacks CAP_PERFMON; run as root, \
                 `setcap cap_perfmon+ep $(command -v usertrace)`, or `sysctl kernel.perf_event_paranoid=-1`"
            ),
        )
    };
    RecordingStatus { allowed, perf_event_paranoid: paranoid, cap_perfmon, message }
}

fn effective_capabilities() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?.trim();
    u64::from_str_radix(hex, 16).ok()
}

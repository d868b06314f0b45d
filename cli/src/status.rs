//! `usertrace status`: what works, what does not, and what to do about it.

use std::process::ExitCode;

/// CAP_PERFMON's bit in /proc/self/status's CapEff (Linux 5.8+).
const CAP_PERFMON: u32 = 38;
const CAP_SYS_ADMIN: u32 = 21;

pub fn run(args: &[String]) -> ExitCode {
    if let Some(extra) = args.first() {
        eprintln!("usertrace status: unexpected argument {extra:?}");
        return ExitCode::from(2);
    }
    let status = usertrace::status();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    println!("kernel:       {}", kernel.trim());
    let tried = status.tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
    println!("tracefs:      {}", status.tracefs.as_ref().map_or("not found".into(), |p| p.display().to_string()));
    println!("tried:        {tried}");
    println!("user_events:  {status}");
    let recording = recording_permission();
    println!("recording:    {recording}");
    if status.is_available() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Whether `usertrace record` may open tracepoint events on every CPU with
/// raw samples: CAP_PERFMON (or CAP_SYS_ADMIN), or perf_event_paranoid <= -1.
fn recording_permission() -> String {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").ok().and_then(|s| s.trim().parse::<i32>().ok());
    let caps = effective_capabilities();
    let has = |cap: u32| caps.is_some_and(|c| c & (1u64 << cap) != 0);
    let paranoid_text = paranoid.map_or("unknown".to_owned(), |p| p.to_string());
    if has(CAP_PERFMON) || has(CAP_SYS_ADMIN) {
        format!("allowed: this process has CAP_PERFMON (perf_event_paranoid is {paranoid_text})")
    } else if paranoid.is_some_and(|p| p <= -1) {
        format!("allowed: perf_event_paranoid is {paranoid_text}")
    } else {
        format!(
            "not allowed: perf_event_paranoid is {paranoid_text} and this process lacks CAP_PERFMON; run as root, \
             `setcap cap_perfmon+ep $(command -v usertrace)`, or `sysctl kernel.perf_event_paranoid=-1`"
        )
    }
}

fn effective_capabilities() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?.trim();
    u64::from_str_radix(hex, 16).ok()
}

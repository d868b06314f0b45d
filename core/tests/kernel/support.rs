//! What the kernel tests share: tracefs access, ftrace enable, reading the
//! `trace` buffer back, and opening perf events on a tracepoint.

use std::collections::BTreeMap;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// The tracefs mount point; panics (failing the test) without user_events,
/// because a kernel test must never pass by skipping.
pub fn tracefs() -> PathBuf {
    let status = usertrace::status();
    assert!(status.is_available(), "kernel tests need user_events: {status}");
    status.tracefs.unwrap()
}

/// A name no other test (or earlier run) uses.
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    format!("ut_{prefix}_{}_{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

fn event_dir(event: &str) -> PathBuf {
    tracefs().join("events/user_events").join(event)
}

/// Turns the event's ftrace recording on or off.
pub fn set_ftrace(event: &str, on: bool) {
    let path = event_dir(event).join("enable");
    std::fs::write(&path, if on { "1" } else { "0" }).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

/// Empties the ftrace buffer.
pub fn clear_trace() {
    std::fs::write(tracefs().join("trace"), "").unwrap();
}

/// The tracepoint id perf uses for the event.
pub fn event_id(event: &str) -> u64 {
    std::fs::read_to_string(event_dir(event).join("id")).unwrap().trim().parse().unwrap()
}

pub fn event_exists(event: &str) -> bool {
    event_dir(event).exists()
}

/// ftrace names tasks from its saved_cmdlines cache, which shows `<...>`
/// when the task's entry was evicted or not yet saved; the consumer's tests
/// check command names exactly, from perf's sideband records.
pub fn assert_comm(line: &TraceLine, expected: &str) {
    assert!(line.comm == expected || line.comm == "<...>", "comm {:?}, expected {expected:?}", line.comm);
}

/// One line of ftrace's `trace` for an event: task comm, pid and fields.
#[derive(Debug)]
pub struct TraceLine {
    pub comm: String,
    pub pid: u32,
    pub fields: BTreeMap<String, String>,
}

/// The `trace` lines of `event`, fields split by the names the event
/// declares (`names`), in order, so values may contain spaces. Numbers that
/// ftrace prints as `0x1f (31)` or `(1)` are given in decimal.
pub fn trace_lines(event: &str, names: &[&str]) -> Vec<TraceLine> {
    let text = String::from_utf8_lossy(&std::fs::read(tracefs().join("trace")).unwrap()).into_owned();
    let marker = format!(": {event}:");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|line| {
            let (head, rest) = line.split_once(&marker)?;
            let task = head.split_whitespace().next()?;
            let (comm, pid) = task.rsplit_once('-')?;
            Some(TraceLine { comm: comm.to_owned(), pid: pid.parse().ok()?, fields: split_fields(rest, names) })
        })
        .collect()
}

fn split_fields(mut rest: &str, names: &[&str]) -> BTreeMap<String, String> {
    let mut fields = BTreeMap::new();
    for (i, name) in names.iter().enumerate() {
        let key = format!(" {name}=");
        let Some(start) = rest.find(&key) else { break };
        let after = &rest[start + key.len()..];
        let end = names.get(i + 1).and_then(|next| after.find(&format!(" {next}="))).unwrap_or(after.len());
        fields.insert((*name).to_owned(), decimal(&after[..end]));
        rest = &after[end..];
    }
    fields
}

/// ftrace's field printer shows integers as `0x1f (31)` (the decimal is
/// always signed), bytes as `'c'(99)` or `(99)`: numbers are returned as the
/// unsigned value of their bits, so compare against `value as uN`.
fn decimal(value: &str) -> String {
    if let Some(hex) = value.strip_prefix("0x") {
        let digits = hex.split_whitespace().next().unwrap_or("");
        if let Ok(bits) = u64::from_str_radix(digits, 16) {
            return bits.to_string();
        }
    }
    match (value.rfind('('), value.strip_suffix(')')) {
        (Some(open), Some(inner)) if value.starts_with('(') || value.starts_with('\'') => inner[open + 1..].to_owned(),
        _ => value.to_owned(),
    }
}

/// A perf event on a tracepoint (cpu 0, all processes), closed on drop.
pub struct PerfTracepoint(#[allow(dead_code)] OwnedFd);

impl PerfTracepoint {
    pub fn open(event: &str, disabled: bool) -> Self {
        use perf_event_open_sys::bindings::{perf_event_attr, PERF_TYPE_TRACEPOINT};
        let mut attr = perf_event_attr { type_: PERF_TYPE_TRACEPOINT, config: event_id(event), ..Default::default() };
        attr.size = std::mem::size_of::<perf_event_attr>() as u32;
        attr.set_disabled(disabled as u64);
        attr.sample_period = 1;
        // SAFETY: attr is a valid, fully initialised perf_event_attr.
        let fd = unsafe { perf_event_open_sys::perf_event_open(&mut attr, -1, 0, -1, libc_cloexec()) };
        assert!(fd >= 0, "perf_event_open on {event}: {}", std::io::Error::last_os_error());
        // SAFETY: the kernel returned a new descriptor that we own.
        PerfTracepoint(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

fn libc_cloexec() -> std::os::raw::c_ulong {
    perf_event_open_sys::bindings::PERF_FLAG_FD_CLOEXEC as _
}

/// The calling thread's id, which ftrace shows as the task's pid.
pub fn gettid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

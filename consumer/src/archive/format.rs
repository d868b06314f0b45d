//! `usertrace:process`, the tracepoint of our own that carries what
//! perf.data has no place for: a process's executable, command line,
//! container id, pod uid and pid inside its container (see the module
//! above for why this form). A reader finds each field by its name in the
//! format text the file holds, so an archive written before the last two
//! existed reads as it did, without them.
//!
//! Its layout is a kernel tracepoint's (`trace_entry`, then the fields,
//! the strings `__data_loc char[]`), so perf, libtraceevent and
//! Microsoft's decoder read it with no help. (`tracepoint_decode` 0.5
//! shows every string of a location field as empty, ours and the kernel's
//! alike: its element size for a `char` string is 0, and the mask it
//! takes of that wraps; perf and our own reader show them.)
//!
//! The command line is a JSON array of strings: one string field that a
//! reader sees whole, and that keeps arguments with spaces apart. A
//! missing value is an empty string.

use std::borrow::Cow;

use usertrace::wire::dyn_loc;

use crate::decode::{decode, FieldValue};
use crate::format::EventFormat;
use crate::processes::ProcessInfo;
use crate::record::{PERF_RECORD_SAMPLE, HEADER_LEN};

/// The tracepoint's system, as perf shows it: `usertrace:process`.
pub(crate) const SYSTEM: &str = "usertrace";
/// The tracepoint's name.
pub(crate) const NAME: &str = "process";
/// Its `common_type`, and the `config` of its attr: the largest a
/// `trace_entry` can hold, far above what any kernel hands out.
pub(crate) const ID: u16 = u16::MAX;
/// Its perf id in the file; kernel ids count up from 1 per boot.
pub(crate) const PERF_ID: u64 = u64::MAX - 1;

/// The `trace_entry` every tracepoint's format starts with, as tracefs
/// shows it: ours too. It lives in the core, beside the format text the
/// shared-memory transport builds with it.
pub(crate) use usertrace::descriptor::COMMON_FIELDS;

/// The format file's text, as tracefs would show it.
pub(crate) fn format_text() -> String {
    format!(
        "name: {NAME}\nID: {ID}\nformat:\n{COMMON_FIELDS}\
         \tfield:u32 pid;\toffset:8;\tsize:4;\tsigned:0;\n\
         \tfield:u32 pid_in_container;\toffset:12;\tsize:4;\tsigned:0;\n\
         \tfield:__data_loc char[] executable;\toffset:16;\tsize:4;\tsigned:1;\n\
         \tfield:__data_loc char[] command_line;\toffset:20;\tsize:4;\tsigned:1;\n\
         \tfield:__data_loc char[] container_id;\toffset:24;\tsize:4;\tsigned:1;\n\
         \tfield:__data_loc char[] pod_uid;\toffset:28;\tsize:4;\tsigned:1;\n\
         \tfield:__data_loc char[] resource;\toffset:32;\tsize:4;\tsigned:1;\n\n\
         print fmt: \"pid=%u pid_in_container=%u executable=%s command_line=%s container_id=%s pod_uid=%s resource=%s\", REC->pid, \
         REC->pid_in_container, __get_str(executable), __get_str(command_line), __get_str(container_id), __get_str(pod_uid), \
         __get_str(resource)\n"
    )
}

/// The SAMPLE record describing `pid`, at `time` on `cpu`, with the
/// session's sample layout (IDENTIFIER, TID, TIME, CPU, RAW).
pub(crate) fn sample(pid: u32, time: u64, cpu: u32, info: &ProcessInfo) -> Vec<u8> {
    let command_line = info.command_line.as_ref().map(|args| json_array(args)).unwrap_or_default();
    let resource = if info.resource.is_empty() { String::new() } else { serde_json::to_string(&info.resource).unwrap_or_default() };
    let strings = [
        info.executable.as_deref().unwrap_or(""),
        &command_line,
        info.container_id.as_deref().unwrap_or(""),
        info.pod_uid.as_deref().unwrap_or(""),
        &resource,
    ];
    let mut raw = Vec::with_capacity(64);
    raw.extend_from_slice(&ID.to_ne_bytes());
    raw.extend_from_slice(&[0, 0]);
    raw.extend_from_slice(&(pid as i32).to_ne_bytes());
    raw.extend_from_slice(&pid.to_ne_bytes());
    // 0: not in another PID namespace (no process is pid 0 in one).
    raw.extend_from_slice(&info.pid_in_container.unwrap_or(0).to_ne_bytes());
    // `__data_loc`: each string's place counts from the start of the
    // record; the strings follow the last location word, from 36. One
    // longer than a location can say is cut to fit.
    let limit = |s: &str| s.len().min(u16::MAX as usize / (strings.len() + 1) - 1);
    let mut start = 36usize;
    for s in &strings {
        let len = limit(s) + 1;
        raw.extend_from_slice(&dyn_loc(start as u16, len as u16).to_ne_bytes());
        start += len;
    }
    for s in strings {
        raw.extend_from_slice(&s.as_bytes()[..limit(s)]);
        raw.push(0);
    }
    sample_record(PERF_ID, pid, time, cpu, raw)
}

/// A SAMPLE record of one of our own tracepoints, whose perf id is
/// `perf_id`, with the session's sample layout (IDENTIFIER, TID, TIME, CPU,
/// RAW) and `raw` (`trace_entry` and payload) padded to perf's 8 bytes.
pub(crate) fn sample_record(perf_id: u64, pid: u32, time: u64, cpu: u32, raw: Vec<u8>) -> Vec<u8> {
    let mut record = Vec::new();
    write_sample(&mut record, perf_id, (pid, pid), time, cpu, &[&raw]);
    record
}

/// Writes into `out` (replacing what it held) the SAMPLE the kernel writes
/// for a tracepoint hit, with the session's sample layout (IDENTIFIER, TID,
/// TIME, CPU, RAW): `raw` (trace_entry and payload, in pieces) padded as the
/// kernel pads it. `(pid, tid)` names the thread.
pub(crate) fn write_sample(out: &mut Vec<u8>, perf_id: u64, (pid, tid): (u32, u32), time: u64, cpu: u32, raw: &[&[u8]]) {
    let raw_len: usize = raw.iter().map(|piece| piece.len()).sum();
    // RAW's u32 size and its bytes together end 8-aligned.
    let padded = (4 + raw_len).next_multiple_of(8) - 4;
    let size = HEADER_LEN + 8 + 8 + 8 + 8 + 4 + padded;
    out.clear();
    out.extend_from_slice(&PERF_RECORD_SAMPLE.to_ne_bytes());
    // PERF_RECORD_MISC_USER: what the kernel sets for a user_events hit.
    out.extend_from_slice(&2u16.to_ne_bytes());
    out.extend_from_slice(&(size.min(usize::from(u16::MAX)) as u16).to_ne_bytes());
    out.extend_from_slice(&perf_id.to_ne_bytes());
    out.extend_from_slice(&pid.to_ne_bytes());
    out.extend_from_slice(&tid.to_ne_bytes());
    out.extend_from_slice(&time.to_ne_bytes());
    out.extend_from_slice(&cpu.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
    out.extend_from_slice(&(padded as u32).to_ne_bytes());
    for piece in raw {
        out.extend_from_slice(piece);
    }
    out.resize(size, 0);
}

/// The pid and description a `usertrace:process` payload holds, or None
/// for one that does not read as ours.
pub(crate) fn read(format: &EventFormat, raw: &[u8]) -> Option<(u32, ProcessInfo)> {
    let fields = decode(format, raw).ok()?;
    let get = |name: &str| fields.iter().find(|(n, _)| *n == name).map(|(_, v)| v);
    let pid = match get("pid")? {
        FieldValue::Unsigned(pid) => u32::try_from(*pid).ok()?,
        _ => return None,
    };
    let text = |name: &str| match get(name) {
        Some(FieldValue::Str(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    };
    let command_line = text("command_line").and_then(|s| serde_json::from_str::<Vec<String>>(&s).ok());
    let info = ProcessInfo {
        executable: text("executable").map(Cow::into_owned),
        command_line,
        container_id: text("container_id").map(Cow::into_owned),
        pod_uid: text("pod_uid").map(Cow::into_owned),
        pid_in_container: match get("pid_in_container") {
            Some(FieldValue::Unsigned(pid)) if *pid != 0 => u32::try_from(*pid).ok(),
            _ => None,
        },
        // Absent from files written before processes had resources.
        resource: text("resource").and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default(),
    };
    Some((pid, info))
}

fn json_array(args: &[String]) -> String {
    serde_json::to_string(args).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{parse, Record};

    fn format() -> EventFormat {
        EventFormat::parse(SYSTEM, &format_text()).unwrap()
    }

    #[test]
    fn a_description_reads_back_as_it_was_written() {
        let info = ProcessInfo {
            executable: Some("/usr/bin/python3.12".into()),
            command_line: Some(vec!["python3".into(), "-c".into(), "print('a b')".into(), "é".into()]),
            container_id: Some("ab".repeat(32)),
            pod_uid: Some("1b4f0d2e-7c3a-4e5b-9c2e-0a1b2c3d4e5f".into()),
            pid_in_container: Some(1),
            resource: [("service.name", "checkout"), ("team", "a,b \"c\"")].into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect(),
        };
        let bytes = sample(4242, 17, 1, &info);
        assert_eq!(bytes.len() % 8, 0);
        let Ok(Record::Sample { sample, raw, .. }) = parse(&bytes) else { panic!("not a sample") };
        assert_eq!((sample.id, sample.pid, sample.tid, sample.time, sample.cpu), (PERF_ID, 4242, 4242, 17, 1));
        assert_eq!(read(&format(), raw), Some((4242, info)));
    }

    #[test]
    fn what_was_missing_stays_missing() {
        let bytes = sample(7, 1, 0, &ProcessInfo::default());
        let Ok(Record::Sample { raw, .. }) = parse(&bytes) else { panic!("not a sample") };
        assert_eq!(read(&format(), raw), Some((7, ProcessInfo::default())));
    }

    #[test]
    fn its_format_is_one_tracepoint_decode_reads() {
        let parsed = tracepoint_decode::PerfEventFormat::parse(true, SYSTEM, &format_text()).unwrap();
        assert_eq!((parsed.name(), parsed.id(), parsed.fields().len()), (NAME, u32::from(ID), 11));
    }
}

//! `usertrace:dump`, the tracepoint of our own that says, inside a flight
//! recorder's dump, what triggered it and what window it holds, so that
//! `perf script` and `usertrace convert` show it like any event (the same
//! choice as `usertrace:process`, see the module above).

use usertrace::wire::dyn_loc;

use super::format::{sample_record, COMMON_FIELDS};

/// The tracepoint's name: `usertrace:dump`.
pub(crate) const NAME: &str = "dump";
/// Its `common_type`: beside `usertrace:process`'s, far above any kernel's.
pub(crate) const ID: u16 = u16::MAX - 1;
/// Its perf id in the file.
pub(crate) const PERF_ID: u64 = u64::MAX - 2;

/// The format file's text, as tracefs would show it.
pub(crate) fn format_text() -> String {
    format!(
        "name: {NAME}\nID: {ID}\nformat:\n{COMMON_FIELDS}\
         \tfield:u64 trigger_ns;\toffset:8;\tsize:8;\tsigned:0;\n\
         \tfield:u64 window_first_ns;\toffset:16;\tsize:8;\tsigned:0;\n\
         \tfield:u64 window_last_ns;\toffset:24;\tsize:8;\tsigned:0;\n\
         \tfield:u64 lost;\toffset:32;\tsize:8;\tsigned:0;\n\
         \tfield:__data_loc char[] reason;\toffset:40;\tsize:4;\tsigned:1;\n\n\
         print fmt: \"reason=%s trigger_ns=%llu window_first_ns=%llu window_last_ns=%llu lost=%llu\", \
         __get_str(reason), REC->trigger_ns, REC->window_first_ns, REC->window_last_ns, REC->lost\n"
    )
}

/// The SAMPLE record of a dump asked for at `trigger`: why, the first and
/// last event times it holds, and what the rings lost inside them. It is
/// written as the recorder's own (pid 0, CPU 0), at the last of its
/// times: it comes last in the file, and perf wants no record older than
/// one of an earlier round.
pub(crate) fn sample(trigger: u64, reason: &str, first: u64, last: u64, lost: u64) -> Vec<u8> {
    let reason = &reason.as_bytes()[..reason.len().min(u16::MAX as usize / 4 - 1)];
    let mut raw = Vec::with_capacity(40 + reason.len());
    raw.extend_from_slice(&ID.to_ne_bytes());
    raw.extend_from_slice(&[0, 0]);
    raw.extend_from_slice(&0i32.to_ne_bytes());
    for value in [trigger, first, last, lost] {
        raw.extend_from_slice(&value.to_ne_bytes());
    }
    raw.extend_from_slice(&dyn_loc(44, reason.len() as u16 + 1).to_ne_bytes());
    raw.extend_from_slice(reason);
    raw.push(0);
    sample_record(PERF_ID, 0, trigger.max(last), 0, raw)
}

#[cfg(test)]
mod tests {
    use super::super::format::SYSTEM;
    use super::*;
    use crate::decode::{decode, FieldValue};
    use crate::format::EventFormat;
    use crate::record::{parse, Record};

    #[test]
    fn a_dump_record_reads_back_with_its_reason_and_window() {
        let format = EventFormat::parse(SYSTEM, &format_text()).unwrap();
        let bytes = sample(50, "myapp_error pid 7", 10, 60, 3);
        assert_eq!(bytes.len() % 8, 0);
        let Ok(Record::Sample { sample, raw, .. }) = parse(&bytes) else { panic!("not a sample") };
        assert_eq!((sample.id, sample.time), (PERF_ID, 60), "at the last time in the dump, not before it");
        let fields = decode(&format, raw).unwrap();
        let names: Vec<_> = fields.iter().map(|(n, v)| format!("{n}={v}")).collect();
        assert_eq!(names, ["trigger_ns=50", "window_first_ns=10", "window_last_ns=60", "lost=3", "reason=myapp_error pid 7"]);
        assert!(matches!(fields[4].1, FieldValue::Str(_)));
    }

    #[test]
    fn its_format_is_one_tracepoint_decode_reads() {
        let parsed = tracepoint_decode::PerfEventFormat::parse(true, SYSTEM, &format_text()).unwrap();
        assert_eq!((parsed.name(), parsed.id(), parsed.fields().len()), (NAME, u32::from(ID), 9));
    }
}

//! `--format json`: the JSON lines `usertrace` prints, one type per line.
//!
//! # A public contract
//!
//! Scripts parse these lines, so each field below keeps its name, type and
//! meaning. New fields may be added (parse by name, ignore what you do not
//! know); none is renamed, retyped or removed without a major version.
//! Every line is one JSON object followed by `\n`; no line holds a raw
//! newline.
//!
//! Values throughout:
//! - integers are exact decimal integers, u64 and i64 in full: values
//!   beyond 2^53 lose precision in parsers that read every number as a
//!   double (JavaScript's `JSON.parse`, jq before 1.7).
//! - floats are finite decimals with no exponent, the shortest that reads
//!   back to the same value (`1.5`, `-2.25`, `2`, `0.0000001`). A NaN or an
//!   infinity has no JSON number: it is the string `"NaN"`, `"inf"` or
//!   `"-inf"`.
//! - strings are UTF-8 (invalid bytes replaced by U+FFFD); `"` and `\`
//!   are escaped, as are control characters below U+0020: `\n`, `\r`, `\t`,
//!   others `\u00XX` (lowercase hex).
//! - paths are strings, non-UTF-8 bytes replaced by U+FFFD.
//!
//! Every line is written by [`usertrace_output::jsonl::write_json_line`],
//! so all commands print values alike.
//!
//! ## `record --format json`, `-o FILE.jsonl`: one line per record
//!
//! Events, processes, exits and losses, each line with its `type`: the
//! JSON-lines archive, documented with its reader in
//! [`usertrace_output::jsonl`] (output/src/jsonl.rs), which `convert` and
//! `report` read back. Since 0.1.0 an EventHeader event's line is named
//! `Provider:Event`, with its tracepoint in `tracepoint`, and its arrays and
//! structs are JSON arrays and objects (that module says more).
//!
//! ## `report --format json`: one [`Report`](usertrace_output::Report)
//!
//! `duration_ns`; `events`: `{"name", "count", "rate_per_s" (float or
//! null)}` by name; `spans`: `{"name", "count", "unfinished", "p50_ns",
//! "p90_ns", "p99_ns", "max_ns", "histogram": [{"from_ns", "count"}]}` by
//! name, and where scheduler records (`record --sched`) cover the spans,
//! `on_cpu`, `runnable` and `blocked`, each `{"p50_ns", "p90_ns", "p99_ns",
//! "max_ns", "total_ns"}`, and `top_wakers`: `[{"pid", "tid", "thread",
//! "process", "count"}]`; and where the begins had user stacks (`record
//! --call-graph fp`), `begin_stacks`: the 3 most frequent, most first,
//! `[{"count", "frames"}]`, `frames` innermost first, each frame an object
//! with those of `"function"`, `"file"` (strings), `"line"`, `"module"`
//! (string), `"offset"` (in `module`, of an unnamed frame) and `"address"`
//! (of an unnamed frame with no module) that are known, stacks told apart
//! by these, not by address; and `begins_from_other_stacks` (integer: the
//! begins whose stack is not listed); `traces`: whole requests, `{"root",
//! "process", "count", "unfinished"}` by root span name and process (shown
//! name), with `duration` (`{"p50_ns", "p90_ns", "p99_ns", "max_ns",
//! "total_ns"}`) when a root finished; `processes`: `{"pid", "name",
//! "events", "spans"}` by pid; `lost_events`, `lost_task_records`,
//! `orphan_ends` (integers).
//!
//! ## `stat --format json`: one [`StatLine`] when the run ends
//!
//! | field               | type    | meaning |
//! |---------------------|---------|---------|
//! | `counts`            | object  | event (`SYSTEM:NAME`) → events counted; every attached event shows, 0 if none came |
//! | `events`            | integer | the sum of `counts` |
//! | `skipped`           | integer | events left out because their pid was not given with `-p` (0 without `-p`) |
//! | `lost`              | integer | events lost because a ring was full: a CPU's (of any process), or a producer thread's in shared memory |
//! | `lost_by_cpu`       | array   | `{"cpu": integer, "lost": integer}` for each CPU whose perf ring lost events, by CPU |
//! | `lost_in_shared_memory` | integer | of `lost`, those lost in producers' shared-memory rings (a producer sizes its own: `USERTRACE_SHM_RING_KIB`) |
//! | `lost_task_records` | integer | task records lost, so some process names may be wrong |
//! | `malformed`         | integer | records that could not be parsed and were skipped (should be 0) |
//! | `seconds`           | float   | how long the session ran |
//! | `otlp`              | object  | only with --otlp or --config: [`OtlpLine`], what became of the events exported |
//!
//! [`OtlpLine`]: `exported`, `dropped` (queue full, or unsent when the
//! exporter's time at exit ran out), `failed` (refused by the endpoint)
//! and, with --tail, `left_out_by_tail` (events of the traces it dropped) —
//! events, which add up to `events` — then `spans`, `log_records` (what the
//! endpoint took) and `retries`.
//!
//! ## `list --format json`: [`ListedEvent`], one per registered event
//!
//! | field     | type    | meaning |
//! |-----------|---------|---------|
//! | `event`   | string  | `SYSTEM:NAME`, as `record -e` and perf take it |
//! | `system`  | string  | `user_events` or `user_events_multi` |
//! | `name`    | string  | the tracepoint's name under tracefs |
//! | `id`      | integer | the tracepoint id (perf's `config`) |
//! | `fields`  | array   | `{"name": string, "type": string}` in declaration order, the type as tracefs prints it (`u32`, `__rel_loc char`) |
//! | `used_by` | array   | strings, who has it enabled (`ftrace`, `perf`, `other`); empty when nobody traces it |
//!
//! ## `status --format json`: one [`StatusLine`]
//!
//! | field         | type           | meaning |
//! |---------------|----------------|---------|
//! | `kernel`      | string         | the kernel release (`/proc/sys/kernel/osrelease`) |
//! | `tracefs`     | string or null | the tracefs mount point in use, null if none was found |
//! | `tried`       | array          | strings, the mount points looked at, in order |
//! | `user_events` | object         | `available` (bool); `state`: `available`, `tracefs_not_mounted`, `user_events_missing`, `permission_denied` or `open_failed`; `message` (string): what it means and what to do |
//! | `recording`   | object         | `allowed` (bool): whether `record` and `stat` could record: there are user_events and perf permits opening them; `perf_event_paranoid` (integer or null if unreadable); `cap_perfmon` (bool: CAP_PERFMON or CAP_SYS_ADMIN is effective); `message` (string) |
//! | `kernel_config` | object       | what the kernel's build config says (added last, by `status`): `source` (string: the file read, or null if none could be); `user_events`: `y`, `not_set`, `absent` or `unreadable`; `tried` (array of the files looked at) |

use std::collections::BTreeMap;

use serde::Serialize;
use usertrace_output::otlp::ExportSummary;
pub use usertrace_output::jsonl::write_json_line as write_line;

/// The summary of a `stat` run.
#[derive(Serialize)]
pub struct StatLine<'a> {
    pub counts: &'a BTreeMap<String, u64>,
    pub events: u64,
    pub skipped: u64,
    pub lost: u64,
    pub lost_by_cpu: Vec<CpuLost>,
    pub lost_in_shared_memory: u64,
    pub lost_task_records: u64,
    pub malformed: u64,
    pub seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub otlp: Option<OtlpLine>,
}

/// `stat`'s account of OTLP export (see the table above).
#[derive(Serialize)]
pub struct OtlpLine {
    pub exported: u64,
    pub dropped: u64,
    pub failed: u64,
    pub spans: u64,
    pub log_records: u64,
    pub retries: u64,
    /// Events of the traces --tail dropped; absent without --tail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out_by_tail: Option<u64>,
}

impl From<&ExportSummary> for OtlpLine {
    fn from(s: &ExportSummary) -> OtlpLine {
        OtlpLine {
            exported: s.exported_events,
            dropped: s.dropped_events,
            failed: s.failed_events,
            spans: s.spans,
            log_records: s.logs,
            retries: s.retries,
            left_out_by_tail: s.tail.map(|t| t.events_dropped),
        }
    }
}

#[derive(Serialize)]
pub struct CpuLost {
    pub cpu: u32,
    pub lost: u64,
}

/// One event of `list`.
#[derive(Serialize)]
pub struct ListedEvent<'a> {
    pub event: String,
    pub system: &'a str,
    pub name: &'a str,
    pub id: u64,
    pub fields: Vec<ListedField<'a>>,
    pub used_by: Vec<&'a str>,
    /// `user_events`, or `shm` for a tracepoint registered in shared memory.
    pub transport: &'static str,
    /// For `shm`: the processes that have it registered (the kernel's
    /// listing does not say).
    pub pids: Vec<u32>,
}

#[derive(Serialize)]
pub struct ListedField<'a> {
    pub name: &'a str,
    #[serde(rename = "type")]
    pub type_name: &'a str,
}

/// What `status` found.
#[derive(Serialize)]
pub struct StatusLine {
    pub kernel: String,
    pub tracefs: Option<String>,
    pub tried: Vec<String>,
    pub user_events: UserEventsStatus,
    pub transport: TransportStatus,
    pub recording: RecordingStatus,
}

/// Which transport a program started here would use, and why.
#[derive(Serialize)]
pub struct TransportStatus {
    /// `user_events`, `shm`, or `invalid` (USERTRACE_TRANSPORT is unusable).
    pub name: &'static str,
    pub reason: String,
}

#[derive(Serialize)]
pub struct UserEventsStatus {
    pub available: bool,
    pub state: &'static str,
    pub message: String,
}

#[derive(Serialize)]
pub struct RecordingStatus {
    pub allowed: bool,
    pub perf_event_paranoid: Option<i32>,
    pub cap_perfmon: bool,
    pub message: String,
}

/// Prints `value` as one JSON line on stdout (through `crate::stdout`).
pub fn print_line(value: &impl Serialize) {
    let mut line = Vec::new();
    write_line(value, &mut line);
    crate::stdout::write_bytes(&line);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_keep_their_field_order() {
        let counts = BTreeMap::from([("user_events:a".to_owned(), 2u64)]);
        let line = StatLine { counts: &counts, events: 2, skipped: 0, lost: 1, lost_by_cpu: vec![CpuLost { cpu: 3, lost: 1 }], lost_in_shared_memory: 0, lost_task_records: 0, malformed: 0, seconds: 1.5, otlp: None };
        let mut out = Vec::new();
        write_line(&line, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"counts\":{\"user_events:a\":2},\"events\":2,\"skipped\":0,\"lost\":1,\"lost_by_cpu\":[{\"cpu\":3,\"lost\":1}],\"lost_in_shared_memory\":0,\"lost_task_records\":0,\"malformed\":0,\"seconds\":1.5}\n"
        );
        // With --otlp, what became of the events comes last.
        let summary = ExportSummary { exported_events: 1, dropped_events: 1, spans: 1, retries: 2, ..Default::default() };
        let line = StatLine { otlp: Some(OtlpLine::from(&summary)), ..line };
        let mut out = Vec::new();
        write_line(&line, &mut out);
        assert!(
            String::from_utf8(out).unwrap().ends_with(
                ",\"seconds\":1.5,\"otlp\":{\"exported\":1,\"dropped\":1,\"failed\":0,\"spans\":1,\"log_records\":0,\"retries\":2}}\n"
            )
        );
    }
}

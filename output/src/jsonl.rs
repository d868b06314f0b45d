//! The JSON-lines archive: what `usertrace record --format json` prints
//! and `-o FILE.jsonl` writes, one record per line, and its reader, which
//! `convert` and `report` start from.
//!
//! # A public contract
//!
//! Scripts parse these lines, so each field below keeps its name, type and
//! meaning. New fields and new line kinds may be added (parse by name,
//! ignore what you do not know); none is renamed, retyped or removed
//! without a major version. Every line is one JSON object followed by
//! `\n`; no line holds a raw newline. Lines come in time order.
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
//!
//! Every line has `type`, which says what the other fields are. A line
//! without `type` (written before it was added) is an `event` line.
//!
//! ## `"type": "event"`: one per event ([`EventRecord`])
//!
//! | field        | type    | meaning |
//! |--------------|---------|---------|
//! | `type`       | string  | `event` |
//! | `time_ns`    | integer | CLOCK_MONOTONIC nanoseconds when the event was emitted |
//! | `cpu`        | integer | the CPU it was emitted on |
//! | `pid`        | integer | the emitting process (thread group) id |
//! | `tid`        | integer | the emitting thread id |
//! | `comm`       | string  | the thread's name at that time |
//! | `process`    | string  | the process's (main thread's) name at that time |
//! | `namespaces` | object  | only when the session may record them (CAP_PERFMON or root): `net`, `uts`, `ipc`, `pid`, `user`, `mnt`, `cgroup`, each the namespace's inode number as `/proc/PID/ns/*` shows it (0 where unknown) |
//! | `event`      | string  | the event's name, without its system; an EventHeader event's is `Provider:Event`, as Microsoft's decoders name it |
//! | `tracepoint` | string  | only where it is not `event`: the tracepoint the event came through, without its system (an EventHeader event's `Provider_L4K1`) |
//! | `fields`     | object  | the event's fields in declaration order: name → value |
//! | `error`      | string  | only when the payload could not be decoded; `fields` is then `{}` |
//! | `stack`      | array   | only when recorded (`usertrace record --call-graph fp`): the emitting thread's user stack, innermost frame first, each frame an object (below) |
//!
//! A field value is an integer (unsigned and signed integer fields), `true`
//! or `false` (bool fields), a float (f32, f64), a string (strings; byte
//! arrays as lowercase hex; non-finite floats as above), or, for an
//! EventHeader event, an array of values (`"arr": [1, 2]`) or an object of
//! a struct's members in order (`"pt": {"x": 1, "y": 2}`), as
//! `tracepoint_decode`'s JSON gives them.
//!
//! A `stack` frame ([`StackFrame`](crate::StackFrame)) has `address`
//! (integer: where the thread was, in the first frame; a return address in
//! the others), and, each only when known: `module` (string: the file
//! mapped there), `module_offset` (integer: the address's offset in that
//! file), `function` (string: demangled), `file` and `line` (the source
//! location, from the file's debug information). An inlined call is a
//! frame of its own, with the same address as the frame it was inlined
//! into.
//!
//! Changed since 0.1.0 (the line keeps its other fields): an EventHeader event's
//! `event` was its tracepoint, now in `tracepoint`, and its arrays and
//! structs were flattened into fields named `arr[0]` and `pt.x`. Its
//! `meta.*` fields (`meta.provider`, `meta.event`, `meta.level`, ...)
//! stay flat, as before. Files written by 0.1.0 still read.
//!
//! ## `"type": "process"`: a process seen ([`ProcessRecord`])
//!
//! At its exec, or the first time the recording met its pid.
//!
//! | field          | type    | meaning |
//! |----------------|---------|---------|
//! | `type`         | string  | `process` |
//! | `time_ns`      | integer | when it was seen |
//! | `pid`          | integer | its process id |
//! | `executable`   | string  | only when known: the full path of the program it runs |
//! | `command_line` | array   | only when known: its arguments (strings), the program's name first |
//! | `container_id` | string  | only inside a container: its id, 64 hex digits from the cgroup path |
//! | `resource`     | object  | only when it declares one: its OpenTelemetry resource attributes (`service.name` and the rest, from its `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`), strings by key |
//! | `pod_uid`      | string  | only inside a Kubernetes pod: its uid, from the cgroup path |
//! | `pid_in_container` | integer | only in another PID namespace: its pid there (`NSpid`), beside `pid`, the host's |
//!
//! ## `"type": "exit"`: a thread exited ([`ExitRecord`])
//!
//! | field     | type    | meaning |
//! |-----------|---------|---------|
//! | `type`    | string  | `exit` |
//! | `time_ns` | integer | when it exited |
//! | `pid`     | integer | its process |
//! | `tid`     | integer | the thread; equal to `pid` when the process exited |
//!
//! ## `"type": "lost"`: records dropped ([`LostRecord`])
//!
//! | field      | type    | meaning |
//! |------------|---------|---------|
//! | `type`     | string  | `lost` |
//! | `time_ns`  | integer | when the loss was reported (after the dropped records) |
//! | `cpu`      | integer | the CPU whose ring was full |
//! | `count`    | integer | how many records were dropped |
//! | `sideband` | bool    | `true`: task records were dropped (some names may be wrong), not events |
//!
//! ## `"type": "clock"`: the wall clock beside the recording's ([`ClockRecord`])
//!
//! The first line of a file `usertrace record -o FILE.jsonl` writes. It lets
//! `usertrace export` give events their Unix times after a reboot or on
//! another machine.
//!
//! | field     | type    | meaning |
//! |-----------|---------|---------|
//! | `type`    | string  | `clock` |
//! | `time_ns` | integer | CLOCK_MONOTONIC, as every other line's `time_ns` |
//! | `unix_ns` | integer | CLOCK_REALTIME at the same moment, ns since the Unix epoch |
//!
//! # Reading it back
//!
//! [`open`] reads a file (or standard input, `-`) and [`Reader`] gives back
//! every line as a [`Record`], one at a time; no line may be longer than
//! [`MAX_LINE_BYTES`] (16 MiB). Integers, bools,
//! strings and finite floats come back exactly, except that what a line
//! does not say cannot be recovered: a field's declared type. So a float
//! with no fractional part (`2`) reads as an integer, an f32 as an f64,
//! and bytes (hex) and non-finite floats (`"NaN"`) as strings. That is
//! lossless for what the timeline, the Perfetto and Chrome traces and the
//! report need: names, times, ids, span ids and durations (integers), and
//! every field value as it would be shown.
//!
//! [`Record`]: crate::Record
//! [`EventRecord`]: crate::EventRecord
//! [`ProcessRecord`]: crate::ProcessRecord
//! [`ExitRecord`]: crate::ExitRecord
//! [`LostRecord`]: crate::LostRecord
//! [`ClockRecord`]: crate::ClockRecord

mod format;
mod read;
pub(crate) mod write;

pub use format::{write_json_line, LineFormatter};
pub use read::{input_name, open, read_file, Input, ReadError, Reader, MAX_LINE_BYTES};
pub use write::{write_file, write_record, EventLine, FieldRefs, FieldsJson, JsonlWriter, NamespacesJsonCache, NamespacesRef};

#[cfg(test)]
mod tests;

//! OTLP export: a recording's spans and events, sent to an OpenTelemetry
//! pipeline (a Collector, Jaeger, Tempo, a vendor) over OTLP/HTTP with
//! protobuf bodies, live while recording or from a JSON-lines file.
//!
//! The message types are the `opentelemetry-proto` crate's (prost); the
//! HTTP client is ureq (rustls). [`mapping`] turns records into OTLP,
//! [`live`] does it batch by batch, [`queue`], [`backoff`], [`transport`]
//! and [`exporter`] get the batches out without ever making the recorder
//! wait, and [`config`] reads the endpoint and the standard variables.
//!
//! # The mapping
//!
//! | usertrace | OTLP | how |
//! | --- | --- | --- |
//! | a span (a `span_begin`/`span_end` pair, or `span_start_ns` + `span_duration_ns`; see [`crate::timeline`]) | `Span`, kind INTERNAL | name: the begin event's name; start and end: the begin's and end's times |
//! | the span's identity | `span_id` | its id (`span_begin`, a W3C span id) when its begin carries the convention's trace fields (`usertrace::span`); for a begin written before them (older recordings, perf's own files), XXH3-64 of (pid, span id or 0, tid, start ns, name): the same recording always gives the same ids |
//! | the span's parent | `parent_span_id` | the `parent_span_id` its begin wrote, when it wrote its trace (a nonzero trace id): a span of any process or machine, none for 0; else its `span_parent` field (a span id of the same process), else the latest-begun span still open on its thread when it began (thread nesting); a completed span (a GC pause) has none |
//! | the span's trace | `trace_id` | the trace id its begin wrote (`trace_id_hi`, `trace_id_lo`), if not 0; else its parent's; for a root span, XXH3-128 of the same tuple |
//! | a span written by OpenTelemetry's user_events trace exporter (see [`crate::timeline`]) | `trace_id`, `span_id`, `parent_span_id` | the ids its SDK gave it (`PartA.ext_dt_traceId`, `PartA.ext_dt_spanId`, `PartB.parentId`), so it joins the rest of its trace |
//! | that span's Common Schema envelope | `kind`, `status`, `attributes` | `PartB.kind` (0 internal … 4 consumer); `PartB.success` false: code ERROR, message `PartB.statusMessage`; the SDK's attributes (`PartC.<key>`) as `<key>`, other non-envelope fields under their own names |
//! | the span's fields (begin's, then end's) | `Span.attributes` | typed as below; `thread.id`, `thread.name` added; `unfinished` when the timeline closed it (thread or process exit, end of recording) |
//! | an `error` field on the span | `Span.status` | code ERROR, message: the field's value |
//! | where the span's time went, when the recording has scheduler records of its begin thread ([`crate::timeline::SchedSummary`]) | `Span.attributes` | `usertrace.sched.on_cpu_ns`, `.runnable_ns`, `.sleeping_ns`, `.uninterruptible_ns`, `.context_switches`, `.migrations`; `.other_blocked_ns`, `.unknown_ns` when not 0; `.top_waker` (`process (pid) / thread (tid), N times`); `.ended_on_another_thread` when true. No semantic convention names a span's CPU time: `process.cpu.time` and `process.context_switches` are metrics |
//! | an event that is not part of a span | `LogRecord` | `event_name` and `body`: the event's name; `time_unix_nano` and `observed_time_unix_nano`: its time; attributes: its fields, typed, then `thread.id`, `thread.name`; `trace_id`/`span_id`: the latest-begun span open on its thread then, if any |
//! | an undecodable payload | `LogRecord` attribute `error` | the decoder's message |
//! | u8…u64, i8…i64 | `int_value` | a u64 above `i64::MAX` as `string_value` (its decimal) |
//! | bool, f32/f64, string, bytes | `bool_value`, `double_value`, `string_value`, `bytes_value` | |
//! | a process | `Resource` (one `ResourceSpans` and one `ResourceLogs` per process) | `service.name`: `--service`, else `OTEL_SERVICE_NAME`, else `service.name` in `OTEL_RESOURCE_ATTRIBUTES`, else the process's name; `host.name`; `process.pid`; `process.executable.name` (the timeline's best name); `process.executable.path`; `process.command_line` (argv joined by spaces) |
//! | the process's namespaces (recorded with CAP_PERFMON) | `Resource` attributes `linux.namespace.{net,uts,ipc,pid,user,mnt,cgroup}` | the inode numbers `/proc/PID/ns/*` shows, nonzero ones only |
//! | `OTEL_RESOURCE_ATTRIBUTES` | `Resource` attributes | added unless the recording set the key |
//! | who made them | `InstrumentationScope` | `usertrace`, the crate's version |
//! | a span an OpenTelemetry SDK finished (`<provider>_otel_span`, the core's `usertrace::otel_span`) | `Span`, in a `ScopeSpans` of its own scope | exactly the protobuf it carries (parts joined, [`otel`]), under its process's resource; one whose parts were lost, or that does not decode, from its readable ids, name and times with `usertrace.otel.loss` saying why |
//! | a log record an OpenTelemetry SDK emitted (`<provider>_otel_log`) | `LogRecord`, in a `ScopeLogs` of its own scope | likewise: exactly the protobuf it carries, else from its readable fields, marked |
//! | the Resource an OpenTelemetry SDK declared (`<provider>_otel_resource`, the core's `usertrace::otel_resource`) | its process's `Resource` | the latest of the process, from the batch being sent or before ([`sdk_resource`]): its attributes exactly, in its order, then `host.name`, `process.*`, `container.id`, `k8s.pod.uid`, `linux.namespace.*` and the recorder's `OTEL_RESOURCE_ATTRIBUTES` where it did not set them; the process's environment is not read into it. One that does not decode changes nothing and is counted. No item of its own |
//! | times (CLOCK_MONOTONIC) | Unix ns | plus CLOCK_REALTIME − CLOCK_MONOTONIC, read while recording or kept in the file's `clock` line ([`mapping::Clock`]) |
//!
//! Lost records, process and exit records are not exported themselves:
//! they shape the spans (closing them, naming processes); nor are
//! scheduler records, which only give the spans' `usertrace.sched.*`.

pub mod backoff;
pub mod config;
pub mod exporter;
pub mod ids;
pub mod live;
pub mod mapping;
pub mod otel;
pub mod queue;
pub mod sdk_resource;
pub mod tail;
pub mod transport;

pub use config::{Compression, ConfigError, Endpoint, EndpointArgs};
pub use exporter::{ExportSummary, Exporter, ExporterSettings, StillFull};
pub use mapping::{map_records, Clock, Otlp, ResourceSettings};
pub use queue::QueueLimits;
pub use tail::{TailPolicy, TailRule};

/// The message types, for callers that inspect what is sent.
pub use opentelemetry_proto::tonic as proto;

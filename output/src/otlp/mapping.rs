//! Records to OTLP messages, by the table in [the module doc](super): the
//! [`Timeline`] pairs span begins and ends and knows each thread's nesting;
//! this file turns its spans into OTLP spans with parents, its instants
//! into log records, and its processes into resources.

use std::collections::BTreeMap;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, ArrayValue, InstrumentationScope, KeyValue, KeyValueList};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{span, status, ResourceSpans, ScopeSpans, Span, Status};

use super::ids::SpanKey;
use super::sdk_resource::SdkResources;
use crate::record::{ClockRecord, Namespaces, Record, Value};
use crate::timeline::{self, otel_attributes, otel_failure, otel_ids, otel_kind, Process, SchedSummary, SpanTrace, Timeline};
use usertrace::resource::SERVICE_NAME_KEY;

/// The arg that names a span's parent explicitly, as the core's span
/// convention defines it (`usertrace::span::SPAN_PARENT_FIELD`).
pub use usertrace::span::SPAN_PARENT_FIELD as SPAN_PARENT;

/// What the resources say besides what the recording tells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceSettings {
    /// `service.name` of every process that declares none of its own
    /// (`--service`, else the recorder's `OTEL_SERVICE_NAME`); `None`:
    /// `service.name` from `OTEL_RESOURCE_ATTRIBUTES`, else each
    /// process's name.
    pub service_name: Option<String>,
    /// `host.name`.
    pub host_name: String,
    /// `OTEL_RESOURCE_ATTRIBUTES`, in order; added to every resource
    /// unless the recording or the process's own resource set the key.
    pub attributes: Vec<(String, String)>,
    /// Leave `process.command_line` out: a command line often holds a
    /// password or token (`--otlp-no-command-line`).
    pub omit_command_line: bool,
}

/// Converts CLOCK_MONOTONIC (the recording's clock) to Unix time (OTLP's).
///
/// A live export takes the offset in force while recording; a file takes
/// the one its [`ClockRecord`] line kept ([`Clock::of_recording`]), so that
/// it exports right after a reboot or on another machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    /// CLOCK_REALTIME minus CLOCK_MONOTONIC, in ns.
    pub unix_minus_monotonic_ns: i128,
}

impl Clock {
    /// The offset a pair of clock readings gives.
    pub fn from_reading(reading: &ClockRecord) -> Clock {
        Clock { unix_minus_monotonic_ns: i128::from(reading.unix_ns) - i128::from(reading.time_ns) }
    }

    /// The offset of the recording's first clock reading, if it has one
    /// (recordings from before readings were kept have none).
    pub fn of_recording(records: &[Record]) -> Option<Clock> {
        records.iter().find_map(|r| match r {
            Record::Clock(reading) => Some(Clock::from_reading(reading)),
            _ => None,
        })
    }

    /// The Unix time of the monotonic time `ns` (0 if before 1970).
    pub fn unix_ns(&self, ns: u64) -> u64 {
        u64::try_from(i128::from(ns) + self.unix_minus_monotonic_ns).unwrap_or(0)
    }
}

/// One recording (or one live batch) as the two OTLP export requests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Otlp {
    /// Spans, one `ResourceSpans` per process.
    pub traces: ExportTraceServiceRequest,
    /// Log records, one `ResourceLogs` per process.
    pub logs: ExportLogsServiceRequest,
}

impl Otlp {
    /// How many spans it holds.
    pub fn span_count(&self) -> usize {
        self.traces.resource_spans.iter().flat_map(|r| &r.scope_spans).map(|s| s.spans.len()).sum()
    }

    /// How many log records it holds.
    pub fn log_count(&self) -> usize {
        self.logs.resource_logs.iter().flat_map(|r| &r.scope_logs).map(|s| s.log_records.len()).sum()
    }
}

/// Maps a whole recording.
pub fn map_records(records: &[Record], resource: &ResourceSettings, clock: Clock) -> Otlp {
    let records = super::otel::Reassembler::default().take(records);
    // A whole recording: each process's latest SDK resource names all its
    // items, those written before it too.
    let sdk = SdkResources::of(&records);
    map_timeline(&Timeline::build(&records), &namespaces_by_pid(&records), resource, &sdk, clock, |_| true).into_otlp()
}

/// A batch mapped but not yet grouped into requests: each span and log
/// record beside its process and the events it came from, so that
/// tail-based export ([`super::tail`]) can hold some back, trace by
/// trace, and still count every event.
#[derive(Debug, Clone, Default)]
pub struct Mapped {
    /// The resource of each process an item names.
    pub resources: BTreeMap<u32, Resource>,
    /// Spans, in the timeline's order.
    pub spans: Vec<MappedItem<Span>>,
    /// Log records, in time order.
    pub logs: Vec<MappedItem<LogRecord>>,
    /// The resource events (`<provider>_otel_resource`) the batch held:
    /// they become no item, but count as sent with it.
    pub declarations: u64,
}

/// One span or log record of a [`Mapped`] batch.
#[derive(Debug, Clone)]
pub struct MappedItem<T> {
    /// Its process.
    pub pid: u32,
    /// The events it was made of: 2 for a span whose begin and end were
    /// both recorded, 1 for anything else (a completed span, a span the
    /// timeline closed, a log record).
    pub events: u64,
    /// The message itself.
    pub item: T,
    /// Its instrumentation scope, where an SDK gave one (a span carried
    /// whole); `None`: usertrace's own.
    pub scope: Option<InstrumentationScope>,
}

impl Mapped {
    /// How many events its items were made of.
    pub fn events(&self) -> u64 {
        self.spans.iter().map(|s| s.events).chain(self.logs.iter().map(|l| l.events)).sum::<u64>() + self.declarations
    }

    /// The two requests: one `ResourceSpans` and one `ResourceLogs` per
    /// process, in pid order, each item in its order here.
    pub fn into_otlp(self) -> Otlp {
        let scope = InstrumentationScope { name: "usertrace".into(), version: env!("CARGO_PKG_VERSION").into(), ..Default::default() };
        // Per process, one `ScopeSpans` per scope, in the order each first
        // appears: an SDK's spans keep the scope their tracer had.
        let mut spans_by_pid: BTreeMap<u32, Vec<ScopeSpans>> = BTreeMap::new();
        for s in self.spans {
            let scope = s.scope.unwrap_or_else(|| scope.clone());
            let groups = spans_by_pid.entry(s.pid).or_default();
            match groups.iter_mut().find(|g| g.scope.as_ref() == Some(&scope)) {
                Some(group) => group.spans.push(s.item),
                None => groups.push(ScopeSpans { scope: Some(scope), spans: vec![s.item], schema_url: String::new() }),
            }
        }
        let mut logs_by_pid: BTreeMap<u32, Vec<ScopeLogs>> = BTreeMap::new();
        for l in self.logs {
            let scope = l.scope.unwrap_or_else(|| scope.clone());
            let groups = logs_by_pid.entry(l.pid).or_default();
            match groups.iter_mut().find(|g| g.scope.as_ref() == Some(&scope)) {
                Some(group) => group.log_records.push(l.item),
                None => groups.push(ScopeLogs { scope: Some(scope), log_records: vec![l.item], schema_url: String::new() }),
            }
        }
        let resource_of = |pid: u32| self.resources.get(&pid).cloned();
        Otlp {
            traces: ExportTraceServiceRequest {
                resource_spans: spans_by_pid
                    .into_iter()
                    .map(|(pid, scope_spans)| ResourceSpans {
                        resource: resource_of(pid),
                        scope_spans,
                        schema_url: String::new(),
                    })
                    .collect(),
            },
            logs: ExportLogsServiceRequest {
                resource_logs: logs_by_pid
                    .into_iter()
                    .map(|(pid, scope_logs)| ResourceLogs {
                        resource: resource_of(pid),
                        scope_logs,
                        schema_url: String::new(),
                    })
                    .collect(),
            },
        }
    }
}

/// The latest namespaces each process's events carried.
pub(super) fn namespaces_by_pid(records: &[Record]) -> BTreeMap<u32, Namespaces> {
    let mut out = BTreeMap::new();
    for r in records {
        if let Record::Event(e) = r {
            if let Some(ns) = e.namespaces {
                out.insert(e.pid, ns);
            }
        }
    }
    out
}

/// Where each span stands in its trace.
struct Lineage {
    span_id: [u8; 8],
    trace_id: [u8; 16],
    parent: Option<[u8; 8]>,
}

/// Maps `timeline`, exporting only the spans `export` accepts (a live
/// batch holds back spans still open) but deriving every parent.
pub(super) fn map_timeline(
    timeline: &Timeline,
    namespaces: &BTreeMap<u32, Namespaces>,
    resource: &ResourceSettings,
    sdk: &SdkResources,
    clock: Clock,
    export: impl Fn(&timeline::Span) -> bool,
) -> Mapped {
    let lineage = lineage(timeline);
    let mut out = Mapped::default();
    for (s, l) in timeline.spans.iter().zip(&lineage) {
        if export(s) {
            let events = if s.id.is_some() && s.unfinished.is_none() { 2 } else { 1 };
            let (item, scope, events) = match super::otel::carried_span(s, clock) {
                Some((item, scope)) => (item, Some(scope), super::otel::carried_events(&s.args)),
                None => (span(s, l, timeline, clock), None, events),
            };
            out.spans.push(MappedItem { pid: s.pid, events, item, scope });
        }
    }
    let enclosing = Enclosing::new(timeline);
    for i in &timeline.instants {
        if let Some((item, scope)) = super::otel::carried_log(i, clock) {
            out.logs.push(MappedItem { pid: i.pid, events: super::otel::carried_events(&i.args), item, scope: Some(scope) });
            continue;
        }
        let mut attributes = attributes(pairs(&i.args));
        attributes.extend(thread_attributes(i.tid, timeline));
        let (trace_id, span_id) = match enclosing.innermost(i.tid, i.time_ns) {
            Some(k) => (lineage[k].trace_id.to_vec(), lineage[k].span_id.to_vec()),
            None => (Vec::new(), Vec::new()),
        };
        let item = LogRecord {
            time_unix_nano: clock.unix_ns(i.time_ns),
            observed_time_unix_nano: clock.unix_ns(i.time_ns),
            event_name: i.name.clone(),
            body: Some(string(&i.name)),
            attributes,
            trace_id,
            span_id,
            ..Default::default()
        };
        out.logs.push(MappedItem { pid: i.pid, events: 1, item, scope: None });
    }
    let pids: Vec<u32> = out.spans.iter().map(|s| s.pid).chain(out.logs.iter().map(|l| l.pid)).collect();
    for pid in pids {
        let process = timeline.processes.get(&pid);
        out.resources.entry(pid).or_insert_with(|| match sdk.get(pid) {
            Some(declared) => sdk_process_resource(declared, process, pid, namespaces.get(&pid), resource),
            None => process_resource(process, pid, namespaces.get(&pid), resource),
        });
    }
    out
}

/// Ids and parents of every span of `timeline`, in its order (by start,
/// then begin order, so a parent always comes before its children).
///
/// A span whose begin said its trace (the core's span convention) keeps
/// the ids it wrote: its id, its trace id, and its parent's id, which may
/// name a span of another process or machine. For one that did not, the
/// parent is the span its `span_parent` field names, else the
/// latest-begun span still open on its thread when it began: thread
/// nesting, whatever the timeline's placement. (The timeline draws a
/// request that ends before the write it handed to another thread on an
/// async track, but the write, and every span the request enclosed, still
/// began inside it.) Its trace is its parent's; a root's is derived.
fn lineage(timeline: &Timeline) -> Vec<Lineage> {
    let spans = &timeline.spans;
    let mut out: Vec<Lineage> = Vec::with_capacity(spans.len());
    // Per thread, the begin/end spans begun there and maybe still open.
    let mut open: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    // The latest span begun under each (pid, span id), for `span_parent`.
    let mut by_id: BTreeMap<(u32, u64), usize> = BTreeMap::new();
    for (k, s) in spans.iter().enumerate() {
        let on_thread = open.entry(s.tid).or_default();
        on_thread.retain(|&p| spans[p].end_ns >= s.start_ns);
        // A span an OpenTelemetry SDK wrote through user_events keeps the
        // ids it was given, so it joins the trace the rest of its service
        // sends. (Such a span is completed: it opens nothing on its thread.)
        if let Some(ids) = otel_ids(&s.args) {
            out.push(Lineage { span_id: ids.span_id, trace_id: ids.trace_id, parent: ids.parent_span_id });
            continue;
        }
        // A span that said its trace is where it said, and it may parent
        // spans that did not (a C span begun inside it, say).
        if let (Some(id), Some(trace)) = (s.id, s.trace.filter(SpanTrace::is_said)) {
            let parent = (trace.parent_span_id != 0).then(|| trace.parent_span_id.to_be_bytes());
            out.push(Lineage { span_id: id.to_be_bytes(), trace_id: trace.trace_id.to_be_bytes(), parent });
            on_thread.push(k);
            by_id.insert((s.pid, id), k);
            continue;
        }
        // A completed span (a GC pause) ran on no thread of ours, so
        // nothing encloses it.
        let nested = if s.id.is_some() { on_thread.iter().rev().copied().find(|&p| encloses_start(&spans[p], s)) } else { None };
        let linked = s
            .args
            .iter()
            .find(|(n, _)| n == SPAN_PARENT)
            .and_then(|(_, v)| v.as_u64())
            .and_then(|id| by_id.get(&(s.pid, id)).copied());
        let parent = linked.or(nested);
        let key = SpanKey { pid: s.pid, id: s.id.unwrap_or(0), tid: s.tid, start_ns: s.start_ns, name: &s.name };
        let trace_id = parent.map_or_else(|| key.trace_id(), |p| out[p].trace_id);
        let parent = parent.map(|p| out[p].span_id);
        // A begin with the convention's trace fields has a W3C span id as
        // its id, which a span of another process may name as its parent;
        // one written before them (or by perf's own files) has a
        // per-process counter, and a derived id.
        let span_id = match (s.id, s.trace) {
            (Some(id), Some(_)) => id.to_be_bytes(),
            _ => key.span_id(),
        };
        out.push(Lineage { span_id, trace_id, parent });
        if let Some(id) = s.id {
            on_thread.push(k);
            by_id.insert((s.pid, id), k);
        }
    }
    out
}

/// Whether `p`, begun before `s` on its thread, was still open when `s`
/// began. An end at the very nanosecond `s` began counts only if `p`
/// holds all of `s` (a zero-length child at its parent's end), not for a
/// sibling that ended as the next began.
fn encloses_start(p: &timeline::Span, s: &timeline::Span) -> bool {
    p.end_ns > s.start_ns || p.end_ns >= s.end_ns
}

/// Finds the span open on a thread at a moment, to give a log record its
/// trace and span.
struct Enclosing {
    /// Per thread, its begin/end spans' (start, end, index), by start.
    by_tid: BTreeMap<u32, Vec<(u64, u64, usize)>>,
}

impl Enclosing {
    fn new(timeline: &Timeline) -> Enclosing {
        let mut by_tid: BTreeMap<u32, Vec<(u64, u64, usize)>> = BTreeMap::new();
        for (k, s) in timeline.spans.iter().enumerate() {
            if s.id.is_some() {
                by_tid.entry(s.tid).or_default().push((s.start_ns, s.end_ns, k));
            }
        }
        Enclosing { by_tid }
    }

    /// The latest-begun span of `tid` that runs at `t`: the innermost,
    /// where spans nest.
    fn innermost(&self, tid: u32, t: u64) -> Option<usize> {
        let spans = self.by_tid.get(&tid)?;
        let begun = spans.partition_point(|&(start, _, _)| start <= t);
        spans[..begun].iter().rev().find(|&&(_, end, _)| end >= t).map(|&(_, _, k)| k)
    }
}

fn span(s: &timeline::Span, l: &Lineage, timeline: &Timeline, clock: Clock) -> Span {
    // A span an OpenTelemetry SDK wrote keeps the attributes it was given,
    // by their own names; its Common Schema envelope is the span itself.
    let mut attributes = match otel_attributes(&s.args) {
        Some(given) => attributes(given),
        None => attributes(pairs(&s.args).filter(|(n, _)| *n != SPAN_PARENT)),
    };
    attributes.extend(thread_attributes(s.tid, timeline));
    if let Some(sched) = &s.sched {
        attributes.extend(sched_attributes(sched));
    }
    // An `error` field (a span_error end, say) marks the span failed; so
    // does an OpenTelemetry SDK's Error status.
    let error = s.args.iter().find(|(n, _)| n == "error").map(|(_, v)| v.to_string()).or_else(|| otel_failure(&s.args));
    let status = error.map(|message| Status { message, code: status::StatusCode::Error as i32 });
    Span {
        trace_id: l.trace_id.to_vec(),
        span_id: l.span_id.to_vec(),
        parent_span_id: l.parent.map(|p| p.to_vec()).unwrap_or_default(),
        name: s.name.clone(),
        kind: otel_kind(&s.args).map_or(span::SpanKind::Internal, span_kind) as i32,
        start_time_unix_nano: clock.unix_ns(s.start_ns),
        end_time_unix_nano: clock.unix_ns(s.end_ns),
        attributes,
        status,
        ..Default::default()
    }
}

/// OTLP's kind of a Common Schema kind (0 internal … 4 consumer).
fn span_kind(common_schema: u64) -> span::SpanKind {
    use span::SpanKind::*;
    [Internal, Server, Client, Producer, Consumer].get(common_schema as usize).copied().unwrap_or(Internal)
}

/// `(name, value)` pairs of a record's fields.
fn pairs(args: &[(String, Value)]) -> impl Iterator<Item = (&str, &Value)> {
    args.iter().map(|(n, v)| (n.as_str(), v))
}

fn thread_attributes(tid: u32, timeline: &Timeline) -> Vec<KeyValue> {
    let mut out = vec![key_value("thread.id", int(i64::from(tid)))];
    if let Some(t) = timeline.threads.get(&tid).filter(|t| !t.name.is_empty()) {
        out.push(key_value("thread.name", string(&t.name)));
    }
    out
}

/// Where a span's time went, as `usertrace.sched.*` attributes: the
/// semantic conventions name a process's CPU time and context switches
/// only as metrics (`process.cpu.time`, `process.context_switches`),
/// nothing for a span's. The rarer figures are there only when not zero.
fn sched_attributes(s: &SchedSummary) -> Vec<KeyValue> {
    let count = |n: u64| int(i64::try_from(n).unwrap_or(i64::MAX));
    let mut out = vec![
        key_value("usertrace.sched.on_cpu_ns", count(s.on_cpu_ns)),
        key_value("usertrace.sched.runnable_ns", count(s.runnable_ns)),
        key_value("usertrace.sched.sleeping_ns", count(s.sleeping_ns)),
        key_value("usertrace.sched.uninterruptible_ns", count(s.uninterruptible_ns)),
        key_value("usertrace.sched.context_switches", count(s.context_switches)),
        key_value("usertrace.sched.migrations", count(s.migrations)),
    ];
    if s.other_blocked_ns > 0 {
        out.push(key_value("usertrace.sched.other_blocked_ns", count(s.other_blocked_ns)));
    }
    if s.unknown_ns > 0 {
        out.push(key_value("usertrace.sched.unknown_ns", count(s.unknown_ns)));
    }
    if let Some(top) = s.top_wakers.first() {
        out.push(key_value("usertrace.sched.top_waker", string(&top.to_string())));
    }
    if s.ended_on_another_thread {
        out.push(key_value("usertrace.sched.ended_on_another_thread", AnyValue { value: Some(any_value::Value::BoolValue(true)) }));
    }
    out
}

fn process_resource(process: Option<&Process>, pid: u32, namespaces: Option<&Namespaces>, settings: &ResourceSettings) -> Resource {
    let name = process.map(|p| p.name.as_str()).filter(|n| !n.is_empty());
    let own = process.map(|p| &p.resource);
    let own_service = own.and_then(|r| r.get(SERVICE_NAME_KEY)).map(String::as_str);
    let from_env = settings.attributes.iter().find(|(k, _)| k == SERVICE_NAME_KEY).map(|(_, v)| v.as_str());
    let service = own_service.or(settings.service_name.as_deref()).or(from_env).or(name).unwrap_or("unknown_service");
    let mut attributes = vec![key_value(SERVICE_NAME_KEY, string(service))];
    attributes.extend(recorder_attributes(process, pid, namespaces, settings));
    // The process's own declaration first: it names itself better than
    // the recorder's defaults do.
    for (k, v) in own.into_iter().flatten().chain(settings.attributes.iter().map(|(k, v)| (k, v))) {
        if !attributes.iter().any(|a| &a.key == k) {
            attributes.push(key_value(k, string(v)));
        }
    }
    Resource { attributes, ..Default::default() }
}

/// The resource of a process whose SDK declared `declared`: exactly its
/// attributes, typed, in its order; then what only the recorder knows
/// (pid, host, executable, container, namespaces) and the recorder's own
/// `OTEL_RESOURCE_ATTRIBUTES`, for keys the SDK did not set. Not what the
/// process's environment declares: its SDK read that itself, and a
/// resource built in code may leave it out on purpose.
fn sdk_process_resource(declared: &Resource, process: Option<&Process>, pid: u32, namespaces: Option<&Namespaces>, settings: &ResourceSettings) -> Resource {
    let mut out = declared.clone();
    let recorder = recorder_attributes(process, pid, namespaces, settings);
    let operator = settings.attributes.iter().map(|(k, v)| key_value(k, string(v)));
    for a in recorder.into_iter().chain(operator) {
        if !out.attributes.iter().any(|b| b.key == a.key) {
            out.attributes.push(a);
        }
    }
    out
}

/// What the recorder itself knows of a process, as resource attributes.
fn recorder_attributes(process: Option<&Process>, pid: u32, namespaces: Option<&Namespaces>, settings: &ResourceSettings) -> Vec<KeyValue> {
    let name = process.map(|p| p.name.as_str()).filter(|n| !n.is_empty());
    let mut attributes = Vec::new();
    if !settings.host_name.is_empty() {
        attributes.push(key_value("host.name", string(&settings.host_name)));
    }
    attributes.push(key_value("process.pid", int(i64::from(pid))));
    if let Some(name) = name {
        attributes.push(key_value("process.executable.name", string(name)));
    }
    if let Some(path) = process.and_then(|p| p.executable.as_deref()) {
        attributes.push(key_value("process.executable.path", string(path)));
    }
    if let Some(argv) = process.and_then(|p| p.command_line.as_ref()).filter(|a| !a.is_empty() && !settings.omit_command_line) {
        attributes.push(key_value("process.command_line", string(&argv.join(" "))));
    }
    if let Some(id) = process.and_then(|p| p.container_id.as_deref()) {
        attributes.push(key_value("container.id", string(id)));
    }
    if let Some(uid) = process.and_then(|p| p.pod_uid.as_deref()) {
        attributes.push(key_value("k8s.pod.uid", string(uid)));
    }
    if let Some(ns) = namespaces {
        let kinds = [("net", ns.net), ("uts", ns.uts), ("ipc", ns.ipc), ("pid", ns.pid), ("user", ns.user), ("mnt", ns.mnt), ("cgroup", ns.cgroup)];
        for (kind, inode) in kinds.into_iter().filter(|&(_, inode)| inode != 0) {
            attributes.push(key_value(&format!("linux.namespace.{kind}"), int(inode as i64)));
        }
    }
    attributes
}

/// Fields as typed attributes. OTLP integers are signed 64-bit, so a u64
/// above `i64::MAX` goes as its decimal string rather than wrapping.
fn attributes<'a, K: AsRef<str>>(args: impl IntoIterator<Item = (K, &'a Value)>) -> Vec<KeyValue> {
    args.into_iter()
        .map(|(name, v)| KeyValue { key: name.as_ref().to_owned(), value: Some(any_value(v)), ..Default::default() })
        .collect()
}

/// One value as OTLP's `AnyValue`: an array as an `ArrayValue`, a struct
/// as a `KeyValueList` of its members in order.
fn any_value(v: &Value) -> AnyValue {
    match v {
        Value::Unsigned(u) => i64::try_from(*u).map_or_else(|_| string(&u.to_string()), int),
        Value::Signed(i) => int(*i),
        Value::Bool(b) => AnyValue { value: Some(any_value::Value::BoolValue(*b)) },
        Value::F32(f) => AnyValue { value: Some(any_value::Value::DoubleValue(f64::from(*f))) },
        Value::F64(f) => AnyValue { value: Some(any_value::Value::DoubleValue(*f)) },
        Value::Str(s) => string(s),
        Value::Bytes(b) => AnyValue { value: Some(any_value::Value::BytesValue(b.clone())) },
        Value::Array(items) => AnyValue {
            value: Some(any_value::Value::ArrayValue(ArrayValue { values: items.iter().map(any_value).collect() })),
        },
        Value::Struct(members) => AnyValue {
            value: Some(any_value::Value::KvlistValue(KeyValueList {
                values: attributes(members.iter().map(|(n, v)| (n.as_str(), v))),
            })),
        },
    }
}

fn key_value(key: &str, value: AnyValue) -> KeyValue {
    KeyValue { key: key.into(), value: Some(value), ..Default::default() }
}

fn string(s: &str) -> AnyValue {
    AnyValue { value: Some(any_value::Value::StringValue(s.into())) }
}

fn int(i: i64) -> AnyValue {
    AnyValue { value: Some(any_value::Value::IntValue(i)) }
}

#[cfg(test)]
#[path = "mapping_tests.rs"]
mod tests;
#[cfg(test)]
#[path = "mapping_trace_context_tests.rs"]
mod trace_context_tests;

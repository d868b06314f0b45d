//! The exporter thread: takes sealed batches from the [`BatchQueue`], maps
//! them ([`BatchMapper`]) and sends them ([`Transport`]), retrying with
//! [`Backoff`] while the collector is throttling or away.
//!
//! The recorder calls [`Exporter::push`], which never blocks on the
//! network: it takes the queue's mutex, which the thread holds only to
//! move a batch in or out. A collector that is down at start, or dies
//! mid-run, costs retries and, once the queue is full, its oldest
//! batches, but never the recording. `usertrace export`, which has the
//! whole file and no recorder to keep up with, calls
//! [`Exporter::push_blocking`] instead: a full queue makes it wait for
//! room rather than drop. At the end, [`Exporter::finish`] gives the
//! thread a grace period to send what is queued; what is still unsent
//! then is counted, so exported + dropped + failed = recorded.
//!
//! # What counts as exported
//!
//! An event counts as exported only once the endpoint answered 2xx to the
//! request that carried it: a log record's event by the logs request, a
//! span's begin and end by the traces request of the batch (or the final
//! flush) that sent the span, however many batches later its end came. A
//! batch's events whose spans are still open are settled by that later
//! request. The one exception is the 404 rule: an endpoint that answers
//! 404 on one signal takes no such signal (Jaeger takes traces, not
//! logs), so that signal's events count as exported once the endpoint has
//! taken any request of the run, and as refused if it never does.
//!
//! # Durations
//!
//! Every duration that comes from outside is capped or saturated: a
//! collector's `Retry-After` at [`ExporterSettings::max_retry_after`] (at
//! most [`MAX_RETRY_AFTER`], 60 s); a grace period or batch age too large
//! for the clock means "never" (a century).

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::backoff::{Backoff, MAX_RETRY_AFTER};
use super::config::Endpoint;
use super::live::BatchMapper;
use super::mapping::{Clock, Otlp, ResourceSettings};
use super::queue::{approx_bytes, Batch, BatchQueue, QueueLimits};
use super::tail::{TailCounts, TailPolicy, TailSampler};
use super::transport::{Outcome, Transport};
use crate::record::Record;

/// Everything the exporter needs.
#[derive(Debug, Clone)]
pub struct ExporterSettings {
    /// Where to send.
    pub endpoint: Endpoint,
    /// What every resource carries.
    pub resource: ResourceSettings,
    /// From the recording's clock to Unix time.
    pub clock: Clock,
    /// Batch sizes and the memory cap.
    pub limits: QueueLimits,
    /// The first retry's delay; it doubles per attempt.
    pub initial_backoff: Duration,
    /// The longest delay between attempts.
    pub max_backoff: Duration,
    /// The longest `Retry-After` honoured; at most [`MAX_RETRY_AFTER`].
    pub max_retry_after: Duration,
    /// Tail-based export: send only the traces this keeps (`--tail`).
    pub tail: Option<TailPolicy>,
}

impl ExporterSettings {
    /// Defaults for all but what only the caller knows.
    pub fn new(endpoint: Endpoint, resource: ResourceSettings, clock: Clock) -> ExporterSettings {
        ExporterSettings {
            endpoint,
            resource,
            clock,
            limits: QueueLimits::default(),
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(10),
            max_retry_after: MAX_RETRY_AFTER,
            tail: None,
        }
    }
}

/// What became of the events the exporter was given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// Events pushed.
    pub recorded_events: u64,
    /// Events in batches the collector took. A batch whose requests all
    /// went to signals it does not take (only log records, to Jaeger)
    /// counts here if the collector took any other request of the run.
    pub exported_events: u64,
    /// Events in batches dropped because the queue was full, or still
    /// queued when the grace period ran out.
    pub dropped_events: u64,
    /// Events the collector refused, whose retries the end of the grace
    /// period cut short, or still in flight when it ended.
    pub failed_events: u64,
    /// Of `failed_events`, those the collector refused for good: an error
    /// status, or 404 on every signal of the run. The rest were not taken
    /// in time: unanswered, unreachable, or throttled to the end.
    pub refused_events: u64,
    /// Spans the collector took.
    pub spans: u64,
    /// Log records the collector took.
    pub logs: u64,
    /// Requests sent again after a retryable failure.
    pub retries: u64,
    /// The most memory the queue held.
    pub peak_queue_bytes: usize,
    /// The URLs that answered 404: the endpoint takes no such signal
    /// (Jaeger takes traces, not logs), so it was no longer sent and its
    /// records do not count against delivery.
    pub signals_not_taken: Vec<String>,
    /// The last failure seen, if any.
    pub last_error: Option<String>,
    /// Spans held open past the mapper's limits ([`super::live`]),
    /// exported unfinished and forgotten.
    pub open_spans_let_go: u64,
    /// Exited processes the mapper forgot once their last span was sent.
    pub processes_forgotten: u64,
    /// OpenTelemetry spans or log records whose parts the mapper let go
    /// of, their head not come within its bounds ([`super::otel`]); a
    /// head that comes later is exported marked.
    pub otel_parts_evicted: u64,
    /// Resource events (`<provider>_otel_resource`) whose protobuf did not
    /// decode: their processes kept the resource of their environment.
    pub sdk_resources_undecodable: u64,
    /// What the first of them was.
    pub first_undecodable_resource: Option<String>,
    /// With `--tail`: the traces kept and dropped. Events of dropped
    /// traces are neither exported nor failed: exported + dropped +
    /// failed + `tail.events_dropped` = recorded.
    pub tail: Option<TailCounts>,
}

impl ExportSummary {
    /// Events of traces that `--tail` chose not to send.
    pub fn events_left_out(&self) -> u64 {
        self.tail.map_or(0, |t| t.events_dropped)
    }

    /// Whether every event was exported or deliberately left out.
    pub fn all_accounted_as_sent(&self) -> bool {
        self.exported_events + self.events_left_out() == self.recorded_events
    }

    /// Counts `awaiting_verdict` as exported once the endpoint has taken a
    /// request of the run; until then it stays awaiting (and, if the run
    /// ends so, counts as failed).
    fn settle(&mut self, awaiting_verdict: &mut u64) {
        if self.spans + self.logs > 0 {
            self.exported_events += std::mem::take(awaiting_verdict);
        }
    }
}

impl std::fmt::Display for ExportSummary {
    /// The stderr summary line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "OTLP: {} events exported ({} spans, {} log records), {} dropped (queue full or unsent at exit), {} failed; {} retries; peak queue {} KiB",
            self.exported_events,
            self.spans,
            self.logs,
            self.dropped_events,
            self.failed_events,
            self.retries,
            self.peak_queue_bytes.div_ceil(1024)
        )?;
        if self.failed_events > 0 {
            let refused = self.refused_events.min(self.failed_events);
            write!(f, "; of the failed, {refused} refused by the endpoint, {} not taken in time", self.failed_events - refused)?;
        }
        if self.open_spans_let_go > 0 {
            write!(
                f,
                "; {} spans open longer than {} s or beyond {} open at once were sent unfinished",
                self.open_spans_let_go,
                super::live::MAX_OPEN_SPAN_AGE.as_secs(),
                super::live::MAX_OPEN_SPANS
            )?;
        }
        if self.processes_forgotten > 0 {
            write!(f, "; {} exited processes forgotten", self.processes_forgotten)?;
        }
        if self.otel_parts_evicted > 0 {
            write!(
                f,
                "; the parts of {} OpenTelemetry spans or log records were let go, beyond {} waiting for their head",
                self.otel_parts_evicted,
                super::otel::MAX_OPEN
            )?;
        }
        if let Some(first) = &self.first_undecodable_resource {
            write!(f, "; {} OpenTelemetry resource events did not decode, the first: {first}", self.sdk_resources_undecodable)?;
        }
        if let Some(t) = &self.tail {
            write!(
                f,
                "; --tail kept {} traces and dropped {} ({} spans, {} log records, {} events)",
                t.traces_kept, t.traces_dropped, t.spans_dropped, t.logs_dropped, t.events_dropped
            )?;
            if t.traces_cut_short > 0 {
                write!(f, ", {} of them early because the {} MiB held for undecided traces was full", t.traces_cut_short, super::tail::MAX_HELD_BYTES >> 20)?;
            }
        }
        for url in &self.signals_not_taken {
            write!(f, "; {url} answered 404 (the endpoint takes no such signal), so none was sent there")?;
        }
        if let Some(e) = &self.last_error {
            write!(f, "; last error: {e}")?;
        }
        Ok(())
    }
}

struct State {
    queue: BatchQueue,
    recorded_events: u64,
    /// The thread's summary as of its last batch, for a finish that cannot
    /// wait for a request still hanging.
    progress: ExportSummary,
    /// Set by `finish`: send what is left, then stop.
    finishing: bool,
    /// Set by `finish`: give up on what is not sent by then.
    deadline: Option<Instant>,
}

struct Shared {
    state: Mutex<State>,
    /// The exporter thread waits here for batches.
    wake: Condvar,
    /// [`Exporter::push_blocking`] waits here for room in the queue.
    room: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic on the exporter thread must not take the recorder down.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The queue stayed full for all of [`Exporter::push_blocking`]'s patience.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StillFull;

impl std::fmt::Display for StillFull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the export queue stayed full: the endpoint took nothing meanwhile")
    }
}

impl std::error::Error for StillFull {}

/// A running exporter.
pub struct Exporter {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<ExportSummary>>,
}

impl Exporter {
    /// Starts the exporter thread. Nothing is sent until batches are due,
    /// so a collector that is not up yet is no error here.
    pub fn start(settings: ExporterSettings) -> std::io::Result<Exporter> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: BatchQueue::new(settings.limits),
                recorded_events: 0,
                progress: ExportSummary::default(),
                finishing: false,
                deadline: None,
            }),
            wake: Condvar::new(),
            room: Condvar::new(),
        });
        let thread_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new().name("usertrace-otlp".into()).spawn(move || run(&thread_shared, settings))?;
        Ok(Exporter { shared, thread: Some(thread) })
    }

    /// Queues `record`; never waits on the network.
    pub fn push(&self, record: Record) {
        let mut state = self.shared.lock();
        state.recorded_events += u64::from(matches!(record, Record::Event(_)));
        let news = state.queue.push(record, Instant::now());
        drop(state);
        // Waking the thread per record would cost a context switch per
        // event; it only needs to know of a sealed batch or a new due time.
        if news {
            self.shared.wake.notify_one();
        }
    }

    /// Queues `record`, waiting while the queue is full, for at most
    /// `patience`: for a caller that has all its records at hand and
    /// would rather wait than drop. If the queue stayed full that long
    /// (the collector is away or too slow), `record` is not queued.
    pub fn push_blocking(&self, record: Record, patience: Duration) -> Result<(), StillFull> {
        let bytes = approx_bytes(&record);
        let until = saturating_after(Instant::now(), patience);
        let mut state = self.shared.lock();
        while !state.queue.has_room_for(bytes) {
            // The open batch must go too, or a cap below one batch would
            // wait forever.
            state.queue.seal();
            self.shared.wake.notify_one();
            let now = Instant::now();
            if now >= until {
                return Err(StillFull);
            }
            state = self.shared.room.wait_timeout(state, until - now).map_or_else(|p| p.into_inner().0, |(s, _)| s);
        }
        state.recorded_events += u64::from(matches!(record, Record::Event(_)));
        let news = state.queue.push(record, Instant::now());
        drop(state);
        if news {
            self.shared.wake.notify_one();
        }
        Ok(())
    }

    /// Sends what is queued, for at most `grace`, and stops. A grace
    /// period beyond what the clock holds waits for everything.
    pub fn finish(mut self, grace: Duration) -> ExportSummary {
        self.stop(grace)
    }

    fn stop(&mut self, grace: Duration) -> ExportSummary {
        let deadline = saturating_after(Instant::now(), grace);
        {
            let mut state = self.shared.lock();
            state.queue.seal();
            state.finishing = true;
            state.deadline = Some(deadline);
        }
        self.shared.wake.notify_one();
        // A request begun before the deadline was set may hang for the
        // endpoint's whole timeout: past the grace period (and a moment
        // for the thread to notice it), the thread is left to it, and what
        // it was sending counts as failed.
        let thread = self.thread.take();
        let abandon_at = saturating_after(deadline, Duration::from_millis(100));
        while thread.as_ref().is_some_and(|t| !t.is_finished()) && Instant::now() < abandon_at {
            std::thread::sleep(Duration::from_millis(5));
        }
        let summary = match thread {
            Some(t) if t.is_finished() => t.join().unwrap_or_else(|_| ExportSummary {
                last_error: Some("the exporter thread panicked".into()),
                ..self.shared.lock().progress.clone()
            }),
            Some(_) => {
                let mut progress = self.shared.lock().progress.clone();
                progress.last_error = Some("a request was still unanswered when the grace period ended".into());
                progress
            }
            None => ExportSummary::default(),
        };
        let mut state = self.shared.lock();
        // Whatever the abandoned thread would still have sent is dropped.
        state.queue.drop_all();
        let mut summary = summary;
        summary.recorded_events = state.recorded_events;
        summary.dropped_events = state.queue.dropped_events();
        summary.peak_queue_bytes = state.queue.peak_bytes();
        // What the thread never took (it panicked), or never settled (it
        // hung on a request), failed too; what --tail dropped did not.
        summary.failed_events = state.recorded_events.saturating_sub(summary.exported_events + summary.dropped_events + summary.events_left_out());
        summary.refused_events = summary.refused_events.min(summary.failed_events);
        summary
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop(Duration::ZERO);
        }
    }
}

fn run(shared: &Shared, settings: ExporterSettings) -> ExportSummary {
    let transport = Transport::new(settings.endpoint.clone());
    let mut mapper = BatchMapper::new(settings.resource.clone(), settings.clock);
    let mut sampler = settings.tail.clone().map(TailSampler::new);
    let mut summary = ExportSummary::default();
    // Events of requests that went only to signals the endpoint does not
    // take (Jaeger's logs): delivered as far as they can be if the
    // endpoint takes its other signal, which may be known only from a
    // later batch; refused if it never takes anything (a wrong path). A
    // batch's verdict must not depend on whether the timeline happened to
    // carry its spans on to the next one.
    let mut awaiting_verdict = 0;
    while let Some(batch) = next_batch(shared) {
        let Batch { records, events, .. } = batch;
        let carried_before = mapper.open_spans() as u64;
        let mapped = mapper.map_batch_items(&records);
        drop(records);
        let (otlp, settled) = match &mut sampler {
            // The begins the mapper carries on are settled by a later request.
            None => (mapped.into_otlp(), (events + carried_before).saturating_sub(mapper.open_spans() as u64)),
            // Held items are settled when their trace is decided.
            Some(sampler) => {
                let sent = sampler.admit(mapped);
                let settled = sent.events();
                (sent.into_otlp(), settled)
            }
        };
        deliver(shared, &transport, &settings, &otlp, settled, &mut summary, &mut awaiting_verdict);
        summary.open_spans_let_go = mapper.spans_let_go();
        summary.processes_forgotten = mapper.processes_forgotten();
        summary.otel_parts_evicted = mapper.otel_parts_evicted();
        summary.sdk_resources_undecodable = mapper.sdk_resources().undecodable();
        summary.first_undecodable_resource = mapper.sdk_resources().first_undecodable().map(ToString::to_string);
        summary.tail = sampler.as_ref().map(TailSampler::counts);
        shared.lock().progress.clone_from(&summary);
    }
    // Spans still open at the end of the recording go out closed there,
    // and their events count by that request.
    let carried = mapper.open_spans() as u64;
    let rest = mapper.finish_items();
    let (otlp, settled) = match &mut sampler {
        None => (rest.into_otlp(), carried),
        Some(sampler) => {
            let sent = sampler.admit(rest);
            sampler.finish();
            let settled = sent.events();
            (sent.into_otlp(), settled)
        }
    };
    deliver(shared, &transport, &settings, &otlp, settled, &mut summary, &mut awaiting_verdict);
    summary.open_spans_let_go = mapper.spans_let_go();
    summary.processes_forgotten = mapper.processes_forgotten();
    summary.otel_parts_evicted = mapper.otel_parts_evicted();
    summary.sdk_resources_undecodable = mapper.sdk_resources().undecodable();
    summary.first_undecodable_resource = mapper.sdk_resources().first_undecodable().map(ToString::to_string);
    summary.tail = sampler.as_ref().map(TailSampler::counts);
    // An endpoint that took nothing at all refused what it answered 404.
    summary.refused_events += awaiting_verdict;
    summary
}

/// The next batch to send, waiting for one; `None` once finishing and
/// nothing is left, or the grace period is over (what is left is then
/// counted as dropped).
fn next_batch(shared: &Shared) -> Option<Batch> {
    let mut state = shared.lock();
    loop {
        let now = Instant::now();
        if state.deadline.is_some_and(|d| now >= d) {
            state.queue.drop_all();
            shared.room.notify_all();
            return None;
        }
        state.queue.seal_if_due(now);
        if let Some(batch) = state.queue.pop() {
            shared.room.notify_all();
            return Some(batch);
        }
        if state.finishing {
            return None;
        }
        let wait = state.queue.due_at().map_or(Duration::from_secs(1), |due| due.saturating_duration_since(now));
        state = shared.wake.wait_timeout(state, wait).map_or_else(|p| p.into_inner().0, |(s, _)| s);
    }
}

/// What became of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Delivery {
    Sent,
    /// The endpoint takes no such signal (now or before).
    NotTaken,
    /// Refused for good (`refused`), or not taken in time.
    Failed { refused: bool },
}

/// Sends both requests of a batch, retrying each until it is taken,
/// refused, or the grace period ends, and counts its `settled` events by
/// what became of the request that carried them: the log records' events
/// by the logs request, the rest (span begins and ends) by the traces
/// request.
fn deliver(
    shared: &Shared,
    transport: &Transport,
    settings: &ExporterSettings,
    otlp: &Otlp,
    settled: u64,
    summary: &mut ExportSummary,
    awaiting_verdict: &mut u64,
) {
    let endpoint = transport.endpoint();
    let (span_count, log_count) = (otlp.span_count(), otlp.log_count());
    let traces = (span_count > 0).then(|| send(shared, transport, settings, &endpoint.traces_url, &otlp.traces, summary));
    let logs = (log_count > 0).then(|| send(shared, transport, settings, &endpoint.logs_url, &otlp.logs, summary));
    let log_events = (log_count as u64).min(settled);
    for (is_traces, delivery, count, events) in [(true, traces, span_count, settled - log_events), (false, logs, log_count, log_events)] {
        match delivery {
            Some(Delivery::Sent) => {
                let taken = if is_traces { &mut summary.spans } else { &mut summary.logs };
                *taken += count as u64;
                summary.exported_events += events;
            }
            Some(Delivery::NotTaken) => *awaiting_verdict += events,
            Some(Delivery::Failed { refused: true }) => summary.refused_events += events,
            // Counted as failed at the end: not exported, not dropped.
            Some(Delivery::Failed { refused: false }) => {}
            // Events that map to no span or log record (none do today)
            // have nothing left to deliver.
            None => summary.exported_events += events,
        }
    }
    summary.settle(awaiting_verdict);
}

fn send(shared: &Shared, transport: &Transport, settings: &ExporterSettings, url: &str, message: &impl prost::Message, summary: &mut ExportSummary) -> Delivery {
    if summary.signals_not_taken.iter().any(|u| u == url) {
        return Delivery::NotTaken;
    }
    let mut backoff = Backoff::new(settings.initial_backoff, settings.max_backoff).with_retry_after_cap(settings.max_retry_after);
    loop {
        // Finishing must not outlast its grace period by a request's timeout.
        let deadline = shared.lock().deadline;
        let limit = match deadline.map(|d| d.saturating_duration_since(Instant::now())) {
            Some(Duration::ZERO) => {
                summary.last_error.get_or_insert_with(|| format!("{url}: not sent: the grace period was over"));
                return Delivery::Failed { refused: false };
            }
            limit => limit,
        };
        match transport.send(url, message, limit) {
            Outcome::Sent => return Delivery::Sent,
            Outcome::NoSuchSignal => {
                summary.signals_not_taken.push(url.to_owned());
                return Delivery::NotTaken;
            }
            Outcome::Rejected { why } => {
                summary.last_error = Some(format!("{url}: {why}"));
                return Delivery::Failed { refused: true };
            }
            Outcome::Retry { why, retry_after } => {
                summary.last_error = Some(format!("{url}: {why}"));
                let delay = backoff.next_delay(retry_after, fastrand::f64());
                if !sleep_unless_past_deadline(shared, delay) {
                    return Delivery::Failed { refused: false };
                }
                summary.retries += 1;
            }
        }
    }
}

/// Waits `delay`; false if the grace period ends first.
fn sleep_unless_past_deadline(shared: &Shared, delay: Duration) -> bool {
    let until = saturating_after(Instant::now(), delay);
    let mut state = shared.lock();
    loop {
        let now = Instant::now();
        if state.deadline.is_some_and(|d| until > d) {
            // The wait would outlast the grace period: give up now.
            return false;
        }
        if now >= until {
            return true;
        }
        state = shared.wake.wait_timeout(state, until - now).map_or_else(|p| p.into_inner().0, |(s, _)| s);
    }
}

/// `t + d`, or for a `d` the clock cannot add (a caller's `Duration::MAX`),
/// `t` plus a century: a time that never comes.
fn saturating_after(t: Instant, d: Duration) -> Instant {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
    // CLOCK_MONOTONIC counts i64 seconds from boot, so a century more
    // always fits; `t` itself is only the unreachable fallback.
    t.checked_add(d.min(CENTURY)).unwrap_or(t)
}

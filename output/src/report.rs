//! The latency report: how often each event came, how long each span
//! took (percentiles and a log2 histogram, printed like systemtap's
//! `@hist_log` with durations for labels), who emitted them, and what was
//! lost.
//!
//! Percentiles and histograms count finished spans only: a span the
//! timeline closed at an exit or at the end of the recording has no true
//! duration, so it is counted apart as `unfinished`.
//!
//! A recording with scheduler records (`record --sched`) also gives, per
//! span name, the same percentiles of each span's on-CPU, runnable and
//! blocked time ([`SpanStats::on_cpu`]) and their top wakers, over the
//! finished spans whose thread the scheduler records cover (see
//! [`SchedSummary`](crate::timeline::SchedSummary)).
//!
//! A recording with user stacks (`record --call-graph fp`, or
//! `--call-graph-spans`) also gives, per span name, the stacks its spans
//! most often began at, each with its count ([`SpanStats::begin_stacks`],
//! the `stacks` module).
//!
//! A recording whose spans carry trace context also gives whole requests
//! ([`Report::traces`]): each trace's root span (one begun with no parent,
//! in any process) stands for the request, and its durations are counted
//! by root span name and process, whatever other processes the request
//! went through.
//!
//! A [`ReportBuilder`] folds a recording one record at a time and keeps
//! only the figures (a duration per finished span); [`Report::new`] and
//! [`Report::with_timeline`] fold a slice and a built timeline the same way.

mod build;
mod stacks;

pub use build::ReportBuilder;
pub use stacks::{BeginStack, Frame, FRAMES_SHOWN, MAX_DISTINCT_STACKS, TOP_BEGIN_STACKS};

use std::fmt::{self, Write as _};

use serde::Serialize;

use build::{SpanFigures, Tally};
use crate::record::Record;
use crate::timeline::sched::rank_wakers;
use crate::timeline::{Timeline, Waker};

/// Everything the report says; serialisable for `--format json`, and
/// printed for humans by its `Display`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// From the first record to the last.
    pub duration_ns: u64,
    /// Every event, by name.
    pub events: Vec<EventStats>,
    /// Every span, by name.
    pub spans: Vec<SpanStats>,
    /// Whole requests: traces by their root span's name and process.
    pub traces: Vec<TraceStats>,
    /// Every process that emitted events, by pid.
    pub processes: Vec<ProcessStats>,
    /// Events lost because a ring was full.
    pub lost_events: u64,
    /// Task records lost (some names may be wrong).
    pub lost_task_records: u64,
    /// Span ends whose begin was not recorded.
    pub orphan_ends: u64,
}

/// How often one event came.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventStats {
    /// The event's name: its tracepoint's, or `<provider>:<event>` for an
    /// EventHeader event.
    pub name: String,
    /// How many.
    pub count: u64,
    /// Per second over the recording; `None` when it lasted no time.
    pub rate_per_s: Option<f64>,
}

/// How long one kind of span took.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpanStats {
    /// The span's name.
    pub name: String,
    /// Finished spans.
    pub count: u64,
    /// Spans closed by an exit or the end of the recording, not counted
    /// in the figures below.
    pub unfinished: u64,
    /// Median duration (nearest rank); 0 when `count` is 0.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// The longest.
    pub max_ns: u64,
    /// Durations in log2 buckets, empty leading and trailing buckets left
    /// out.
    pub histogram: Vec<Bucket>,
    /// Of the finished spans with scheduler records of their thread, the
    /// time on a CPU; absent (in JSON too) when none has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_cpu: Option<TimeStats>,
    /// The time wanting a CPU (preempted, or woken and waiting).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runnable: Option<TimeStats>,
    /// The time blocked: sleeping (S), uninterruptible (D) and the rarer
    /// other states (stopped, parked...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<TimeStats>,
    /// Who woke these spans' threads most, most first (at most
    /// [`TOP_WAKERS`](crate::timeline::TOP_WAKERS)), summed over each
    /// finished span's own top wakers; absent in JSON when none did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub top_wakers: Vec<Waker>,
    /// The stacks these spans (finished or not) most often began at, most
    /// first (at most [`TOP_BEGIN_STACKS`]); absent in JSON when no begin
    /// had a stack.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub begin_stacks: Vec<BeginStack>,
    /// How many begins had a stack not in `begin_stacks`: a less frequent
    /// one, or one met once the report's count of distinct stacks per span
    /// name was full; present exactly when `begin_stacks` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub begins_from_other_stacks: Option<u64>,
}

/// How long one kind of request took: the traces begun by root spans of
/// one name in one process (by its shown name, so replicas of a service
/// count together).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceStats {
    /// The root span's name.
    pub root: String,
    /// The process it began in, by the name timelines show it under (see
    /// [`crate::timeline::Process::shown_name`]): its service and program.
    pub process: String,
    /// Traces whose root span finished.
    pub count: u64,
    /// Traces whose root span was closed by an exit or the end of the
    /// recording, not counted in `duration`.
    pub unfinished: u64,
    /// The finished root spans' durations: each a whole request's, from
    /// its first begin to its last end in the root's process; absent when
    /// none finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<TimeStats>,
}

/// Percentiles of one share of a kind of span's time (by the rule of the
/// durations'), and its sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TimeStats {
    /// Median (nearest rank).
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// The most.
    pub max_ns: u64,
    /// The sum over the spans.
    pub total_ns: u64,
}

impl TimeStats {
    /// The figures of `values`, or `None` if there are none.
    fn of(mut values: Vec<u64>) -> Option<TimeStats> {
        if values.is_empty() {
            return None;
        }
        values.sort_unstable();
        Some(TimeStats {
            p50_ns: nearest_rank(&values, 0.5),
            p90_ns: nearest_rank(&values, 0.9),
            p99_ns: nearest_rank(&values, 0.99),
            max_ns: values.last().copied().unwrap_or(0),
            total_ns: values.iter().fold(0u64, |sum, &v| sum.saturating_add(v)),
        })
    }
}

/// The report's one percentile rule, nearest rank: the smallest of the
/// `sorted` values with at least `q` of them at or below it; 0 if none.
fn nearest_rank(sorted: &[u64], q: f64) -> u64 {
    match sorted.len() {
        0 => 0,
        n => sorted[((q * n as f64).ceil() as usize).clamp(1, n) - 1],
    }
}

/// Durations in `[from_ns, 2 * from_ns)` (bucket 0 holds only 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Bucket {
    /// The bucket's lower bound: 0, 1, 2, 4, 8...
    pub from_ns: u64,
    /// How many durations fell in it.
    pub count: u64,
}

/// What one process emitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessStats {
    /// Its id.
    pub pid: u32,
    /// Its best name (see [`crate::timeline::Process::name`]).
    pub name: String,
    /// Events it emitted.
    pub events: u64,
    /// Spans it had (finished or not).
    pub spans: u64,
}

impl Report {
    /// The report of `records`.
    pub fn new(records: &[Record]) -> Report {
        Report::with_timeline(records, &Timeline::build(records))
    }

    /// The report of `records`, whose timeline is already built: the
    /// events are counted from `records`, everything else from `timeline`.
    pub fn with_timeline(records: &[Record], timeline: &Timeline) -> Report {
        let mut tally = Tally::default();
        for record in records {
            if let Record::Event(e) = record {
                tally.event(e);
            }
        }
        for span in &timeline.spans {
            tally.span(span);
        }
        for l in &timeline.lost {
            tally.lost(l.count, l.sideband);
        }
        tally.report(timeline)
    }
}

fn span_stats(name: String, figures: SpanFigures) -> SpanStats {
    let SpanFigures { mut durations, unfinished, on_cpu, runnable, blocked, mut top_wakers, begin_stacks } = figures;
    let (begin_stacks, begins_from_other_stacks) = match begin_stacks.top() {
        Some((top, others)) => (top, Some(others)),
        None => (Vec::new(), None),
    };
    rank_wakers(&mut top_wakers);
    durations.sort_unstable();
    let rank = |q: f64| nearest_rank(&durations, q);
    let mut buckets = [0u64; 65];
    for &d in &durations {
        buckets[bucket_of(d)] += 1;
    }
    let histogram = match (buckets.iter().position(|&c| c > 0), buckets.iter().rposition(|&c| c > 0)) {
        (Some(first), Some(last)) => (first..=last).map(|i| Bucket { from_ns: bucket_floor(i), count: buckets[i] }).collect(),
        _ => Vec::new(),
    };
    SpanStats {
        name,
        count: durations.len() as u64,
        unfinished,
        p50_ns: rank(0.5),
        p90_ns: rank(0.9),
        p99_ns: rank(0.99),
        max_ns: durations.last().copied().unwrap_or(0),
        histogram,
        on_cpu: TimeStats::of(on_cpu),
        runnable: TimeStats::of(runnable),
        blocked: TimeStats::of(blocked),
        top_wakers,
        begin_stacks,
        begins_from_other_stacks,
    }
}

/// 0 → 0; `[2^(k-1), 2^k)` → k.
fn bucket_of(ns: u64) -> usize {
    (u64::BITS - ns.leading_zeros()) as usize
}

fn bucket_floor(bucket: usize) -> u64 {
    if bucket == 0 {
        0
    } else {
        1 << (bucket - 1)
    }
}

/// The widest histogram bar.
const BAR: usize = 50;

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total: u64 = self.events.iter().map(|e| e.count).sum();
        writeln!(
            f,
            "recording: {}, {total} events, {} lost events, {} lost task records, {} span ends without their begin",
            human(self.duration_ns),
            self.lost_events,
            self.lost_task_records,
            self.orphan_ends
        )?;
        if !self.events.is_empty() {
            let width = self.events.iter().map(|e| e.name.len()).max().unwrap_or(0).max(5);
            writeln!(f, "\n{:<width$}  {:>10}  {:>12}", "event", "count", "per second")?;
            for e in &self.events {
                let rate = e.rate_per_s.map_or_else(|| "-".to_owned(), |r| format!("{r:.2}"));
                writeln!(f, "{:<width$}  {:>10}  {:>12}", e.name, e.count, rate)?;
            }
        }
        for s in &self.spans {
            write!(f, "\nspan {}: {} finished", s.name, s.count)?;
            if s.unfinished > 0 {
                write!(f, ", {} unfinished", s.unfinished)?;
            }
            if s.count > 0 {
                write!(f, "; p50 {}, p90 {}, p99 {}, max {}", human(s.p50_ns), human(s.p90_ns), human(s.p99_ns), human(s.max_ns))?;
            }
            writeln!(f)?;
            sched_lines(f, s)?;
            f.write_str(&histogram(&s.histogram))?;
            let others = s.begins_from_other_stacks.unwrap_or(0);
            stacks::begin_stack_lines(f, &s.begin_stacks, others, s.count + s.unfinished)?;
        }
        trace_lines(f, &self.traces)?;
        if !self.processes.is_empty() {
            writeln!(f, "\n{:>8}  {:<16}  {:>10}  {:>10}", "pid", "process", "events", "spans")?;
            for p in &self.processes {
                writeln!(f, "{:>8}  {:<16}  {:>10}  {:>10}", p.pid, p.name, p.events, p.spans)?;
            }
        }
        Ok(())
    }
}

/// Whole requests, one line per kind:
///
/// ```text
/// requests (traces, by their root span):
///   request in demo-front (front): 100 finished; p50 1.20 ms, p90 2.00 ms, p99 2.10 ms, max 2.10 ms
/// ```
fn trace_lines(f: &mut fmt::Formatter<'_>, traces: &[TraceStats]) -> fmt::Result {
    if traces.is_empty() {
        return Ok(());
    }
    writeln!(f, "\nrequests (traces, by their root span):")?;
    for t in traces {
        write!(f, "  {} in {}: {} finished", t.root, t.process, t.count)?;
        if t.unfinished > 0 {
            write!(f, ", {} unfinished", t.unfinished)?;
        }
        if let Some(d) = &t.duration {
            write!(f, "; p50 {}, p90 {}, p99 {}, max {}", human(d.p50_ns), human(d.p90_ns), human(d.p99_ns), human(d.max_ns))?;
        }
        writeln!(f)?;
    }
    Ok(())
}

/// Where a kind of span's time went, under its durations:
///
/// ```text
///   on-CPU    p50 1.20 ms, p90 2.00 ms, p99 2.10 ms, max 2.10 ms, total 13.0 ms
///   runnable  p50 0 ns, ...
///   blocked   p50 300 ms, ...
///   woken by  writer (30) / writer (30), 12 times; ...
/// ```
fn sched_lines(f: &mut fmt::Formatter<'_>, s: &SpanStats) -> fmt::Result {
    for (label, stats) in [("on-CPU", &s.on_cpu), ("runnable", &s.runnable), ("blocked", &s.blocked)] {
        if let Some(t) = stats {
            writeln!(
                f,
                "  {label:<8}  p50 {}, p90 {}, p99 {}, max {}, total {}",
                human(t.p50_ns),
                human(t.p90_ns),
                human(t.p99_ns),
                human(t.max_ns),
                human(t.total_ns)
            )?;
        }
    }
    if !s.top_wakers.is_empty() {
        let wakers: Vec<String> = s.top_wakers.iter().map(Waker::to_string).collect();
        writeln!(f, "  woken by  {}", wakers.join("; "))?;
    }
    Ok(())
}

/// systemtap's `@hist_log` layout, each bucket labelled with its lower
/// bound as a duration, in the units of the percentiles above it:
///
/// ```text
/// duration |-------------------------------------------------- count
///   512 ns |@@@@@@@@@@                                         10
///  1.02 µs |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 50
/// ```
///
/// Labels round to three digits (1024 ns is `1.02 µs`); they stay apart,
/// as each bound is twice the last. `--format json` has the exact
/// `from_ns`.
pub fn histogram(buckets: &[Bucket]) -> String {
    let mut out = String::new();
    let Some(most) = buckets.iter().map(|b| b.count).max().filter(|&m| m > 0) else { return out };
    let labels: Vec<String> = buckets.iter().map(|b| human(b.from_ns)).collect();
    // Width in chars, not bytes: `µ` is two bytes and one column.
    let width = labels.iter().map(|l| l.chars().count()).chain([HEADER.len()]).max().unwrap_or(0);
    let _ = writeln!(out, "{HEADER:>width$} |{} count", "-".repeat(BAR));
    for (b, label) in buckets.iter().zip(&labels) {
        // At least one @ for a bucket that holds anything.
        let bar = if b.count == 0 { 0 } else { ((b.count as u128 * BAR as u128).div_ceil(most as u128) as usize).max(1) };
        let _ = writeln!(out, "{label:>width$} |{:<BAR$} {}", "@".repeat(bar), b.count);
    }
    out
}

/// The histogram's label column.
const HEADER: &str = "duration";

/// `1.234 s`, `5.6 ms`, `78 µs`, `910 ns`: three significant digits or so.
fn human(ns: u64) -> String {
    let (value, unit) = match ns {
        0..1_000 => return format!("{ns} ns"),
        1_000..1_000_000 => (ns as f64 / 1e3, "µs"),
        1_000_000..1_000_000_000 => (ns as f64 / 1e6, "ms"),
        _ => (ns as f64 / 1e9, "s"),
    };
    let digits = if value >= 100.0 { 0 } else if value >= 10.0 { 1 } else { 2 };
    format!("{value:.digits$} {unit}")
}

#[cfg(test)]
mod tests;

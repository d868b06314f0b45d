//! Folding a recording into a [`Report`] one record, one span at a time:
//! what is kept is the figures the report prints, not what they count.

use std::collections::BTreeMap;

use super::stacks::StackCounts;
use super::{span_stats, EventStats, ProcessStats, Report, TimeStats, TraceStats};
use crate::record::{EventRecord, Record};
use crate::timeline::sched::add_wakers;
use crate::timeline::{event_name, Span, Timeline, TimelineBuilder, Waker};

/// Builds a [`Report`] from records given one at a time, as they are read,
/// so that a recording need not be held whole.
///
/// It holds, per span name, the duration of each finished span (8 bytes
/// apiece, so that percentiles are exact), a count of unfinished ones and
/// at most [`MAX_DISTINCT_STACKS`](super::MAX_DISTINCT_STACKS)
/// distinct begin stacks with their counts;
/// per event name, a count; per process, its name and counts; the number
/// of lost records; and the spans still open, without their args (with
/// their begin's stack, where recorded). Spans
/// are folded as they close ([`TimelineBuilder::lean`]), and events and
/// losses as they come: none is kept.
///
/// Records are taken in the order given, as [`TimelineBuilder`] takes
/// them; [`Report::new`] sorts a slice that is not in time order.
pub struct ReportBuilder {
    timeline: TimelineBuilder,
    tally: Tally,
}

impl Default for ReportBuilder {
    fn default() -> ReportBuilder {
        ReportBuilder { timeline: TimelineBuilder::lean(), tally: Tally::default() }
    }
}

impl ReportBuilder {
    /// The report of an empty recording, until records are pushed.
    pub fn new() -> ReportBuilder {
        ReportBuilder::default()
    }

    /// Adds the next record.
    pub fn push(&mut self, record: &Record) {
        match record {
            Record::Event(e) => self.tally.event(e),
            // A lean timeline keeps no lost markers.
            Record::Lost(l) => self.tally.lost(l.count, l.sideband),
            _ => {}
        }
        self.timeline.push(record);
        for span in self.timeline.drain_closed_spans() {
            self.tally.span(&span);
        }
    }

    /// Closes the spans still open (as unfinished) and gives the report.
    pub fn finish(self) -> Report {
        let mut tally = self.tally;
        let timeline = self.timeline.finish();
        for span in &timeline.spans {
            tally.span(span);
        }
        tally.report(&timeline)
    }
}

/// One kind of span's figures, before they are sorted into percentiles.
#[derive(Default)]
pub(super) struct SpanFigures {
    /// The durations of finished spans.
    pub(super) durations: Vec<u64>,
    /// How many spans were unfinished.
    pub(super) unfinished: u64,
    /// Of the finished spans with a scheduler summary, each one's on-CPU,
    /// runnable and blocked time.
    pub(super) on_cpu: Vec<u64>,
    pub(super) runnable: Vec<u64>,
    pub(super) blocked: Vec<u64>,
    /// Their top wakers, summed.
    pub(super) top_wakers: Vec<Waker>,
    /// Every span's begin stack (finished or not), counted.
    pub(super) begin_stacks: StackCounts,
}

/// The counts a report is made of, folded one item at a time.
#[derive(Default)]
pub(super) struct Tally {
    /// Per event name, how many.
    events: BTreeMap<String, u64>,
    /// Per span name, what its spans' figures are made of.
    spans: BTreeMap<String, SpanFigures>,
    /// Per pid, how many spans.
    spans_of: BTreeMap<u32, u64>,
    /// Per root span name and pid, its traces' figures: the durations of
    /// finished roots, and how many were unfinished.
    roots: BTreeMap<(String, u32), (Vec<u64>, u64)>,
    lost_events: u64,
    lost_task_records: u64,
}

impl Tally {
    pub(super) fn event(&mut self, e: &EventRecord) {
        let name = event_name(e);
        // A name is allocated once, not per event.
        match self.events.get_mut(name.as_ref()) {
            Some(count) => *count += 1,
            None => {
                self.events.insert(name.into_owned(), 1);
            }
        }
    }

    pub(super) fn span(&mut self, span: &Span) {
        // A name is allocated once, not per span.
        if !self.spans.contains_key(span.name.as_str()) {
            self.spans.insert(span.name.clone(), SpanFigures::default());
        }
        if let Some(figures) = self.spans.get_mut(span.name.as_str()) {
            figures.begin_stacks.add(&span.stack);
            if span.unfinished.is_some() {
                figures.unfinished += 1;
            } else {
                figures.durations.push(span.duration_ns());
                if let Some(sched) = &span.sched {
                    figures.on_cpu.push(sched.on_cpu_ns);
                    figures.runnable.push(sched.runnable_ns);
                    figures.blocked.push(sched.blocked_ns());
                    add_wakers(&mut figures.top_wakers, &sched.top_wakers);
                }
            }
        }
        *self.spans_of.entry(span.pid).or_default() += 1;
        if span.trace.is_some_and(|t| t.is_said() && t.parent_span_id == 0) {
            let (durations, unfinished) = self.roots.entry((span.name.clone(), span.pid)).or_default();
            match span.unfinished {
                Some(_) => *unfinished += 1,
                None => durations.push(span.duration_ns()),
            }
        }
    }

    pub(super) fn lost(&mut self, count: u64, sideband: bool) {
        if sideband {
            self.lost_task_records += count;
        } else {
            self.lost_events += count;
        }
    }

    /// The report, with the duration, processes and orphan ends of
    /// `timeline` (its spans and lost markers are not read here).
    pub(super) fn report(self, timeline: &Timeline) -> Report {
        let duration_ns = timeline.end_ns - timeline.start_ns;
        let seconds = duration_ns as f64 / 1e9;
        let events = self
            .events
            .into_iter()
            .map(|(name, count)| EventStats { name, count, rate_per_s: (duration_ns > 0).then(|| count as f64 / seconds) })
            .collect();
        let spans = self.spans.into_iter().map(|(name, figures)| span_stats(name, figures)).collect();
        let traces = trace_stats(self.roots, timeline);
        let processes = timeline
            .processes
            .values()
            .map(|p| ProcessStats { pid: p.pid, name: p.name.clone(), events: p.events, spans: self.spans_of.get(&p.pid).copied().unwrap_or(0) })
            .collect();
        Report {
            duration_ns,
            events,
            spans,
            traces,
            processes,
            lost_events: self.lost_events,
            lost_task_records: self.lost_task_records,
            orphan_ends: timeline.orphan_ends,
        }
    }
}

/// The traces' figures by root span name and process name: the roots of
/// one name in processes of one name (a service's replicas) count
/// together.
fn trace_stats(roots: BTreeMap<(String, u32), (Vec<u64>, u64)>, timeline: &Timeline) -> Vec<TraceStats> {
    let mut by_process_name: BTreeMap<(String, String), (Vec<u64>, u64)> = BTreeMap::new();
    for ((root, pid), (durations, unfinished)) in roots {
        let process = timeline.processes.get(&pid).map_or_else(|| pid.to_string(), |p| p.shown_name().into_owned());
        let (all, all_unfinished) = by_process_name.entry((root, process)).or_default();
        all.extend(durations);
        *all_unfinished += unfinished;
    }
    by_process_name
        .into_iter()
        .map(|((root, process), (durations, unfinished))| TraceStats {
            root,
            process,
            count: durations.len() as u64,
            unfinished,
            duration: TimeStats::of(durations),
        })
        .collect()
}

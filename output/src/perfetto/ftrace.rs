//! Scheduler records as Perfetto's own ftrace packets, which
//! ui.perfetto.dev draws as each thread's states (Running, Runnable,
//! Sleeping, Uninterruptible) under the thread, beside its slices, with
//! the waker of each wakeup.
//!
//! - Per CPU, an `FtraceEventBundle` (`cpu`) of `FtraceEvent`s in time
//!   order, each with its time, the tid it ran in (`pid`: for a switch the
//!   task switched out, for a waking the waker) and its `sched_switch`,
//!   `sched_waking` or `sched_migrate_task` with the kernel's fields. A
//!   CPU's bundle is written when it holds [`BUNDLE_EVENTS`], and every
//!   CPU's at the end, so that what is held stays small.
//! - The times are the records' own, CLOCK_MONOTONIC. Perfetto reads an
//!   ftrace timestamp on CLOCK_BOOTTIME, the bundle's default clock (a
//!   packet's `timestamp_clock_id` does not apply to ftrace events), so the
//!   writer's clock snapshot says that, in this trace, BOOTTIME reads as
//!   MONOTONIC: ftrace events and track events then land on one clock.
//! - `prev_state` is written in the layout Perfetto decodes when a trace
//!   names no kernel ([`prev_state_for_perfetto`]).
//! - The threads are the kernel's tids, as are the tids of the thread
//!   tracks, so Perfetto joins a thread's states and its slices.

use std::collections::BTreeMap;

use super::proto::{ftrace_event, trace_packet, FtraceEvent, FtraceEventBundle, SchedMigrateTaskFtraceEvent, SchedSwitchFtraceEvent, SchedWakingFtraceEvent, TracePacket};
use super::SEQUENCE_ID;
use crate::timeline::{SchedEvent, SchedEventKind};

/// Events of one CPU gathered into one bundle, as Perfetto's own recorder
/// gathers a few pages of its ring.
pub const BUNDLE_EVENTS: usize = 512;

/// Perfetto refuses a whole trace that has a bundle of a CPU from here on
/// (a corrupted record's): such events are left out.
const MAX_CPUS: u32 = 1024;

/// The bundles being gathered, by CPU.
#[derive(Default)]
pub(super) struct Bundles {
    cpus: BTreeMap<u32, Vec<FtraceEvent>>,
}

impl Bundles {
    /// Adds `e` (given in time order) to its CPU's bundle; returns that
    /// bundle's packet once it is full.
    pub(super) fn push(&mut self, e: &SchedEvent) -> Option<TracePacket> {
        if e.cpu >= MAX_CPUS {
            return None;
        }
        let events = self.cpus.entry(e.cpu).or_default();
        events.push(ftrace_event(e));
        if events.len() < BUNDLE_EVENTS {
            return None;
        }
        Some(packet(e.cpu, std::mem::take(events)))
    }

    /// The packets of the bundles still held, by CPU.
    pub(super) fn finish(self) -> impl Iterator<Item = TracePacket> {
        self.cpus.into_iter().filter(|(_, events)| !events.is_empty()).map(|(cpu, events)| packet(cpu, events))
    }
}

fn packet(cpu: u32, events: Vec<FtraceEvent>) -> TracePacket {
    TracePacket {
        // On the trace's one sequence, needing none of its state.
        optional_trusted_packet_sequence_id: Some(trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(SEQUENCE_ID)),
        data: Some(trace_packet::Data::FtraceEvents(FtraceEventBundle { cpu: Some(cpu), event: events, ..Default::default() })),
        ..Default::default()
    }
}

fn ftrace_event(e: &SchedEvent) -> FtraceEvent {
    let event = match &e.kind {
        SchedEventKind::Switch { prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid, next_prio } => {
            ftrace_event::Event::SchedSwitch(SchedSwitchFtraceEvent {
                prev_comm: Some(prev_comm.clone()),
                prev_pid: Some(*prev_pid),
                prev_prio: Some(*prev_prio),
                prev_state: Some(prev_state_for_perfetto(*prev_state)),
                next_comm: Some(next_comm.clone()),
                next_pid: Some(*next_pid),
                next_prio: Some(*next_prio),
            })
        }
        SchedEventKind::Waking { comm, pid, prio, target_cpu } => ftrace_event::Event::SchedWaking(SchedWakingFtraceEvent {
            comm: Some(comm.clone()),
            pid: Some(*pid),
            prio: Some(*prio),
            target_cpu: Some(*target_cpu),
            // `success`: the kernel's sched_waking has had none since 4.x.
            ..Default::default()
        }),
        SchedEventKind::Migrate { comm, pid, prio, orig_cpu, dest_cpu } => ftrace_event::Event::SchedMigrateTask(SchedMigrateTaskFtraceEvent {
            comm: Some(comm.clone()),
            pid: Some(*pid),
            prio: Some(*prio),
            orig_cpu: Some(*orig_cpu),
            dest_cpu: Some(*dest_cpu),
            ..Default::default()
        }),
    };
    FtraceEvent { timestamp: Some(e.time_ns), pid: Some(e.tid), event: Some(event), ..Default::default() }
}

/// A switch-out's `prev_state` in the layout Perfetto decodes when the
/// trace names no kernel version: Linux 4.4's. A recording does not name
/// its kernel, and user_events needs 6.4 or later, which reports the
/// layout of 4.14 on: one bit of TASK_REPORT, or TASK_REPORT_MAX (0x100)
/// for a preemption. Read as 4.4's, 0x100 would be TASK_WAKING and 0x40
/// TASK_DEAD; so each bit is moved to its 4.4 place. R, S, D, T, t, X and
/// Z (the low six bits) are the same in both.
pub fn prev_state_for_perfetto(raw: i64) -> i64 {
    let mut state = raw & 0x3f;
    // TASK_PARKED, 0x200 in 4.4.
    if raw & 0x40 != 0 {
        state |= 0x200;
    }
    // TASK_REPORT_IDLE: TASK_UNINTERRUPTIBLE | TASK_NOLOAD in 4.4, which
    // Perfetto shows as Idle.
    if raw & 0x80 != 0 {
        state |= 0x2 | 0x400;
    }
    // TASK_REPORT_MAX, a preemption: 4.4's TASK_STATE_MAX (R+).
    if raw & 0x100 != 0 {
        state |= 0x800;
    }
    state
}

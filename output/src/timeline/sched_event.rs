//! A scheduler record as a viewer draws it: the switch, waking or
//! migration with the CPU it ran on, the task it ran in, and the kernel's
//! own fields (names, priorities, the raw `prev_state`), so that a viewer
//! can rebuild every thread's states as the kernel reported them.
//!
//! [`SchedRecord`](super::SchedRecord) is what the timeline's summaries
//! count; a [`SchedEvent`] is what the Perfetto trace writes, as the
//! ftrace events Perfetto draws as thread states. Which records are
//! scheduler records is [`SchedRecord::of`](super::SchedRecord::of)'s
//! rule, the one place that decides.

use super::sched::{integer, SchedRecord};
use crate::record::{EventRecord, Value};

/// A scheduler record, with what a viewer needs of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedEvent {
    /// When the kernel emitted it.
    pub time_ns: u64,
    /// The CPU it was emitted on.
    pub cpu: u32,
    /// The task it ran in: for a switch, the one switched out; for a
    /// waking, the waker (0: the idle task, or an interrupt on it).
    pub tid: u32,
    /// What happened.
    pub kind: SchedEventKind,
}

/// The kernel's fields of a scheduler record (its tracepoint's names).
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)] // each field is the tracepoint's field of its name
pub enum SchedEventKind {
    /// `sched_switch`: `prev_pid` leaves the CPU in `prev_state` (as the
    /// kernel reports it: since 4.14, one bit of TASK_REPORT, or 0x100 for
    /// a preemption); `next_pid` runs.
    Switch { prev_comm: String, prev_pid: i32, prev_prio: i32, prev_state: i64, next_comm: String, next_pid: i32, next_prio: i32 },
    /// `sched_waking`: the record's task wakes `pid`, to run on `target_cpu`.
    Waking { comm: String, pid: i32, prio: i32, target_cpu: i32 },
    /// `sched_migrate_task`: `pid` moves from `orig_cpu` to `dest_cpu`.
    Migrate { comm: String, pid: i32, prio: i32, orig_cpu: i32, dest_cpu: i32 },
}

impl SchedEvent {
    /// `e` as a scheduler event, if it is a scheduler record whose pids and
    /// CPUs fit the kernel's types (an `int`). A name or a priority it lacks
    /// is empty or 0: the kernel's records always have them.
    pub fn of(e: &EventRecord) -> Option<SchedEvent> {
        SchedEvent::of_record(e, SchedRecord::of(e)?)
    }

    /// [`of`](Self::of) for `e` already read as `record`, which says what
    /// kind it is and that its integers are there: the timeline's builder
    /// reads each record once.
    pub fn of_record(e: &EventRecord, record: SchedRecord) -> Option<SchedEvent> {
        let int = |name: &str| e.field(name).and_then(integer).and_then(|v| i32::try_from(v).ok());
        let or_zero = |name: &str| int(name).unwrap_or(0);
        let comm = |name: &str| match e.field(name) {
            Some(Value::Str(s)) => s.clone(),
            _ => String::new(),
        };
        let kind = match record {
            SchedRecord::Switch { prev_state, .. } => SchedEventKind::Switch {
                prev_comm: comm("prev_comm"),
                prev_pid: int("prev_pid")?,
                prev_prio: or_zero("prev_prio"),
                prev_state,
                next_comm: comm("next_comm"),
                next_pid: int("next_pid")?,
                next_prio: or_zero("next_prio"),
            },
            SchedRecord::Waking { .. } => SchedEventKind::Waking { comm: comm("comm"), pid: int("pid")?, prio: or_zero("prio"), target_cpu: int("target_cpu")? },
            SchedRecord::Migrate { .. } => SchedEventKind::Migrate {
                comm: comm("comm"),
                pid: int("pid")?,
                prio: or_zero("prio"),
                orig_cpu: int("orig_cpu")?,
                dest_cpu: int("dest_cpu")?,
            },
        };
        Some(SchedEvent { time_ns: e.time_ns, cpu: e.cpu, tid: e.tid, kind })
    }
}

#[cfg(test)]
mod tests;

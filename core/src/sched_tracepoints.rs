//! The kernel's scheduler tracepoints that `usertrace record --sched`
//! attaches: one list, for the consumer (what to attach and filter) and
//! the outputs (which recorded events are scheduler records).

/// Their tracepoint system.
pub const SCHED_SYSTEM: &str = "sched";
/// A CPU switches from `prev_pid` to `next_pid`.
pub const SCHED_SWITCH: &str = "sched_switch";
/// A task wakes `pid`.
pub const SCHED_WAKING: &str = "sched_waking";
/// `pid` moves from `orig_cpu` to `dest_cpu`.
pub const SCHED_MIGRATE_TASK: &str = "sched_migrate_task";
/// The three, by name.
pub const SCHED_TRACEPOINTS: [&str; 3] = [SCHED_SWITCH, SCHED_WAKING, SCHED_MIGRATE_TASK];
/// The three as `-e` spells them, `SYSTEM:NAME`.
pub const SCHED_PATTERNS: [&str; 3] = ["sched:sched_switch", "sched:sched_waking", "sched:sched_migrate_task"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patterns_are_the_system_and_the_names() {
        let built: Vec<String> = SCHED_TRACEPOINTS.iter().map(|name| format!("{SCHED_SYSTEM}:{name}")).collect();
        assert_eq!(built, SCHED_PATTERNS);
    }
}

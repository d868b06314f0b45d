use super::*;
use crate::record::Record;
use crate::test_records::*;

fn of(record: Record) -> Option<SchedEvent> {
    let Record::Event(e) = record else { panic!("an event") };
    SchedEvent::of(&e)
}

#[test]
fn a_switch_keeps_the_kernels_fields_and_runs_in_the_task_switched_out() {
    let e = of(switch(5, 41, R_PREEMPTED, 0)).unwrap();
    assert_eq!(
        e,
        SchedEvent {
            time_ns: 5,
            cpu: 0,
            tid: 41,
            kind: SchedEventKind::Switch {
                prev_comm: "thread41".into(),
                prev_pid: 41,
                prev_prio: 120,
                prev_state: R_PREEMPTED,
                next_comm: "thread0".into(),
                next_pid: 0,
                next_prio: 120,
            },
        }
    );
}

#[test]
fn a_waking_runs_in_the_waker_and_names_the_wakee() {
    let e = of(waking(7, 40, 42, 41)).unwrap();
    assert_eq!(e.tid, 42);
    assert_eq!(e.kind, SchedEventKind::Waking { comm: "thread41".into(), pid: 41, prio: 120, target_cpu: 0 });
}

#[test]
fn a_migration_names_both_cpus() {
    let e = of(migrate(9, 41)).unwrap();
    assert_eq!(e.kind, SchedEventKind::Migrate { comm: "thread41".into(), pid: 41, prio: 120, orig_cpu: 0, dest_cpu: 1 });
}

#[test]
fn a_user_event_named_like_the_kernels_is_none() {
    assert_eq!(of(event(1, 1, 1, "sched_switch", &[("prev_pid", Value::Str("x".into()))])), None);
    assert_eq!(of(event(1, 1, 1, "request", &[])), None);
}

#[test]
fn a_pid_beyond_an_int_is_not_drawn() {
    let Record::Event(mut e) = switch(5, 41, S, 0) else { unreachable!() };
    e.fields[1].1 = Value::Signed(1 << 40);
    assert_eq!(SchedEvent::of(&e), None);
}

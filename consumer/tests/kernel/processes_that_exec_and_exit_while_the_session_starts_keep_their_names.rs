//! Processes started before recording are attributed right, even when they
//! fork, rename, exec and exit while `Session::open` enables the sideband,
//! walks /proc and attaches: every event carries the pid and comm its
//! emitter read for itself just before emitting (`ut_emit churn`), and the
//! session must agree on each one.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use usertrace_consumer::{FieldValue, Output, Session};

use crate::consumer_support::*;

fn text(event: &usertrace_consumer::Event, name: &str) -> String {
    match event.fields().unwrap().into_iter().find(|f| f.0 == name) {
        Some((_, FieldValue::Str(s))) => s.into_owned(),
        other => panic!("field {name} of {event:?}: {other:?}"),
    }
}

#[test]
fn processes_that_exec_and_exit_while_the_session_starts_keep_their_names() {
    let name = unique("churn");
    let stop = format!("/tmp/{name}.stop");
    let mut producer = start(&["churn", &name, "12", &stop]);
    // Let the churn get going, so the session starts in the middle of it.
    std::thread::sleep(Duration::from_millis(300));
    let opening = Instant::now();
    let mut session = Session::open(&options(&name)).unwrap();
    let opened_in = opening.elapsed();
    // Record the churn for a while, then let it wind down.
    let mut early = Vec::new();
    while opening.elapsed() < opened_in + Duration::from_secs(3) {
        early.extend(session.poll(Duration::from_millis(50)).unwrap());
    }
    std::fs::write(&stop, "").unwrap();
    let mut rec = record_until_exit(&mut session, &mut producer.child);
    let _ = std::fs::remove_file(&stop);
    let early = early.into_iter().filter_map(|o| if let Output::Event(e) = o { Some(e) } else { None });
    rec.events.splice(0..0, early);

    assert_eq!((rec.stats.lost_total(), rec.stats.lost_sideband, rec.stats.malformed), (0, 0, 0));
    let mut wrong = Vec::new();
    let (mut children, mut stages) = (HashSet::new(), HashSet::new());
    for e in &rec.events {
        let (pid, seq, stage, comm) = (unsigned(e, "pid") as u32, unsigned(e, "seq"), unsigned(e, "stage"), text(e, "comm"));
        if (e.pid, e.tid, &*e.comm, &*e.process) != (pid, pid, comm.as_str(), comm.as_str()) {
            wrong.push(format!(
                "seq {seq} stage {stage}: emitted by {pid} as {comm:?}, attributed to {}/{} as {:?} (process {:?})",
                e.pid, e.tid, e.comm, e.process
            ));
        }
        if stage == 9 {
            assert_eq!(pid, producer.pid);
        } else {
            children.insert(pid);
        }
        stages.insert(stage);
    }
    assert!(wrong.is_empty(), "{} of {} events misattributed:\n{}", wrong.len(), rec.events.len(), wrong.join("\n"));
    // The churn really overlapped the recording: every stage was seen, from
    // the parent (started before) and from many short-lived children.
    assert_eq!(stages, HashSet::from([0, 1, 2, 3, 9]), "{} events; the session opened in {opened_in:?}", rec.events.len());
    // (A few dozen a second fork and exec under qemu without KVM.)
    assert!(children.len() >= 10, "only {} children recorded", children.len());
}

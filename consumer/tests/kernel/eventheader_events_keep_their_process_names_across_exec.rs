//! An EventHeader producer writes its events, then execs itself under
//! another name (a link in /tmp), registers again and writes `AfterExec`:
//! the events before carry the old name, the one after the new, all under
//! one pid. The exec'd image registers tracepoints a recorder already has,
//! with no handshake.

use usertrace_consumer::{FieldValue, Session, SessionOptions};

use crate::consumer_support::*;
use crate::eventheader_support::*;

#[test]
fn eventheader_events_keep_their_process_names_across_exec() {
    let dir = std::env::temp_dir().join(unique("eh_exec"));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("eh_after_exec");
    std::os::unix::fs::symlink(producer_path(), &link).unwrap();

    // The producer waits for both providers before it writes.
    let options = SessionOptions {
        patterns: vec!["UsertraceEhStatic:L4".into(), "UsertraceEhDynamic:L5".into()],
        ..SessionOptions::default()
    };
    let mut session = Session::open(&options).unwrap();
    let mut producer = start_producer(Some(&link));
    let rec = record_until_exit(&mut session, &mut producer.child);
    std::fs::remove_dir_all(&dir).unwrap();

    let pid = producer.pid;
    let got: Vec<(String, u32, String, String)> =
        rec.events.iter().map(|e| (event_name(e), e.pid, e.comm.to_string(), e.process.to_string())).collect();
    let old = PRODUCER_COMM.to_owned();
    assert_eq!(
        got,
        vec![
            ("Every".into(), pid, old.clone(), old.clone()),
            ("Work".into(), pid, old.clone(), old.clone()),
            ("Work".into(), pid, old.clone(), old.clone()),
            ("Dynamic".into(), pid, old.clone(), old),
            ("AfterExec".into(), pid, "eh_after_exec".into(), "eh_after_exec".into()),
        ]
    );
    let after = rec.events[4].fields().unwrap();
    assert_eq!(after[0].0, "pid");
    assert_eq!(after[0].1, FieldValue::Unsigned(u64::from(pid)));
}

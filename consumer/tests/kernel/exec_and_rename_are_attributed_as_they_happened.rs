//! E1 under the original name, E2 after prctl(PR_SET_NAME), E3 after exec
//! of another program under the same pid: old, renamed, new. The events are
//! read only after the process is gone, so the history must be kept.

use usertrace_consumer::{FieldValue, Session};

use crate::consumer_support::*;

#[test]
fn exec_and_rename_are_attributed_as_they_happened() {
    let name = unique("exec");
    let mut producer = start(&["rename", &name]);
    let mut session = Session::open(&options(&name)).unwrap();
    // Nothing is read until the process has exec'd and exited.
    producer.child.wait().unwrap();
    let rec = record_until_exit(&mut session, &mut producer.child);

    let got: Vec<(String, u32, String, String)> = rec
        .events
        .iter()
        .map(|e| {
            let note = match &e.fields().unwrap()[1].1 {
                FieldValue::Str(s) => s.to_string(),
                other => panic!("{other:?}"),
            };
            (note, e.pid, e.comm.to_string(), e.process.to_string())
        })
        .collect();
    let pid = producer.pid;
    let new = format!("ut-new-{pid}");
    let new: String = new.chars().take(15).collect();
    assert_eq!(
        got,
        vec![
            ("E1".into(), pid, "ut_emit".into(), "ut_emit".into()),
            ("E2".into(), pid, "ut_renamed".into(), "ut_renamed".into()),
            ("E3".into(), pid, new.clone(), new),
        ]
    );
}

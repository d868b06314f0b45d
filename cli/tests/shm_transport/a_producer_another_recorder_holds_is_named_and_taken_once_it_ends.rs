//! One recorder per producer: a second `usertrace record` for the same
//! tracepoints says which process it cannot record and who holds it, and
//! takes the producer once that recorder ends. Each recorder gets an
//! unbroken run of the events, the second one's up to the last: the first
//! turns the tracepoint off before its last read, so it leaves nothing in
//! the ring for the second to find.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::support::*;

const COUNT: u64 = 3000;

#[test]
fn a_producer_another_recorder_holds_is_named_and_taken_once_it_ends() {
    let name = unique("shm_held");
    // 3000 events 1 ms apart: the first recorder's 1.5 s covers about half.
    let (mut producer, pid) = crate::ready_producer(&name, COUNT, 1000);
    let reaper = std::thread::spawn(move || producer.wait().unwrap());

    let mut first = Command::new(usertrace())
        .args(["record", "-e", &name, "--format", "json", "-p", &pid, "--", "sleep", "1.5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let first_pid = first.id();
    let mut first_err = BufReader::new(first.stderr.take().unwrap());
    let mut first_notes = String::new();
    while !first_notes.contains("attached user_events:") {
        assert_ne!(first_err.read_line(&mut first_notes).unwrap(), 0, "the first recorder ended without attaching: {first_notes}");
    }
    // Its output is read all along: a recorder blocked on a full pipe
    // would hold the producer past its command's end.
    let first = std::thread::spawn(move || first.wait_with_output().unwrap());
    let second = Command::new(usertrace())
        .args(["record", "-e", &name, "--format", "json", "-p", &pid, "--", "sh", "-c"])
        .arg(format!("while kill -0 {pid} 2>/dev/null; do sleep 0.05; done"))
        .output()
        .unwrap();
    assert!(reaper.join().unwrap().success());
    let first = first.join().unwrap();
    std::io::Read::read_to_string(&mut first_err, &mut first_notes).unwrap();
    assert!(first.status.success(), "{first_notes}");
    let second_err = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{second_err}");

    let expected = format!(
        "process {pid} (ut_emit) has tracepoints in shared memory that match, but they are not recorded: \
         recorded by another usertrace (pid {first_pid})"
    );
    assert_eq!(second_err.matches(&expected).count(), 1, "{second_err}");
    assert!(!first_notes.contains("not recorded"), "{first_notes}");

    let numbers = |stdout: &[u8]| -> Vec<u64> {
        event_lines(&String::from_utf8_lossy(stdout)).iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect()
    };
    let (a, b) = (numbers(&first.stdout), numbers(&second.stdout));
    let run = |v: &[u64]| format!("{} events, {:?} to {:?}", v.len(), v.first(), v.last());
    assert!(!a.is_empty() && !b.is_empty(), "first: {}, second: {}; {second_err}", run(&a), run(&b));
    assert!(a.iter().copied().eq(0..a.len() as u64), "the first recorder's run has a gap: {}", run(&a));
    // Between the first recorder's clearing of the word and the second's
    // setting of it, the producer emits nothing.
    let b_first = b[0];
    assert!(b_first > *a.last().unwrap(), "the second recorder got {b_first} while the first held the producer");
    assert!(b.iter().copied().eq(b_first..COUNT), "the second recorder's run has a gap or misses the end: {}", run(&b));
}

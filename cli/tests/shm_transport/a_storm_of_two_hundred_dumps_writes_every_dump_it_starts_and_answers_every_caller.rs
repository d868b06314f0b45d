//! Issue 42's stress test: a flight recorder under a long storm of
//! triggers, with `usertrace dump` callers asking at the same time. Each
//! trigger that starts a dump is written, as a file of its own, and every
//! caller gets an answer: a file, or why there is none.
//!
//! Natively over shared memory, where it is fast; the guest keeps the
//! storm test of the acceptance suite.

use std::process::{Command, Output};
use std::time::Duration;

use crate::a_flight_recorder_dumps_the_seconds_around_a_trigger::{dumps, producer, scratch, Recorder};
use crate::support::*;

const DUMPS: usize = 200;

/// `usertrace dump`, with a timeout far beyond any dump's writing.
fn ask_for_a_dump() -> Output {
    Command::new(usertrace()).args(["dump", "--timeout", "60s"]).output().unwrap()
}

#[test]
fn a_storm_of_two_hundred_dumps_writes_every_dump_it_starts_and_answers_every_caller() {
    let dir = scratch(&unique("flight_stress"));
    let p = unique("fx");
    let storm = format!("{p}_storm");
    let output = dir.join("flight.data");
    let pattern = format!("{p}_*");
    // A dump may start every 5 ms, and closes 5 ms after its trigger:
    // under load the triggers of several dumps reach the window before the
    // first has closed, which is what once lost dumps.
    let max = DUMPS.to_string();
    // 4,000 triggers 1 ms apart, from the moment the recorder enables
    // them: enough for every dump --max-dumps allows.
    let storm_producer = producer(&["seq", &storm, "4000", "1000"]);
    let recorder = Recorder::start(&[
        "--flight-recorder=100ms",
        "--after",
        "5ms",
        "--dump-interval",
        "5ms",
        "--max-dumps",
        &max,
        "--trigger",
        &storm,
        "-e",
        &pattern,
        "-o",
        output.to_str().unwrap(),
    ]);
    let callers: Vec<_> = (0..20)
        .map(|i| {
            std::thread::sleep(Duration::from_millis(50));
            std::thread::Builder::new().name(format!("caller-{i}")).spawn(ask_for_a_dump).unwrap()
        })
        .collect();
    let answers: Vec<Output> = callers.into_iter().map(|c| c.join().unwrap()).collect();
    assert!(storm_producer.finished_ok());
    recorder.wait_for("wrote ", DUMPS);
    let (status, stderr) = recorder.stop();
    assert!(status.success(), "{stderr}");

    let started = stderr.lines().filter(|l| l.contains(": dump asked for by ")).count();
    let wrote: Vec<&str> = stderr.lines().filter(|l| l.contains(": wrote ")).collect();
    assert_eq!(started, DUMPS, "the storm reaches --max-dumps:\n{stderr}");
    assert_eq!(wrote.len(), started, "every dump started is written:\n{stderr}");
    assert!(stderr.contains(&format!("{DUMPS} dumps started: {DUMPS} written; ")), "{stderr}");
    let found = dumps(&dir);
    assert_eq!(found.len(), DUMPS, "a file each");

    for answer in &answers {
        let said = String::from_utf8_lossy(&answer.stderr);
        if answer.status.success() {
            let file = String::from_utf8(answer.stdout.clone()).unwrap();
            assert!(found.iter().any(|f| f.to_str() == Some(file.trim())), "{file} is one of the dumps");
        } else {
            // Refused for what is true: too soon after a dump, or too many.
            assert!(
                said.contains("not dumping: less than --dump-interval") || said.contains(&format!("not dumping: --max-dumps {DUMPS} reached (")),
                "every caller is answered: {said}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

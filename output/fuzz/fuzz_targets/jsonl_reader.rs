//! Arbitrary bytes as a JSON-lines recording: the reader must give back
//! records or a typed error naming a line, never panic; whatever it reads
//! must lay out as a timeline and encode as every output, and what it
//! reads must write back as lines that read again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use usertrace_output::{chrome, jsonl, perfetto, Report, Timeline};

fuzz_target!(|data: &[u8]| {
    let mut records = Vec::new();
    for item in jsonl::Reader::new(data) {
        match item {
            Ok(record) => records.push(record),
            Err(e) => {
                assert!(e.line().is_some(), "{e}");
                let _ = e.to_string();
            }
        }
    }
    let timeline = Timeline::build(&records);
    let _ = perfetto::encode(&timeline);
    let _ = chrome::encode(&timeline);
    let _ = Report::with_timeline(&records, &timeline).to_string();
    let mut lines = Vec::new();
    for record in &records {
        jsonl::write_record(record, &mut lines);
    }
    let again: Result<Vec<_>, _> = jsonl::Reader::new(&lines[..]).collect();
    assert_eq!(again.map(|r| r.len()).ok(), Some(records.len()));
});

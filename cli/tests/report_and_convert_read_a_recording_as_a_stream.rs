//! `report` and `convert` read a recording as a stream: their peak memory
//! is that of what is open at once, not of the file. A 32 MiB recording of
//! plain events is reported and converted to JSON lines or text in under
//! 16 MiB, and to Perfetto or Chrome JSON (which hold up to 16 MiB of
//! finished items before they spill them, sorted, to disk) in less than the
//! file's own size, where the builds before streaming took two to three
//! times the file (201 MiB for 100 MB in BENCHMARKS; harness/bench-convert-memory
//! compares two sizes). Runs
//! on any host.
//!
//! One test in this file: the peak is read with getrusage(RUSAGE_CHILDREN),
//! which covers every child this process has waited for.

use std::fs;
use std::io::{BufWriter, Write};
use std::process::{Command, Stdio};

mod support;
use support::{children_peak_rss, scratch};

const SIZE: usize = 32 << 20;

#[test]
fn a_large_recording_is_reported_and_converted_in_little_memory() {
    let dir = scratch("stream");
    let input = dir.join("big.jsonl");
    {
        let mut out = BufWriter::new(fs::File::create(&input).unwrap());
        let mut written = 0;
        let mut i = 0u64;
        while written < SIZE {
            let line = format!(
                "{{\"type\":\"event\",\"time_ns\":{i},\"cpu\":0,\"pid\":5,\"tid\":{},\"comm\":\"worker\",\"process\":\"app\",\"event\":\"tick\",\"fields\":{{\"n\":{i},\"what\":\"a plain event, no span\"}}}}\n",
                5 + i % 4
            );
            out.write_all(line.as_bytes()).unwrap();
            written += line.len();
            i += 1;
        }
    }
    let (input_arg, jsonl, txt) = (input.to_str().unwrap(), dir.join("out.jsonl"), dir.join("out.txt"));
    let (pftrace, chrome) = (dir.join("out.pftrace"), dir.join("out.json"));
    // RUSAGE_CHILDREN is the peak of all children waited for: the runs
    // with the lower bound come first.
    let runs: [(&[&str], usize); 5] = [
        (&["report", input_arg], SIZE / 2),
        (&["convert", input_arg, jsonl.to_str().unwrap()], SIZE / 2),
        (&["convert", input_arg, txt.to_str().unwrap(), "--format", "text"], SIZE / 2),
        (&["convert", input_arg, pftrace.to_str().unwrap()], SIZE),
        (&["convert", input_arg, chrome.to_str().unwrap()], SIZE),
    ];
    for (args, bound) in runs {
        let o = Command::new(env!("CARGO_BIN_EXE_usertrace")).args(args).stdout(Stdio::null()).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        let peak = children_peak_rss();
        eprintln!("{args:?}: peak {} MiB", peak >> 20);
        assert!(peak < bound as u64, "{args:?}: a peak of {} MiB for a {} MiB file", peak >> 20, SIZE >> 20);
    }
    assert!(fs::metadata(&pftrace).unwrap().len() > 0 && fs::metadata(&chrome).unwrap().len() > 0);
    // JSON lines to JSON lines gives back the same lines.
    assert_eq!(fs::metadata(dir.join("out.jsonl")).unwrap().len(), fs::metadata(&input).unwrap().len());
    fs::remove_dir_all(dir).unwrap();
}

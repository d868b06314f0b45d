//! `usertrace record --flight-recorder` and `--switch-output` under a
//! flood: the memory they hold stays under `--max-size` plus the fixed
//! part docs/flight-recorder.md states. Apart from the trigger tests,
//! whose helpers it uses, because the shared-memory suite runs those
//! natively but not these: a native flood outruns a producer's 256 KiB
//! shared-memory ring long before the recorder's window fills, and the
//! rings the recorder maps there are the producers' own (shared, in its
//! RSS too), not the `--buffer-size` ones this bound counts.

use std::path::Path;
use std::time::Duration;

use crate::a_flight_recorder_dumps_the_seconds_around_a_trigger::{dumps, producer, scratch, Recorder};
use crate::support::*;

/// VmHWM of a live process, in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// The peak RSS of an idle flight recorder with 64-page rings: the fixed
/// part of the memory bound.
fn idle_peak_rss(prefix: &str, output: &Path) -> u64 {
    let waiting = producer(&["seq", &format!("{prefix}_idle"), "1", "0"]);
    let idle = Recorder::start(&["--flight-recorder=60s", "--max-size", "8MiB", "--buffer-size", "64", "-e", &format!("{prefix}_*"), "-o", output.to_str().unwrap()]);
    std::thread::sleep(Duration::from_secs(1));
    let idle_rss = peak_rss(idle.child.id());
    drop(waiting);
    let _ = idle.stop();
    idle_rss
}

#[test]
fn under_a_flood_memory_stays_under_the_cap_plus_the_fixed_part() {
    let dir = scratch(&unique("flight_flood"));
    let p = unique("ff");
    let flood = format!("{p}_flood");
    let output = dir.join("flight.data");
    let idle_rss = idle_peak_rss(&p, &output);

    let cap: u64 = 8 << 20;
    let flooding = producer(&["threads", &flood, "2", "200000"]);
    let recorder = Recorder::start(&["--flight-recorder=60s", "--max-size", "8MiB", "--buffer-size", "64", "-e", &flood, "-o", output.to_str().unwrap()]);
    assert!(flooding.finished_ok());
    std::thread::sleep(Duration::from_secs(1));
    let rss = peak_rss(recorder.child.id());
    recorder.signal(libc::SIGUSR2);
    let wrote = recorder.wait_for("wrote ", 1);
    let (status, stderr) = recorder.stop();
    assert!(status.success(), "{stderr}");
    eprintln!("flight recorder peak RSS: idle {} KiB, flooded with an 8 MiB cap {} KiB", idle_rss >> 10, rss >> 10);
    // The documented fixed part, on top of what the idle recorder holds:
    // four times the rings (64 pages, two rings a CPU: the rings, and the
    // round read from them for the window and for the session's thread),
    // and four times the 2 MiB queue to the session's thread (the rounds,
    // and those rounds decoded for the triggers).
    let cpus = std::thread::available_parallelism().unwrap().get() as u64;
    let rings = cpus * 2 * 64 * 4096;
    let fixed = idle_rss + 4 * rings + 4 * (2 << 20);
    assert!(rss <= cap + fixed, "peak RSS {} KiB > cap {} KiB + fixed {} KiB", rss >> 10, cap >> 10, fixed >> 10);
    // The window was cut by size: the dump holds the newest events only,
    // fewer than were sent. (Its own count: reading 8 MiB back with a
    // debug build in an emulated guest takes minutes; the other tests
    // read their dumps.)
    let dumped: u64 = wrote.split(", ").find_map(|part| part.strip_suffix(" events")).unwrap().parse().unwrap();
    assert!(dumped > 0 && dumped < 400_000, "{dumped} events in the dump: {wrote}");
    assert_eq!(dumps(&dir).len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Rotation gathers each file in memory until it is written: with files
/// of 1G asked for, --max-size still caps the memory, by ending files at
/// half of it.
#[test]
fn switch_output_under_a_flood_ends_files_at_half_the_cap_and_stays_under_it() {
    let dir = scratch(&unique("flight_switch_flood"));
    let p = unique("fs");
    let flood = format!("{p}_flood");
    let output = dir.join("flight.data");
    let idle_rss = idle_peak_rss(&p, &output);
    let flooding = producer(&["threads", &flood, "2", "200000"]);
    let recorder = Recorder::start(&["--switch-output=1G", "--max-size", "8MiB", "--buffer-size", "64", "-e", &flood, "-o", output.to_str().unwrap()]);
    assert!(flooding.finished_ok());
    std::thread::sleep(Duration::from_secs(1));
    let rss = peak_rss(recorder.child.id());
    let (status, stderr) = recorder.stop();
    assert!(status.success(), "{stderr}");
    // 400,000 events of 64 bytes and more: several files of at most 4 MiB
    // of records each (plus their headers), named for --max-size.
    let found = dumps(&dir);
    assert!(found.len() >= 3, "{found:?}\n{stderr}");
    for file in &found {
        let size = std::fs::metadata(file).unwrap().len();
        assert!(size < (4 << 20) + (1 << 20), "{file:?}: {size} bytes");
    }
    assert!(stderr.contains("for --max-size"), "{stderr}");
    // The same bound as the flight recorder's window: the cap, the idle
    // recorder, four times the rings and four times the 2 MiB queue.
    let cpus = std::thread::available_parallelism().unwrap().get() as u64;
    let bound = (8 << 20) + idle_rss + 4 * cpus * 2 * 64 * 4096 + 4 * (2 << 20);
    assert!(rss <= bound, "peak RSS {} KiB > {} KiB", rss >> 10, bound >> 10);
    let _ = std::fs::remove_dir_all(&dir);
}

//! One `usertrace record` session over two producers at once, one writing
//! to user_events and one forced onto shared memory: both arrive whole,
//! each under its own process, in one time order with each other.

use std::process::Command;

use crate::support::*;

#[test]
fn one_session_records_user_events_and_shared_memory_in_one_time_order() {
    let name = unique("mixed");
    let emit = ut_emit();
    // 100 events each, 10 ms apart, side by side: a second or more each,
    // far longer than one producer starts after the other, even under
    // emulation (at 2 ms apart, one once finished before the other began).
    let script = format!(
        "{e} seq {name}_kernel 100 10000 & USERTRACE_TRANSPORT=shm {e} seq {name}_shm 100 10000; wait",
        e = emit.display()
    );
    let out = Command::new(usertrace())
        .args(["record", "-e", &format!("{name}_*"), "--format", "json", "--", "/bin/sh", "-c", &script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("200 events, 0 lost"), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let events = event_lines(&stdout);
    let of = |suffix: &str| -> Vec<&serde_json::Value> { events.iter().filter(|e| e["event"] == format!("{name}_{suffix}")).collect() };
    let (kernel, shm) = (of("kernel"), of("shm"));
    for side in [&kernel, &shm] {
        let numbers: Vec<u64> = side.iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect();
        assert_eq!(numbers, (0..100).collect::<Vec<_>>(), "{stderr}");
        assert!(side.iter().all(|e| e["comm"] == "ut_emit" && e["pid"] == side[0]["pid"]), "{:?}", side[0]);
    }
    assert_ne!(kernel[0]["pid"], shm[0]["pid"]);
    // One time order: every line's time at or after the one before. The two
    // producers ran at the same time, so that order interleaves them: it is
    // a merge, not one transport's events after the other's.
    let times: Vec<u64> = events.iter().map(|e| e["time_ns"].as_u64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "out of order: {times:?}");
    let span = |side: &[&serde_json::Value]| (side[0]["time_ns"].as_u64().unwrap(), side[side.len() - 1]["time_ns"].as_u64().unwrap());
    let ((k0, k1), (s0, s1)) = (span(&kernel), span(&shm));
    assert!(k0 < s1 && s0 < k1, "the producers did not run at the same time ({k0}..{k1}, {s0}..{s1}): nothing to merge");
    let switches = events.windows(2).filter(|w| w[0]["event"] != w[1]["event"]).count();
    assert!(switches >= 2, "overlapping producers, yet not interleaved ({switches} switches): {stdout}");
}

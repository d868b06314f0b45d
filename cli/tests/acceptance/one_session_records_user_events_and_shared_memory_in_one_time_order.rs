//! One `usertrace record` session over two producers at once, one writing
//! to user_events and one forced onto shared memory: both arrive whole,
//! each under its own process, in one time order with each other.

use std::process::Command;

use crate::support::*;

#[test]
fn one_session_records_user_events_and_shared_memory_in_one_time_order() {
    let name = unique("mixed");
    let emit = ut_emit();
    // 100 events each, 2 ms apart, side by side.
    let script = format!(
        "{e} seq {name}_kernel 100 2000 & USERTRACE_TRANSPORT=shm {e} seq {name}_shm 100 2000; wait",
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
    // One time order: every line's time at or after the one before, and the
    // two producers' events interleaved in it, not one after the other.
    let times: Vec<u64> = events.iter().map(|e| e["time_ns"].as_u64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "out of order: {times:?}");
    let switches = events.windows(2).filter(|w| w[0]["event"] != w[1]["event"]).count();
    assert!(switches >= 20, "the two producers' events did not interleave ({switches} switches): {stdout}");
}

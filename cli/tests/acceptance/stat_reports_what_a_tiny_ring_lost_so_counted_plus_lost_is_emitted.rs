//! `usertrace stat --buffer-size 1` under a flood: the lost total and the
//! lost count of each CPU are printed, and counted + lost = emitted.

use std::process::Command;

use crate::support::*;

#[test]
fn stat_reports_what_a_tiny_ring_lost_so_counted_plus_lost_is_emitted() {
    let name = unique("statlost");
    let emitted = 50_000u64;
    let out = Command::new(usertrace())
        .args(["stat", "-e", &name, "--buffer-size", "1", "--"])
        .arg(ut_emit())
        .args(["seq", &name, &emitted.to_string()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let value = |what: &str| -> Vec<u64> {
        stdout
            .lines()
            .filter_map(|l| l.trim_start().split_once("  "))
            .filter(|(_, w)| *w == what || (what == "lost on CPU" && w.starts_with("lost on CPU ")))
            .map(|(c, _)| c.parse().unwrap())
            .collect()
    };
    let counted = value(&format!("user_events:{name}"));
    let lost = value("lost");
    let per_cpu = value("lost on CPU");
    assert_eq!((counted.len(), lost.len()), (1, 1), "{stdout}");
    assert!(lost[0] > 0, "a one-page ring kept up with {emitted} events: no overflow to test\n{stdout}");
    assert_eq!(per_cpu.iter().sum::<u64>(), lost[0], "{stdout}");
    assert_eq!(counted[0] + lost[0], emitted, "counted + lost != emitted\n{stdout}");
    assert!(stderr.contains(&format!("{} events, {} lost", counted[0], lost[0])), "{stderr}");
    assert!(stderr.contains("lost") && stderr.contains("the ring was full"), "{stderr}");
}

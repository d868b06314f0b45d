//! `usertrace record -o FILE` checks that FILE can be written before it
//! records anything, so no recording is lost at its end: an unwritable
//! destination is named with what to do, with exit status 1, whether or
//! not this host has user_events. A Perfetto trace needs a file.

use std::process::Command;

#[test]
fn record_refuses_an_unwritable_output_before_recording() {
    let dir = std::env::temp_dir().join(format!("usertrace-record-unwritable-{}", std::process::id()));
    for out in ["no/such/dir/trace.pftrace", "no/such/dir/events.jsonl"] {
        let path = dir.join(out);
        let o = Command::new(env!("CARGO_BIN_EXE_usertrace"))
            .args(["record", "-e", "never_registered_event", "-o", path.to_str().unwrap(), "--", "true"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(stderr.starts_with(&format!("usertrace record: {}: ", path.display())), "{stderr}");
        assert!(stderr.contains("check that the directory exists"), "{stderr}");
        assert!(!stderr.contains("attached"), "recording started: {stderr}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_usertrace")).args(["record", "-e", "x", "--format", "perfetto"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("-o FILE.pftrace"), "{}", String::from_utf8_lossy(&o.stderr));
}

use std::process::Command;

#[test]
fn ten_thousand_tracepoints_register_then_unregister_and_the_kernel_deletes_every_one() {
    let exe = std::env::current_exe().unwrap();
    let tp_child = exe.parent().unwrap().parent().unwrap().join("examples/tp_child");
    // In its own process, so no other test's registrations keep the data
    // descriptor (and with it every event) alive; it checks while alive.
    let out = Command::new(tp_child).args(["churn", "10000"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = String::from_utf8_lossy(&out.stdout);
    let value = |key: &str| -> &str {
        report.split_whitespace().find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=')).unwrap()
    };
    // Counts of the child's own events in user_events_status: all of them
    // while registered, none once the kernel has deleted them.
    assert_eq!(value("registered"), "10000", "{report}");
    assert_eq!(value("after"), "0", "{report}");
}

//! `--containers` narrows a root recorder: of two containers whose
//! producers match its events, it records the one it selects (by
//! container id, by pod uid, by cgroup path) and leaves the other
//! untouched: its registry is never opened by it (fanotify sees no open) and
//! its enable word never written (it emits nothing).

use std::process::Command;

use crate::container::{cgroup2_root, Container, Identity, OpenWatch};
use crate::support::*;

#[test]
fn a_process_outside_the_container_selector_is_neither_read_nor_enabled() {
    if cgroup2_root().is_none() {
        // The selector's matching is unit-tested in consumer/src/containers/tests.rs;
        // here a container's identity needs a cgroup this test can make.
        eprintln!("skipped: no writable cgroup v2 here, so no container can be given an identity");
        return;
    }
    let _one = crate::container::exclusive();
    let name = unique("shm_select");
    let (chosen, other) = (Identity::new(), Identity::new());
    let selectors = [
        format!("id:{}", &chosen.container_id[..12]),
        format!("pod:{}", chosen.pod_uid),
        format!("cgroup:/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{}.slice", chosen.pod_uid.replace('-', "_")),
    ];
    for selector in selectors {
        let inside = Container::start(&["seq", &format!("{name}_in"), "5", "0"], Some(&chosen));
        let mut outside = Container::start(&["seq", &format!("{name}_out"), "5", "0"], Some(&other));
        let registry = outside.shm_dir().join(outside.registry());
        let watch = OpenWatch::new(&registry);
        let args = ["record", "-e", &format!("{name}_*"), "--containers", &selector, "--format", "json", "--", "sleep", "1"];
        let recorder = Command::new(usertrace()).args(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
        let recorder_pid = recorder.id();
        let out = recorder.wait_with_output().unwrap();
        let opened = watch.opened_by(recorder_pid);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{selector}: {stderr}");
        let events = event_lines(&String::from_utf8_lossy(&out.stdout));
        let names: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
        assert_eq!(names, vec![format!("{name}_in"); 5], "{selector}: {stderr}");
        assert!(events.iter().all(|e| e["pid"] == inside.host_pid), "{selector}");
        assert!(!opened, "{selector}: the registry of a process outside the selection was opened");
        // Never enabled: it still waits for its tracepoint to turn on.
        assert!(outside.running(), "{selector}: the process outside emitted and ended");
    }
}

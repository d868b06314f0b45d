//! A container as a restricted pod is: its own mount, PID and IPC
//! namespaces, a private /dev/shm, no tracefs at all (every tracefs and
//! debugfs mount gone, an empty tmpfs at /sys/kernel/tracing), no grant,
//! its program run as uid 1000 with no supplementary group, no
//! capabilities and `no_new_privs`. Its deployment sets only
//! `USERTRACE_TRANSPORT=user_events`.
//!
//! The producer, unchanged, finds no `user_events_data`: its registration
//! waits, off, and it listens on its handoff socket. A `usertrace record`
//! on the node with `--no-handoff` records nothing and leaves it waiting;
//! one without hands it the node's `user_events_data`, and records its
//! events exactly, over user_events (the producer holds the node's file
//! open and has nothing left in its /dev/shm), under its host pid, with
//! its pid inside.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;

const DATA: &str = "/sys/kernel/tracing/user_events_data";

/// The container above running `ut_emit seq NAME 3 500000` as pid 1;
/// killed with `unshare` when dropped.
struct Pod {
    unshare: Child,
    host_pid: u32,
}

impl Pod {
    /// Starts it and waits for "ready 1": its registration returned.
    fn start(name: &str) -> Pod {
        let program = format!(
            "exec setpriv --reuid=1000 --regid=1000 --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs {} seq {name} 3 500000",
            ut_emit().display()
        );
        // Lazily, deepest first: a mount under another goes with it.
        let no_tracefs = "awk '$3==\"tracefs\"||$3==\"debugfs\"{print $2}' /proc/self/mounts | sort -r | xargs -r -n1 umount -l \
             && mount -t tmpfs -o mode=755 tmpfs /sys/kernel/tracing";
        let inside = format!(
            "mount --make-rprivate / && {no_tracefs} && mount -t tmpfs -o mode=1777 tmpfs /dev/shm && mount -t proc proc /proc && {program}"
        );
        let mut unshare = Command::new("unshare")
            .args(["--mount", "--pid", "--ipc", "--fork", "--kill-child", "sh", "-c", &inside])
            .env("USERTRACE_TRANSPORT", "user_events")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut ready = String::new();
        BufReader::new(unshare.stdout.take().unwrap()).read_line(&mut ready).unwrap();
        assert!(ready.starts_with("ready 1"), "pid 1 in its container, registration returned: {ready:?}");
        let host_pid = child_of(unshare.id()).expect("unshare's child");
        Pod { unshare, host_pid }
    }

    /// Whether its program holds the node's `user_events_data` open.
    fn holds_user_events_data(&self) -> bool {
        let data = std::fs::metadata(DATA).map(|m| (m.dev(), m.ino())).unwrap();
        let fds = std::fs::read_dir(format!("/proc/{}/fd", self.host_pid)).unwrap();
        fds.flatten().filter_map(|fd| std::fs::metadata(fd.path()).ok()).any(|m| (m.dev(), m.ino()) == data)
    }

    /// The names in its /dev/shm/usertrace-1000.
    fn shm_files(&self) -> Vec<String> {
        let dir = std::fs::read_dir(format!("/proc/{}/root/dev/shm/usertrace-1000", self.host_pid)).unwrap();
        dir.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect()
    }

    /// Each thread's name and where it waits, for a failure's message.
    fn threads(&self) -> String {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.host_pid)).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_else(|_| Vec::new());
        let read = |path: &Path, file: &str| std::fs::read_to_string(path.join(file)).unwrap_or_default().trim().to_owned();
        tasks.iter().map(|t| format!("{} in {}", read(t, "comm"), read(t, "wchan"))).collect::<Vec<_>>().join(", ")
    }

    /// Waits up to `limit` for `condition`; whether it held.
    fn wait_for(&self, limit: Duration, condition: impl Fn(&Pod) -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if condition(self) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }
}

impl Drop for Pod {
    fn drop(&mut self) {
        let _ = self.unshare.kill();
        let _ = self.unshare.wait();
    }
}

/// A child of `parent`, by the `PPid:` of /proc.
fn child_of(parent: u32) -> Option<u32> {
    let ppid = |pid: &str| std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?.lines().find_map(|l| l.strip_prefix("PPid:")?.trim().parse::<u32>().ok());
    let pids = std::fs::read_dir("/proc").ok()?.flatten().filter_map(|e| e.file_name().into_string().ok());
    pids.filter(|pid| ppid(pid) == Some(parent)).find_map(|pid| pid.parse().ok())
}

#[test]
fn a_pod_with_no_tracefs_is_handed_user_events_data_by_the_node_s_recorder() {
    let name = unique("handoff");
    let pod = Pod::start(&name);
    let host_pid = pod.host_pid;
    let inside = format!("/proc/{host_pid}/root");
    assert!(!Path::new(&format!("{inside}{DATA}")).exists(), "the pod must have no user_events_data");
    let mounts = std::fs::read_to_string(format!("/proc/{host_pid}/mounts")).unwrap();
    assert!(!mounts.lines().any(|l| l.split(' ').nth(2) == Some("tracefs")), "the pod must have no tracefs: {mounts}");
    let files = pod.shm_files();
    assert!(files.len() == 1 && files[0].starts_with("1.") && files[0].ends_with(".handoff"), "it waits, listening: {files:?}");
    assert!(!Path::new(&format!("/sys/kernel/tracing/events/user_events/{name}")).exists(), "not registered before the handoff");

    // A recorder told not to hand over leaves it waiting.
    let out = Command::new(usertrace()).args(["record", "--no-handoff", "-e", &name, "--format", "json", "--", "sleep", "2"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(event_lines(&String::from_utf8_lossy(&out.stdout)).len(), 0);
    assert!(!pod.holds_user_events_data() && pod.shm_files() == files, "--no-handoff hands nothing over");

    // The recording lasts until the producer, enabled, has emitted and exited.
    let until_gone = format!("timeout 60 tail -s 0.1 --pid={host_pid} -f /dev/null");
    let recorder = Command::new(usertrace())
        .args(["record", "-e", &name, "--format", "json", "--", "sh", "-c", &until_gone])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let handed = pod.wait_for(Duration::from_secs(30), Pod::holds_user_events_data);
    // It removes its socket once it has registered with the descriptor.
    pod.wait_for(Duration::from_secs(5), |pod| pod.shm_files().is_empty());
    let left_in_shm = pod.shm_files();
    let threads = pod.threads();
    let out = recorder.wait_with_output().unwrap();
    drop(pod);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(handed, "the producer never held the node's {DATA}: {stdout}{stderr}");
    assert_eq!(left_in_shm, Vec::<String>::new(), "its socket is removed once it holds one, and it made no shared memory ({threads})");
    let events = event_lines(&stdout);
    let values: Vec<u64> = events.iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect();
    assert_eq!(values, vec![0, 1, 2], "{stdout}{stderr}");
    assert!(events.iter().all(|e| e["pid"] == host_pid && e["event"] == name.as_str()), "{stdout}");
    let process = stdout.lines().find(|l| l.starts_with("{\"type\":\"process\"")).map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
    let process = process.unwrap_or_else(|| panic!("no process record: {stdout}"));
    assert_eq!((&process["pid"], &process["pid_in_container"]), (&host_pid.into(), &1.into()), "{process}");
    assert!(process["executable"].as_str().is_some_and(|e| e.ends_with("/ut_emit")), "{process}");
}

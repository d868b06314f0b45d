//! A container whose creator projects the host's `user_events_data` into
//! it and nothing else of tracefs (LinuxTracepoints' way): its own mount,
//! PID and IPC namespaces, a private /dev/shm, an empty tmpfs over
//! /sys/kernel/tracing with the one file bind-mounted on it, and its
//! program run as uid 1000 with no capabilities and `no_new_privs`. The
//! producer, unchanged, opens the file (it tries that path before parsing
//! the mounts) and emits over user_events; the recorder outside records
//! its events exactly under its host pid.
//!
//! The file is 0640 root:root on 6.12, which uid 1000 cannot open for
//! writing, and tracefs takes no ACL (setfacl: EOPNOTSUPP) and no `mode=`
//! for its files (only its root's). What a deployment can do, and this
//! test does, is give the file a group that may write it (chgrp, chmod
//! 0660) and the container that group as a supplementary one. The file's
//! group and mode are put back at the end.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::support::*;

const DATA: &str = "/sys/kernel/tracing/user_events_data";
/// The group a deployment would make for tracing and give its pods
/// (`supplementalGroups`); not the program's own (1000).
const TRACING_GID: u32 = 2000;

/// The data file's group and mode, given to [`TRACING_GID`] with group
/// read and write while it lives, then put back.
struct Grant {
    gid: u32,
    mode: u32,
}

impl Grant {
    fn to_tracing_group() -> Grant {
        let meta = std::fs::metadata(DATA).unwrap_or_else(|e| panic!("{DATA}: {e} (run in the guest: harness/in-guest)"));
        let grant = Grant { gid: meta.gid(), mode: meta.mode() & 0o7777 };
        std::os::unix::fs::chown(DATA, None, Some(TRACING_GID)).unwrap();
        std::fs::set_permissions(DATA, std::fs::Permissions::from_mode(0o660)).unwrap();
        grant
    }
}

impl Drop for Grant {
    fn drop(&mut self) {
        let _ = std::os::unix::fs::chown(DATA, None, Some(self.gid));
        let _ = std::fs::set_permissions(DATA, std::fs::Permissions::from_mode(self.mode));
    }
}

/// A container as described above, running `ut_emit seq NAME 3 300000`
/// as pid 1 (its events 300 ms apart: alive when the recorder reads its
/// /proc at its first event, which on user_events it cannot do earlier);
/// killed with `unshare` when dropped.
struct Container {
    unshare: Child,
    host_pid: u32,
}

impl Container {
    /// Starts it and waits for "ready 1": its tracepoint is registered.
    fn start(name: &str, stash: &Path) -> Container {
        let program = format!(
            "exec setpriv --reuid=1000 --regid=1000 --groups={TRACING_GID} --inh-caps=-all --bounding-set=-all --no-new-privs {} seq {name} 3 300000",
            ut_emit().display()
        );
        // The file is bound aside before tracefs is covered, then onto
        // the empty tmpfs: the container sees it and nothing else there.
        let inside = format!(
            "mount --make-rprivate / && mount --bind {DATA} {stash} && mount -t tmpfs -o mode=755 tmpfs /sys/kernel/tracing \
             && touch {DATA} && mount --bind {stash} {DATA} && mount -t tmpfs -o mode=1777 tmpfs /dev/shm && mount -t proc proc /proc && {program}",
            stash = stash.display()
        );
        let mut unshare = Command::new("unshare")
            .args(["--mount", "--pid", "--ipc", "--fork", "--kill-child", "sh", "-c", &inside])
            .env_remove("USERTRACE_TRANSPORT")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut ready = String::new();
        BufReader::new(unshare.stdout.take().unwrap()).read_line(&mut ready).unwrap();
        assert!(ready.starts_with("ready 1"), "pid 1 in its container, registered: {ready:?}");
        let host_pid = child_of(unshare.id()).expect("unshare's child");
        Container { unshare, host_pid }
    }

    /// Whether its program holds `user_events_data` open and made nothing
    /// in its /dev/shm: it took user_events, not shared memory.
    fn took_user_events(&self) -> (bool, Vec<String>) {
        let data = std::fs::metadata(DATA).map(|m| (m.dev(), m.ino())).unwrap();
        let fds = std::fs::read_dir(format!("/proc/{}/fd", self.host_pid)).unwrap();
        let holds = fds.flatten().filter_map(|fd| std::fs::metadata(fd.path()).ok()).any(|m| (m.dev(), m.ino()) == data);
        let shm = std::fs::read_dir(format!("/proc/{}/root/dev/shm", self.host_pid)).unwrap();
        (holds, shm.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
    }
}

/// A child of `parent`, by the `PPid:` of /proc (the guest kernel has no
/// /proc/PID/task/TID/children).
fn child_of(parent: u32) -> Option<u32> {
    let ppid = |pid: &str| std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?.lines().find_map(|l| l.strip_prefix("PPid:")?.trim().parse::<u32>().ok());
    let pids = std::fs::read_dir("/proc").ok()?.flatten().filter_map(|e| e.file_name().into_string().ok());
    pids.filter(|pid| ppid(pid) == Some(parent)).find_map(|pid| pid.parse().ok())
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = self.unshare.kill();
        let _ = self.unshare.wait();
    }
}

#[test]
fn a_container_given_only_user_events_data_emits_over_user_events() {
    let name = unique("projected");
    let stash: PathBuf = std::env::temp_dir().join(format!("{name}.data"));
    std::fs::write(&stash, b"").unwrap();
    let before = std::fs::metadata(DATA).map(|m| (m.gid(), m.mode())).ok();
    let grant = Grant::to_tracing_group();
    let container = Container::start(&name, &stash);
    let host_pid = container.host_pid;
    assert!(Path::new(&format!("/sys/kernel/tracing/events/user_events/{name}")).exists(), "{name} is not in the host's tracefs");
    assert_eq!(container.took_user_events(), (true, vec![]), "it should hold {DATA} open and have nothing in its /dev/shm");

    // The recording lasts until the producer, enabled, has emitted and exited.
    let until_gone = format!("timeout 60 tail -s 0.1 --pid={host_pid} -f /dev/null");
    let out = Command::new(usertrace()).args(["record", "-e", &name, "--format", "json", "--", "sh", "-c", &until_gone]).output().unwrap();
    drop(container);
    drop(grant);
    let _ = std::fs::remove_file(&stash);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events = event_lines(&stdout);
    let values: Vec<u64> = events.iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect();
    assert_eq!(values, vec![0, 1, 2], "{stdout}{stderr}");
    let process = stdout.lines().find(|l| l.starts_with("{\"type\":\"process\"")).map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
    let process = process.unwrap_or_else(|| panic!("no process record: {stdout}"));
    assert!(events.iter().all(|e| e["pid"] == host_pid && e["event"] == name.as_str()), "{stdout}");
    assert_eq!((&process["pid"], &process["pid_in_container"]), (&host_pid.into(), &1.into()), "{process}\n{stderr}");
    assert!(process["executable"].as_str().is_some_and(|e| e.ends_with("/ut_emit")), "{process}");
    assert_eq!(std::fs::metadata(DATA).map(|m| (m.gid(), m.mode())).ok(), before, "the file's group and mode are put back");
}

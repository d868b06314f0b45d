//! A producer in another PID namespace (a container that shares the
//! host's /dev/shm) registers under its own pid, which names another
//! process, or none, in the recorder's namespace. The recorder says so,
//! once, and leaves it alone: no enable word written, no event, and its
//! files kept, since a pid that means nothing here cannot say it is gone.
//! Nor does that producer take the files of one outside its namespace for
//! litter.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};

use crate::support::*;

#[test]
fn a_producer_in_another_pid_namespace_is_named_and_left_alone() {
    let prefix = unique("shm_pidns");
    let (here, there) = (format!("{prefix}_here"), format!("{prefix}_there"));
    // One producer in this namespace, registered first: 10 events once a
    // recorder turns them on.
    let (mut local, local_pid) = crate::ready_producer(&here, 10, 0);
    // unshare needs root (CAP_SYS_ADMIN), as the suite runs; the producer
    // is pid 1 in its namespace, and --kill-child ends it with unshare.
    let mut foreign = Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", "--kill-child"])
        .arg(ut_emit())
        .args(["seq", &there, "10", "0"])
        .env("USERTRACE_TRANSPORT", "shm")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    BufReader::new(foreign.stdout.take().unwrap()).read_line(&mut ready).unwrap();
    let stderr = foreign.stderr.take().unwrap();
    assert!(ready.starts_with("ready 1"), "pid 1 in its own namespace: {ready:?}, {:?}", std::io::read_to_string(stderr));
    // Its registry, told apart from other pid-1 files by its namespace.
    let unshare_pid = foreign.id();
    let child: u32 = std::fs::read_to_string(format!("/proc/{unshare_pid}/task/{unshare_pid}/children")).unwrap().trim().parse().unwrap();
    let namespace = std::fs::metadata(format!("/proc/{child}/ns/pid")).unwrap().ino();
    // SAFETY: geteuid cannot fail.
    let directory = std::path::PathBuf::from(format!("/dev/shm/usertrace-{}", unsafe { libc::geteuid() }));
    let registries_of_that_namespace = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&directory)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("1.") && p.extension().is_some_and(|x| x == "registry"))
            .filter(|p| std::fs::read(p).is_ok_and(|b| b.len() >= 48 && u64::from_ne_bytes(b[40..48].try_into().unwrap()) == namespace))
            .collect()
    };
    let theirs = registries_of_that_namespace();
    assert_eq!(theirs.len(), 1, "{theirs:?}");

    let out = Command::new(usertrace())
        .args(["record", "-e", &format!("{prefix}_*"), "--format", "json", "--", "sleep", "1"])
        .output()
        .unwrap();
    let _ = foreign.kill();
    let _ = foreign.wait();
    let _ = local.kill();
    let _ = local.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let expected = "process 1 has tracepoints in shared memory that match, but they are not recorded: it runs in another PID namespace (pid:[";
    assert_eq!(stderr.matches(expected).count(), 1, "{stderr}");
    assert!(stderr.contains(&format!("pid:[{namespace}]), where its pid is 1")), "{stderr}");
    // The producer here kept its registry through the other's start, and
    // was recorded whole; the other was not recorded at all.
    let events = event_lines(&String::from_utf8_lossy(&out.stdout));
    let pids: Vec<String> = events.iter().map(|e| format!("{}:{}", e["event"].as_str().unwrap(), e["pid"])).collect();
    assert_eq!(pids, vec![format!("{here}:{local_pid}"); 10], "{stderr}");
    // The recorder left the other's registry where it was. (Killed, that
    // producer ran no exit handler: its files are removed here.)
    assert_eq!(registries_of_that_namespace(), theirs, "{stderr}");
    for registry in theirs {
        let stem = registry.file_name().unwrap().to_str().unwrap().trim_end_matches(".registry").to_owned();
        for file in std::fs::read_dir(&directory).unwrap().flatten() {
            if file.file_name().to_str().unwrap().starts_with(&format!("{stem}.")) {
                let _ = std::fs::remove_file(file.path());
            }
        }
    }
}

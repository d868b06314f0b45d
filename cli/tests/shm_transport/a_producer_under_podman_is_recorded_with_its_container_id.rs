//! A real container runtime: Debian's podman runs `ut_emit` from a root
//! file system this test builds (the binary and the libraries it links),
//! as uid 1000 with every capability dropped and no_new_privs, with
//! podman's own private /dev/shm and PID namespace. The root recorder
//! records it under its host pid, with pid 1 inside and the container id
//! podman gave it.
//!
//! Skipped, saying so, where podman or runc is not installed, except under
//! CI, where harness/setup installs them. Debian 12's
//! crun refuses this host's hybrid cgroups ("cgroups in hybrid mode not
//! supported, drop all controllers from cgroupv2"), so runc runs it; and
//! podman's default RLIMIT_NOFILE and RLIMIT_NPROC for root are above
//! what runc may set here (no CAP_SYS_RESOURCE: "error setting rlimit
//! type 6: operation not permitted"), so a containers.conf of the test's
//! own sets small ones.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::*;

/// A root file system with `ut_emit` and what it links, under `dir`.
fn rootfs(dir: &Path) -> PathBuf {
    let root = dir.join("rootfs");
    std::fs::create_dir_all(root.join("usr/bin")).unwrap();
    std::fs::copy(ut_emit(), root.join("usr/bin/ut_emit")).unwrap();
    let ldd = Command::new("ldd").arg(ut_emit()).output().unwrap();
    for library in String::from_utf8_lossy(&ldd.stdout).split_whitespace().filter(|w| w.starts_with('/')) {
        let to = root.join(library.trim_start_matches('/'));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(library, to).unwrap();
    }
    root
}

#[test]
fn a_producer_under_podman_is_recorded_with_its_container_id() {
    if !Path::new("/usr/bin/podman").exists() || !Path::new("/usr/bin/runc").exists() {
        // harness/setup installs both: under CI this is never skipped.
        assert!(std::env::var_os("CI").is_none(), "CI is set but podman or runc is missing: run harness/setup");
        eprintln!("skipped: podman and runc are not installed (apt-get install -y podman runc)");
        return;
    }
    let _one = crate::container::exclusive();
    let name = unique("shm_podman");
    let dir = std::env::temp_dir().join(&name);
    let root = rootfs(&dir);
    let conf = dir.join("containers.conf");
    // Ample for one ut_emit, and far below any hard limit: here even
    // this host's own RLIMIT_NPROC hard limit is refused to runc.
    std::fs::write(&conf, "[containers]\ndefault_ulimits = [\"nofile=4096:4096\", \"nproc=4096:4096\"]\n").unwrap();
    let mut podman = Command::new("podman")
        .args(["--runtime", "/usr/bin/runc", "run", "--rm", "--name", &name, "-e", "USERTRACE_TRANSPORT=shm", "--user", "1000:1000"])
        .args(["--cap-drop=all", "--security-opt", "no-new-privileges", "--rootfs"])
        .arg(&root)
        .args(["/usr/bin/ut_emit", "seq", &name, "10", "100000"])
        .env("CONTAINERS_CONF", &conf)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    BufReader::new(podman.stdout.take().unwrap()).read_line(&mut ready).unwrap();
    if !ready.starts_with("ready 1") {
        let _ = podman.kill();
        panic!("podman did not start it: {ready:?} {}", std::io::read_to_string(podman.stderr.take().unwrap()).unwrap_or_default());
    }
    let inspect = Command::new("podman").args(["inspect", "--format", "{{.Id}}", &name]).env("CONTAINERS_CONF", &conf).output().unwrap();
    let podman_id = String::from_utf8_lossy(&inspect.stdout).trim().to_owned();
    let out = Command::new(usertrace()).args(["record", "-e", &name, "--format", "json", "--", "sleep", "2.5"]).output().unwrap();
    let _ = podman.kill();
    let _ = podman.wait();
    let _ = Command::new("podman").args(["rm", "--force", &name]).env("CONTAINERS_CONF", &conf).output();
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let values: Vec<u64> = event_lines(&stdout).iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect();
    assert_eq!(values, (0..10).collect::<Vec<_>>(), "{stderr}");
    let process: serde_json::Value =
        stdout.lines().find(|l| l.starts_with("{\"type\":\"process\"")).map(|l| serde_json::from_str(l).unwrap()).expect("a process record");
    assert_eq!(process["pid_in_container"], 1, "{process}");
    // The id podman knows it by is the one its cgroup path carries.
    assert_eq!(process["container_id"], podman_id.as_str(), "{process}");
    assert!(event_lines(&stdout).iter().all(|e| e["pid"] == process["pid"]), "{stdout}");
}

//! A container plants symlinks to a host file among its producer's files:
//! one named as a ring of its producer, one named as a registry. The root
//! recorder resolves every name inside the container's root, beneath its
//! directory, with no symlink followed: it names each link as refused,
//! never opens the host file (fanotify sees no open by it), and records the
//! producer beside them whole.

use std::process::Command;

use crate::container::{Container, OpenWatch};
use crate::support::*;

#[test]
fn a_symlink_planted_in_a_container_s_dev_shm_is_refused_and_never_opened() {
    let _one = crate::container::exclusive();
    let name = unique("shm_symlink");
    // The host file the links point at: this host's /tmp, which the
    // container's root (this host's /) resolves to the same file only
    // if a recorder follows the link out of the container.
    let secret = std::env::temp_dir().join(format!("{name}.secret"));
    std::fs::write(&secret, "host secret\n").unwrap();
    let container = Container::start(&["seq", &name, "10", "0"], None);
    let dir = container.shm_dir();
    let instance = container.registry().trim_start_matches("1.").trim_end_matches(".registry").to_owned();
    let ring_link = dir.join(format!("1.{instance}.4242.ring"));
    let registry_link = dir.join("77.1.registry");
    std::os::unix::fs::symlink(&secret, &ring_link).unwrap();
    std::os::unix::fs::symlink(&secret, &registry_link).unwrap();
    let watch = OpenWatch::new(&secret);

    let recorder = Command::new(usertrace())
        .args(["record", "-e", &format!("{name}*"), "--format", "json", "--", "sleep", "1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let recorder_pid = recorder.id();
    let out = recorder.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let never_followed = "it is a symbolic link, which the recorder never follows";
    for link in [&ring_link, &registry_link] {
        // Named as the recorder reached it: through the container's root.
        let refused = format!("/{}, which is not read: ", link.file_name().unwrap().to_str().unwrap());
        let line = stderr
            .lines()
            .find(|l| l.starts_with("usertrace record: refused ") && container.names_ours(l) && l.contains(&refused))
            .unwrap_or_else(|| panic!("no refusal of {}: {stderr}", link.display()));
        assert!(line.contains(never_followed), "{line}");
    }
    assert!(!watch.opened_by(recorder_pid), "the recorder opened the host file: {stderr}");
    let values: Vec<u64> = event_lines(&String::from_utf8_lossy(&out.stdout)).iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect();
    assert_eq!(values, (0..10).collect::<Vec<_>>(), "{stderr}");
    let _ = std::fs::remove_file(&secret);
}

//! A container puts registries that lie beside its real producer: a bad
//! magic, a size a thousand times too large, a FIFO (which would block an
//! open for reading), a directory, a header whose pid is not its name's,
//! and one cut short. The root recorder names each refused one with what
//! was wrong, neither blocks nor maps what it was told to, and records the
//! real producer whole within its duration.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::{Duration, Instant};

use usertrace::shm_layout::REGISTRY_LEN;

use crate::container::Container;
use crate::support::*;

/// A registry file of the right length whose header is `header`.
fn registry_with(path: &std::path::Path, header: &[u8]) {
    let mut bytes = vec![0u8; REGISTRY_LEN];
    bytes[..header.len()].copy_from_slice(header);
    std::fs::write(path, bytes).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

#[test]
fn a_registry_that_lies_is_named_and_the_recorder_goes_on() {
    let _one = crate::container::exclusive();
    let name = unique("shm_lies");
    let container = Container::start(&["seq", &name, "10", "0"], None);
    let dir = container.shm_dir();
    // The real producer's header, to lie with: the same bytes under a
    // name whose pid differs.
    let real = std::fs::read(dir.join(container.registry())).unwrap();
    registry_with(&dir.join("2.1.registry"), b"NOTAREG\0");
    registry_with(&dir.join("3.1.registry"), &real[..64]);
    let huge = std::fs::File::create(dir.join("4.1.registry")).unwrap();
    huge.set_len(REGISTRY_LEN as u64 * 1000).unwrap();
    std::fs::set_permissions(dir.join("4.1.registry"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let fifo = std::ffi::CString::new(dir.join("5.1.registry").into_os_string().into_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; the result is checked.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0, "{}", std::io::Error::last_os_error());
    std::fs::create_dir(dir.join("6.1.registry")).unwrap();
    std::fs::write(dir.join("7.1.registry"), &real[..100]).unwrap();

    let started = Instant::now();
    let out = Command::new(usertrace()).args(["record", "-e", &format!("{name}*"), "--format", "json", "--", "sleep", "1"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(10), "blocked: {stderr}");
    let refused = |file: &str| {
        let at = format!("/{file}, which is not read: not a registry the recorder reads: ");
        let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("usertrace record: refused ") && container.names_ours(l) && l.contains(&at)).collect();
        assert_eq!(lines.len(), 1, "{file} named once: {stderr}");
        lines[0].split_once(&at).unwrap().1.to_owned()
    };
    assert!(refused("2.1.registry").contains("not a usertrace registry file of layout version"), "{stderr}");
    assert!(refused("3.1.registry").contains("its header says pid 1"), "{stderr}");
    assert!(refused("4.1.registry").contains(&format!("not a regular file of {REGISTRY_LEN} bytes")), "{stderr}");
    assert!(refused("5.1.registry").contains(&format!("not a regular file of {REGISTRY_LEN} bytes")), "{stderr}");
    assert!(refused("6.1.registry").contains("cannot open it"), "{stderr}");
    // Cut short: being written, as far as anyone can tell; looked at
    // again, never named, never mapped.
    assert!(!stderr.lines().any(|l| container.names_ours(l) && l.contains("/7.1.registry")), "{stderr}");
    let values: Vec<u64> = event_lines(&String::from_utf8_lossy(&out.stdout)).iter().map(|e| e["fields"]["n"].as_u64().unwrap()).collect();
    assert_eq!(values, (0..10).collect::<Vec<_>>(), "{stderr}");
}

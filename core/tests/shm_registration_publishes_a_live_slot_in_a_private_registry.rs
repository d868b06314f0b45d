//! With USERTRACE_TRANSPORT=shm, a registration creates this process's
//! registry (0600, in a 0700 directory of ours) and fills a live slot with
//! the kernel's format string and the enable word's address; registering
//! the same name twice takes two slots; unregistration frees them.

mod shm_support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use shm_support::{euid, in_child, registry_path, RegistryCopy};
use usertrace::shm_layout::{slot, SLOTS};
use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Transport};

#[test]
fn a_registration_fills_a_live_slot_with_the_format_and_the_word_address() {
    if !in_child("a_registration_fills_a_live_slot_with_the_format_and_the_word_address", &[("USERTRACE_TRANSPORT", "shm")]) {
        return;
    }
    let choice = usertrace::transport().unwrap();
    assert_eq!(choice.transport, Transport::SharedMemory);
    assert_eq!(choice.reason, "USERTRACE_TRANSPORT=shm");

    let fields = vec![Field::new("a", FieldType::U32), Field::new("b", FieldType::Str)];
    let tp = DynamicTracepoint::new("shmtest_reg", fields.clone(), RegisterOptions::default()).unwrap();
    tp.register().unwrap();
    assert!(tp.is_registered());
    assert!(!tp.enabled(), "registered, and off until a recorder writes the word");

    let pid = std::process::id();
    let path = registry_path(pid);
    let file = std::fs::symlink_metadata(&path).unwrap();
    assert!(file.file_type().is_file());
    assert_eq!(file.permissions().mode() & 0o7777, 0o600);
    assert_eq!(file.uid(), euid());
    let dir = std::fs::symlink_metadata(path.parent().unwrap()).unwrap();
    assert!(dir.is_dir());
    assert_eq!(dir.permissions().mode() & 0o7777, 0o700);

    let copy = RegistryCopy::read(pid);
    assert_eq!(copy.header.pid, pid);
    assert_ne!(copy.header.start_time, 0, "field 22 of /proc/self/stat");
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
    let start_time: u64 = after_comm.split(' ').nth(19).unwrap().parse().unwrap();
    assert_eq!(copy.header.start_time, start_time);
    assert_eq!(copy.header.recorder, 0);
    let live = copy.live();
    assert_eq!(live.len(), 1, "{:?}", live);
    let (index, ref found) = live[0];
    assert_eq!(found.descriptor, "shmtest_reg u32 a;__rel_loc char[] b");
    assert_eq!(found.descriptor, tp.tracepoint().format().unwrap());
    assert_eq!(found.enable_address, tp.tracepoint().enable_word() as u64);
    let generation = copy.header.generation;
    assert!(generation >= 1, "bumped after the slot went live");

    // The same name again: a second slot, as a second enabler would be.
    let twin = DynamicTracepoint::new("shmtest_reg", fields, RegisterOptions::default()).unwrap();
    twin.register().unwrap();
    let copy = RegistryCopy::read(pid);
    let live = copy.live();
    assert_eq!(live.len(), 2);
    assert_eq!(live[0].1.descriptor, live[1].1.descriptor);
    assert_eq!(live[1].1.enable_address, twin.tracepoint().enable_word() as u64);
    assert!(copy.header.generation > generation);

    // Unregistration frees the slot, and says so by the generation.
    let generation = copy.header.generation;
    tp.unregister().unwrap();
    assert!(!tp.is_registered());
    let copy = RegistryCopy::read(pid);
    assert_eq!(copy.state(index), slot::STATE_FREE);
    assert_eq!(copy.live().len(), 1);
    assert!(copy.header.generation > generation);
    drop(twin);
    assert!(RegistryCopy::read(pid).live().is_empty());

    // A freed slot is filled again first.
    tp.register().unwrap();
    assert_eq!(RegistryCopy::read(pid).live()[0].0, index);
    assert!(index < SLOTS);
}

use usertrace::{DynamicTracepoint, ErrorKind, Field, FieldType, RegisterOptions};

use crate::support::{event_exists, set_ftrace, unique_name};

#[test]
fn a_persistent_event_outlives_its_registration_until_deleted() {
    let name = unique_name("persist");
    let options = RegisterOptions { persist: true, ..Default::default() };
    let tp = DynamicTracepoint::new(&name, vec![Field::new("x", FieldType::U8)], options).unwrap();
    tp.register().unwrap();
    assert_eq!(usertrace::delete_event(&name).unwrap_err().kind(), ErrorKind::EventBusy);
    drop(tp);
    assert!(event_exists(&name), "persisted after unregistration");
    // The kernel drops an unregistration's reference after an RCU grace
    // period, so the event may be busy for a moment.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match usertrace::delete_event(&name) {
            Ok(()) => break,
            Err(e) if e.kind() == ErrorKind::EventBusy && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(!event_exists(&name));
    assert_eq!(usertrace::delete_event(&name).unwrap_err().kind(), ErrorKind::UnknownEvent);
}

#[test]
fn multi_format_lets_one_name_carry_two_formats() {
    let name = unique_name("multi");
    let options = RegisterOptions { multi_format: true, ..Default::default() };
    let a = DynamicTracepoint::new(&name, vec![Field::new("x", FieldType::U32)], options).unwrap();
    let b = DynamicTracepoint::new(&name, vec![Field::new("x", FieldType::U64)], options).unwrap();
    a.register().unwrap();
    b.register().unwrap();
    let tracefs = crate::support::tracefs();
    let dirs: Vec<String> = std::fs::read_dir(tracefs.join("events/user_events_multi"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|d| d.starts_with(&format!("{name}.")))
        .collect();
    assert_eq!(dirs.len(), 2, "{dirs:?}");
    // Enabling one format enables only its registrations.
    let dir = tracefs.join("events/user_events_multi").join(&dirs[0]).join("enable");
    std::fs::write(&dir, "1").unwrap();
    assert!(a.enabled() ^ b.enabled());
    std::fs::write(&dir, "0").unwrap();
    let _ = set_ftrace; // ftrace on user_events/ is covered elsewhere
}

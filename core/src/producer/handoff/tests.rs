use super::*;

fn entry(word: usize) -> Entry {
    Entry { word, name_args: CString::new("ut_handoff_a u32 n").unwrap(), flags: 0, index: None }
}

#[test]
fn a_pending_word_is_registered_when_the_descriptor_arrives_and_adopted_once() {
    let mut handoff = Handoff::new();
    handoff.add(entry(0x1000));
    handoff.add(entry(0x2000));
    assert_eq!(handoff.word_state(0x1000), WordState::Waiting);
    assert_eq!(handoff.adopt(0x1000, |_| panic!("nothing to adopt before the descriptor")), None);
    let mut next = 7;
    handoff.register_all(|_| {
        next += 1;
        Ok(next)
    });
    assert_eq!(handoff.word_state(0x1000), WordState::Registered(8));
    let mut set = None;
    assert_eq!(handoff.adopt(0x2000, |i| set = Some(i)), Some(9));
    assert_eq!(set, Some(9));
    assert_eq!(handoff.word_state(0x2000), WordState::Unknown, "adopted: it left the table");
    assert_eq!(handoff.adopt(0x2000, |_| panic!("adopted twice")), None);
}

#[test]
fn a_word_registered_twice_waits_once_and_a_cancelled_one_is_never_registered() {
    let mut handoff = Handoff::new();
    handoff.add(entry(0x1000));
    handoff.add(entry(0x1000));
    handoff.add(entry(0x3000));
    assert_eq!(handoff.cancel(0x3000), None, "waiting: nothing for the kernel to unregister");
    let mut registered = Vec::new();
    handoff.register_all(|e| {
        registered.push(e.word);
        Ok(1)
    });
    assert_eq!(registered, vec![0x1000]);
    assert_eq!(handoff.cancel(0x1000), Some(1), "registered by the handoff: the caller unregisters it");
}

#[test]
fn a_failed_registration_leaves_the_table_and_is_named() {
    let mut handoff = Handoff::new();
    handoff.add(entry(0x1000));
    handoff.register_all(|_| Err("ut_handoff_a: registration failed: EADDRINUSE".into()));
    assert_eq!(handoff.word_state(0x1000), WordState::Unknown, "so that registering again tries again");
    let said = handoff.describe().unwrap();
    assert!(said.contains("0 pending tracepoints registered; failed: ut_handoff_a: registration failed: EADDRINUSE"), "{said}");
}

#[test]
fn a_second_descriptor_is_refused() {
    let mut handoff = Handoff::new();
    assert_eq!(handoff.check_first(), Ok(()));
    handoff.register_all(|_| Ok(0));
    assert!(handoff.check_first().unwrap_err().contains("a second is refused"));
}

#[test]
fn while_waiting_it_says_where_it_listens_and_how_many_wait() {
    let mut handoff = Handoff::new();
    assert_eq!(handoff.describe(), None, "no handoff, nothing to add");
    handoff.listening = Some(Listening { path: "/dev/shm/usertrace-1000/1.5.handoff".into(), owner: 1, fd: None });
    handoff.why = "tracefs_not_mounted";
    handoff.add(entry(0x1000));
    handoff.refused = Some("the descriptor is not on tracefs (f_type 0x1021994)".into());
    assert_eq!(
        handoff.describe().unwrap(),
        "no user_events_data here (tracefs_not_mounted); 1 tracepoints wait for a descriptor from a recorder, \
         listening on /dev/shm/usertrace-1000/1.5.handoff; refused: the descriptor is not on tracefs (f_type 0x1021994)"
    );
}

#[test]
fn only_a_missing_user_events_data_waits_not_a_permission_problem() {
    let status = |availability| Status { availability, tracefs: None, tried: Vec::new(), errno: None, kernel_config: None };
    // The setting is not `user_events` in this test binary: nothing waits.
    assert!(!awaits(&status(Availability::TracefsNotMounted)));
    assert!(!transport::forced_user_events());
    for availability in [Availability::PermissionDenied, Availability::OpenFailed, Availability::Available] {
        assert!(!awaits(&status(availability)), "{availability:?}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_descriptor_that_is_not_user_events_data_is_refused() {
    use std::os::fd::AsFd;
    let file = std::fs::File::options().read(true).write(true).open("/dev/null").unwrap();
    let why = check_descriptor(file.as_fd()).unwrap_err().0;
    assert!(why.contains("not on tracefs"), "{why}");
    // A tracefs file other than user_events_data, where one can be opened.
    if let Ok(file) = std::fs::File::open("/sys/kernel/tracing/README") {
        let why = check_descriptor(file.as_fd()).unwrap_err().0;
        assert!(why.contains("not open for reading and writing"), "{why}");
    }
}

use std::ffi::OsStr;
use std::path::PathBuf;

use super::*;

fn status_of(availability: Availability) -> Status {
    let dir = PathBuf::from("/sys/kernel/tracing");
    Status { availability, tracefs: Some(dir.clone()), tried: vec![dir], errno: None }
}

#[test]
fn the_setting_is_auto_unless_it_names_a_transport() {
    assert_eq!(parse_setting(None), Ok(Setting::Auto));
    assert_eq!(parse_setting(Some(OsStr::new(""))), Ok(Setting::Auto));
    assert_eq!(parse_setting(Some(OsStr::new("auto"))), Ok(Setting::Auto));
    assert_eq!(parse_setting(Some(OsStr::new("shm"))), Ok(Setting::Forced(Transport::SharedMemory)));
    assert_eq!(parse_setting(Some(OsStr::new("user_events"))), Ok(Setting::Forced(Transport::UserEvents)));
}

#[test]
fn an_invalid_setting_names_the_variable_the_value_and_what_is_allowed() {
    let err = parse_setting(Some(OsStr::new("perf"))).unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::Unavailable);
    assert!(matches!(&err, Error::InvalidSetting { variable: "USERTRACE_TRANSPORT", value, .. } if value == "perf"), "{err:?}");
    assert_eq!(err.to_string(), "USERTRACE_TRANSPORT=perf is not valid; use auto, user_events or shm, or unset it");
}

#[test]
fn auto_takes_shared_memory_only_where_the_kernel_has_no_user_events() {
    for missing in [Availability::TracefsNotMounted, Availability::UserEventsMissing] {
        let (choice, fixed) = choose(Setting::Auto, || status_of(missing));
        assert_eq!(choice.transport, Transport::SharedMemory, "{missing:?}");
        assert!(fixed);
        assert!(choice.reason.starts_with("USERTRACE_TRANSPORT=auto: user_events is not available"), "{}", choice.reason);
        assert!(choice.reason.ends_with("shared memory in /dev/shm instead"), "{}", choice.reason);
    }
    // A problem its owner can fix keeps the kernel's path and its diagnosis,
    // and is looked at again next time.
    for fixable in [Availability::PermissionDenied, Availability::OpenFailed] {
        let (choice, fixed) = choose(Setting::Auto, || status_of(fixable));
        assert_eq!(choice.transport, Transport::UserEvents, "{fixable:?}");
        assert!(!fixed);
        assert!(choice.reason.contains(&status_of(fixable).to_string()), "{}", choice.reason);
    }
    let (choice, fixed) = choose(Setting::Auto, || status_of(Availability::Available));
    assert_eq!((choice.transport, fixed), (Transport::UserEvents, true));
}

#[test]
fn a_forced_transport_is_taken_without_probing() {
    let (choice, fixed) = choose(Setting::Forced(Transport::SharedMemory), || panic!("no probe when forced"));
    assert_eq!(choice.transport, Transport::SharedMemory);
    assert!(fixed);
    assert_eq!(choice.to_string(), "transport shm: USERTRACE_TRANSPORT=shm");
}

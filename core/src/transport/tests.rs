use std::ffi::OsStr;
use std::path::PathBuf;

use super::*;
use crate::KernelConfig;

fn status_of(availability: Availability) -> Status {
    let dir = PathBuf::from("/sys/kernel/tracing");
    Status { availability, tracefs: Some(dir.clone()), tried: vec![dir], errno: None, kernel_config: None }
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

#[test]
fn auto_on_a_kernel_whose_config_lacks_user_events_names_that_verdict_not_the_missing_mount() {
    // The probe found no tracefs; the config says there are no user_events
    // to mount: the reason names the weighed verdict, as `status()` gives it.
    let lacking = KernelConfig {
        release: "6.8.0-test".into(),
        tried: vec![PathBuf::from("/proc/config.gz")],
        found: Some((PathBuf::from("/proc/config.gz"), crate::ConfigValue::NotSet)),
    };
    let mut unmounted = Status { tracefs: None, ..status_of(Availability::TracefsNotMounted) };
    unmounted.weigh(|| lacking);
    let (choice, fixed) = choose(Setting::Auto, || unmounted);
    assert_eq!((choice.transport, fixed), (Transport::SharedMemory, true));
    assert_eq!(
        choice.reason,
        "USERTRACE_TRANSPORT=auto: user_events is not available (user_events_missing); events go through shared memory in /dev/shm instead"
    );
}

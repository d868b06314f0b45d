//! USERTRACE_TRANSPORT: `auto` takes shared memory where the kernel has no
//! user_events (as on a host without them) and says why; an invalid value
//! is a typed error naming the variable, the value and what is allowed.

mod shm_support;

use shm_support::{in_child, RegistryCopy};
use usertrace::{Availability, Error, ErrorKind, Transport};

#[test]
fn auto_chooses_by_what_the_kernel_offers_and_says_why() {
    if !in_child("auto_chooses_by_what_the_kernel_offers_and_says_why", &[]) {
        return;
    }
    let status = usertrace::status();
    let choice = usertrace::transport().unwrap();
    assert!(choice.reason.starts_with("USERTRACE_TRANSPORT=auto: "), "{choice}");
    let expected = match status.availability {
        Availability::Available | Availability::PermissionDenied | Availability::OpenFailed => Transport::UserEvents,
        Availability::TracefsNotMounted | Availability::UserEventsMissing => Transport::SharedMemory,
    };
    let why = match expected {
        Transport::SharedMemory => format!("user_events is not available ({})", status.availability.name()),
        Transport::UserEvents => status.to_string(),
    };
    assert!(choice.reason.contains(&why), "{choice}");
    assert_eq!(choice.transport, expected, "{choice}");
    if expected == Transport::SharedMemory {
        // And registration goes there.
        let tp = usertrace::DynamicTracepoint::new("shmtest_auto", vec![], Default::default()).unwrap();
        tp.register().unwrap();
        assert_eq!(RegistryCopy::read(std::process::id()).live()[0].1.descriptor, "shmtest_auto");
    }
}

#[test]
fn an_invalid_transport_fails_registration_with_a_typed_error() {
    if !in_child("an_invalid_transport_fails_registration_with_a_typed_error", &[("USERTRACE_TRANSPORT", "kernel")]) {
        return;
    }
    let err = usertrace::transport().unwrap_err();
    let expected = Error::InvalidSetting {
        variable: "USERTRACE_TRANSPORT",
        value: "kernel".into(),
        allowed: "auto, user_events or shm",
    };
    assert_eq!(err, expected);
    let tp = usertrace::DynamicTracepoint::new("shmtest_invalid", vec![], Default::default()).unwrap();
    let err = tp.register().unwrap_err();
    assert_eq!(err, expected);
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(err.to_string().contains("USERTRACE_TRANSPORT=kernel is not valid; use auto, user_events or shm"), "{err}");
    assert!(!tp.enabled());
}

#[test]
fn forcing_user_events_keeps_the_kernel_s_diagnosis() {
    if !in_child("forcing_user_events_keeps_the_kernel_s_diagnosis", &[("USERTRACE_TRANSPORT", "user_events")]) {
        return;
    }
    let choice = usertrace::transport().unwrap();
    assert_eq!(choice.transport, Transport::UserEvents);
    let tp = usertrace::DynamicTracepoint::new("shmtest_forced", vec![], Default::default()).unwrap();
    if !usertrace::status().is_available() {
        assert_eq!(tp.register().unwrap_err().kind(), ErrorKind::Unavailable);
        assert!(!shm_support::registry_path(std::process::id()).exists());
    }
}

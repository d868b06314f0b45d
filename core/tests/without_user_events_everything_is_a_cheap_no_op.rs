//! On a kernel (or tracefs) without user_events, nothing fails loudly except
//! the registration that was asked for, and a later attempt looks again.
//!
//! USERTRACE_TRACEFS points at a scratch directory, so this runs on any
//! host, whether or not it has user_events; only the verdict's words follow
//! the host's kernel config, which `status()` weighs (a config without
//! CONFIG_USER_EVENTS outranks the empty mount). USERTRACE_TRANSPORT forces
//! the kernel's path: `auto` would register through shared memory here
//! (see shm_transport_auto_and_invalid_settings.rs). Where the config does
//! not say the kernel lacks user_events, that setting makes registrations
//! wait, off, for a recorder to hand over `user_events_data` (the pod's
//! case): no error, and still a no-op.

use std::path::PathBuf;

use usertrace::{Availability, ErrorKind, Field, FieldType, KernelConfig};

mod events {
    usertrace::tracepoints! {
        provider nouserevents;
        pub fn hello(n: u32, msg: &str);
    }
}

fn scratch_tracefs() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("usertrace-fake-tracefs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn without_user_events_emits_do_nothing_and_status_says_why_and_a_later_call_retries() {
    let dir = scratch_tracefs();
    std::env::set_var("USERTRACE_TRACEFS", &dir);
    std::env::set_var("USERTRACE_TRANSPORT", "user_events");

    // An empty mount point: tracefs is not mounted, unless the kernel's
    // config says there is nothing to mount.
    let lacking = KernelConfig::running().lacks_user_events();
    let status = usertrace::status();
    assert_eq!(status.tried, vec![dir.clone()]);
    if lacking {
        assert_eq!(status.availability, Availability::UserEventsMissing);
        assert!(status.to_string().contains("lacks user_events"), "{status}");
    } else {
        assert_eq!(status.availability, Availability::TracefsNotMounted);
        assert!(status.to_string().contains("tracefs is not mounted"), "{status}");
    }

    // The first emit tries to register, and says why it could not; or,
    // where a recorder could hand over user_events_data, waits for it.
    let waits = !lacking;
    assert!(events::hello::enabled(), "the first use is pending registration");
    if waits {
        usertrace::emit!(events::hello(1, "x")).unwrap();
        let reason = usertrace::transport().unwrap().reason;
        assert!(reason.contains("(tracefs_not_mounted); 1 tracepoints wait for a descriptor from a recorder, listening on"), "{reason}");
    } else {
        let err = usertrace::emit!(events::hello(1, "x")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unavailable);
        assert!(err.to_string().contains("see `usertrace status`"), "{err}");
    }

    // After that the disabled path is one load, and emits are no-ops.
    assert!(!events::hello::enabled());
    for i in 0..1000 {
        usertrace::emit!(events::hello(i, "x")).unwrap();
    }

    // tracefs "mounted" but without user_events_data: the kernel lacks it.
    std::fs::create_dir(dir.join("events")).unwrap();
    let status = usertrace::status();
    assert_eq!(status.availability, Availability::UserEventsMissing);
    assert!(status.to_string().contains("CONFIG_USER_EVENTS"), "{status}");

    // A later registration looks again rather than repeating the old
    // answer (a waiting one goes on waiting).
    match events::PROVIDER.register() {
        Ok(()) if waits => assert!(!events::hello::enabled()),
        // The error carries status()'s verdict, config and all.
        Err(usertrace::Error::Unavailable(s)) if !waits => assert_eq!(*s, usertrace::status()),
        other => panic!("expected Unavailable, or to wait, got {other:?}"),
    }

    // Dynamic tracepoints: validation errors come first, then availability.
    let provider = usertrace::Provider::new("nouserevents").unwrap();
    assert_eq!(provider.tracepoint("bad name", vec![]).unwrap_err().kind(), ErrorKind::InvalidName);
    let tp = provider.define("dyn", vec![Field::new("x", FieldType::U8)]).unwrap();
    match tp.register() {
        Ok(()) => assert!(waits && !tp.is_registered()),
        Err(e) => assert!(!waits && e.kind() == ErrorKind::Unavailable, "{e}"),
    }
    assert!(!tp.enabled());
    tp.emit(&[usertrace::Value::U8(1)]).unwrap();
    drop(tp);

    std::fs::remove_dir_all(&dir).unwrap();
}

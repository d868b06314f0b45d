//! USERTRACE_TRANSPORT: `auto` takes shared memory where the kernel has no
//! user_events (as on a host without them) and says why; an invalid value
//! is a typed error naming the variable, the value and what is allowed.

mod shm_support;

use shm_support::{in_child, RegistryCopy};
use usertrace::{shm_layout, Availability, Error, ErrorKind, Transport};

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
fn forcing_user_events_keeps_the_kernel_s_diagnosis_or_waits_where_there_is_no_user_events_data() {
    let name = "forcing_user_events_keeps_the_kernel_s_diagnosis_or_waits_where_there_is_no_user_events_data";
    let pid_file = std::env::temp_dir().join(format!("ut_handoff_forced_{}.pid", std::process::id()));
    // An empty tracefs: on a kernel whose config does not say it lacks
    // user_events (the guest's), registrations wait for a descriptor.
    let no_tracefs = std::env::temp_dir().join(format!("ut_handoff_no_tracefs_{}", std::process::id()));
    std::fs::create_dir_all(&no_tracefs).unwrap();
    let env = [("USERTRACE_TRANSPORT", "user_events"), ("UT_HANDOFF_PID_FILE", pid_file.to_str().unwrap()), ("USERTRACE_TRACEFS", no_tracefs.to_str().unwrap())];
    if !in_child(name, &env) {
        let _ = std::fs::remove_dir(&no_tracefs);
        // Its socket went with it.
        let pid: u32 = std::fs::read_to_string(&pid_file).unwrap().parse().unwrap();
        let _ = std::fs::remove_file(&pid_file);
        let left = std::fs::read_dir(shm_support::dir()).into_iter().flatten().flatten().filter_map(|e| e.file_name().into_string().ok());
        let left: Vec<String> = left.filter(|n| shm_layout::parse_handoff_socket_file_name(n).is_some_and(|(p, _)| p == pid)).collect();
        assert_eq!(left, Vec::<String>::new(), "removed at exit");
        return;
    }
    // The one made above under this child's own pid is not the one it uses.
    let _ = std::fs::remove_dir(&no_tracefs);
    std::fs::write(std::env::var("UT_HANDOFF_PID_FILE").unwrap(), std::process::id().to_string()).unwrap();
    let choice = usertrace::transport().unwrap();
    assert_eq!(choice.transport, Transport::UserEvents);
    let tp = usertrace::DynamicTracepoint::new("shmtest_forced", vec![], Default::default()).unwrap();
    let status = usertrace::status();
    // No recorder could hand one over on a kernel built without them.
    let lacks = status.kernel_config.as_ref().is_some_and(|c| c.lacks_user_events());
    match status.availability {
        Availability::Available => {}
        Availability::TracefsNotMounted | Availability::UserEventsMissing if !lacks => waits_for_a_descriptor(&tp),
        // A permission is for its owner to fix: no waiting, as for a
        // kernel without user_events.
        _ => {
            assert_eq!(tp.register().unwrap_err().kind(), ErrorKind::Unavailable);
            assert!(!shm_support::registry_path(std::process::id()).exists());
        }
    }
}

/// No user_events_data here: the registration succeeds and waits, off,
/// listening; a descriptor that is not user_events_data is refused, and
/// it listens on.
fn waits_for_a_descriptor(tp: &usertrace::DynamicTracepoint) {
    tp.register().unwrap();
    assert!(!tp.enabled() && !tp.is_registered(), "{tp:?}");
    assert!(!shm_support::registry_path(std::process::id()).exists(), "not shared memory");
    let reason = usertrace::transport().unwrap().reason;
    let socket = reason.split("listening on ").nth(1).unwrap_or_else(|| panic!("{reason}"));
    let socket = std::path::PathBuf::from(socket);
    let expected = format!("{}/{}.", shm_support::dir().display(), std::process::id());
    assert!(socket.to_str().unwrap().starts_with(&expected) && socket.to_str().unwrap().ends_with(".handoff"), "{reason}");
    assert!(std::os::unix::fs::FileTypeExt::is_socket(&std::fs::metadata(&socket).unwrap().file_type()));
    assert!(reason.contains("1 tracepoints wait for a descriptor from a recorder"), "{reason}");
    hand_over(&socket, &std::fs::File::open("/dev/null").unwrap());
    let start = std::time::Instant::now();
    while !usertrace::transport().unwrap().reason.contains("refused: the descriptor is not on tracefs") {
        assert!(start.elapsed() < std::time::Duration::from_secs(5), "{}", usertrace::transport().unwrap());
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(socket.exists() && !tp.enabled(), "it listens on");
    tp.emit(&[]).unwrap();
    a_fork_child_listens_under_its_own_name(&socket);
}

/// A fork child's next registration that waits listens under the child's
/// own name, with the parent's pending one too; the child's exit removes
/// its socket, not the parent's, which still listens.
fn a_fork_child_listens_under_its_own_name(parent_socket: &std::path::Path) {
    // SAFETY: fork(2); the child registers, checks and exits, and the
    // parent's other thread (the listener) holds no lock while in accept.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let ok = std::panic::catch_unwind(|| {
            let tp = usertrace::DynamicTracepoint::new("shmtest_forced_child", vec![], Default::default()).unwrap();
            tp.register().unwrap();
            let reason = usertrace::transport().unwrap().reason;
            let mine = format!("2 tracepoints wait for a descriptor from a recorder, listening on {}/{}.", shm_support::dir().display(), std::process::id());
            reason.contains(&mine) && parent_socket.exists()
        });
        std::process::exit(if ok.unwrap_or(false) { 0 } else { 1 });
    }
    let mut status = 0;
    // SAFETY: waitpid(2) on our own child, into a local.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child said otherwise: {status:#x}");
    let left = std::fs::read_dir(shm_support::dir()).into_iter().flatten().flatten().filter_map(|e| e.file_name().into_string().ok());
    let childs: Vec<String> = left.filter(|n| shm_layout::parse_handoff_socket_file_name(n).is_some_and(|(p, _)| p == pid as u32)).collect();
    assert_eq!(childs, Vec::<String>::new(), "the child's socket went with it");
    assert!(parent_socket.exists(), "the child's exit leaves the parent's socket");
    assert!(std::os::unix::net::UnixStream::connect(parent_socket).is_ok(), "and the parent still listens");
}

/// Sends `file` as a recorder would.
fn hand_over(socket: &std::path::Path, file: &std::fs::File) {
    use std::os::fd::AsFd;
    let stream = std::os::unix::net::UnixStream::connect(socket).unwrap();
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = rustix::net::SendAncillaryBuffer::new(&mut space);
    let fds = [file.as_fd()];
    assert!(control.push(rustix::net::SendAncillaryMessage::ScmRights(&fds)));
    let bytes = [std::io::IoSlice::new(shm_layout::HANDOFF_MESSAGE)];
    rustix::net::sendmsg(&stream, &bytes, &mut control, rustix::net::SendFlags::empty()).unwrap();
}

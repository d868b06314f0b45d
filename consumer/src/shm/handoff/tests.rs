//! The handoff's protocol between this module and the producer's listener
//! (`usertrace::__private::handoff`), in one process: a test file stands
//! for `user_events_data`, which the producer's own check would refuse.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::net::SocketFlags;
use usertrace::__private::handoff::{bind_listener, check_descriptor, receive_descriptor};

use super::{hand_over, Giver, Refused};

/// A directory of this test's own under /tmp, removed when dropped.
struct TestDir(PathBuf);

impl TestDir {
    fn new(test: &str) -> TestDir {
        let path = std::env::temp_dir().join(format!("ut_handoff_{}_{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir(&path).unwrap();
        TestDir(path)
    }

    fn open(&self) -> OwnedFd {
        rustix::fs::open(&self.0, rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY, rustix::fs::Mode::empty()).unwrap()
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The file handed over in place of `user_events_data`.
fn data_file(dir: &Path) -> (PathBuf, OwnedFd) {
    let path = dir.join("ut_handoff_data");
    std::fs::write(&path, b"").unwrap();
    let fd = rustix::fs::open(&path, rustix::fs::OFlags::RDWR, rustix::fs::Mode::empty()).unwrap();
    (path, fd)
}

fn own_socket_name() -> String {
    usertrace::shm_layout::handoff_socket_file_name(std::process::id(), 1)
}

/// A connection waiting on `listener`, if any, without waiting for one.
fn try_accept(listener: &OwnedFd) -> Option<OwnedFd> {
    rustix::io::ioctl_fionbio(listener, true).unwrap();
    rustix::net::accept_with(listener, SocketFlags::CLOEXEC).ok()
}

#[test]
fn the_descriptor_reaches_the_process_listening_under_the_name() {
    let dir = TestDir::new("reaches");
    let listener = bind_listener(&dir.0.join(own_socket_name())).unwrap();
    let (path, data) = data_file(&dir.0);
    let me = std::process::id();
    let peer = hand_over(dir.open().as_fd(), &own_socket_name(), |pid| pid == me, data.as_fd()).unwrap();
    assert_eq!(peer, me, "SO_PEERCRED names the process that listens");
    let connection = try_accept(&listener).expect("a connection, queued before any accept");
    let received = receive_descriptor(connection.as_fd()).unwrap();
    let (got, want) = (rustix::fs::fstat(&received).unwrap(), std::fs::metadata(&path).unwrap());
    assert_eq!((got.st_dev, got.st_ino), (want.dev(), want.ino()), "the very file handed over");
    let why = check_descriptor(received.as_fd()).unwrap_err().0;
    assert!(why.contains("not on tracefs"), "a producer takes only user_events_data: {why}");
}

#[test]
fn a_listener_that_is_not_the_process_the_name_says_gets_nothing() {
    let dir = TestDir::new("peer");
    let listener = bind_listener(&dir.0.join(own_socket_name())).unwrap();
    let (_, data) = data_file(&dir.0);
    let me = std::process::id();
    let refused = hand_over(dir.open().as_fd(), &own_socket_name(), |pid| pid == me + 1, data.as_fd()).unwrap_err();
    assert!(matches!(refused, Refused::WrongPeer { pid } if pid == me), "{refused:?}");
    let connection = try_accept(&listener).expect("the connection that was checked");
    let why = receive_descriptor(connection.as_fd()).unwrap_err().0;
    assert!(why.contains("not a handoff (0 bytes)"), "nothing was sent: {why}");
}

#[test]
fn a_symlink_named_as_a_handoff_socket_is_refused_and_never_followed() {
    let (dir, elsewhere) = (TestDir::new("symlink"), TestDir::new("symlink_target"));
    let target = elsewhere.0.join("real.sock");
    let listener = bind_listener(&target).unwrap();
    std::os::unix::fs::symlink(&target, dir.0.join(own_socket_name())).unwrap();
    let (_, data) = data_file(&dir.0);
    let refused = hand_over(dir.open().as_fd(), &own_socket_name(), |_| true, data.as_fd()).unwrap_err();
    // O_PATH | O_NOFOLLOW opens the link itself, which is not a socket.
    assert!(matches!(&refused, Refused::NotASocket(_)), "{refused:?}");
    assert!(try_accept(&listener).is_none(), "the socket the link points at was never connected to");
}

#[test]
fn a_producer_that_never_accepts_costs_the_recorder_no_wait() {
    let dir = TestDir::new("never_accepts");
    let listener = bind_listener(&dir.0.join(own_socket_name())).unwrap();
    let (_, data) = data_file(&dir.0);
    let started = Instant::now();
    // Handed over, queued: nobody accepts.
    assert!(hand_over(dir.open().as_fd(), &own_socket_name(), |_| true, data.as_fd()).is_ok());
    // Until its backlog is full, and then refused at once, to be asked again.
    let mut last = Ok(0);
    for _ in 0..16 {
        last = hand_over(dir.open().as_fd(), &own_socket_name(), |_| true, data.as_fd());
        if last.is_err() {
            break;
        }
    }
    assert!(matches!(last, Err(Refused::Busy)), "{last:?}");
    assert!(started.elapsed() < Duration::from_millis(100), "took {:?}", started.elapsed());
    drop(listener);
}

#[test]
fn each_socket_is_served_once_and_only_for_a_process_that_shares_its_directory() {
    let dir = TestDir::new("once");
    let listener = bind_listener(&dir.0.join(own_socket_name())).unwrap();
    let (path, _) = data_file(&dir.0);
    let mut giver = Giver::new(path);
    giver.serve_directory(&dir.open(), &[], &[]);
    assert!(try_accept(&listener).is_none(), "no member is the name's pid: not connected to");
    let me = std::process::id();
    for _ in 0..3 {
        giver.serve_directory(&dir.open(), &[me], &[]);
        giver.end_walk();
    }
    assert_eq!(giver.given, vec![me]);
    assert!(try_accept(&listener).is_some());
    assert!(try_accept(&listener).is_none(), "one connection, for three walks");
}

use std::ffi::OsStr;

use super::registry::parse_start_time;
use super::*;

#[test]
fn the_start_time_is_field_22_counted_after_the_command() {
    // A command with spaces and a parenthesis of its own.
    let stat = b"1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 98765 1000000 200 rest\n";
    assert_eq!(parse_start_time(stat), Some(98765));
    assert_eq!(parse_start_time(b"1234 (cut) S 1 2"), None);
    assert_eq!(registry::start_time(), {
        let stat = std::fs::read("/proc/self/stat").unwrap();
        parse_start_time(&stat).unwrap()
    });
}

#[test]
fn the_ring_size_is_a_power_of_two_of_kib_clamped_to_what_a_recorder_accepts() {
    assert_eq!(parse_ring_kib(None), Ok(shm_layout::DEFAULT_RING_DATA_LEN));
    assert_eq!(parse_ring_kib(Some(OsStr::new("64"))), Ok(64 << 10));
    assert_eq!(parse_ring_kib(Some(OsStr::new("1"))), Ok(MIN_RING_DATA_LEN));
    assert_eq!(parse_ring_kib(Some(OsStr::new("1048576"))), Ok(MAX_RING_DATA_LEN));
    for bad in ["100", "0", "-4", "lots"] {
        let err = parse_ring_kib(Some(OsStr::new(bad))).unwrap_err();
        assert!(matches!(&err, Error::InvalidSetting { variable: SHM_RING_KIB_ENV, value, .. } if value == bad), "{err:?}");
    }
}

#[test]
fn only_a_private_directory_of_ours_is_used() {
    assert_eq!(unsafe_because(true, 1000, 0o700, 1000), None);
    assert_eq!(unsafe_because(true, 1000, 0o500, 1000), None);
    assert_eq!(unsafe_because(false, 1000, 0o700, 1000).as_deref(), Some("is not a directory"));
    assert_eq!(unsafe_because(true, 0, 0o700, 1000).as_deref(), Some("belongs to uid 0, not 1000"));
    assert_eq!(unsafe_because(true, 1000, 0o750, 1000).as_deref(), Some("has mode 0750, open to group or others"));
    assert_eq!(unsafe_because(true, 1000, 0o1777, 1000).as_deref(), Some("has mode 1777, open to group or others"));
    let err = Error::UnsafeDirectory { path: "/dev/shm/usertrace-1000".into(), reason: "is not a directory".into() };
    assert_eq!(err.kind(), crate::ErrorKind::PermissionDenied);
}

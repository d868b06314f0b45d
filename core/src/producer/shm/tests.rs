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

#[test]
fn a_ring_wakes_its_recorder_once_as_it_crosses_a_quarter_full() {
    use crate::shm_layout::crosses_watermark;
    let ring = 4096;
    // Below, then the record that reaches the mark exactly, then past it.
    assert!(!crosses_watermark(0, 32, ring));
    assert!(!crosses_watermark(900, 32, ring));
    assert!(crosses_watermark(1024 - 32, 32, ring));
    assert!(crosses_watermark(1016, 32, ring));
    // Already at or above it: no second wakeup until the recorder reads.
    assert!(!crosses_watermark(1024, 32, ring));
    assert!(!crosses_watermark(4000, 32, ring));
    // Walked record by record, from empty to full: one crossing.
    let crossings = (0..ring / 40).filter(|i| crosses_watermark(i * 40, 40, ring)).count();
    assert_eq!(crossings, 1);
    // The recorder read it all: the next fill crosses again.
    assert!(crosses_watermark(1023, 8, ring) && !crosses_watermark(0, 8, ring));
}

#[test]
fn the_clock_setting_is_monotonic_or_auto() {
    assert_eq!(parse_clock(None), Ok(true));
    assert_eq!(parse_clock(Some(OsStr::new("auto"))), Ok(true));
    assert_eq!(parse_clock(Some(OsStr::new("monotonic"))), Ok(false));
    let err = parse_clock(Some(OsStr::new("tsc-please"))).unwrap_err();
    assert!(matches!(&err, Error::InvalidSetting { variable: SHM_CLOCK_ENV, value, .. } if value == "tsc-please"), "{err:?}");
}

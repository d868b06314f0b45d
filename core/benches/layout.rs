//! What an emit does after the registration check, natively: the values'
//! check, the layout and the `writev`, against a `writev` of the same bytes
//! laid out beforehand. Both write to /dev/null, so no kernel with
//! user_events is needed and the syscall costs the same on both sides:
//! the difference is the core's own work. `cargo bench -p usertrace --bench layout`.
//!
//! The event is the one the Java and Python benchmarks emit (`u32 a`,
//! `s64 b`, `__rel_loc char[] c` = "hello"), small enough to be gathered
//! into one buffer, plus a larger one (a 300-byte string) that is written
//! where it lies, one `iovec` per piece.
//!
//! Rounds are short and many, and the rows take turns within each round,
//! so that load from other jobs on the host falls on a row and its
//! baseline alike; the best round of each is printed.

use std::fs::{File, OpenOptions};
use std::hint::black_box;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd};
use std::time::Instant;

use usertrace::__private::payload::write_event;
use usertrace::__private::sys::writev;
use usertrace::{Field, FieldType, Value};

const ROUNDS: usize = 200;
const CALLS: u32 = 2_000;

/// The kernel's layout of (index, a, b, rel_loc of c, c's bytes and NUL).
fn laid_out(index: u32, a: u32, b: i64, c: &str) -> Vec<u8> {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&index.to_ne_bytes());
    bytes.extend_from_slice(&a.to_ne_bytes());
    bytes.extend_from_slice(&b.to_ne_bytes());
    // The data follows the loc word at once: offset 0, length with the NUL.
    bytes.extend_from_slice(&((c.len() as u32 + 1) << 16).to_ne_bytes());
    bytes.extend_from_slice(c.as_bytes());
    bytes.push(0);
    bytes
}

/// The bytes `write_event` writes for `values`, read back through a pipe.
fn written_by_write_event(fields: &[Field], values: &[Value<'_>]) -> Vec<u8> {
    let mut ends = [0; 2];
    // SAFETY: `ends` has room for the two descriptors pipe() returns.
    assert_eq!(unsafe { libc::pipe(ends.as_mut_ptr()) }, 0, "pipe");
    // SAFETY: both descriptors are fresh and owned by nothing else.
    let (read_end, write_end) = unsafe { (File::from_raw_fd(ends[0]), File::from_raw_fd(ends[1])) };
    write_event(write_end.as_raw_fd(), 7, "bench_layout", fields, values).unwrap();
    drop(write_end);
    let mut bytes = Vec::new();
    (&read_end).read_to_end(&mut bytes).unwrap();
    bytes
}

fn main() {
    let null = OpenOptions::new().write(true).open("/dev/null").expect("/dev/null");
    let fd = null.as_raw_fd();
    let fields = [Field::new("a", FieldType::U32), Field::new("b", FieldType::I64), Field::new("c", FieldType::Str)];
    let long = "x".repeat(300);
    let cases = [("small, gathered", "hello"), ("300-byte string, scattered", long.as_str())];

    for (what, c) in cases {
        let values = [Value::U32(31), Value::I64(-5), Value::Str(c)];
        let bytes = laid_out(7, 31, -5, c);
        assert_eq!(written_by_write_event(&fields, &values), bytes, "{what}: the baseline writes what write_event does");
        let iov = [libc::iovec { iov_base: bytes.as_ptr() as *mut _, iov_len: bytes.len() }];
        let (mut ours, mut raw) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..ROUNDS {
            let start = Instant::now();
            for _ in 0..CALLS {
                write_event(fd, 7, "bench_layout", black_box(&fields), black_box(&values)).unwrap();
            }
            ours = ours.min(start.elapsed().as_nanos() as f64 / f64::from(CALLS));
            let start = Instant::now();
            for _ in 0..CALLS {
                writev(fd, black_box(&iov)).unwrap();
            }
            raw = raw.min(start.elapsed().as_nanos() as f64 / f64::from(CALLS));
        }
        println!(
            "{what:<28} write_event {ours:>8.1} ns   writev of the bytes laid out beforehand {raw:>8.1} ns   the core's own work {:>6.1} ns",
            ours - raw
        );
    }
}

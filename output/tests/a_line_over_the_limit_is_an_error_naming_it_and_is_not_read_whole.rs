//! A JSON line longer than `jsonl::MAX_LINE_BYTES` (16 MiB) is an error that
//! names the line and the limit, and the reader stops reading it at the
//! limit: a recording with one enormous line cannot exhaust memory.

use std::io::{self, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use usertrace_output::jsonl::{ReadError, Reader, MAX_LINE_BYTES};

const GOOD: &str = "{\"type\":\"exit\",\"time_ns\":1,\"pid\":5,\"tid\":5}\n";

#[test]
fn the_limit_is_sixteen_mebibytes() {
    assert_eq!(MAX_LINE_BYTES, 16 << 20);
}

#[test]
fn a_seventeen_mebibyte_line_is_named_with_the_limit() {
    let mut input = GOOD.as_bytes().to_vec();
    input.extend_from_slice(b"{\"type\":\"event\",\"comm\":\"");
    input.resize(input.len() + (17 << 20), b'a');
    input.extend_from_slice(b"\"}\n");
    input.extend_from_slice(GOOD.as_bytes());
    let mut reader = Reader::new(&input[..]);
    assert!(reader.next().unwrap().is_ok());
    let e = reader.next().unwrap().unwrap_err();
    assert!(matches!(e, ReadError::LineTooLong { line: 2, .. }), "{e:?}");
    assert_eq!(e.line(), Some(2));
    let text = e.to_string();
    assert!(text.starts_with("line 2: longer than 16 MiB"), "{text}");
    assert!(reader.next().is_none(), "nothing after the error is trusted");
}

#[test]
fn a_line_of_exactly_the_limit_is_read() {
    let head = "{\"type\":\"exit\",\"time_ns\":1,\"pid\":5,\"tid\":5,\"x\":\"";
    let tail = "\"}\n";
    let mut line = head.as_bytes().to_vec();
    line.resize(MAX_LINE_BYTES - tail.len(), b'a');
    line.extend_from_slice(tail.as_bytes());
    assert_eq!(line.len(), MAX_LINE_BYTES);
    let records: Result<Vec<_>, _> = Reader::new(&line[..]).collect();
    assert_eq!(records.unwrap().len(), 1);
}

/// Counts the bytes taken from an endless line.
struct Counted(Arc<AtomicU64>, io::Repeat);

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.1.read(buf)?;
        self.0.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

#[test]
fn an_endless_line_is_read_only_up_to_the_limit() {
    let taken = Arc::new(AtomicU64::new(0));
    let input = BufReader::with_capacity(1 << 16, Counted(taken.clone(), io::repeat(b'a')));
    let e = Reader::new(input).next().unwrap().unwrap_err();
    assert!(matches!(e, ReadError::LineTooLong { line: 1, .. }), "{e:?}");
    let taken = taken.load(Ordering::Relaxed);
    assert!(taken <= MAX_LINE_BYTES as u64 + (1 << 16), "read {taken} bytes of one line");
}

use usertrace::{DynamicTracepoint, ErrorKind, Field, FieldType, RegisterOptions, Value};

use crate::support::{set_ftrace, unique_name, PerfTracepoint};

#[test]
fn the_largest_payload_perf_takes_is_written_and_one_byte_more_is_an_error() {
    let name = unique_name("big");
    let tp = DynamicTracepoint::new(&name, vec![Field::new("b", FieldType::Bytes)], RegisterOptions::default()).unwrap();
    tp.register().unwrap();
    let _perf = PerfTracepoint::open(&name, false);
    set_ftrace(&name, false);
    assert!(tp.enabled());
    let max = usertrace::wire::MAX_PAYLOAD_LEN - 4; // minus the rel_loc word
    tp.emit(&[Value::Bytes(&vec![0xA5; max])]).unwrap();
    let err = tp.emit(&[Value::Bytes(&vec![0xA5; max + 1])]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PayloadTooLarge);
    assert!(err.to_string().contains("perf records at most 8184"), "{err}");
}

//! With USERTRACE_TRANSPORT=shm and the enable word set (as a recorder
//! would set it), an emit is one record in this thread's ring: the slot,
//! a CLOCK_MONOTONIC time, the CPU, and exactly the bytes the kernel path
//! would have written after its write index. A full ring drops and counts.

mod shm_support;

use shm_support::{in_child, monotonic_ns, payload_u32_str, ring_paths, set_word, RegistryCopy, RingReader};
use usertrace::shm_layout::{tsc_now, RecordHeader, RingClock, RING_MAGIC};
use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

fn tracepoint(name: &str) -> DynamicTracepoint {
    let fields = vec![Field::new("a", FieldType::U32), Field::new("b", FieldType::Str)];
    let tp = DynamicTracepoint::new(name, fields, RegisterOptions::default()).unwrap();
    tp.register().unwrap();
    tp
}

#[test]
fn an_emit_is_one_record_with_the_payload_bytes_slot_and_time() {
    // The clock_gettime path (the TSC one is the test after this).
    if !in_child("an_emit_is_one_record_with_the_payload_bytes_slot_and_time", &[
        ("USERTRACE_TRANSPORT", "shm"),
        ("USERTRACE_SHM_CLOCK", "monotonic"),
    ]) {
        return;
    }
    let pid = std::process::id();
    let tp = tracepoint("shmtest_emit");
    // Disabled: nothing written, and no ring made.
    tp.emit(&[Value::U32(1), Value::Str("no")]).unwrap();
    assert!(ring_paths(pid).is_empty());

    set_word(tp.tracepoint().enable_word(), 1);
    assert!(tp.enabled());
    let before = monotonic_ns();
    tp.emit(&[Value::U32(7), Value::Str("hi")]).unwrap();
    let after = monotonic_ns();

    let rings = ring_paths(pid);
    assert_eq!(rings.len(), 1, "one ring, this thread's: {rings:?}");
    let bytes = std::fs::read(&rings[0]).unwrap();
    assert_eq!(bytes[..8], RING_MAGIC);
    let ring = RingReader::open(&rings[0]);
    assert_eq!(ring.header.pid, pid);
    assert_eq!(ring.header.clock, RingClock::Monotonic);
    assert_eq!(ring.header.data_len, usertrace::shm_layout::DEFAULT_RING_DATA_LEN);
    let records = ring.drain();
    assert_eq!(records.len(), 1);
    let record = &records[0];
    let want = payload_u32_str(7, "hi");
    assert_eq!(record.payload, want);
    assert_eq!(record.header.payload_len as usize, want.len());
    assert_eq!(record.header.len as usize, RecordHeader::len_for(want.len()));
    let slot = RegistryCopy::read(pid).live()[0].0;
    assert_eq!(record.header.slot as usize, slot);
    assert!(before <= record.header.time_ns && record.header.time_ns <= after, "{before} <= {} <= {after}", record.header.time_ns);
    let cpus = std::thread::available_parallelism().map_or(1024, |n| n.get() as u32);
    assert!(record.header.cpu < cpus.max(1024));
    assert_eq!(ring.lost(), 0);

    // A bad value is still an error, and writes nothing.
    assert!(tp.emit(&[Value::Str("x"), Value::Str("hi")]).is_err());
    assert!(ring.drain().is_empty());
}

#[test]
fn where_the_tsc_is_the_monotonic_clock_s_source_a_record_carries_the_tsc() {
    if !in_child("where_the_tsc_is_the_monotonic_clock_s_source_a_record_carries_the_tsc", &[("USERTRACE_TRANSPORT", "shm")]) {
        return;
    }
    let tp = tracepoint("shmtest_tsc");
    set_word(tp.tracepoint().enable_word(), 1);
    let (before, before_tsc) = (monotonic_ns(), tsc_now());
    tp.emit(&[Value::U32(7), Value::Str("hi")]).unwrap();
    let (after, after_tsc) = (monotonic_ns(), tsc_now());
    let ring = RingReader::open(&ring_paths(std::process::id())[0]);
    let time = ring.drain()[0].header.time_ns;
    let source = std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource").unwrap_or_default();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let invariant = cpuinfo.contains(" constant_tsc") && cpuinfo.contains(" nonstop_tsc");
    if cfg!(target_arch = "x86_64") && source.trim() == "tsc" && invariant {
        assert_eq!(ring.header.clock, RingClock::Tsc);
        assert!(before_tsc <= time && time <= after_tsc, "{before_tsc} <= {time} <= {after_tsc}");
    } else {
        assert_eq!(ring.header.clock, RingClock::Monotonic, "clocksource {source}");
        assert!(before <= time && time <= after, "{before} <= {time} <= {after}");
    }
}

#[test]
fn a_full_ring_drops_and_counts_so_received_plus_lost_is_emitted() {
    // The smallest ring, so that it fills (and wraps) quickly.
    if !in_child("a_full_ring_drops_and_counts_so_received_plus_lost_is_emitted", &[
        ("USERTRACE_TRANSPORT", "shm"),
        ("USERTRACE_SHM_RING_KIB", "4"),
    ]) {
        return;
    }
    let pid = std::process::id();
    let tp = tracepoint("shmtest_full");
    set_word(tp.tracepoint().enable_word(), 1);
    let text = "some text that makes each record a little longer";
    let mut emitted = 0u32;
    let mut received = Vec::new();
    let mut reader = None;
    // Rounds of emits larger than the ring, drained between them: records
    // wrap around its end, and each round drops some.
    for round in 0..5 {
        for _ in 0..200 {
            tp.emit(&[Value::U32(emitted), Value::Str(text)]).unwrap();
            emitted += 1;
        }
        let ring = reader.get_or_insert_with(|| RingReader::open(&ring_paths(pid)[0]));
        assert_eq!(ring.header.data_len, 4096);
        let records = ring.drain();
        assert!(!records.is_empty() && records.len() < 200, "round {round}: {}", records.len());
        received.extend(records);
    }
    let ring = reader.unwrap();
    assert_eq!(received.len() as u64 + ring.lost(), u64::from(emitted));
    // Every record received is whole, and they come in order.
    let mut last = None;
    for record in &received {
        let a = u32::from_ne_bytes(record.payload[..4].try_into().unwrap());
        assert_eq!(record.payload, payload_u32_str(a, text));
        assert!(last.is_none_or(|l| a > l));
        last = Some(a);
    }
}

use std::collections::{BTreeMap, HashMap};

use prost::Message;

use super::proto::{debug_annotation, trace_packet, track_descriptor, track_event, Trace};
use super::*;
use crate::record::Record;
use crate::test_records::*;
use crate::timeline::busy_recording::busy;
use crate::timeline::{Timeline, TimelineStream};

mod sched;

/// A slice as decoded: track name, depth, name, start, end, args.
type Decoded = (String, usize, String, u64, u64, Vec<(String, String)>);
/// A slice begun: name, start, args.
type Begun = (String, u64, Vec<(String, String)>);

/// Decodes `bytes` with the prost types and checks what the module docs
/// promise; returns the slices (instants as zero-length) by track.
fn decode(bytes: &[u8]) -> (Vec<TracePacket>, Vec<Decoded>) {
    let trace = Trace::decode(bytes).expect("the trace decodes");
    let packets = trace.packet;
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut annotation_names: HashMap<u64, String> = HashMap::new();
    let mut tracks: HashMap<u64, String> = HashMap::new();
    let mut open: HashMap<u64, Vec<Begun>> = HashMap::new();
    let mut slices = Vec::new();
    let mut last_time = 0;
    for (i, p) in packets.iter().enumerate() {
        assert_eq!(
            p.optional_trusted_packet_sequence_id,
            Some(trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(SEQUENCE_ID))
        );
        let flags = match (&p.data, i) {
            // Ftrace bundles need none of the sequence's state.
            (Some(trace_packet::Data::FtraceEvents(_)), _) => None,
            (_, 0) => Some(trace_packet::SequenceFlags::SeqIncrementalStateCleared as u32),
            _ => Some(trace_packet::SequenceFlags::SeqNeedsIncrementalState as u32),
        };
        assert_eq!(p.sequence_flags, flags, "packet {i}");
        if let Some(interned) = &p.interned_data {
            for n in &interned.event_names {
                assert!(names.insert(n.iid(), n.name().to_owned()).is_none(), "iid {} sent twice", n.iid());
            }
            for n in &interned.debug_annotation_names {
                assert!(annotation_names.insert(n.iid(), n.name().to_owned()).is_none());
            }
        }
        match &p.data {
            Some(trace_packet::Data::TrackDescriptor(d)) => {
                let name = match (&d.process, &d.thread, &d.static_or_dynamic_name) {
                    (Some(p), _, _) => format!("process {} {}", p.pid(), p.process_name()),
                    (_, Some(t), _) => format!("thread {} {}", t.tid(), t.thread_name()),
                    (_, _, Some(track_descriptor::StaticOrDynamicName::Name(n))) => n.clone(),
                    _ => panic!("unnamed track {d:?}"),
                };
                assert!(tracks.insert(d.uuid(), name).is_none(), "track {} described twice", d.uuid());
            }
            Some(trace_packet::Data::TrackEvent(e)) => {
                let time = p.timestamp.expect("track events have a time");
                assert!(time >= last_time, "packet {i} goes back in time");
                last_time = time;
                let track = e.track_uuid();
                assert!(tracks.contains_key(&track), "track {track} not described before use");
                let name = match e.name_field {
                    Some(track_event::NameField::NameIid(iid)) => names.get(&iid).cloned().expect("interned before use"),
                    _ => String::new(),
                };
                let args: Vec<(String, String)> = e
                    .debug_annotations
                    .iter()
                    .map(|a| {
                        let Some(debug_annotation::NameField::NameIid(iid)) = a.name_field else { panic!("annotation name not interned") };
                        let value = match a.value.as_ref().expect("a value") {
                            debug_annotation::Value::UintValue(v) => format!("u{v}"),
                            debug_annotation::Value::IntValue(v) => format!("i{v}"),
                            debug_annotation::Value::DoubleValue(v) => format!("d{v}"),
                            debug_annotation::Value::BoolValue(v) => format!("b{v}"),
                            debug_annotation::Value::StringValue(v) => format!("s{v}"),
                            other => panic!("{other:?}"),
                        };
                        (annotation_names[&iid].clone(), value)
                    })
                    .collect();
                let stack = open.entry(track).or_default();
                match e.r#type() {
                    track_event::Type::SliceBegin => stack.push((name, time, args)),
                    track_event::Type::SliceEnd => {
                        let (name, start, args) = stack.pop().expect("an end with its begin on the same track");
                        slices.push((tracks[&track].clone(), stack.len(), name, start, time, args));
                    }
                    track_event::Type::Instant => slices.push((tracks[&track].clone(), stack.len(), name, time, time, args)),
                    other => panic!("{other:?}"),
                }
            }
            Some(trace_packet::Data::ClockSnapshot(c)) => {
                assert_eq!(i, 0);
                assert_eq!(c.primary_trace_clock, Some(proto::BuiltinClock::Monotonic as i32));
                assert_eq!(p.trace_packet_defaults.as_ref().and_then(|d| d.timestamp_clock_id), Some(CLOCK_MONOTONIC));
            }
            Some(trace_packet::Data::FtraceEvents(_)) => {}
            other => panic!("unexpected packet {other:?}"),
        }
    }
    assert!(open.values().all(Vec::is_empty), "slices left open: {open:?}");
    slices.sort_by(|a, b| (&a.0, a.3, a.1).cmp(&(&b.0, b.3, b.1)));
    (packets, slices)
}

fn summary(slices: &[Decoded]) -> Vec<String> {
    slices
        .iter()
        .map(|(track, depth, name, start, end, args)| {
            let args: Vec<String> = args.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{track} | {depth} {name} {start}..{end} {}", args.join(" "))
        })
        .collect()
}

#[test]
fn the_mixed_recording_decodes_into_its_tracks_nesting_and_args() {
    let (packets, slices) = decode(&encode(&Timeline::build(&mixed())));
    let descriptors: BTreeMap<String, Vec<String>> = packets
        .iter()
        .filter_map(|p| match &p.data {
            Some(trace_packet::Data::TrackDescriptor(d)) => d.process.as_ref().map(|p| (p.process_name().to_owned(), p.cmdline.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(descriptors["server"], ["server", "--port", "80"]);
    assert_eq!(descriptors["proc20"], Vec::<String>::new());
    assert_eq!(
        summary(&slices),
        [
            "spans | 0 handoff 40..50 ",
            "spans 2 | 0 gc 41..44 heap=d1.5",
            "thread 10 thread10 | 0 request 10..60 ",
            "thread 10 thread10 | 1 parse 20..30 ",
            "thread 10 thread10 | 2 note 25..25 u=u18446744073709551615 i=i-5 b=btrue",
            "thread 21 thread21 | 0 tick 62..62 s=shéllo \"x\"\n f=d0.5",
            "thread 21 thread21 | 0 work 63..70 unfinished=sprocess exited",
            "usertrace: lost events | 0 lost 12 events on cpu 1 61..61 ",
        ]
    );
}

#[test]
fn slices_of_equal_times_nest_as_the_timeline_says() {
    // A zero-length child at its parent's end, a sibling starting where
    // another ends, and an instant at a slice's end.
    let records = [
        begin(10, 1, 1, "parent", 1),
        begin(20, 1, 1, "child", 2),
        end(20, 1, 1, "child", 2),
        end(20, 1, 1, "parent", 1),
        begin(20, 1, 1, "next", 3),
        event(30, 1, 1, "at_end", &[]),
        end(30, 1, 1, "next", 3),
    ];
    let (_, slices) = decode(&encode(&Timeline::build(&records)));
    assert_eq!(
        summary(&slices),
        [
            "thread 1 thread1 | 0 parent 10..20 ",
            "thread 1 thread1 | 0 next 20..30 ",
            "thread 1 thread1 | 1 child 20..20 ",
            "thread 1 thread1 | 1 at_end 30..30 ",
        ]
    );
}

#[test]
fn names_are_interned_once_and_referred_to_after() {
    let records: Vec<_> = (0..10).map(|i| event(i, 1, 1, "same", &[("n", Value::Unsigned(i))])).collect();
    let (packets, slices) = decode(&encode(&Timeline::build(&records)));
    let interned: usize = packets.iter().filter_map(|p| p.interned_data.as_ref()).map(|d| d.event_names.len() + d.debug_annotation_names.len()).sum();
    assert_eq!(interned, 2);
    assert_eq!(slices.len(), 10);
}

#[test]
fn an_empty_recording_is_a_valid_trace() {
    let (packets, slices) = decode(&encode(&Timeline::build(&[])));
    assert_eq!(packets.len(), 1);
    assert!(slices.is_empty());
}

#[test]
fn the_file_is_written_whole() {
    let path = std::env::temp_dir().join(format!("usertrace-perfetto-test-{}.pftrace", std::process::id()));
    let timeline = Timeline::build(&mixed());
    write_file(&path, &timeline).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), encode(&timeline));
    std::fs::remove_file(path).unwrap();
}

/// A directory of its own for each call (tests run in parallel).
fn scratch() -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("usertrace-perfetto-stream-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `records` written as a stream, a packet at a time, its items sorted
/// through files of `budget` bytes.
fn streamed(records: &[Record], budget: usize) -> Vec<u8> {
    let dir = scratch();
    let mut stream = TimelineStream::with_budget(dir.clone(), budget);
    for r in records {
        stream.push(r).unwrap();
    }
    let mut out = Vec::new();
    write(stream.finish().unwrap(), &mut out).unwrap();
    std::fs::remove_dir_all(dir).unwrap();
    out
}

#[test]
fn a_streamed_trace_decodes_into_the_tracks_and_slices_of_the_built_one() {
    for records in [mixed(), busy(40)] {
        let (built_packets, built) = decode(&encode(&Timeline::build(&records)));
        for budget in [usize::MAX, 300] {
            let (packets, slices) = decode(&streamed(&records, budget));
            assert_eq!(summary(&slices), summary(&built), "budget {budget}");
            let descriptors = |packets: &[TracePacket]| {
                let mut d: Vec<String> = packets
                    .iter()
                    .filter_map(|p| match &p.data {
                        Some(trace_packet::Data::TrackDescriptor(d)) => Some(format!("{:?} {:?} {:?}", d.process, d.thread, d.static_or_dynamic_name)),
                        _ => None,
                    })
                    .collect();
                d.sort();
                d
            };
            assert_eq!(descriptors(&packets), descriptors(&built_packets));
        }
    }
}

#[test]
fn a_span_unfinished_at_the_end_of_a_stream_is_a_slice_to_the_last_record() {
    let records = [begin(10, 1, 1, "serve", 1), event(15, 1, 1, "tick", &[]), event(40, 2, 2, "elsewhere", &[])];
    let (_, slices) = decode(&streamed(&records, 0));
    assert_eq!(
        summary(&slices),
        ["thread 1 thread1 | 0 serve 10..40 unfinished=srecording ended", "thread 1 thread1 | 1 tick 15..15 ", "thread 2 thread2 | 0 elsewhere 40..40 "]
    );
}

#[test]
fn a_streamed_trace_is_a_sequence_of_packets_each_whole() {
    // What a reader of a growing file sees: each `Trace.packet` decodes
    // on its own, so the trace is the packets one after another.
    let bytes = streamed(&mixed(), 0);
    let mut rest = bytes.as_slice();
    let mut packets = Vec::new();
    while !rest.is_empty() {
        assert_eq!(rest[0], 0x0a, "field 1, length-delimited");
        rest = &rest[1..];
        packets.push(TracePacket::decode_length_delimited(&mut rest).expect("a whole packet"));
    }
    assert_eq!(packets, Trace::decode(bytes.as_slice()).unwrap().packet);
}

#[test]
fn an_events_stack_is_its_track_events_callstack_outermost_first_built_or_streamed() {
    let records = vec![
        with_stack(begin(10, 1, 1, "req", 7), stack()),
        end(20, 1, 1, "req", 7),
        with_stack(event(15, 1, 1, "hit", &[("n", crate::record::Value::Unsigned(1))]), stack()),
        event(16, 1, 1, "plain", &[]),
    ];
    /// A frame as decoded: function, source file, line.
    type Frame = (String, Option<String>, Option<u32>);
    let want: Vec<Frame> = vec![
        ("main".into(), Some("app.c".into()), Some(9)),
        ("0x7f0000001234".into(), None, None),
        ("inner".into(), Some("app.c".into()), Some(3)),
    ];
    for bytes in [encode(&Timeline::build(&records)), streamed(&records, 1 << 20), streamed(&records, 64)] {
        let trace = Trace::decode(&bytes[..]).unwrap();
        let stacks: Vec<_> = trace
            .packet
            .iter()
            .filter_map(|p| match &p.data {
                Some(trace_packet::Data::TrackEvent(e)) => Some((p.timestamp(), e.callstack_field.clone())),
                _ => None,
            })
            .collect();
        let frames = |t: u64| -> Option<Vec<Frame>> {
            let (_, field) = stacks.iter().find(|(time, _)| *time == t)?;
            match field {
                Some(track_event::CallstackField::Callstack(c)) => {
                    Some(c.frames.iter().map(|f| (f.function_name().to_owned(), f.source_file.clone(), f.line_number)).collect())
                }
                _ => None,
            }
        };
        assert_eq!(frames(10).as_ref(), Some(&want), "the span's begin");
        assert_eq!(frames(15).as_ref(), Some(&want), "the instant");
        assert_eq!(frames(16), None, "an event without a stack has none");
        assert_eq!(frames(20), None, "nor has a span's end");
    }
}

#[test]
fn a_span_s_child_in_another_process_is_joined_to_it_by_a_flow() {
    const TRACE: u128 = 0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736;
    let records = [
        traced_begin(10, 1, 1, "front_request", 0xa, (TRACE, 0), &[]),
        traced_begin(20, 2, 2, "back_handle", 0xb, (TRACE, 0xa), &[]),
        // In the child's own process: it nests there, no arrow.
        traced_begin(25, 2, 2, "back_query", 0xc, (TRACE, 0xb), &[]),
        end(30, 2, 2, "back_span_end", 0xc),
        end(40, 2, 2, "back_span_end", 0xb),
        // Begun by id, saying nothing of its trace: no flow.
        begin(45, 1, 1, "front_log", 0xd),
        end(46, 1, 1, "front_span_end", 0xd),
        end(50, 1, 1, "front_span_end", 0xa),
        // A span naming a parent that has ended: no arrow to a closed slice.
        traced_begin(60, 3, 3, "late_work", 0xe, (TRACE, 0xa), &[]),
        end(70, 3, 3, "late_span_end", 0xe),
    ];
    let bytes = streamed(&records, usize::MAX);
    let (packets, _) = decode(&bytes);
    let flows: Vec<(u64, Vec<u64>, Vec<u64>)> = packets
        .iter()
        .filter_map(|p| match &p.data {
            Some(trace_packet::Data::TrackEvent(e)) if e.r#type() == track_event::Type::SliceBegin => {
                Some((p.timestamp(), e.flow_ids.clone(), e.terminating_flow_ids.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        flows,
        [
            (10, vec![0xa], vec![]),
            (20, vec![0xb], vec![0xa]),
            (25, vec![0xc], vec![]),
            (45, vec![], vec![]),
            (60, vec![0xe], vec![]),
        ]
    );
}

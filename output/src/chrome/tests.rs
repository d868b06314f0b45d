use serde_json::Value as Json;

use super::*;
use crate::record::Record;
use crate::test_records::*;
use crate::timeline::busy_recording::busy;
use crate::timeline::TimelineStream;

fn events(timeline: &Timeline) -> Vec<Json> {
    let bytes = encode(timeline);
    let v: Json = serde_json::from_slice(&bytes).expect("valid JSON");
    assert_eq!(v["displayTimeUnit"], "ns");
    v["traceEvents"].as_array().unwrap().clone()
}

#[test]
fn the_mixed_recording_has_metadata_slices_async_pairs_and_instants() {
    let events = events(&Timeline::build(&mixed()));
    let of = |ph: &str| events.iter().filter(|e| e["ph"] == ph).cloned().collect::<Vec<_>>();
    let names: Vec<_> = of("M").iter().map(|e| format!("{} {} {}", e["name"], e["tid"], e["args"]["name"])).collect();
    assert_eq!(
        names,
        [
            "\"process_name\" 10 \"server\"",
            "\"process_name\" 20 \"proc20\"",
            "\"thread_name\" 10 \"thread10\"",
            "\"thread_name\" 11 \"thread11\"",
            "\"thread_name\" 21 \"thread21\"",
            "\"process_name\" 0 \"usertrace: lost events\""
        ]
    );
    let x = of("X");
    let request = x.iter().find(|e| e["name"] == "request").unwrap();
    assert_eq!((request["ts"].as_f64(), request["dur"].as_f64(), &request["cat"]), (Some(0.010), Some(0.050), &Json::from("span")));
    let work = x.iter().find(|e| e["name"] == "work").unwrap();
    assert_eq!(work["args"]["unfinished"], "process exited");
    // Every b has its e, with the same id, name and cat.
    let (b, e) = (of("b"), of("e"));
    assert_eq!(b.len(), 2);
    for begin in &b {
        let end = e.iter().find(|e| e["id"] == begin["id"]).expect("an e for each b");
        assert_eq!((&end["name"], &end["cat"]), (&begin["name"], &begin["cat"]));
        assert!(end["ts"].as_f64() >= begin["ts"].as_f64());
    }
    let gc = b.iter().find(|e| e["name"] == "gc").unwrap();
    assert_eq!(gc["args"]["heap"], 1.5);
    let note = of("i").into_iter().find(|e| e["name"] == "note").unwrap();
    assert_eq!((&note["s"], &note["args"]["i"], &note["args"]["b"]), (&Json::from("t"), &Json::from(-5), &Json::from(true)));
    assert_eq!(note["args"]["u"].as_u64(), Some(u64::MAX));
    let lost = of("i").into_iter().find(|e| e["s"] == "g").unwrap();
    assert_eq!(lost["name"], "lost 12 events on cpu 1");
}

#[test]
fn times_are_microseconds_that_keep_every_nanosecond() {
    let t = Timeline::build(&[begin(12_345_678_901, 1, 1, "s", 1), end(12_345_679_903, 1, 1, "s", 1)]);
    let text = String::from_utf8(encode(&t)).unwrap();
    assert!(text.contains("\"ts\":12345678.901,\"dur\":1.002"), "{text}");
}

#[test]
fn strings_are_escaped_and_non_finite_floats_are_strings() {
    let t = Timeline::build(&[event(1, 1, 1, "q\"uote\n", &[("nan", Value::F64(f64::NAN)), ("bytes", Value::Bytes(vec![1, 0xab]))])]);
    let events = events(&t);
    let i = events.iter().find(|e| e["ph"] == "i").unwrap();
    assert_eq!((&i["name"], &i["args"]["nan"], &i["args"]["bytes"]), (&Json::from("q\"uote\n"), &Json::from("NaN"), &Json::from("01ab")));
}

/// `records` written as a stream, its items sorted through files of
/// `budget` bytes.
fn streamed(records: &[Record], budget: usize) -> Vec<u8> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("usertrace-chrome-stream-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut stream = TimelineStream::with_budget(dir.clone(), budget);
    for r in records {
        stream.push(r).unwrap();
    }
    let mut out = Vec::new();
    write(stream.finish().unwrap(), &mut out).unwrap();
    std::fs::remove_dir_all(dir).unwrap();
    out
}

/// The events of a trace without their async ids (each `b` checked to
/// have one `e` of the same id, name and cat after it), sorted.
fn without_ids(bytes: &[u8]) -> Vec<String> {
    let v: Json = serde_json::from_slice(bytes).expect("valid JSON");
    let mut events = v["traceEvents"].as_array().unwrap().clone();
    let mut open = std::collections::HashMap::new();
    for e in &mut events {
        if let Some(Json::String(id)) = e.as_object_mut().unwrap().remove("id") {
            let what = (e["name"].clone(), e["cat"].clone());
            match e["ph"].as_str() {
                Some("b") => assert!(open.insert(id, what).is_none()),
                Some("e") => assert_eq!(open.remove(&id), Some(what)),
                other => panic!("an id on {other:?}"),
            }
        }
    }
    assert!(open.is_empty(), "b without e: {open:?}");
    let mut events: Vec<String> = events.iter().map(Json::to_string).collect();
    events.sort();
    events
}

#[test]
fn a_streamed_trace_holds_the_events_of_the_built_one_in_time_order() {
    for records in [mixed(), busy(40)] {
        let built = without_ids(&encode(&Timeline::build(&records)));
        for budget in [usize::MAX, 300] {
            let bytes = streamed(&records, budget);
            assert_eq!(without_ids(&bytes), built, "budget {budget}");
            let v: Json = serde_json::from_slice(&bytes).unwrap();
            let events = v["traceEvents"].as_array().unwrap();
            let metadata = events.iter().take_while(|e| e["ph"] == "M").count();
            assert!(events[metadata..].iter().all(|e| e["ph"] != "M"), "the names come first");
            let times: Vec<f64> = events[metadata..].iter().map(|e| e["ts"].as_f64().unwrap()).collect();
            assert!(times.windows(2).all(|w| w[0] <= w[1]), "in time order");
        }
    }
}

#[test]
fn a_span_unfinished_at_the_end_of_a_stream_lasts_to_the_last_record() {
    let events: Json = serde_json::from_slice(&streamed(&[begin(10_000, 1, 1, "serve", 1), event(40_000, 2, 2, "tick", &[])], 0)).unwrap();
    let serve = events["traceEvents"].as_array().unwrap().iter().find(|e| e["name"] == "serve").unwrap().clone();
    assert_eq!((&serve["ph"], serve["dur"].as_f64(), &serve["args"]["unfinished"]), (&Json::from("X"), Some(30.0), &Json::from("recording ended")));
}

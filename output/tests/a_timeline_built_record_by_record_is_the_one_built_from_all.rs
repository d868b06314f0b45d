//! `TimelineBuilder` takes records one at a time, as `convert` reads them,
//! and lays out the same timeline as `Timeline::build` of the whole slice;
//! `without_instants` (for the report) keeps the same spans, processes,
//! losses and orphan ends, and no instants.

use usertrace_output::jsonl::Reader;
use usertrace_output::timeline::TimelineBuilder;
use usertrace_output::{Record, Timeline};

const RECORDING: &str = r#"{"type":"clock","time_ns":1,"unix_ns":1700000000000000000}
{"type":"process","time_ns":2,"pid":5,"executable":"/bin/app","command_line":["app","-v"]}
{"type":"event","time_ns":10,"cpu":0,"pid":5,"tid":5,"comm":"app","process":"app","event":"req","fields":{"span_begin":1,"path":"/a"}}
{"type":"event","time_ns":12,"cpu":0,"pid":5,"tid":5,"comm":"app","process":"app","event":"db","fields":{"span_begin":2}}
{"type":"event","time_ns":13,"cpu":1,"pid":5,"tid":6,"comm":"worker","process":"app","event":"tick","fields":{"n":1}}
{"type":"event","time_ns":14,"cpu":0,"pid":5,"tid":5,"comm":"app","process":"app","event":"db","fields":{"span_end":2}}
{"type":"event","time_ns":15,"cpu":1,"pid":5,"tid":6,"comm":"worker","process":"app","event":"handoff","fields":{"span_end":1,"status":200}}
{"type":"event","time_ns":16,"cpu":1,"pid":5,"tid":6,"comm":"worker","process":"app","event":"stray","fields":{"span_end":9}}
{"type":"event","time_ns":17,"cpu":1,"pid":5,"tid":6,"comm":"worker","process":"app","event":"gc","fields":{"span_start_ns":3,"span_duration_ns":4}}
{"type":"lost","time_ns":18,"cpu":1,"count":3}
{"type":"event","time_ns":19,"cpu":0,"pid":7,"tid":8,"comm":"other","process":"other","event":"work","fields":{"span_begin":4}}
{"type":"exit","time_ns":20,"pid":7,"tid":8}
{"type":"event","time_ns":21,"cpu":0,"pid":9,"tid":9,"comm":"late","process":"late","event":"open","fields":{"span_begin":5}}
"#;

fn records() -> Vec<Record> {
    Reader::new(RECORDING.as_bytes()).collect::<Result<_, _>>().unwrap()
}

#[test]
fn record_by_record_gives_the_same_timeline() {
    let records = records();
    let whole = Timeline::build(&records);
    let mut builder = TimelineBuilder::new();
    for record in &records {
        builder.push(record);
    }
    let streamed = builder.finish();
    assert_eq!(streamed, whole);
    // What the recording holds is all there.
    assert_eq!((whole.spans.len(), whole.instants.len(), whole.orphan_ends, whole.lost.len()), (5, 2, 1, 1), "{whole:#?}");
    assert_eq!((whole.start_ns, whole.end_ns), (1, 21));
}

#[test]
fn without_instants_keeps_everything_else() {
    let records = records();
    let whole = Timeline::build(&records);
    let mut builder = TimelineBuilder::without_instants();
    for record in &records {
        builder.push(record);
    }
    let lean = builder.finish();
    assert!(lean.instants.is_empty());
    assert_eq!(lean, Timeline { instants: Vec::new(), ..whole });
}

#[test]
fn an_empty_builder_is_an_empty_timeline() {
    assert_eq!(TimelineBuilder::new().finish(), Timeline::build(&[]));
}

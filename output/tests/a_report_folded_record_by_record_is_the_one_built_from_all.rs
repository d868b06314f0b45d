//! `ReportBuilder` folds records one at a time, as `usertrace report` reads
//! them, keeping a duration per finished span rather than the span, and
//! gives the very report `Report::new` makes from the whole slice: the same
//! figures, text and JSON, for nested, async, completed, unfinished (by a
//! thread's exit, its process's, a reused id and the recording's end) and
//! unmatched spans, and both kinds of loss.

use usertrace_output::jsonl::Reader;
use usertrace_output::report::ReportBuilder;
use usertrace_output::{Record, Report};

const RECORDING: &str = r#"{"type":"clock","time_ns":1,"unix_ns":1700000000000000000}
{"type":"process","time_ns":2,"pid":5,"executable":"/bin/app","command_line":["app","-v"]}
{"type":"event","time_ns":10,"cpu":0,"pid":5,"tid":5,"comm":"app","process":"app","event":"req","fields":{"span_begin":1,"path":"/a"}}
{"type":"event","time_ns":12,"cpu":0,"pid":5,"tid":5,"comm":"app","process":"app","event":"db","fields":{"span_begin":2,"sql":"select 1"}}
{"type":"event","time_ns":13,"cpu":1,"pid":5,"tid":6,"comm":"worker","process":"app","event":"tick","fields":{"n":1}}
{"type":"event","time_ns":14,"cpu":0,"pid":5,"tid":5,"comm":"app","process":"app","event":"db","fields":{"span_end":2,"rows":3}}
{"type":"event","time_ns":15,"cpu":1,"pid":5,"tid":6,"comm":"worker","process":"app","event":"handoff","fields":{"span_end":1,"status":200}}
{"type":"event","time_ns":16,"cpu":1,"pid":5,"tid":6,"comm":"worker","process":"app","event":"stray","fields":{"span_end":9}}
{"type":"event","time_ns":17,"cpu":1,"pid":5,"tid":6,"comm":"worker","process":"app","event":"gc","fields":{"span_start_ns":3,"span_duration_ns":4}}
{"type":"lost","time_ns":18,"cpu":1,"count":3}
{"type":"lost","time_ns":18,"cpu":0,"count":2,"sideband":true}
{"type":"event","time_ns":19,"cpu":0,"pid":7,"tid":8,"comm":"other","process":"other","event":"work","fields":{"span_begin":4}}
{"type":"event","time_ns":19,"cpu":0,"pid":7,"tid":9,"comm":"other","process":"other","event":"work","fields":{"span_begin":5}}
{"type":"exit","time_ns":20,"pid":7,"tid":9}
{"type":"exit","time_ns":21,"pid":7,"tid":7}
{"type":"event","time_ns":22,"cpu":0,"pid":5,"tid":5,"comm":"app","process":"app","event":"db","fields":{"span_begin":6}}
{"type":"event","time_ns":23,"cpu":0,"pid":5,"tid":5,"comm":"app","process":"app","event":"db","fields":{"span_begin":6}}
{"type":"event","time_ns":30,"cpu":0,"pid":5,"tid":5,"comm":"app","process":"app","event":"db","fields":{"span_end":6}}
{"type":"lost","time_ns":31,"cpu":1,"count":4}
{"type":"event","time_ns":32,"cpu":0,"pid":9,"tid":9,"comm":"late","process":"late","event":"open","fields":{"span_begin":7}}
{"type":"event","time_ns":40,"cpu":0,"pid":9,"tid":10,"comm":"late","process":"late","event":"db","fields":{"span_begin":8}}
{"type":"event","time_ns":45,"cpu":0,"pid":9,"tid":10,"comm":"late","process":"late","event":"db","fields":{"span_end":8}}
"#;

fn records() -> Vec<Record> {
    Reader::new(RECORDING.as_bytes()).collect::<Result<_, _>>().unwrap()
}

fn folded(records: &[Record]) -> Report {
    let mut builder = ReportBuilder::new();
    for record in records {
        builder.push(record);
    }
    builder.finish()
}

#[test]
fn record_by_record_gives_the_same_report() {
    let records = records();
    let whole = Report::new(&records);
    let streamed = folded(&records);
    assert_eq!(streamed, whole);
    assert_eq!(streamed.to_string(), whole.to_string());
    assert_eq!(serde_json::to_string(&streamed).unwrap(), serde_json::to_string(&whole).unwrap());
    // What the recording holds is all there.
    let spans: Vec<_> = whole.spans.iter().map(|s| (s.name.as_str(), s.count, s.unfinished, s.max_ns)).collect();
    assert_eq!(spans, [("db", 3, 1, 7), ("gc", 1, 0, 4), ("open", 0, 1, 0), ("req", 1, 0, 5), ("work", 0, 2, 0)], "{whole:#?}");
    assert_eq!((whole.lost_events, whole.lost_task_records, whole.orphan_ends, whole.duration_ns), (7, 2, 1, 44));
    let processes: Vec<_> = whole.processes.iter().map(|p| (p.pid, p.name.as_str(), p.events, p.spans)).collect();
    assert_eq!(processes, [(5, "app", 10, 5), (7, "other", 2, 2), (9, "late", 3, 2)]);
}

#[test]
fn an_empty_builder_is_the_report_of_nothing() {
    assert_eq!(ReportBuilder::new().finish(), Report::new(&[]));
}

//! Arbitrary bytes as a JSON-lines recording, mapped to OTLP as `export`
//! maps a file (all at once) and as `record --otlp` maps a live session
//! (in batches, open spans carried between them): neither may panic, and
//! every request either makes must encode as protobuf that decodes back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prost::Message;
use usertrace_output::jsonl;
use usertrace_output::otlp::live::BatchMapper;
use usertrace_output::otlp::proto::collector::logs::v1::ExportLogsServiceRequest;
use usertrace_output::otlp::proto::collector::trace::v1::ExportTraceServiceRequest;
use usertrace_output::otlp::{map_records, Clock, Otlp, ResourceSettings};

fn encodes(otlp: &Otlp) {
    let traces = otlp.traces.encode_to_vec();
    ExportTraceServiceRequest::decode(&traces[..]).expect("the traces request decodes");
    let logs = otlp.logs.encode_to_vec();
    ExportLogsServiceRequest::decode(&logs[..]).expect("the logs request decodes");
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks the batch size and whether command lines are
    // left out; the rest is the recording.
    let Some((&knobs, text)) = data.split_first() else { return };
    let records: Vec<_> = jsonl::Reader::new(text).filter_map(Result::ok).collect();
    let resource = ResourceSettings {
        host_name: "fuzz".into(),
        attributes: vec![("deployment.environment".into(), "fuzz".into())],
        omit_command_line: knobs & 0x80 != 0,
        ..ResourceSettings::default()
    };
    let clock = Clock::of_recording(&records).unwrap_or(Clock { unix_minus_monotonic_ns: 0 });
    encodes(&map_records(&records, &resource, clock));

    let batch = usize::from(knobs & 0x7f).max(1);
    let mut mapper = BatchMapper::new(resource, clock);
    for chunk in records.chunks(batch) {
        encodes(&mapper.map_batch(chunk));
    }
    encodes(&mapper.finish());
});

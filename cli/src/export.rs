//! `usertrace export`: a recording (JSON lines or perf.data) uploaded to an OpenTelemetry
//! pipeline over OTLP/HTTP, with the mapping of `usertrace_output::otlp`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use usertrace_output::otlp::{Clock, Exporter};
use usertrace_output::{jsonl, Record};

use crate::otlp_args::OtlpArgs;
use crate::progress::Progress;
use crate::recording::{self, named};
use crate::sinks::{Otlp, Sinks};

/// The longest `--timeout`: a day. Longer is a typo, not a plan.
pub const MAX_TIMEOUT_SECS: u64 = 86_400;

/// Upload a recording (JSON lines or perf.data) to an OTLP endpoint (Jaeger, a Collector)
///
/// Spans become OTLP spans (ids derived from the recording, so uploading
/// twice gives the same ids), other events log records, and each process a
/// resource. Honours OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, _TIMEOUT,
/// _COMPRESSION, OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. Times are
/// converted to Unix time with the wall clock the recording kept at its
/// start, so it may be exported on any machine, at any time (a recording
/// without one, from an older usertrace, takes this machine's clocks now).
/// The file is read as it is sent, so memory stays bounded whatever its
/// size. Exits 0 only if the endpoint took every event; otherwise 1, with
/// a summary of what was taken, refused and never sent.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The recording to read: JSON lines (usertrace record -o FILE.jsonl;
    /// a dash for standard input) or perf.data (record -o FILE.data's
    /// archive, a flight recorder's dump, or perf record's own file)
    #[arg(value_name = "FILE")]
    pub input: PathBuf,

    #[command(flatten)]
    pub otlp: OtlpArgs,

    /// How long to wait for the endpoint, 1 to 86400 seconds: for room
    /// in the queue while reading, then for the rest to be sent (a
    /// collector that is down is retried until then)
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT_SECS))]
    pub timeout: u64,
}

pub fn run(args: &ExportArgs) -> ExitCode {
    let mut settings = match args.otlp.settings() {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("usertrace export: {e}");
            return ExitCode::from(2);
        }
    };
    let name = jsonl::input_name(&args.input);
    let progress = Progress::reading("usertrace export", &args.input);
    let mut reader = match recording::open(&args.input, &progress) {
        Ok(reader) => reader,
        Err(e) => {
            progress.finish();
            eprintln!("usertrace export: {}", named(&name, &e));
            return ExitCode::from(1);
        }
    };
    // The clock line comes first in a recording; what precedes the first
    // event is held until it is known whether there is one.
    let mut head: Vec<Record> = Vec::new();
    let mut read_error = None;
    for item in reader.by_ref() {
        match item {
            Ok(record) => {
                let event = matches!(record, Record::Event(_));
                head.push(record);
                if event {
                    break;
                }
            }
            Err(e) => {
                read_error = Some(e);
                break;
            }
        }
    }
    match Clock::of_recording(&head) {
        Some(clock) => settings.clock = clock,
        None if read_error.is_none() => progress.suspend(|| {
            eprintln!(
                "usertrace export: {name} kept no wall-clock reading (no \"clock\" line): its times are converted with this machine's clocks now, right only if it recorded them since it last booted"
            )
        }),
        None => {}
    }
    let exporter = match Exporter::start(settings) {
        Ok(exporter) => exporter,
        Err(e) => {
            progress.finish();
            eprintln!("usertrace export: cannot start the exporter thread: {e}");
            return ExitCode::from(1);
        }
    };
    // The queue is bounded: a full one makes reading wait, not drop. If
    // the endpoint takes nothing for the whole timeout, the rest of the
    // file is read only to count what was never sent.
    let mut sinks = Sinks::default();
    sinks.add(Otlp::from_file(exporter, &name, Duration::from_secs(args.timeout)));
    let rest = if read_error.is_some() { None } else { Some(reader) };
    for item in head.into_iter().map(Ok).chain(rest.into_iter().flatten()) {
        match item {
            Ok(record) => sinks.push(&record),
            Err(e) => {
                read_error = Some(e);
                break;
            }
        }
    }
    progress.finish();
    let completed = sinks.finish(|line| eprintln!("usertrace export: {line}"));
    if let Some(e) = read_error {
        // What came before the bad line was sent (and counted above).
        eprintln!("usertrace export: {}; nothing after it was read", named(&name, &e));
        return ExitCode::from(1);
    }
    if completed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

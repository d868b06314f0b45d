//! `usertrace export`: a JSON-lines recording uploaded to an OpenTelemetry
//! pipeline over OTLP/HTTP, with the mapping of `usertrace_output::otlp`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use usertrace_output::otlp::{Clock, Exporter, QueueLimits};
use usertrace_output::jsonl;

use crate::otlp_args::OtlpArgs;

/// Upload a JSON-lines recording to an OTLP endpoint (Jaeger, a Collector)
///
/// Spans become OTLP spans (ids derived from the recording, so uploading
/// twice gives the same ids), other events log records, and each process a
/// resource. Honours OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, _TIMEOUT,
/// _COMPRESSION, OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. Times are
/// converted to Unix time with the wall clock the recording kept at its
/// start, so it may be exported on any machine, at any time (a recording
/// without one, from an older usertrace, takes this machine's clocks now).
/// Exits 1 if any event could not be delivered within --timeout.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The JSON-lines recording to read (usertrace record -o FILE.jsonl)
    #[arg(value_name = "FILE")]
    pub input: PathBuf,

    #[command(flatten)]
    pub otlp: OtlpArgs,

    /// Give up on what is not delivered after this many seconds (a
    /// collector that is down is retried until then)
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
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
    let records = match jsonl::read_file(&args.input) {
        Ok(records) => records,
        Err(e) => {
            eprintln!("usertrace export: {}: {e}", args.input.display());
            return ExitCode::from(1);
        }
    };
    match Clock::of_recording(&records) {
        Some(clock) => settings.clock = clock,
        None => eprintln!(
            "usertrace export: {} kept no wall-clock reading (no \"clock\" line): its times are converted with this machine's clocks now, right only if it recorded them since it last booted",
            args.input.display()
        ),
    }
    // The recording is in memory already, so the queue may hold all of it:
    // nothing is dropped for want of room, only for want of a collector.
    settings.limits = QueueLimits { memory_cap_bytes: usize::MAX, ..settings.limits };
    let exporter = match Exporter::start(settings) {
        Ok(exporter) => exporter,
        Err(e) => {
            eprintln!("usertrace export: cannot start the exporter thread: {e}");
            return ExitCode::from(1);
        }
    };
    for record in records {
        exporter.push(record);
    }
    let summary = exporter.finish(Duration::from_secs(args.timeout));
    eprintln!("usertrace export: {summary}");
    if summary.exported_events == summary.recorded_events {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

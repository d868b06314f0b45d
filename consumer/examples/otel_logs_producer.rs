//! A producer nobody here wrote the encoder of: one log record through the
//! OpenTelemetry SDK and its user_events exporter
//! (`opentelemetry-user-events-logs`), which writes EventHeader events in
//! Microsoft's Common Schema layout, for the consumer's guest-kernel tests.
//!
//! Registers the provider `UsertraceOtel` (tracepoints `UsertraceOtel_L1K1`
//! to `_L5K1`), prints `ready <pid>`, and as soon as a recorder enables the
//! Error level (within 60 s) logs `Checkout`: severity Error, body
//! "payment declined", attributes user_id 42, amount 12.5, ok false, at
//! 2023-11-14T22:13:20Z. Exit status 0, or 2 if nobody enabled it in time.

use std::io::Write;
use std::time::{Duration, Instant, SystemTime};

use opentelemetry::logs::{LogRecord, Logger, LoggerProvider, Severity};
use opentelemetry_sdk::logs::SdkLoggerProvider;
use opentelemetry_user_events_logs::Processor;

fn main() {
    let processor = Processor::builder("UsertraceOtel").build().expect("the user_events processor");
    let provider = SdkLoggerProvider::builder().with_log_processor(processor).build();
    let logger = provider.logger("usertrace-test");
    println!("ready {}", std::process::id());
    std::io::stdout().flush().unwrap();

    let deadline = Instant::now() + Duration::from_secs(60);
    while !logger.event_enabled(Severity::Error, "usertrace-test", Some("Checkout")) {
        if Instant::now() > deadline {
            eprintln!("otel_logs_producer: nobody enabled UsertraceOtel_L2K1 in 60 s");
            std::process::exit(2);
        }
        std::thread::sleep(Duration::from_millis(5));
    }

    let mut record = logger.create_log_record();
    record.set_event_name("Checkout");
    record.set_timestamp(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000));
    record.set_severity_number(Severity::Error);
    record.set_severity_text("ERROR");
    record.set_body("payment declined".into());
    record.add_attribute("user_id", 42i64);
    record.add_attribute("amount", 12.5f64);
    record.add_attribute("ok", false);
    logger.emit(record);
    provider.shutdown().expect("logger provider shutdown");
}

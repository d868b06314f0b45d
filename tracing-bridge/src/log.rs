//! A [`log`] backend: each record is one event `<provider>_log`
//! with three string fields, `level` (`ERROR`, `WARN`, `INFO`, `DEBUG`,
//! `TRACE`), `target` and `message` (the record's arguments, formatted).
//!
//! ```
//! // Every record of every level goes to the logger, which writes it only
//! // while a tracer listens to `<provider>_log`.
//! let _ = usertrace_tracing::log::init();
//! log::info!(target: "db", "connected to {}", "primary");
//! ```
//!
//! While nobody listens, a record costs what `log`'s macros do to reach a
//! logger, and one load: the arguments are not formatted. Text is written
//! as the [`tracing` layer](crate) writes it: a NUL as `\0`, cut to fit
//! what perf records. The tracepoint is registered by [`Logger::new`];
//! when a recorder that launched the program asked for it, registration
//! waits (at most 5 s) for the recorder to attach, so the first records
//! are kept.

use std::fmt::Write as _;

use ::log::{LevelFilter, Log, Metadata, Record, SetLoggerError};
use usertrace::{DynamicTracepoint, ErrorKind, Field, FieldType, Provider, Value};

use crate::record::Scratch;
use usertrace::fit_payload;

/// The event (under the provider) that each record is written as.
pub const LOG_EVENT: &str = "log";

/// The fields of `<provider>_log`.
pub static LOG_FIELDS: [Field; 3] =
    [Field::new("level", FieldType::Str), Field::new("target", FieldType::Str), Field::new("message", FieldType::Str)];

/// Writes `log` records as `<provider>_log` events.
#[derive(Debug)]
pub struct Logger {
    tp: DynamicTracepoint,
}

impl Logger {
    /// A logger writing `<provider>_log`, registered now. Without
    /// user_events (or the right to use them) it stays disabled, as every
    /// tracepoint does; another error is said once on stderr, and the
    /// logger stays disabled too.
    pub fn new(provider: &Provider) -> Logger {
        let tp = provider.define(LOG_EVENT, LOG_FIELDS.to_vec()).expect("a valid provider and fixed fields");
        if let Err(e) = tp.register() {
            if !matches!(e.kind(), ErrorKind::Unavailable | ErrorKind::PermissionDenied) {
                eprintln!("usertrace-tracing: {}: {e}; log records are not written", tp.name());
            }
        }
        Logger { tp }
    }

    /// The tracepoint records are written on.
    pub fn tracepoint(&self) -> &DynamicTracepoint {
        &self.tp
    }
}

impl Log for Logger {
    #[inline]
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        self.tp.enabled()
    }

    fn log(&self, record: &Record<'_>) {
        if !self.tp.enabled() {
            return;
        }
        Scratch::with(|scratch| {
            let target = scratch.push_text(|w| w.write_str(record.target()));
            let message = match record.args().as_str() {
                Some(text) => scratch.push_text(|w| w.write_str(text)),
                None => scratch.push_text(|w| w.write_fmt(*record.args())),
            };
            let mut values = [Value::Str(record.level().as_str()), Value::Str(scratch.text(target)), Value::Str(scratch.text(message))];
            fit_payload(&mut values, 3 * FieldType::Str.fixed_size());
            // A failed write (the tracer went away) cannot be told to the program.
            let _ = self.tp.emit(&values);
        });
    }

    fn flush(&self) {}
}

/// Makes a [`Logger`] for the [default provider](crate::default_provider)
/// the `log` crate's logger, for every level. Fails if a logger is set.
pub fn init() -> Result<(), SetLoggerError> {
    let provider = Provider::new(crate::default_provider()).expect("the default provider name is valid");
    init_with(Logger::new(&provider), LevelFilter::Trace)
}

/// Makes `logger` the `log` crate's logger, passing records up to `max_level`.
pub fn init_with(logger: Logger, max_level: LevelFilter) -> Result<(), SetLoggerError> {
    ::log::set_boxed_logger(Box::new(logger))?;
    ::log::set_max_level(max_level);
    Ok(())
}

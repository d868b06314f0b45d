//! While nobody listens, a callsite's values are visited once, by its
//! first record (which registers its tracepoints with their types), and
//! never after: the enable check stops each later record before its
//! fields. The same holds for `log` records, whose arguments are not
//! formatted.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};

use tracing_subscriber::prelude::*;

static SHOWN: AtomicUsize = AtomicUsize::new(0);

struct Counted;

impl fmt::Debug for Counted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        SHOWN.fetch_add(1, Ordering::Relaxed);
        f.write_str("counted")
    }
}

impl fmt::Display for Counted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[test]
fn later_records_are_stopped_before_their_fields() {
    // Nobody can listen to a tracepoint this process just named.
    let provider = usertrace::Provider::new(format!("ut_quiet_{}", std::process::id())).unwrap();
    let logger = usertrace_tracing::log::Logger::new(&provider);
    assert!(!logger.tracepoint().enabled());
    usertrace_tracing::log::init_with(logger, log::LevelFilter::Trace).unwrap();
    tracing_subscriber::registry().with(usertrace_tracing::layer_for(provider)).init();

    for _ in 0..1000 {
        tracing::info!(value = ?Counted, "event");
        let _span = tracing::info_span!("quiet", value = ?Counted).entered();
    }
    assert_eq!(SHOWN.load(Ordering::Relaxed), 2, "the event's and the span's first records, and no more");

    SHOWN.store(0, Ordering::Relaxed);
    for _ in 0..1000 {
        log::info!("{}", Counted);
    }
    assert_eq!(SHOWN.load(Ordering::Relaxed), 0, "log's arguments are formatted only for a listener");
}

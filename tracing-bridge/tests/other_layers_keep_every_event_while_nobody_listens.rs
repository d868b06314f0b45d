//! The usertrace layer filters for itself only: while nobody listens to
//! its tracepoints, a `fmt` layer beside it still gets every event and
//! span, and the layer takes another filter on top of its own.

use std::io::Write;
use std::sync::{Arc, Mutex};

use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::prelude::*;

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_fmt_layer_beside_it_gets_every_event() {
    let buffer = Buffer::default();
    let out = buffer.clone();
    let fmt = tracing_subscriber::fmt::layer().with_writer(move || out.clone()).with_ansi(false).without_time();
    let provider = usertrace::Provider::new("ut_beside").unwrap();
    let subscriber = tracing_subscriber::registry()
        .with(fmt)
        .with(usertrace_tracing::layer_for(provider).with_filter(LevelFilter::INFO));
    tracing::subscriber::with_default(subscriber, || {
        for i in 0..3u64 {
            let span = tracing::info_span!("work", i);
            let _entered = span.enter();
            tracing::info!(answer = 42u64, "hello {i}");
            tracing::debug!("below the usertrace layer's level");
        }
    });
    let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    for i in 0..3 {
        assert!(text.contains(&format!("work{{i={i}}}")) && text.contains(&format!("hello {i} answer=42")), "{text}");
    }
    assert_eq!(text.matches("below the usertrace layer's level").count(), 3, "{text}");
}

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use super::*;

fn ready<T>(future: impl Future<Output = T>) -> T {
    match pin!(future).as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("an export waited"),
    }
}

fn exporter(test: &str) -> UsertraceLogExporter {
    UsertraceLogExporter::new(&format!("utotellog{}_{test}", std::process::id())).expect("the events register (through shared memory here)")
}

#[test]
fn while_nobody_listens_no_record_is_built_and_a_batch_succeeds() {
    let exporter = exporter("idle");
    assert!(!exporter.event_enabled(Severity::Error, "app", None));
    assert!(ready(exporter.export(LogBatch::new(&[]))).is_ok());
    assert_eq!(exporter.dropped(), 0);
}

#[test]
fn exports_after_shutdown_fail() {
    let exporter = exporter("shutdown");
    assert!(exporter.shutdown().is_ok());
    assert!(matches!(ready(exporter.export(LogBatch::new(&[]))), Err(OTelSdkError::AlreadyShutdown)));
}

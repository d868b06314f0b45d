//! One batch's writes, for both exporters: each item is written; the ones
//! that fail are counted as dropped, and the batch fails naming how many
//! and the last reason. No item stops the others.

use std::fmt::Display;
use std::sync::atomic::{AtomicU64, Ordering};

use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};

/// Writes every item of a batch with `write`; `what` names the items in
/// the error ("spans", "log records"); failures are added to `dropped`.
pub(crate) fn write_all<T, E: Display>(
    items: impl IntoIterator<Item = T>,
    what: &str,
    dropped: &AtomicU64,
    mut write: impl FnMut(T) -> Result<(), E>,
) -> OTelSdkResult {
    let mut failed = 0u64;
    let mut last_error = None;
    for item in items {
        if let Err(e) = write(item) {
            failed += 1;
            last_error = Some(e);
        }
    }
    dropped.fetch_add(failed, Ordering::Relaxed);
    match last_error {
        None => Ok(()),
        Some(e) => Err(OTelSdkError::InternalFailure(format!("usertrace: {failed} {what} of the batch were not written, the last because: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_is_tried_and_the_failures_are_counted_and_named() {
        let dropped = AtomicU64::new(1);
        let result = write_all([1, 2, 3, 4], "spans", &dropped, |n| if n % 2 == 0 { Err(format!("no room for {n}")) } else { Ok(()) });
        let Err(OTelSdkError::InternalFailure(message)) = result else { panic!("{result:?}") };
        assert_eq!(message, "usertrace: 2 spans of the batch were not written, the last because: no room for 4");
        assert_eq!(dropped.load(Ordering::Relaxed), 3);
        assert!(write_all([1], "log records", &dropped, |_| Ok::<(), String>(())).is_ok());
        assert_eq!(dropped.load(Ordering::Relaxed), 3);
    }
}

//! An OpenTelemetry SDK's Resource: the one place that defines how the
//! `service.name` and other attributes a process's SDK was built with
//! travel to the recorder, beside its spans and log records
//! ([`otel_span`](super::otel_span)).
//!
//! | event | fields |
//! |-------|--------|
//! | `<provider>_otel_resource` | `service_name` (string: the resource's `service.name`, readable for `perf script` and the timelines), `otlp_resource` (bytes: the OTLP protobuf `opentelemetry.proto.resource.v1.Resource`) |
//!
//! # When it is written
//!
//! An event written while no recorder listens is lost, and a recorder may
//! attach at any moment, so "once per process" has to mean "before the
//! first span a recorder sees". The exporters therefore call
//! [`OtelResourceTracepoint::emit`] at the start of each export call that
//! writes spans or log records; it writes the resource only if a recorder
//! listens and the same bytes were not written in the last
//! [`REPEAT_AFTER`] (one second). A recorder that attaches while no other
//! listens sees the resource before the first span of the process (the
//! last write, if any, went nowhere and does not count: only writes made
//! while enabled are remembered, and a disabled check forgets them). One
//! that attaches while another recorder already listens may see up to a
//! second of spans first; the recorder resolves a process's resource per
//! batch it sends, so those spans go out under the resource the recorder
//! read from the process's environment.
//!
//! A fork child is a process of its own: it writes its resource at its
//! first export, whatever its parent wrote.
//!
//! The cost in steady state, per export call: one load (enabled), a
//! mutex, a comparison of the resource's bytes with the last written
//! (the bindings serialize a Resource once and keep the bytes), and a
//! clock read; one small event per second while recorded.
//!
//! The resource rides in one event: at most [`MAX_RESOURCE_LEN`] bytes of
//! protobuf, else the emit fails with [`Error::PayloadTooLarge`] and the
//! recorder names the process from its environment.

#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex};

use super::field::{Field, FieldType};
use super::provider::Provider;
use super::value::Value;
use super::DynamicTracepoint;
use crate::Error;

/// The event (after `<provider>_`).
pub const OTEL_RESOURCE_EVENT: &str = "otel_resource";
/// Its readable field: the resource's `service.name` ("" if it has none).
pub const SERVICE_NAME_FIELD: &str = "service_name";
/// Its protobuf field: OTLP's `Resource` message.
pub const OTLP_RESOURCE_FIELD: &str = "otlp_resource";
/// The most protobuf bytes a resource may have: one event, as a span's
/// head part ([`super::otel_span::PART_LEN`]).
pub const MAX_RESOURCE_LEN: usize = super::otel_span::PART_LEN;
/// How long a written resource is not written again, in ns.
pub const REPEAT_AFTER_NS: u64 = 1_000_000_000;
/// [`REPEAT_AFTER_NS`] as a duration.
pub const REPEAT_AFTER: std::time::Duration = std::time::Duration::from_nanos(REPEAT_AFTER_NS);

/// The fields of `<provider>_otel_resource`, in order.
pub static OTEL_RESOURCE_FIELDS: [Field; 2] = [
    Field::new(SERVICE_NAME_FIELD, FieldType::Str),
    Field::new(OTLP_RESOURCE_FIELD, FieldType::Bytes),
];

/// A Resource as an exporter hands it over.
#[derive(Debug, Clone, Copy)]
pub struct OtelResource<'a> {
    /// Its `service.name`.
    pub service_name: &'a str,
    /// It, as an OTLP protobuf `Resource` message.
    pub otlp: &'a [u8],
}

/// Which resource was written last, and when: the "not again within a
/// second" half of the rule, apart from the tracepoint so it can be
/// tested on its own.
#[derive(Debug, Default)]
pub struct Repeats {
    last: Option<(Vec<u8>, u64)>,
    /// The fork epoch of the process that wrote `last`.
    epoch: u32,
}

impl Repeats {
    /// Now in the process of fork epoch `epoch`: a fork child (a
    /// pre-forking server's worker) is a process of its own, whose
    /// resource the recorder has not seen, whatever its parent wrote.
    pub fn in_epoch(&mut self, epoch: u32) {
        if self.epoch != epoch {
            self.epoch = epoch;
            self.last = None;
        }
    }

    /// Whether `otlp` is due at `now_ns` (CLOCK_MONOTONIC): not the bytes
    /// written last, or written [`REPEAT_AFTER_NS`] ago or more.
    pub fn due(&self, otlp: &[u8], now_ns: u64) -> bool {
        match &self.last {
            Some((bytes, at)) => {
                bytes.as_slice() != otlp || now_ns.saturating_sub(*at) >= REPEAT_AFTER_NS
            }
            None => true,
        }
    }

    /// `otlp` was written at `now_ns`.
    pub fn written(&mut self, otlp: &[u8], now_ns: u64) {
        match &mut self.last {
            Some((bytes, at)) if bytes.as_slice() == otlp => *at = now_ns,
            last => *last = Some((otlp.to_vec(), now_ns)),
        }
    }

    /// Nobody listened: a recorder that attaches next has seen nothing.
    pub fn forget(&mut self) {
        self.last = None;
    }
}

/// A provider's `<provider>_otel_resource`, registered, with what it wrote
/// last. A process needs one, shared by its span and log exporters.
#[derive(Debug)]
pub struct OtelResourceTracepoint {
    event: DynamicTracepoint,
    repeats: Mutex<Repeats>,
}

impl OtelResourceTracepoint {
    /// Declares and registers `<provider>_otel_resource`.
    pub fn new(provider: &Provider) -> Result<OtelResourceTracepoint, Error> {
        let event = provider.tracepoint(OTEL_RESOURCE_EVENT, OTEL_RESOURCE_FIELDS.to_vec())?;
        Ok(OtelResourceTracepoint {
            event,
            repeats: Mutex::new(Repeats::default()),
        })
    }

    /// The process's one `<provider>_otel_resource` for `provider`,
    /// registered at the first call: a process's span and log exporters
    /// share it, so that they write its resource once a second between
    /// them, not once each.
    pub fn shared(provider: &str) -> Result<Arc<OtelResourceTracepoint>, Error> {
        static SHARED: Mutex<Vec<(String, Arc<OtelResourceTracepoint>)>> = Mutex::new(Vec::new());
        let mut shared = SHARED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, tracepoint)) = shared.iter().find(|(name, _)| name == provider) {
            return Ok(Arc::clone(tracepoint));
        }
        let tracepoint = Arc::new(OtelResourceTracepoint::new(&Provider::new(provider)?)?);
        shared.push((provider.to_owned(), Arc::clone(&tracepoint)));
        Ok(tracepoint)
    }

    /// Whether a recorder listens: one load.
    #[inline]
    pub fn enabled(&self) -> bool {
        self.event.enabled()
    }

    /// Writes `resource` if a recorder listens and it was not written in
    /// the last second ([the rule](self)); returns whether it wrote.
    ///
    /// Fails with [`Error::PayloadTooLarge`], writing nothing, for a
    /// protobuf over [`MAX_RESOURCE_LEN`].
    pub fn emit(&self, resource: &OtelResource<'_>) -> Result<bool, Error> {
        // A poisoned lock only means another thread panicked mid-update of
        // a cache: the worst it holds is a stale entry.
        // Checked first, listened to or not, so an oversized resource is
        // said at once rather than only when a recorder attaches.
        if resource.otlp.len() > MAX_RESOURCE_LEN {
            return Err(Error::PayloadTooLarge {
                event: self.event.name().to_owned(),
                len: resource.otlp.len(),
                max: MAX_RESOURCE_LEN,
            });
        }
        let mut repeats = self
            .repeats
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        repeats.in_epoch(crate::trace_context::fork_epoch());
        if !self.enabled() {
            repeats.forget();
            return Ok(false);
        }
        let now = crate::sys::monotonic_ns();
        if !repeats.due(resource.otlp, now) {
            return Ok(false);
        }
        self.event.emit(&[
            Value::Str(resource.service_name),
            Value::Bytes(resource.otlp),
        ])?;
        repeats.written(resource.otlp, now);
        Ok(true)
    }
}

//! The Resource each process's OpenTelemetry SDK declared
//! (`<provider>_otel_resource`, the core's [`usertrace::otel_resource`]
//! rule): the latest one per process, decoded, for the OTLP mapping to
//! put on the process's spans and log records in place of the resource the
//! recorder read from its environment.
//!
//! Bounded against a hostile producer: one resource per process (the
//! latest), forgotten with the process; each decoded from one event, so
//! its size is capped by the event's. An event whose protobuf does not
//! decode changes nothing (the process keeps its last good resource, or
//! its environment's), is counted, and the first such is kept to be said.

use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message;
use rustc_hash::FxHashMap;
use usertrace::otel_resource::{OTLP_RESOURCE_FIELD, SERVICE_NAME_FIELD};

use crate::record::{EventRecord, Record, Value};

/// Whether `e` is a `<provider>_otel_resource` event, by its fields (as
/// span heads are told, whatever their provider).
pub fn is_otel_resource(e: &EventRecord) -> bool {
    matches!(e.fields.as_slice(), [(a, Value::Str(_)), (b, Value::Bytes(_))] if a == SERVICE_NAME_FIELD && b == OTLP_RESOURCE_FIELD)
}

/// The readable `service.name` of a resource event, if `e` is one, names
/// a service, and its protobuf decodes: an event that does not decode is
/// ignored whole, by the timelines as by the OTLP export.
pub fn declared_service_name(e: &EventRecord) -> Option<&str> {
    match e.fields.as_slice() {
        [(a, Value::Str(name)), (b, Value::Bytes(otlp))]
            if a == SERVICE_NAME_FIELD && b == OTLP_RESOURCE_FIELD && !name.is_empty() =>
        {
            Resource::decode(otlp.as_slice())
                .is_ok()
                .then_some(name.as_str())
        }
        _ => None,
    }
}

/// A resource event whose protobuf is not an OTLP `Resource`.
#[derive(Debug, Clone, PartialEq)]
pub struct Undecodable {
    /// The process that wrote it.
    pub pid: u32,
    /// What the decoder said.
    pub error: prost::DecodeError,
}

impl std::fmt::Display for Undecodable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "process {} wrote an {OTLP_RESOURCE_FIELD} field that is not an OTLP Resource ({}); its spans keep the resource of its environment: check the exporter that wrote it follows usertrace::otel_resource",
            self.pid, self.error
        )
    }
}

impl std::error::Error for Undecodable {}

/// The latest SDK resource of each process.
#[derive(Debug, Clone, Default)]
pub struct SdkResources {
    by_pid: FxHashMap<u32, Resource>,
    undecodable: u64,
    first_undecodable: Option<Undecodable>,
}

impl SdkResources {
    /// The resources of a whole recording: each process's latest.
    pub fn of(records: &[Record]) -> SdkResources {
        let mut out = SdkResources::default();
        out.take(records);
        out
    }

    /// Takes the resource events of `records` (in time order: the latest
    /// of a process wins); returns how many there were.
    pub fn take(&mut self, records: &[Record]) -> u64 {
        let mut seen = 0;
        for r in records {
            let Record::Event(e) = r else { continue };
            let [_, (_, Value::Bytes(otlp))] = e.fields.as_slice() else {
                continue;
            };
            if !is_otel_resource(e) {
                continue;
            }
            seen += 1;
            match Resource::decode(otlp.as_slice()) {
                Ok(resource) => {
                    self.by_pid.insert(e.pid, resource);
                }
                Err(error) => {
                    self.undecodable += 1;
                    self.first_undecodable
                        .get_or_insert(Undecodable { pid: e.pid, error });
                }
            }
        }
        seen
    }

    /// The latest resource `pid`'s SDK declared.
    pub fn get(&self, pid: u32) -> Option<&Resource> {
        self.by_pid.get(&pid)
    }

    /// Forgets `pid` (it exited).
    pub fn forget(&mut self, pid: u32) {
        self.by_pid.remove(&pid);
    }

    /// How many processes it holds a resource for.
    pub fn len(&self) -> usize {
        self.by_pid.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.by_pid.is_empty()
    }

    /// How many resource events did not decode.
    pub fn undecodable(&self) -> u64 {
        self.undecodable
    }

    /// The first of them, to be said once.
    pub fn first_undecodable(&self) -> Option<&Undecodable> {
        self.first_undecodable.as_ref()
    }
}

#[cfg(test)]
#[path = "sdk_resource_tests.rs"]
mod tests;

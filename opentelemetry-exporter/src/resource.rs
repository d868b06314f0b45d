//! The SDK's Resource, written as the core's `<provider>_otel_resource`
//! ([`usertrace::otel_resource`]) before each batch a recorder sees: the
//! SDK hands it to each exporter once (`set_resource`), where it is
//! encoded once; an export then costs the core's check (one load, one
//! comparison of the bytes, at most one small event a second).

use std::sync::Arc;

use opentelemetry_proto::tonic::resource::v1::Resource as OtlpResource;
use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
use opentelemetry_sdk::Resource;
use prost::Message;
use usertrace::{OtelResource, OtelResourceTracepoint};

/// The resource of one exporter, encoded, and the process's event for it.
#[derive(Debug)]
pub(crate) struct ResourceWriter {
    tracepoint: Arc<OtelResourceTracepoint>,
    /// `service.name` and the OTLP `Resource`; `None` until the SDK sets it.
    encoded: Option<(String, Vec<u8>)>,
}

impl ResourceWriter {
    /// The process's `<provider>_otel_resource`, shared by its exporters.
    pub(crate) fn new(provider: &str) -> Result<ResourceWriter, usertrace::Error> {
        Ok(ResourceWriter { tracepoint: OtelResourceTracepoint::shared(provider)?, encoded: None })
    }

    /// Keeps `resource`, encoded as the SDK's OTLP exporter encodes it.
    pub(crate) fn set(&mut self, resource: &Resource) {
        self.encoded = Some(encode(resource));
    }

    /// Writes the resource if it is due ([the core's rule](usertrace::otel_resource)).
    pub(crate) fn write(&self) -> Result<(), usertrace::Error> {
        let Some((service_name, otlp)) = &self.encoded else { return Ok(()) };
        self.tracepoint.emit(&OtelResource { service_name, otlp }).map(drop)
    }
}

/// `service.name` and the OTLP `Resource` of `resource`.
pub(crate) fn encode(resource: &Resource) -> (String, Vec<u8>) {
    let service_name = resource.get(&opentelemetry::Key::from_static_str("service.name")).map(|v| v.to_string()).unwrap_or_default();
    let attributes = ResourceAttributesWithSchema::from(resource).attributes.0;
    (service_name, OtlpResource { attributes, ..Default::default() }.encode_to_vec())
}

/// The batch's error when its items were written but the resource was
/// not (a resource over the core's limit, say): the recorder then names
/// the process from its environment.
pub(crate) fn not_written(e: usertrace::Error) -> opentelemetry_sdk::error::OTelSdkError {
    opentelemetry_sdk::error::OTelSdkError::InternalFailure(format!("usertrace: the SDK's resource was not written ({e}); the recorder names the process from its environment"))
}

#[cfg(test)]
mod tests;

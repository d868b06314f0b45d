use opentelemetry::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;

use super::*;

#[test]
fn a_resource_is_encoded_as_the_sdk_s_otlp_exporter_encodes_it_with_its_service_name() {
    let resource = Resource::builder_empty().with_service_name("checkout").with_attribute(KeyValue::new("shard", 7)).build();
    let (service_name, otlp) = encode(&resource);
    assert_eq!(service_name, "checkout");
    let decoded = OtlpResource::decode(otlp.as_slice()).unwrap();
    let mut got: Vec<(String, Option<Any>)> = decoded.attributes.into_iter().map(|kv| (kv.key, kv.value.and_then(|v| v.value))).collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(got, [("service.name".to_owned(), Some(Any::StringValue("checkout".into()))), ("shard".to_owned(), Some(Any::IntValue(7)))]);
}

#[test]
fn a_resource_without_a_service_name_has_an_empty_readable_one() {
    assert_eq!(encode(&Resource::builder_empty().build()).0, "");
}

#[test]
fn a_process_s_exporters_share_one_resource_event() {
    let provider = format!("utotelres{}", std::process::id());
    let (a, b) = (ResourceWriter::new(&provider).unwrap(), ResourceWriter::new(&provider).unwrap());
    assert!(Arc::ptr_eq(&a.tracepoint, &b.tracepoint));
}

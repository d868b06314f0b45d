//! The tracepoints a callsite's first record defines. These run without
//! user_events too: a tracepoint the kernel cannot take is still defined
//! (and stays disabled), so its name and fields can be read.

use tracing_core::field::{FieldSet, Value as _};
use tracing_core::metadata::Kind;
use tracing_core::subscriber::Interest;
use tracing_core::{identify_callsite, Level, Metadata};

use super::*;

struct Nowhere;
impl tracing_core::callsite::Callsite for Nowhere {
    fn set_interest(&self, _: Interest) {}
    fn metadata(&self) -> &Metadata<'_> {
        unreachable!("only the identity is used")
    }
}
static NOWHERE: Nowhere = Nowhere;

fn meta(name: &'static str, fields: &'static [&'static str], kind: Kind) -> &'static Metadata<'static> {
    let set = FieldSet::new(fields, identify_callsite!(&NOWHERE));
    Box::leak(Box::new(Metadata::new(name, "ut::target", Level::WARN, Some("src/x.rs"), Some(7), None, set, kind)))
}

/// `(name, declared type)` of each field.
fn declared(tp: &DynamicTracepoint) -> Vec<(String, String)> {
    tp.fields().iter().map(|f| (f.name.to_string(), f.ty.declared_name().into_owned())).collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

fn record(meta: &Metadata<'_>, scratch: &mut Scratch, values: &[(&str, &dyn tracing_core::field::Value)]) {
    for (name, value) in values {
        let field = meta.fields().field(*name).unwrap();
        value.record(&field, &mut scratch.visitor());
    }
}

#[test]
fn an_event_is_its_level_then_its_fields_typed_by_its_first_record() {
    let provider = Provider::new("ut_cs").unwrap();
    let meta = meta(
        "event src/x.rs:7",
        &["answer", "delta", "ratio", "ok", "name", "http.method", "level", "message", "unset"],
        Kind::EVENT,
    );
    let mut scratch = Scratch::default();
    record(
        meta,
        &mut scratch,
        &[
            ("answer", &42u64),
            ("delta", &-1i8),
            ("ratio", &0.5f32),
            ("ok", &true),
            ("name", &"x"),
            ("http.method", &"GET"),
            ("level", &3u64),
            ("message", &format_args!("hi")),
        ],
    );
    let callsite = Callsite::new(meta);
    assert!(callsite.enabled(), "the first record is taken, to register");
    let Shape::Event(typed) = callsite.shape(&provider, &scratch) else { panic!("an event") };
    assert_eq!(typed.tp.name(), "ut_cs_ut_target_7");
    assert_eq!(
        declared(&typed.tp),
        pairs(&[
            ("level", "str"),
            ("answer", "u64"),
            ("delta", "i64"),
            ("ratio", "f64"),
            ("ok", "bool"),
            ("name", "str"),
            ("http_method", "str"),
            ("level_2", "u64"),
            ("message", "str"),
            ("unset", "str"),
        ])
    );
    if !usertrace::status().is_available() {
        assert!(!callsite.enabled(), "without user_events: disabled for good");
    }
}

#[test]
fn a_record_that_does_not_fit_goes_to_the_text_twin() {
    let provider = Provider::new("ut_cs").unwrap();
    let meta = meta("twinned", &["n", "s"], Kind::EVENT);
    let mut scratch = Scratch::default();
    record(meta, &mut scratch, &[("n", &1u64), ("s", &"a")]);
    let callsite = Callsite::new(meta);
    let Shape::Event(typed) = callsite.shape(&provider, &scratch) else { panic!("an event") };
    // Fits: an i64 in range, a number in a string field.
    let mut next = Scratch::default();
    record(meta, &mut next, &[("n", &2i64), ("s", &5u64)]);
    typed.write(&provider, meta, &mut next, Some(Value::Str("WARN")), None);
    assert!(typed.twin.get().is_none(), "no twin while records fit");
    let mut other = Scratch::default();
    record(meta, &mut other, &[("n", &"many"), ("s", &"b")]);
    typed.write(&provider, meta, &mut other, Some(Value::Str("WARN")), None);
    let twin = typed.twin.get().and_then(Option::as_ref).expect("a twin for the text");
    assert_eq!(twin.name(), "ut_cs_twinned_text");
    assert_eq!(declared(twin), pairs(&[("level", "str"), ("n", "str"), ("s", "str")]));
}

#[test]
fn a_span_begins_with_its_id_and_ends_with_its_deferred_fields_as_text() {
    let provider = Provider::new("ut_cs").unwrap();
    let meta = meta("handle request", &["path", "status", "span_begin", "level"], Kind::SPAN);
    let mut scratch = Scratch::default();
    record(meta, &mut scratch, &[("path", &"/a"), ("span_begin", &1u64), ("level", &"mine")]);
    let callsite = Callsite::new(meta);
    let Shape::Span(span) = callsite.shape(&provider, &scratch) else { panic!("a span") };
    assert_eq!(span.begin.tp.name(), "ut_cs_handle_request");
    let leading = [("span_begin", "u64"), ("trace_id_hi", "u64"), ("trace_id_lo", "u64"), ("parent_span_id", "u64")];
    let own = [("level", "str"), ("path", "str"), ("span_begin_2", "u64"), ("level_2", "str")];
    assert_eq!(declared(&span.begin.tp), pairs(&[&leading[..], &own[..]].concat()));
    assert_eq!(span.deferred, [1]);
    let end = span.end.as_ref().expect("an end for the deferred field");
    assert_eq!(end.name(), "ut_cs_handle_request_end");
    assert_eq!(declared(end), pairs(&[("span_end", "u64"), ("status", "str")]));
}

#[test]
fn a_span_with_every_value_given_ends_on_the_provider_s_span_end() {
    let provider = Provider::new("ut_cs").unwrap();
    let meta = meta("work", &["n"], Kind::SPAN);
    let mut scratch = Scratch::default();
    record(meta, &mut scratch, &[("n", &1u64)]);
    let callsite = Callsite::new(meta);
    let Shape::Span(span) = callsite.shape(&provider, &scratch) else { panic!("a span") };
    assert!(span.end.is_none() && span.deferred.is_empty());
}

#[test]
fn a_callsite_the_kernel_format_cannot_hold_is_off_for_good() {
    // 32 fields and the leading level: one more than an event may have.
    static MANY: [&str; 32] = [
        "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11", "f12", "f13", "f14", "f15", "f16",
        "f17", "f18", "f19", "f20", "f21", "f22", "f23", "f24", "f25", "f26", "f27", "f28", "f29", "f30", "f31",
    ];
    let provider = Provider::new("ut_cs").unwrap();
    let callsite = Callsite::new(meta("wide", &MANY, Kind::EVENT));
    assert!(matches!(callsite.shape(&provider, &Scratch::default()), Shape::Off));
    assert!(!callsite.enabled());
}

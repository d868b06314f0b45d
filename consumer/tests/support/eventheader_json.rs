//! The yardstick for our EventHeader fields: `tracepoint_decode`'s own JSON
//! of the same payload, its fields as they nest and its `meta` object
//! flattened the way our decoder names those fields (`meta.*`), and a
//! field-by-field comparison.
//!
//! Shared by the decoder's unit tests and the guest-kernel tests, which
//! include this file with `#[path]`.

use serde_json::Value;
use tracepoint_decode::{EventHeaderEnumeratorContext, PerfConvertOptions, PerfMetaOptions};
// The including module brings these in, from `crate` or `usertrace_consumer`.
use super::{EventFormat, FieldValue};

/// The library's JSON of the event in `raw` (`trace_entry` + payload),
/// fields then meta, as `name -> value` pairs: each field whole (an array
/// or an object where it nests), each meta entry as `meta.NAME`. Field tags
/// are left out of names (our decoder keeps none).
pub fn library_fields(format: &EventFormat, raw: &[u8]) -> Vec<(String, Value)> {
    let data = &raw[format.fields[0].offset..];
    let mut context = EventHeaderEnumeratorContext::new();
    let mut e = context
        .enumerate_with_name_and_data(&format.name, data, EventHeaderEnumeratorContext::MOVE_NEXT_LIMIT_DEFAULT)
        .expect("the library enumerates the event");
    let options = PerfConvertOptions::Default.and_not(PerfConvertOptions::FieldTag);
    let mut json = String::from("{");
    let any = e.write_json_item_and_move_next_sibling(&mut json, false, options).unwrap();
    assert!(e.state() != tracepoint_decode::EventHeaderEnumeratorState::Error, "library: {}", e.last_error());
    json.push_str(if any { ", \"meta\": {" } else { "\"meta\": {" });
    let info = e.event_info();
    info.json_meta_display(None)
        .meta_options(PerfMetaOptions::All)
        .convert_options(options)
        .write_to(&mut json)
        .unwrap();
    json.push_str("}}");
    let value: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("library JSON {json}: {e}"));
    let Value::Object(top) = value else { panic!("library JSON {json} is not an object") };
    let mut out = Vec::new();
    for (name, v) in top {
        match v {
            Value::Object(meta) if name == "meta" => out.extend(meta.into_iter().map(|(k, v)| (format!("meta.{k}"), v))),
            v => out.push((name, v)),
        }
    }
    out
}

/// Whether our value says what the library's JSON value says: arrays
/// element by element, structs member by member (the same names, each the
/// same).
pub fn same(ours: &FieldValue<'_>, theirs: &Value) -> bool {
    match (ours, theirs) {
        (FieldValue::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b)),
        (FieldValue::Struct(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(name, a)| b.get(name.as_ref()).is_some_and(|b| same(a, b)))
        }
        (FieldValue::Unsigned(a), Value::Number(b)) => b.as_u64() == Some(*a),
        // The library's JSON gives keyword and tag as hex strings.
        (FieldValue::Unsigned(a), Value::String(b)) => *b == format!("0x{a:X}"),
        (FieldValue::Signed(a), Value::Number(b)) => b.as_i64() == Some(*a),
        (FieldValue::Bool(a), Value::Bool(b)) => a == b,
        (FieldValue::F32(a), Value::Number(b)) => b.as_f64().map(|b| b as f32) == Some(*a),
        (FieldValue::F64(a), Value::Number(b)) => b.as_f64() == Some(*a),
        (FieldValue::F32(a), Value::String(b)) => !a.is_finite() && *b == float_word(f64::from(*a)),
        (FieldValue::F64(a), Value::String(b)) => !a.is_finite() && *b == float_word(*a),
        (FieldValue::Str(a), Value::String(b)) => a == b,
        (FieldValue::Bytes(a), Value::String(b)) => {
            *b == a.iter().map(|x| format!("{x:02X}")).collect::<Vec<_>>().join(" ")
        }
        _ => false,
    }
}

fn float_word(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v > 0.0 {
        "Infinity".into()
    } else {
        "-Infinity".into()
    }
}

/// Asserts that `ours` has exactly the library's names, in its order, with
/// the same values.
///
/// Our `span_begin`/`span_end` first field is left out: it is ours, made for
/// the timeline from the opcode and activity id that `meta` holds.
pub fn assert_same_as_library(ours: &[(std::borrow::Cow<'_, str>, FieldValue<'_>)], theirs: &[(String, Value)]) {
    let ours = match ours.first() {
        Some((name, _)) if name == "span_begin" || name == "span_end" => &ours[1..],
        _ => ours,
    };
    let ours_names: Vec<&str> = ours.iter().map(|(n, _)| n.as_ref()).collect();
    let theirs_names: Vec<&str> = theirs.iter().map(|(n, _)| n.as_str()).collect();
    // serde_json sorts object keys unless told otherwise; compare as sets of
    // names, then each value.
    let mut a = ours_names.clone();
    let mut b = theirs_names.clone();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b, "field names differ:\n ours {ours_names:?}\n library {theirs_names:?}");
    for (name, theirs) in theirs {
        let (_, ours) = ours.iter().find(|(n, _)| n == name).unwrap();
        assert!(same(ours, theirs), "{name}: ours {ours:?}, library {theirs}");
    }
}

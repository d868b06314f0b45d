use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

use crate::support::{assert_comm, clear_trace, gettid, set_ftrace, trace_lines, unique_name};

fn this_threads_comm() -> String {
    std::fs::read_to_string("/proc/thread-self/comm").unwrap().trim_end().to_owned()
}

/// One event's values, one per field of [`every_type`], in order.
type Case = (u8, u16, u32, u64, i8, i16, i32, i64, bool, f32, f64, &'static str, &'static str, &'static str);

fn every_type() -> Vec<Field> {
    vec![
        Field::new("a_u8", FieldType::U8),
        Field::new("a_u16", FieldType::U16),
        Field::new("a_u32", FieldType::U32),
        Field::new("a_u64", FieldType::U64),
        Field::new("a_i8", FieldType::I8),
        Field::new("a_i16", FieldType::I16),
        Field::new("a_i32", FieldType::I32),
        Field::new("a_i64", FieldType::I64),
        Field::new("a_bool", FieldType::Bool),
        Field::new("a_f32", FieldType::F32),
        Field::new("a_f64", FieldType::F64),
        Field::new("a_chars", FieldType::CharArray(8)),
        Field::new("a_str", FieldType::Str),
        Field::new("a_str2", FieldType::Str),
    ]
}

#[test]
fn every_field_type_arrives_with_its_exact_value_under_our_command_name() {
    let name = unique_name("every_type");
    let fields = every_type();
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_ref()).collect();
    let tp = DynamicTracepoint::new(&name, fields.clone(), RegisterOptions::default()).unwrap();
    tp.register().unwrap();
    set_ftrace(&name, true);
    clear_trace();

    let cases: [Case; 3] = [
        (u8::MAX, u16::MAX, u32::MAX, u64::MAX, i8::MIN, i16::MIN, i32::MIN, i64::MIN, true, 1.5, -2.25, "abc", "héllo wörld ✓", "日本語"),
        (0, 1, 2, 3, i8::MAX, i16::MAX, i32::MAX, i64::MAX, false, -0.0, 1e300, "12345678", "", "x"),
        (7, 8, 9, 10, -1, -2, -3, -4, true, f32::MIN_POSITIVE, f64::MAX, "", "a b=c", ""),
    ];
    for c in &cases {
        tp.emit(&[
            Value::U8(c.0),
            Value::U16(c.1),
            Value::U32(c.2),
            Value::U64(c.3),
            Value::I8(c.4),
            Value::I16(c.5),
            Value::I32(c.6),
            Value::I64(c.7),
            Value::Bool(c.8),
            Value::F32(c.9),
            Value::F64(c.10),
            Value::Str(c.11),
            Value::Str(c.12),
            Value::Str(c.13),
        ])
        .unwrap();
    }
    set_ftrace(&name, false);

    let lines = trace_lines(&name, &names);
    assert_eq!(lines.len(), cases.len(), "every event arrived: {lines:#?}");
    for (line, c) in lines.iter().zip(&cases) {
        assert_comm(line, &this_threads_comm());
        assert_eq!(line.pid, gettid());
        let f = &line.fields;
        assert_eq!(f["a_u8"], c.0.to_string());
        assert_eq!(f["a_u16"], c.1.to_string());
        assert_eq!(f["a_u32"], c.2.to_string());
        assert_eq!(f["a_u64"], c.3.to_string());
        // ftrace prints the bits; signed values are compared as such.
        assert_eq!(f["a_i8"], (c.4 as u8).to_string());
        assert_eq!(f["a_i16"], (c.5 as u16).to_string());
        assert_eq!(f["a_i32"], (c.6 as u32).to_string());
        assert_eq!(f["a_i64"], (c.7 as u64).to_string());
        assert_eq!(f["a_bool"], (c.8 as u8).to_string());
        // Floats travel as their IEEE-754 bits, which ftrace prints as integers.
        assert_eq!(f["a_f32"], c.9.to_bits().to_string());
        assert_eq!(f["a_f64"], c.10.to_bits().to_string());
        assert_eq!(f["a_chars"], c.11);
        assert_eq!(f["a_str"], c.12);
        assert_eq!(f["a_str2"], c.13);
    }
}

/// Small writes are gathered into one buffer, larger ones written in
/// pieces where they lie (`payload.rs`, at 256 bytes): either way each
/// event arrives whole, with its fields where they were declared.
#[test]
fn events_on_both_sides_of_the_gathering_limit_arrive_exactly() {
    let name = unique_name("gather");
    let fields = vec![Field::new("n", FieldType::U32), Field::new("s", FieldType::Str), Field::new("c", FieldType::CharArray(8))];
    let tp = DynamicTracepoint::new(&name, fields, RegisterOptions::default()).unwrap();
    tp.register().unwrap();
    set_ftrace(&name, true);
    clear_trace();
    // The write is 4 + 4 + 4 + 8 bytes, then the string and its NUL: 235
    // characters make 256.
    let lengths: Vec<usize> = (230..=240).chain([0, 1000, 4000]).collect();
    let texts: Vec<String> = lengths.iter().map(|&n| (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect()).collect();
    for (n, text) in texts.iter().enumerate() {
        tp.emit(&[Value::U32(n as u32), Value::Str(text), Value::Str("tail")]).unwrap();
    }
    set_ftrace(&name, false);

    let lines = trace_lines(&name, &["n", "s", "c"]);
    assert_eq!(lines.len(), texts.len(), "every event arrived");
    for (n, (line, text)) in lines.iter().zip(&texts).enumerate() {
        assert_eq!(line.fields["n"], n.to_string());
        assert_eq!(line.fields["s"], *text, "the string of {} characters", text.len());
        assert_eq!(line.fields["c"], "tail");
    }
}

#[test]
fn an_event_without_fields_arrives() {
    let name = unique_name("no_fields");
    let tp = DynamicTracepoint::new(&name, vec![], RegisterOptions::default()).unwrap();
    tp.register().unwrap();
    set_ftrace(&name, true);
    clear_trace();
    tp.emit(&[]).unwrap();
    tp.emit(&[]).unwrap();
    set_ftrace(&name, false);
    assert_eq!(trace_lines(&name, &[]).len(), 2);
}

mod declared {
    usertrace::tracepoints! {
        provider ut_macro;
        pub fn request(status: u16, path: &str, ok: bool);
    }
}

#[test]
fn a_static_tracepoint_registers_on_first_use_and_emits_typed_fields() {
    declared::PROVIDER.register().unwrap();
    let name = declared::request::NAME;
    set_ftrace(name, true);
    clear_trace();
    let mut evaluated = 0;
    let mut path = || {
        evaluated += 1;
        "/index.html"
    };
    usertrace::emit!(declared::request(404, path(), false)).unwrap();
    set_ftrace(name, false);
    usertrace::emit!(declared::request(500, path(), true)).unwrap();
    assert_eq!(evaluated, 1, "arguments are evaluated only while enabled");

    let lines = trace_lines(name, &["status", "path", "ok"]);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].fields["status"], "404");
    assert_eq!(lines[0].fields["path"], "/index.html");
    assert_eq!(lines[0].fields["ok"], "0");
    declared::PROVIDER.unregister().unwrap();
    assert!(!declared::request::enabled());
}

//! Every field type the field-encoding table lists (docs/api.md, once in
//! the README) can be declared with `tracepoints!`, and is declared to the
//! kernel as the table says.

mod events {
    usertrace::tracepoints! {
        provider readme;
        pub fn every_type(
            a: u8, b: u16, c: u32, d: u64, e: i8, f: i16, g: i32, h: i64,
            flag: bool, x: f32, y: f64, code: [u8; 4], label: &[u8; 16], text: &str, blob: &[u8]
        );
    }
}

#[test]
fn every_readme_type_has_its_kernel_declaration() {
    assert_eq!(
        events::every_type::TRACEPOINT.format().unwrap(),
        "readme_every_type u8 a;u16 b;u32 c;u64 d;s8 e;s16 f;s32 g;s64 h;unsigned char flag;\
         struct f32 x 4;struct f64 y 8;char[4] code;char[16] label;__rel_loc char[] text;__rel_loc u8[] blob"
    );
}

#[test]
fn a_char_array_value_is_checked_and_accepted() {
    let tp = &events::every_type::TRACEPOINT;
    let label = [b'x'; 16];
    let label_ref = &label;
    let values = [
        usertrace::Value::U8(1),
        usertrace::Value::U16(2),
        usertrace::Value::U32(3),
        usertrace::Value::U64(4),
        usertrace::Value::I8(-1),
        usertrace::Value::I16(-2),
        usertrace::Value::I32(-3),
        usertrace::Value::I64(-4),
        usertrace::Value::Bool(true),
        usertrace::Value::F32(0.5),
        usertrace::Value::F64(0.25),
        usertrace::ToValue::to_value(b"GET\0"),
        usertrace::ToValue::to_value(&label_ref),
        usertrace::Value::Str("t"),
        usertrace::Value::Bytes(&[1, 2]),
    ];
    tp.validate(&values).unwrap();
    // Emitting without a tracer is a no-op, whatever the kernel.
    let _ = usertrace::emit!(events::every_type(1, 2, 3, 4, -1, -2, -3, -4, true, 0.5, 0.25, *b"GET\0", &label, "t", &[1, 2]));
}

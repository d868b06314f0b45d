//! The protobuf wire format, for the one packet a trace holds hundreds of
//! thousands of: a track event. Building prost's generated messages for
//! each one (a `TracePacket` and a `TrackEvent` are hundreds of bytes of
//! mostly empty fields, each arg a `DebugAnnotation` with its string
//! copied) cost more than encoding them; writing the fields straight from
//! the timeline does not copy or allocate.
//!
//! prost writes a message's fields in ascending tag order (a oneof at its
//! lowest tag); the writers here must do the same, so that the bytes are
//! those prost would write. A test holds them to it.
//!
//! References: <https://protobuf.dev/programming-guides/encoding/>

/// A wire type: how a field's value is laid out after its key.
#[derive(Clone, Copy)]
#[repr(u8)]
enum WireType {
    Varint = 0,
    Fixed64 = 1,
    Len = 2,
}

/// Appends `value` as a base-128 varint.
pub(super) fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn key(out: &mut Vec<u8>, field: u32, wire_type: WireType) {
    varint(out, u64::from(field) << 3 | wire_type as u64);
}

/// An unsigned, bool or enum field; a signed `int32`/`int64` is its
/// two's-complement `as u64`.
pub(super) fn varint_field(out: &mut Vec<u8>, field: u32, value: u64) {
    key(out, field, WireType::Varint);
    varint(out, value);
}

/// A `double` field.
pub(super) fn double_field(out: &mut Vec<u8>, field: u32, value: f64) {
    key(out, field, WireType::Fixed64);
    out.extend_from_slice(&value.to_le_bytes());
}

/// A string, bytes or embedded-message field whose encoding is `bytes`.
pub(super) fn len_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    key(out, field, WireType::Len);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

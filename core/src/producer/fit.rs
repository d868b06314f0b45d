//! Fitting a record that is too large for perf: what a bridge from a
//! logging or tracing library does rather than lose the record (an emit
//! of it would fail with `PayloadTooLarge`).

use super::field::MAX_FIELDS;
use super::value::Value;
use crate::abi::MAX_PAYLOAD_LEN;

/// The bytes a variable-length value adds after the fixed fields.
fn data_len(value: &Value<'_>) -> usize {
    match value {
        Value::Str(s) => s.len() + 1,
        Value::Bytes(b) => b.len(),
        _ => 0,
    }
}

/// Cuts the strings and byte slices of `values` until an event of them,
/// whose fixed part (every field's, leading ones included) is `fixed`
/// bytes, fits the most perf takes (`wire::MAX_PAYLOAD_LEN`): each is cut
/// to one common length, the largest that fits, at a character boundary;
/// shorter ones stay whole. What a bridge from a logging or tracing library
/// does with a record too large for perf rather than lose it, so that every
/// bridge cuts alike.
pub fn fit_payload(values: &mut [Value<'_>], fixed: usize) {
    let variable: usize = values.iter().map(data_len).sum();
    // More values than an event can have: no emit takes them anyway.
    if fixed + variable <= MAX_PAYLOAD_LEN || values.len() > MAX_FIELDS {
        return;
    }
    let mut lens = [0usize; MAX_FIELDS];
    let mut count = 0;
    let mut nuls = 0;
    for value in values.iter() {
        match value {
            Value::Str(s) => {
                lens[count] = s.len();
                nuls += 1;
            }
            Value::Bytes(b) => lens[count] = b.len(),
            _ => continue,
        }
        count += 1;
    }
    let lens = &mut lens[..count];
    lens.sort_unstable();
    let mut left = MAX_PAYLOAD_LEN.saturating_sub(fixed + nuls);
    let mut cap = usize::MAX;
    for (i, &len) in lens.iter().enumerate() {
        let share = left / (count - i);
        if len > share {
            cap = share;
            break;
        }
        left -= len;
    }
    for value in values.iter_mut() {
        match value {
            Value::Str(s) => *s = truncate_at_char(s, cap),
            Value::Bytes(b) => *b = &b[..b.len().min(cap)],
            _ => {}
        }
    }
}


/// `s` cut to at most `max` bytes, at a character boundary.
fn truncate_at_char(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_too_large_for_perf_is_cut_longest_first() {
        let long = "é".repeat(5000);
        let mid = "m".repeat(3000);
        let mut values = [Value::Str("INFO"), Value::U64(1), Value::Str(&long), Value::Str(&mid), Value::Str("short")];
        let fixed = 4 + 8 + 4 + 4 + 4;
        fit_payload(&mut values, fixed);
        let total: usize = fixed + values.iter().map(data_len).sum::<usize>();
        assert!(total <= MAX_PAYLOAD_LEN, "{total}");
        assert_eq!(values[0], Value::Str("INFO"));
        assert_eq!(values[4], Value::Str("short"));
        let (Value::Str(a), Value::Str(b)) = (values[2], values[3]) else { panic!() };
        assert_eq!(b, mid, "what fits under the common length stays whole");
        assert!(long.starts_with(a) && (5140..=5147).contains(&a.len()), "{}", a.len());

        let bytes = vec![7u8; 9000];
        let mut values = [Value::Bytes(&bytes)];
        fit_payload(&mut values, 4);
        assert_eq!(values[0], Value::Bytes(&bytes[..MAX_PAYLOAD_LEN - 4]));

        let mut small = [Value::Str("x"), Value::Bytes(b"y")];
        fit_payload(&mut small, 8);
        assert_eq!(small, [Value::Str("x"), Value::Bytes(b"y")]);
    }
}

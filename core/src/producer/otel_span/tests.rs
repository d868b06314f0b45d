use super::*;

fn bytes(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

/// Splits `whole` and joins it again, the parts added in `order` (indexes
/// into the parts after the first).
fn round_trip(whole: &[u8], order: impl Fn(usize) -> Vec<usize>) -> Result<Vec<u8>, Incomplete> {
    let chunks = split(whole).unwrap();
    let parts = chunks.len() as u32;
    let mut assembly = Assembly::default();
    for i in order(chunks.len()) {
        assembly.add(i as u32, parts, chunks[i]);
    }
    assembly.join(parts, chunks[0])
}

#[test]
fn a_small_span_is_one_part_and_joins_with_nothing_added() {
    let whole = bytes(100);
    assert_eq!(split(&whole).unwrap(), vec![&whole[..]]);
    assert_eq!(Assembly::default().join(1, &whole), Ok(whole));
}

#[test]
fn an_empty_span_is_one_empty_part() {
    assert_eq!(split(&[]).unwrap(), vec![&[][..]]);
}

#[test]
fn every_part_but_the_last_is_full_and_they_join_in_order() {
    let whole = bytes(PART_LEN * 3 + 17);
    let chunks = split(&whole).unwrap();
    assert_eq!(
        chunks.iter().map(|c| c.len()).collect::<Vec<_>>(),
        [PART_LEN, PART_LEN, PART_LEN, 17]
    );
    assert_eq!(round_trip(&whole, |n| (1..n).collect()), Ok(whole));
}

#[test]
fn parts_arriving_out_of_order_or_twice_join_the_same() {
    let whole = bytes(PART_LEN * 4 + 1);
    assert_eq!(
        round_trip(&whole, |n| (1..n).rev().chain(1..n).collect()),
        Ok(whole)
    );
}

#[test]
fn a_missing_part_is_named_with_the_count() {
    let whole = bytes(PART_LEN * 4 + 1);
    assert_eq!(
        round_trip(&whole, |n| (1..n).filter(|&i| i != 2).collect()),
        Err(Incomplete::Missing {
            missing: 1,
            parts: 5
        })
    );
    assert_eq!(
        round_trip(&whole, |_| vec![]),
        Err(Incomplete::Missing {
            missing: 4,
            parts: 5
        })
    );
}

#[test]
fn a_span_beyond_the_most_parts_is_too_large_and_one_at_it_is_not() {
    let most = PART_LEN * MAX_PARTS;
    assert_eq!(split(&vec![0; most]).unwrap().len(), MAX_PARTS);
    assert_eq!(
        split(&vec![0; most + 1]),
        Err(TooLarge {
            len: most + 1,
            max: most
        })
    );
}

#[test]
fn lying_part_counts_are_named_not_joined() {
    let head = bytes(10);
    // A part claims another count than the head.
    let mut a = Assembly::default();
    a.add(1, 3, b"x");
    a.add(2, 3, b"y");
    assert_eq!(a.join(2, &head), Err(Incomplete::BadCount { parts: 2 }));
    // Two parts disagree with each other.
    let mut a = Assembly::default();
    a.add(1, 3, b"x");
    a.add(2, 4, b"y");
    assert_eq!(a.join(3, &head), Err(Incomplete::BadCount { parts: 3 }));
    // An index past its count, or a part claiming to be the head's.
    for (index, parts) in [(3, 3), (0, 3), (1, MAX_PARTS as u32 + 1)] {
        let mut a = Assembly::default();
        a.add(index, parts, b"x");
        assert_eq!(
            a.join(3, &head),
            Err(Incomplete::BadCount { parts: 3 }),
            "part {index} of {parts}"
        );
    }
    // A head that counts no parts at all.
    assert_eq!(
        Assembly::default().join(0, &head),
        Err(Incomplete::BadCount { parts: 0 })
    );
}

#[test]
fn every_event_stays_under_seven_kib() {
    let name = "n".repeat(10_000);
    let fixed = 8 * 6 + 4 + 4 * 4; // u64s, the u32, four __rel_loc words
    let head = fixed + 3 * (label(&name).len() + 1) + PART_LEN;
    assert!(head < 7 * 1024, "{head}");
    assert_eq!(label("é".repeat(200).as_str()).len(), 256);
}

#[test]
fn the_assembly_counts_the_bytes_it_holds() {
    let mut a = Assembly::default();
    a.add(1, 3, b"abc");
    a.add(1, 3, b"abc");
    a.add(2, 3, b"de");
    assert_eq!((a.bytes(), a.parts()), (5, 2));
}

#[test]
fn a_unix_time_becomes_the_monotonic_time_of_that_moment() {
    let now_unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let before = crate::sys::monotonic_ns();
    let got = monotonic_from_unix_ns(now_unix);
    let after = crate::sys::monotonic_ns();
    // Within the time the calls took, plus a little slack for the reads.
    assert!(got + 1_000_000 >= before && got <= after + 1_000_000, "{before} <= {got} <= {after}");
    assert_eq!(monotonic_from_unix_ns(0), 0, "before boot");
}

#[test]
fn the_status_code_is_a_readable_u32_before_the_protobuf() {
    let names: Vec<&str> = OTEL_SPAN_FIELDS.iter().map(|f| f.name.as_ref()).collect();
    let status = names.iter().position(|&n| n == STATUS_CODE_FIELD).expect("a status_code field");
    assert_eq!(OTEL_SPAN_FIELDS[status].ty, FieldType::U32);
    assert_eq!(&names[status + 1..], [OTLP_PARTS_FIELD, OTLP_SPAN_FIELD], "readable fields first, the protobuf last");
}

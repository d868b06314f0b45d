use super::*;

#[test]
fn a_resource_never_written_is_due() {
    assert!(Repeats::default().due(b"r", 5));
}

#[test]
fn the_same_resource_is_due_again_only_a_second_after_it_was_written() {
    let mut repeats = Repeats::default();
    repeats.written(b"r", 1_000);
    assert!(!repeats.due(b"r", 1_000));
    assert!(!repeats.due(b"r", 1_000 + REPEAT_AFTER_NS - 1));
    assert!(repeats.due(b"r", 1_000 + REPEAT_AFTER_NS));
}

#[test]
fn another_resource_is_due_at_once_and_then_is_the_one_remembered() {
    let mut repeats = Repeats::default();
    repeats.written(b"a", 1_000);
    assert!(repeats.due(b"b", 1_001));
    repeats.written(b"b", 1_001);
    assert!(!repeats.due(b"b", 1_002));
    assert!(repeats.due(b"a", 1_002));
}

#[test]
fn a_resource_written_while_nobody_listened_again_is_due_at_once() {
    let mut repeats = Repeats::default();
    repeats.written(b"r", 1_000);
    repeats.forget();
    assert!(repeats.due(b"r", 1_001));
}

#[test]
fn the_fields_are_the_readable_name_then_the_protobuf() {
    let names: Vec<&str> = OTEL_RESOURCE_FIELDS
        .iter()
        .map(|f| f.name.as_ref())
        .collect();
    assert_eq!(names, [SERVICE_NAME_FIELD, OTLP_RESOURCE_FIELD]);
    assert_eq!(OTEL_RESOURCE_FIELDS[1].ty, FieldType::Bytes);
}

#[test]
fn a_fork_child_s_resource_is_due_at_once_whatever_its_parent_wrote() {
    let mut repeats = Repeats::default();
    repeats.in_epoch(0);
    repeats.written(b"r", 1_000);
    repeats.in_epoch(0);
    assert!(!repeats.due(b"r", 1_001), "the same process");
    repeats.in_epoch(1);
    assert!(repeats.due(b"r", 1_002), "a fork child");
}

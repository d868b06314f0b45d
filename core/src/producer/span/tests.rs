use super::open::{self, DEPTH};
use super::*;
use crate::producer::tracepoint::Tracepoint;
use crate::trace_context::TraceContext;

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn parent() -> TraceContext {
    TraceContext::from_traceparent(PARENT).unwrap().with_tracestate("a=1")
}

/// What `write` was handed, as `Value`s' debug text.
fn written(f: impl FnOnce(&mut dyn FnMut(&[Value<'_>]) -> Result<(), Error>)) -> Vec<String> {
    let mut seen = Vec::new();
    f(&mut |all| {
        seen = all.iter().map(|v| format!("{v:?}")).collect();
        Ok(())
    });
    seen
}

fn u64s(seen: &[String]) -> Vec<u64> {
    seen.iter().map(|s| s.trim_start_matches("U64(").trim_end_matches(')').parse().unwrap()).collect()
}

#[test]
fn ids_are_nonzero_and_unique_across_threads() {
    let mut ids: Vec<u64> = (0..4)
        .map(|_| std::thread::spawn(|| (0..1000).map(|_| next_span_id()).collect::<Vec<_>>()))
        .flat_map(|t| t.join().unwrap())
        .collect();
    ids.extend((0..70_000).map(|_| next_span_id()));
    assert!(ids.iter().all(|&id| id != 0));
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "an id was handed out twice");
    assert!(ids.iter().any(|&id| id >= 1 << 63), "the ids use all 64 bits, as W3C span ids");
}

#[test]
fn the_leading_values_come_first_for_every_size() {
    for lead in [1usize, BEGIN_LEADING_FIELDS] {
        for n in [0usize, 3, 4, 7, 8, 15, 16, 28] {
            let lead: Vec<Value> = (0..lead).map(|i| Value::U64(90 + i as u64)).collect();
            let rest: Vec<Value> = (0..n).map(|i| Value::U32(i as u32)).collect();
            let seen = with_leading_values(&lead, &rest, |all| Ok(format!("{all:?}"))).unwrap();
            let expected: Vec<Value> = lead.iter().chain(&rest).copied().collect();
            assert_eq!(seen, format!("{expected:?}"));
        }
    }
    let seen = with_leading_value(Value::U64(99), &[Value::U8(1)], |all| Ok(format!("{all:?}"))).unwrap();
    assert_eq!(seen, "[U64(99), U8(1)]");
    // More values than any event has fields: all of them reach the emit,
    // whose count check names the numbers.
    let many = vec![Value::U8(0); MAX_FIELDS];
    assert_eq!(with_leading_values(&[Value::U64(1)], &many, |all| Ok(all.len())).unwrap(), MAX_FIELDS + 1);
}

#[test]
fn span_names_map_to_event_names_by_one_rule() {
    let cases = [
        ("handle", "handle"),
        ("_private9", "_private9"),
        ("Foo.bar", "Foo_bar"),
        ("outer.<locals>.inner", "outer_locals_inner"),
        ("<lambda>", "lambda"),
        ("Foo$Bar.<init>", "Foo_Bar_init"),
        ("a_.b", "a__b"),
        ("my block", "my_block"),
        ("héllo", "h_llo"),
    ];
    for (name, event) in cases {
        assert_eq!(event_name_for(name).unwrap(), event, "{name}");
        assert!(super::super::field::is_valid_name(&event_name_for(name).unwrap()));
    }
    assert!(matches!(event_name_for("handle").unwrap(), Cow::Borrowed(_)));
    for nothing_valid in ["", "...", "<>", "é"] {
        let err = event_name_for(nothing_valid).unwrap_err();
        assert!(matches!(err, Error::InvalidName { what: "span", .. }), "{err}");
    }
}

#[test]
fn span_fields_put_the_convention_first() {
    let f = span_begin_fields(vec![Field::new("path", FieldType::Str)]);
    let names: Vec<&str> = f.iter().map(|f| f.name.as_ref()).collect();
    assert_eq!(names, [SPAN_BEGIN_FIELD, TRACE_ID_HI_FIELD, TRACE_ID_LO_FIELD, PARENT_SPAN_ID_FIELD, "path"]);
    assert!(f[..BEGIN_LEADING_FIELDS].iter().all(|f| f.ty == FieldType::U64));
    assert_eq!(own_fields(&f).unwrap(), &f[BEGIN_LEADING_FIELDS..]);
    assert_eq!(own_fields(&f[..3]), None);
    assert_eq!(own_fields(&vec![Field::new("x", FieldType::U64); 5]), None);
    let c = completed_span_fields(vec![]);
    assert_eq!((c[0].name.as_ref(), c[1].name.as_ref()), (SPAN_START_NS_FIELD, SPAN_DURATION_NS_FIELD));
}

#[test]
fn a_span_begun_by_id_writes_its_id_and_says_nothing_of_its_trace() {
    let mut id = 0;
    let seen = written(|w| id = begin_with(true, &[Value::U8(7)], w).unwrap());
    assert_eq!(seen[..4], [format!("U64({id})"), "U64(0)".into(), "U64(0)".into(), "U64(0)".into()]);
    assert_eq!(seen[4], "U8(7)");
    assert_ne!(id, 0);
    assert!(written(|w| assert_eq!(begin_with(false, &[], w).unwrap(), 0)).is_empty());
}

#[test]
fn a_span_begun_under_a_parent_writes_the_parents_trace_and_span_id() {
    let p = parent();
    let mut begun = None;
    let seen = u64s(&written(|w| begun = Some(begin_in_with(true, Some(&p), &[], w).unwrap())));
    let begun = begun.unwrap();
    let context = begun.context.unwrap();
    assert_eq!(seen, [begun.id, 0x4bf92f3577b34da6, 0xa3ce929d0e0e4736, 0x00f067aa0ba902b7]);
    assert_eq!(context.span_id, begun.id);
    assert_eq!((context.trace_id, context.flags, context.tracestate), (p.trace_id, p.flags, p.tracestate));
}

#[test]
fn a_root_writes_a_new_trace_and_no_parent() {
    for given in [None, Some(TraceContext { span_id: 0, ..parent() })] {
        let mut begun = None;
        let seen = u64s(&written(|w| begun = Some(begin_in_with(true, given.as_ref(), &[], w).unwrap())));
        let context = begun.unwrap().context.unwrap();
        assert_eq!(seen, [context.span_id, (context.trace_id >> 64) as u64, context.trace_id as u64, 0]);
        assert_ne!(context.trace_id, parent().trace_id);
        assert!(context.is_sampled());
    }
}

#[test]
fn a_span_nobody_listens_to_writes_nothing_and_hands_its_parent_on() {
    let p = parent();
    let mut begun = None;
    assert!(written(|w| begun = Some(begin_in_with(false, Some(&p), &[], w).unwrap())).is_empty());
    assert_eq!(begun, Some(Begun { id: 0, context: Some(p) }));
    assert_eq!(begin_in_with(false, None, &[], |_| Ok(())).unwrap(), Begun { id: 0, context: None });
}

#[test]
fn a_write_that_fails_fails_the_begin() {
    let failed = begin_in_with(true, None, &[], |_| Err(Error::InvalidName { what: "test", name: String::new() }));
    assert!(failed.is_err());
}

fn context(trace_id: u128, span_id: u64) -> TraceContext {
    TraceContext::new(trace_id, span_id, 1).unwrap()
}

#[test]
fn the_innermost_open_span_is_the_latest_begun_still_open_on_the_thread() {
    std::thread::spawn(|| {
        assert_eq!(open::innermost(), None);
        let outer = open::push(&context(1, 10)).unwrap();
        let inner = open::push(&context(1, 11)).unwrap();
        assert_eq!(open::innermost().unwrap().span_id, 11);
        // Ended out of order: the inner one stays innermost.
        outer.free();
        assert_eq!(open::innermost().unwrap().span_id, 11);
        inner.free();
        assert_eq!(open::innermost(), None, "the freed slot below is dropped too");
    })
    .join()
    .unwrap();
}

#[test]
fn a_span_ended_on_another_thread_is_no_longer_open_on_its_own() {
    std::thread::spawn(|| {
        let outer = open::push(&context(2, 20)).unwrap();
        let handed = open::push(&context(2, 21)).unwrap();
        std::thread::spawn(move || handed.free()).join().unwrap();
        assert_eq!(open::innermost().unwrap().span_id, 20);
        outer.free();
        assert_eq!(open::innermost(), None);
    })
    .join()
    .unwrap();
}

#[test]
fn the_innermost_span_keeps_its_tracestate() {
    std::thread::spawn(|| {
        let held = open::push(&parent()).unwrap();
        assert_eq!(open::innermost(), Some(parent()));
        held.free();
    })
    .join()
    .unwrap();
}

#[test]
fn beyond_its_depth_a_thread_tracks_no_more_spans() {
    std::thread::spawn(|| {
        let held: Vec<_> = (1..=DEPTH as u64).map(|i| open::push(&context(3, i)).unwrap()).collect();
        assert!(open::push(&context(3, 999)).is_none());
        assert_eq!(open::innermost().unwrap().span_id, DEPTH as u64);
        held.into_iter().for_each(|h| h.free());
        assert_eq!(open::innermost(), None);
    })
    .join()
    .unwrap();
}

#[test]
fn a_table_is_handed_on_only_when_its_thread_exits_with_every_slot_free() {
    // A thread exits with a span open elsewhere. Were its table handed to
    // the next thread, that span's end would free the next thread's slot.
    let held = std::thread::spawn(|| open::push(&context(4, 40)).unwrap()).join().unwrap();
    std::thread::spawn(move || {
        let mine = open::push(&context(5, 50)).unwrap();
        held.free();
        assert_eq!(open::innermost().unwrap().span_id, 50, "the other thread's end freed nothing of this one");
        mine.free();
    })
    .join()
    .unwrap();
    // One that exits with every slot free is taken again, and works alike.
    for i in 0..3 {
        std::thread::spawn(move || {
            let mine = open::push(&context(6, 60 + i)).unwrap();
            assert_eq!(open::innermost().unwrap().span_id, 60 + i);
            mine.free();
            assert_eq!(open::innermost(), None);
        })
        .join()
        .unwrap();
    }
}

/// A begin and an end event nobody listens to (never registered).
fn disabled() -> (&'static Tracepoint, &'static Tracepoint) {
    (Box::leak(Box::new(Tracepoint::placeholder())), Box::leak(Box::new(Tracepoint::placeholder())))
}

#[test]
fn a_guard_nobody_listens_to_passes_its_parent_on_to_itself_and_the_spans_inside() {
    std::thread::spawn(|| {
        let (begin, end) = disabled();
        let p = parent();
        let request = Span::begin_in(begin, end, Some(&p), &[]).unwrap();
        assert!(!request.is_recording());
        assert_eq!(request.context(), Some(p.clone()));
        assert_eq!(request.traceparent().unwrap().as_str(), PARENT);
        assert_eq!(current(), Some(p.clone()));
        {
            let inner = Span::begin(begin, end, &[]).unwrap();
            assert_eq!(inner.id(), 0);
            assert_eq!(inner.traceparent().unwrap().as_str(), PARENT, "the thread's innermost span, passed on");
        }
        drop(request);
        assert_eq!(current(), None);
        let alone = Span::begin(begin, end, &[]).unwrap();
        assert_eq!((alone.context(), alone.traceparent()), (None, None));
        let rootless = Span::begin_in(begin, end, None, &[]).unwrap();
        assert_eq!(rootless.context(), None, "under no parent, nothing to pass on");
        rootless.end().unwrap();
    })
    .join()
    .unwrap();
}

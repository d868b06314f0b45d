//! A span is two native events: its begin (id and trace context first, then its fields) and
//! its provider's `span_end` (the id). Nesting is their order on a thread;
//! an id links a span that ends on another thread. ftrace shows them as
//! it shows any event.

use crate::support::{clear_trace, gettid, set_ftrace, tracefs};

mod events {
    usertrace::tracepoints! {
        provider ut_spans;
        pub span outer(request_id: u64, path: &str);
        pub span inner(depth: i32);
    }
}

/// `(tid, event, fields as written)` of one `ut_spans_*` line.
type Line = (u32, String, Vec<(String, String)>);

/// Each `ut_spans_*` line, in order.
fn recorded() -> Vec<Line> {
    let text = std::fs::read_to_string(tracefs().join("trace")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|line| {
            let (head, rest) = line.split_once(": ut_spans_")?;
            let tid = head.split_whitespace().next()?.rsplit_once('-')?.1.parse().ok()?;
            let (event, fields) = rest.split_once(':')?;
            // ftrace writes some integers as `0x1f (31)`: the words without
            // `=` belong to the field before, whose hex form is kept.
            let fields = fields
                .split_whitespace()
                .filter_map(|f| f.split_once('='))
                .map(|(k, v)| {
                    let v = v.strip_prefix("0x").map_or(v.to_owned(), |h| u64::from_str_radix(h, 16).unwrap().to_string());
                    (k.to_owned(), v)
                })
                .collect();
            Some((tid, format!("ut_spans_{event}"), fields))
        })
        .collect()
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> &'a str {
    &fields.iter().find(|(k, _)| k == name).unwrap_or_else(|| panic!("no {name} in {fields:?}")).1
}

#[test]
fn nested_and_cross_thread_spans_arrive_in_order_with_their_fields_and_ids() {
    events::PROVIDER.register().unwrap();
    for event in [events::outer::NAME, events::inner::NAME, "ut_spans_span_end"] {
        set_ftrace(event, true);
    }
    clear_trace();

    let (outer_id, inner_id, moved_id, other_tid, trace_id);
    {
        let outer = usertrace::span!(events::outer(u64::MAX - 1, "/héllo")).unwrap();
        outer_id = outer.id();
        trace_id = outer.context().unwrap().trace_id;
        {
            let inner = usertrace::span!(events::inner(-3)).unwrap();
            inner_id = inner.id();
        }
        let moved = usertrace::span!(events::inner(7)).unwrap();
        moved_id = moved.id();
        other_tid = std::thread::spawn(move || {
            drop(moved);
            gettid()
        })
        .join()
        .unwrap();
    }
    for event in [events::outer::NAME, events::inner::NAME, "ut_spans_span_end"] {
        set_ftrace(event, false);
    }

    let ids = [outer_id, inner_id, moved_id];
    assert!(ids.iter().all(|&id| id != 0), "every span was begun: {ids:?}");
    assert!(outer_id != inner_id && inner_id != moved_id && outer_id != moved_id, "ids are distinct: {ids:?}");
    let me = gettid();
    let got_decimal: Vec<(u32, String, String)> = recorded()
        .iter()
        .map(|(tid, event, fields)| {
            let id_field = if event.ends_with("span_end") { "span_end" } else { "span_begin" };
            (*tid, event.clone(), field(fields, id_field).to_owned())
        })
        .collect();
    let expected = vec![
        (me, events::outer::NAME.to_owned(), outer_id.to_string()),
        (me, events::inner::NAME.to_owned(), inner_id.to_string()),
        (me, "ut_spans_span_end".to_owned(), inner_id.to_string()),
        (me, events::inner::NAME.to_owned(), moved_id.to_string()),
        (other_tid, "ut_spans_span_end".to_owned(), moved_id.to_string()),
        (me, "ut_spans_span_end".to_owned(), outer_id.to_string()),
    ];
    assert_eq!(got_decimal, expected);

    let lines = recorded();
    // The trace context after each begin's id, as ftrace prints it: outer
    // a new trace's root, inner and moved (begun inside it) its children.
    let context = |i: usize| {
        let f = &lines[i].2;
        [field(f, "trace_id_hi"), field(f, "trace_id_lo"), field(f, "parent_span_id")].map(str::to_owned)
    };
    let (hi, lo) = (((trace_id >> 64) as u64).to_string(), (trace_id as u64).to_string());
    assert_eq!(context(0), [hi.clone(), lo.clone(), "0".into()]);
    assert_eq!(context(1), [hi.clone(), lo.clone(), outer_id.to_string()]);
    assert_eq!(context(3), [hi, lo, outer_id.to_string()]);
    assert_eq!(field(&lines[0].2, "request_id"), (u64::MAX - 1).to_string());
    assert_eq!(field(&lines[0].2, "path"), "/héllo");
    // ftrace prints an s32 as its bits.
    assert_eq!(field(&lines[1].2, "depth"), (-3i32 as u32).to_string());
}

#[test]
fn while_nobody_listens_a_span_evaluates_nothing_and_emits_nothing() {
    events::PROVIDER.register().unwrap();
    clear_trace();
    let mut evaluated = false;
    let span = usertrace::span!(events::inner({
        evaluated = true;
        1
    }))
    .unwrap();
    assert_eq!(span.id(), 0);
    drop(span);
    assert!(!evaluated, "the arguments are evaluated only for a listener");
    assert!(recorded().is_empty(), "nothing was written: {:?}", recorded());
}

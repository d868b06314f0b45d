//! `ut_emit trace-client` and `trace-server`: two processes that continue
//! one W3C trace, the client handing the server a `traceparent` on its
//! command line as it would in a request's header.
//!
//!   ut_emit trace-client TRACEPARENT  once a tracer listens: ut_trace_client_request(n = 1) under
//!                                     TRACEPARENT (`-`: a new trace), holding ut_trace_client_call(n = 2),
//!                                     whose traceparent it hands to `ut_emit trace-server`, which it runs
//!                                     and waits for
//!   ut_emit trace-server TRACEPARENT  ut_trace_server_handle(n = 3) under TRACEPARENT (a dynamic span
//!                                     begun under a parent), holding ut_trace_server_query(n = 4) (a
//!                                     guard, the innermost span's child) and, inside that,
//!                                     ut_tracedb_db(n = 5), begun by id: it says nothing of its trace
//!
//! Each prints `span NAME TRACE_ID SPAN_ID PARENT_ID` per span as it
//! began it, ids in lowercase hex, `-` for what it does not know. The
//! server runs as its own service: `OTEL_SERVICE_NAME=ut-trace-server`,
//! `OTEL_RESOURCE_ATTRIBUTES=team=storage,tier=db%2Fprimary`.

use std::time::{Duration, Instant};

use usertrace::{DynamicTracepoint, Field, FieldType, Provider, TraceContext, Value};

mod events {
    usertrace::tracepoints! {
        provider ut_trace;
        pub span client_request(n: u32);
        pub span client_call(n: u32);
        pub span server_query(n: u32);
    }
}

const SERVER_SERVICE: &str = "ut-trace-server";
const SERVER_ATTRIBUTES: &str = "team=storage,tier=db%2Fprimary";

/// Waits (at most a minute) until `enabled` says a tracer listens.
fn wait_until(what: &str, enabled: impl Fn() -> bool) {
    let start = Instant::now();
    while !enabled() {
        if start.elapsed() > Duration::from_secs(60) {
            eprintln!("ut_emit: nobody attached to {what}");
            std::process::exit(3);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn print(name: &str, context: Option<&TraceContext>, parent: Option<u64>) {
    let trace = context.map_or("-".to_owned(), |c| format!("{:032x}", c.trace_id));
    let span = context.map_or("-".to_owned(), |c| format!("{:016x}", c.span_id));
    let parent = parent.map_or("-".to_owned(), |p| format!("{p:016x}"));
    println!("span {name} {trace} {span} {parent}");
}

fn parent_given(arg: &str) -> Option<TraceContext> {
    (arg != "-").then(|| TraceContext::from_traceparent(arg).expect("a valid traceparent"))
}

pub fn client(traceparent: &str) {
    events::PROVIDER.register().expect("register");
    for (name, enabled) in [("client_request", events::client_request::enabled as fn() -> bool), ("client_call", events::client_call::enabled)] {
        wait_until(name, enabled);
    }
    wait_until("span_end", || events::SPAN_END.enabled());
    let upstream = parent_given(traceparent);
    let request = usertrace::span!(events::client_request(1), parent = upstream.as_ref()).expect("begin");
    print(events::client_request::NAME, request.context().as_ref(), upstream.as_ref().map(|u| u.span_id));
    let call = usertrace::span!(events::client_call(2)).expect("begin");
    print(events::client_call::NAME, call.context().as_ref(), Some(request.id()));
    let handed = call.traceparent().expect("a recorded span has a traceparent");
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["trace-server", handed.as_str()])
        // Its own service, as a deployment names each service.
        .env("OTEL_SERVICE_NAME", SERVER_SERVICE)
        .env("OTEL_RESOURCE_ATTRIBUTES", SERVER_ATTRIBUTES)
        .status()
        .expect("run the server");
    assert!(status.success(), "the server failed: {status}");
}

pub fn server(traceparent: &str) {
    let parent = parent_given(traceparent);
    let provider = Provider::new("ut_trace").expect("valid provider name");
    let handle = provider.span("server_handle", vec![Field::new("n", FieldType::U32)]).expect("define");
    let end = provider.span_end().expect("define");
    let db_provider = Provider::new("ut_tracedb").expect("valid provider name");
    let db = db_provider.span("db", vec![Field::new("n", FieldType::U32)]).expect("define");
    let db_end = db_provider.span_end().expect("define");
    events::PROVIDER.register().expect("register");
    let dynamic: [&DynamicTracepoint; 4] = [&handle, &end, &db, &db_end];
    for tp in dynamic {
        wait_until(tp.name(), || tp.enabled());
    }
    wait_until("server_query", events::server_query::enabled);
    wait_until("span_end", || events::SPAN_END.enabled());
    let begun = handle.begin_span_in(parent.as_ref(), &[Value::U32(3)]).expect("begin");
    print(handle.name(), begun.context.as_ref(), parent.as_ref().map(|p| p.span_id));
    {
        // A guard: the innermost span open on this thread is its parent,
        // and the dynamic span above is none of the thread's guards: so it
        // is begun under it explicitly.
        let query = usertrace::span!(events::server_query(4), parent = begun.context.as_ref()).expect("begin");
        print(events::server_query::NAME, query.context().as_ref(), Some(begun.id));
        let db_id = db.begin_span(&[Value::U32(5)]).expect("begin");
        println!("span {} - {db_id:016x} -", db.name());
        db_end.end_span(db_id).expect("end");
    }
    end.end_span(begun.id).expect("end");
}

//! What the kernel tests share: the example producer, recorded from its
//! start by a perf session, and its events as `(field, type, value)`.
//!
//! # Safety
//! One `pre_exec` closure, which runs between fork and exec and makes one
//! async-signal-safe call (`fcntl`) on a descriptor the child inherited.
#![allow(unsafe_code)]

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use usertrace_consumer::{AttachRequests, Event, FieldKind, FieldValue, Output, Session, SessionOptions};

/// The tracefs mount point; panics (failing the test) without user_events,
/// because a kernel test must never pass by skipping.
pub fn tracefs() -> PathBuf {
    let status = usertrace::status();
    assert!(status.is_available(), "kernel tests need user_events: {status}");
    status.tracefs.unwrap()
}

/// A provider name no other test (or earlier run) uses.
pub fn unique(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    format!("utt_{prefix}_{}_{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// The `ut_tracing_emit` example, which `cargo test` builds beside the tests.
pub fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join("examples/ut_tracing_emit");
    assert!(path.exists(), "{} is missing: build with `cargo test --features kernel-tests`", path.display());
    path
}

/// One run of a producer, recorded from its start.
pub struct Run {
    pub events: Vec<Event>,
    pub pid: u32,
    /// Its `line N` lines, in order.
    pub lines: Vec<u32>,
    pub stdout: String,
}

/// Runs `program args` under a session recording `pattern`, launched as
/// `usertrace record -e PATTERN -- program args` launches it: the program's
/// registrations announce themselves on the handshake socket and wait for
/// the session to attach, so no event is written before it listens.
pub fn record(program: &Path, args: &[&str], pattern: &str) -> Run {
    tracefs();
    let options = SessionOptions { patterns: vec![pattern.to_owned()], ..SessionOptions::default() };
    let mut session = Session::open(&options).unwrap();
    let requests = AttachRequests::new().unwrap();
    let (fd, env) = requests.for_child(&options.patterns);
    session.listen_for_attach_requests(requests);
    let mut command = Command::new(program);
    command.args(args).envs(env).stdout(Stdio::piped());
    // SAFETY: runs in the forked child before exec; fcntl is
    // async-signal-safe, and `fd` is the child's copy of the socket.
    unsafe {
        command.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    let pid = child.id();
    let start = Instant::now();
    let mut outputs = Vec::new();
    loop {
        outputs.extend(session.poll(Duration::from_millis(50)).unwrap());
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{} {args:?} failed: {status}", program.display());
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "the producer did not finish");
    }
    outputs.extend(session.flush());
    assert_eq!(session.stats().lost_total(), 0, "events were lost");
    let mut stdout = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    let lines = stdout.lines().filter_map(|l| l.strip_prefix("line ")).map(|n| n.parse().unwrap()).collect();
    let events = outputs
        .into_iter()
        .filter_map(|o| match o {
            Output::Event(e) => Some(e),
            _ => None,
        })
        .collect();
    Run { events, pid, lines, stdout }
}

/// A field's value with its declared type: `u64`, `i64`, `f64`, `bool`,
/// `str` or `bytes`, as the core declares them to the kernel.
#[derive(Debug, Clone, PartialEq)]
pub enum Typed {
    U64(u64),
    I64(i64),
    F64(f64),
    Bool(bool),
    Str(String),
    Bytes(Vec<u8>),
}

pub fn s(text: &str) -> Typed {
    Typed::Str(text.to_owned())
}

/// Each field of `e`: its name and its value, typed by the field's
/// declaration in the tracepoint's format (kind and size), not only by
/// what the bytes decode to.
pub fn fields(e: &Event) -> Vec<(String, Typed)> {
    let values = e.fields().unwrap();
    assert_eq!(values.len(), e.format.fields.len());
    e.format
        .fields
        .iter()
        .zip(values)
        .map(|(declared, (name, value))| {
            let typed = match (&declared.kind, declared.size, value) {
                (FieldKind::Int { signed: false }, 8, FieldValue::Unsigned(v)) => Typed::U64(v),
                (FieldKind::Int { signed: true }, 8, FieldValue::Signed(v)) => Typed::I64(v),
                (FieldKind::F64, 8, FieldValue::F64(v)) => Typed::F64(v),
                (FieldKind::Bool, 1, FieldValue::Bool(v)) => Typed::Bool(v),
                (FieldKind::LocStr { relative: true }, 4, FieldValue::Str(v)) => Typed::Str(v.into_owned()),
                (FieldKind::LocBytes { relative: true }, 4, FieldValue::Bytes(v)) => Typed::Bytes(v.to_vec()),
                other => panic!("field {name} of {}: unexpected {other:?} ({declared:?})", e.name()),
            };
            (name.into_owned(), typed)
        })
        .collect()
}

/// `(name, value)` pairs, owned, for comparing with [`fields`].
pub fn expect(list: &[(&str, Typed)]) -> Vec<(String, Typed)> {
    list.iter().map(|(n, v)| ((*n).to_owned(), v.clone())).collect()
}

/// The event names of `run`, in order.
pub fn names(run: &Run) -> Vec<&str> {
    run.events.iter().map(Event::name).collect()
}

/// The value of `e`'s unsigned field `name`.
pub fn unsigned(e: &Event, name: &str) -> u64 {
    match fields(e).into_iter().find(|(n, _)| n == name) {
        Some((_, Typed::U64(v))) => v,
        other => panic!("{name} of {}: {other:?}", e.name()),
    }
}

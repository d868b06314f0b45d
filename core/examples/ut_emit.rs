//! A producer for the consumer's kernel tests and the CLI's acceptance
//! tests: each mode emits a known pattern of events once a tracer attaches.
//!
//!   ut_emit seq NAME COUNT [PAUSE_US]  n = 0..COUNT from the moment the bit flips (PAUSE_US apart)
//!   ut_emit all NAME [--on-stdin]   one event with a field of every type (after a line on stdin)
//!   ut_emit rename NAME [--on-stdin]  E1, rename to ut_renamed, E2, exec as ut-new-PID, E3 (E1 after a line on stdin)
//!   ut_emit unshare NAME            stage 0, unshare(CLONE_NEWUTS), stage 1, fork: stage 2 (uts, pidns inodes)
//!   ut_emit fork NAME N [WAIT_MS]   N children, each renamed ut_child_I, emit child=I
//!                                   (WAIT_MS after the tracepoint is enabled)
//!   ut_emit churn NAME WIDTH STOP   until file STOP exists, WIDTH children at a time that emit,
//!                                   rename, exec, emit, rename, emit and exit; no waiting for a tracer
//!   ut_emit spawn NAME COUNT WIDTH  COUNT short-lived children, at most WIDTH alive at once, each
//!                                   emitting child=I and exiting at once
//!   ut_emit register-while-announcing WANTED OTHER
//!                                   a thread registers WANTED (which a recorder that launched us
//!                                   asked for, so it waits in the attach handshake); after a line on
//!                                   stdin this thread registers OTHER and prints whether WANTED's
//!                                   registration was still waiting then
//!
//!   ut_emit spans PROVIDER          once PROVIDER_outer is enabled: outer(request_id, label) holding
//!                                   inner(depth, ratio) and a PROVIDER_note event (a u64 past 2^32,
//!                                   an i32 < 0, UTF-8, a float); a PROVIDER_handoff span ended on
//!                                   another thread; then a forked child ut_span_child begins
//!                                   PROVIDER_orphaned and exits with it open. Prints the span ids.
//!
//!   ut_emit span-exec PROVIDER      once enabled: PROVIDER_across_exec(step = 1) begins, then the
//!                                   process execs a copy of this program, /tmp/ut_exec_copy_PID,
//!                                   handing it the span id; the copy begins and ends its own
//!                                   PROVIDER_after_exec(step = 2), then ends the first span
//!
//!   ut_emit threads NAME THREADS COUNT
//!                                   once the bit flips, THREADS threads at once, each emitting
//!                                   thread = I, n = 0..COUNT as fast as it can
//!
//!   ut_emit bursts NAME BURSTS SIZE PERIOD_US [PAD]
//!                                   once the bit flips, BURSTS bursts of SIZE events n = 0.. back to
//!                                   back, PERIOD_US from the start of one to the start of the next;
//!                                   each event with a string `pad` of PAD bytes (0 by default)
//!
//!   ut_emit clock NAME COUNT        once the bit flips, COUNT events i = 0.., a millisecond apart,
//!                                   each between two reads of CLOCK_MONOTONIC, printed as
//!                                   `clock I BEFORE_NS AFTER_NS`
//!
//!   ut_emit span-flood PROVIDER COUNT  once enabled: PROVIDER_flood begins, COUNT PROVIDER_tick(n)
//!                                   events go out as fast as they can, then after 200 ms (for the
//!                                   recorder to drain) the span ends: losses land inside the span
//!
//!   ut_emit sched PROVIDER          once enabled, each span timed here with CLOCK_MONOTONIC and
//!                                   printed as `took NAME NS`: PROVIDER_sleep_span sleeps 300 ms;
//!                                   PROVIDER_spin_span burns 200 ms of its own CPU time pinned to the last CPU;
//!                                   PROVIDER_contended_span burns 400 ms pinned to CPU 0 beside a
//!                                   hog thread pinned there too; PROVIDER_pipe_span reads a pipe
//!                                   that `sh` (a process of its own) writes 200 ms later
//!
//!   ut_emit trace-client TRACEPARENT  two processes continuing one W3C trace (see ut_emit_modes/trace.rs)
//!   ut_emit trace-server TRACEPARENT
//!
//! It prints `ready PID` once registered, and exits 3 if nobody attaches
//! within a minute.

use std::ffi::CString;
use std::io::Write;
use std::time::{Duration, Instant};

use usertrace::{DynamicTracepoint, Field, FieldType, RegisterOptions, Value};

#[path = "ut_emit_modes/trace.rs"]
mod trace;

fn tracepoint(name: &str, fields: &[(&str, FieldType)]) -> DynamicTracepoint {
    let fields = fields.iter().map(|(n, t)| Field::owned(*n, *t)).collect();
    let tp = DynamicTracepoint::new(name, fields, RegisterOptions::default()).expect("valid definition");
    tp.register().expect("register");
    // After an exec nobody reads stdout any more: ignore a broken pipe.
    let mut out = std::io::stdout();
    let _ = writeln!(out, "ready {}", std::process::id()).and_then(|()| out.flush());
    tp
}

fn wait_enabled(tp: &DynamicTracepoint) {
    let start = Instant::now();
    while !tp.enabled() {
        if start.elapsed() > Duration::from_secs(60) {
            // The transport's reason names a handoff refused or failed.
            let transport = usertrace::transport().map_or_else(|e| e.to_string(), |t| t.to_string());
            eprintln!("ut_emit: nobody attached to {} ({transport})", tp.name());
            std::process::exit(3);
        }
        std::hint::spin_loop();
    }
}

fn emit(tp: &DynamicTracepoint, values: &[Value<'_>]) {
    if let Err(e) = tp.emit(values) {
        eprintln!("ut_emit: emit failed: {e}");
        std::process::exit(4);
    }
}

/// The inode of this thread's namespace `kind`, from `/proc/thread-self/ns`.
fn ns_inode(kind: &str) -> u64 {
    let link = std::fs::read_link(format!("/proc/thread-self/ns/{kind}")).unwrap();
    let link = link.to_string_lossy();
    link.split_once(":[").and_then(|(_, rest)| rest.strip_suffix(']')).and_then(|n| n.parse().ok()).unwrap()
}

/// `count` children, at most `width` alive at once, each emitting its
/// number and exiting: a long stream of processes that come and go.
fn spawn(name: &str, count: u32, width: usize) {
    let tp = tracepoint(name, &[("child", FieldType::U32)]);
    wait_enabled(&tp);
    let mut alive = 0;
    let reap = |alive: &mut usize| {
        let mut status = 0;
        // SAFETY: waiting for any of our own children.
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        assert!(pid > 0 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "a child failed");
        *alive -= 1;
    };
    for i in 0..count {
        if alive == width {
            reap(&mut alive);
        }
        // SAFETY: single-threaded program; the child only calls writev
        // (emit) and _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let code = if tp.emit(&[Value::U32(i)]).is_ok() { 0 } else { 4 };
            // SAFETY: _exit skips atexit handlers the parent owns.
            unsafe { libc::_exit(code) };
        }
        assert!(pid > 0, "fork failed");
        alive += 1;
    }
    while alive > 0 {
        reap(&mut alive);
    }
}

/// Registers `wanted` on a thread of its own, where it waits in the attach
/// handshake for a recorder that never attaches it; meanwhile (once told on
/// stdin) registers `other` here. Prints `other registered while wanted
/// waited: BOOL`.
fn register_while_announcing(wanted: &str, other: &str) {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let wanted_returned = Arc::new(AtomicBool::new(false));
    let done = wanted_returned.clone();
    let wanted = wanted.to_owned();
    let waiter = std::thread::spawn(move || {
        let tp = DynamicTracepoint::new(wanted, vec![Field::new("n", FieldType::U32)], RegisterOptions::default()).unwrap();
        tp.register().expect("register the wanted event");
        done.store(true, Ordering::SeqCst);
        tp
    });
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    let tp = DynamicTracepoint::new(other, vec![Field::new("n", FieldType::U32)], RegisterOptions::default()).unwrap();
    tp.register().expect("register the other event");
    let meanwhile = !wanted_returned.load(Ordering::SeqCst);
    println!("other registered while wanted waited: {meanwhile}");
    drop(waiter.join().unwrap());
}

/// Nested, cross-thread and unfinished spans under provider `name`.
fn spans(name: &str) {
    let provider = usertrace::Provider::new(name).expect("valid provider name");
    let outer = provider.span("outer", vec![Field::new("request_id", FieldType::U64), Field::new("label", FieldType::Str)]).unwrap();
    let inner = provider.span("inner", vec![Field::new("depth", FieldType::I32), Field::new("ratio", FieldType::F64)]).unwrap();
    let handoff = provider.span("handoff", vec![]).unwrap();
    let orphaned = provider.span("orphaned", vec![]).unwrap();
    let note = tracepoint(
        &provider.event_name("note"),
        &[("big", FieldType::U64), ("negative", FieldType::I32), ("text", FieldType::Str), ("ratio", FieldType::F64)],
    );
    let end = std::sync::Arc::new(provider.span_end().unwrap());
    for tp in [&outer, &inner, &handoff, &orphaned, &note, &*end] {
        wait_enabled(tp);
    }
    let outer_id = outer.begin_span(&[Value::U64(5_000_000_000), Value::Str("héllo ✓")]).unwrap();
    let inner_id = inner.begin_span(&[Value::I32(-7), Value::F64(0.25)]).unwrap();
    emit(&note, &[Value::U64(u64::MAX - 5), Value::I32(-42), Value::Str("日本語 ✓"), Value::F64(-2.5)]);
    end.end_span(inner_id).unwrap();
    end.end_span(outer_id).unwrap();
    let handoff_id = handoff.begin_span(&[]).unwrap();
    let other = end.clone();
    std::thread::Builder::new()
        .name("ut_span_ender".into())
        .spawn(move || other.end_span(handoff_id).unwrap())
        .unwrap()
        .join()
        .unwrap();
    // SAFETY: the child only calls prctl, writev (begin_span) and _exit.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        set_name("ut_span_child");
        let code = if orphaned.begin_span(&[]).is_ok() { 0 } else { 4 };
        // SAFETY: _exit skips atexit handlers the parent owns.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child failed");
    println!("spans outer={outer_id} inner={inner_id} handoff={handoff_id} child={pid}");
}

/// A span begun before an exec and ended by the program exec'd, which
/// is handed its id, as a wrapper hands work to the program it runs. The
/// new program is a copy of this one, not a link, so that /proc/PID/exe
/// names it.
fn span_exec(name: &str) {
    let provider = usertrace::Provider::new(name).expect("valid provider name");
    let across = provider.span("across_exec", vec![Field::new("step", FieldType::U32)]).unwrap();
    wait_enabled(&across);
    let mut out = std::io::stdout();
    let _ = writeln!(out, "ready {}", std::process::id()).and_then(|()| out.flush());
    let id = across.begin_span(&[Value::U32(1)]).unwrap();
    let copy = format!("/tmp/ut_exec_copy_{}", std::process::id());
    std::fs::copy(std::env::current_exe().unwrap(), &copy).unwrap();
    let err = std::os::unix::process::CommandExt::exec(std::process::Command::new(&copy).args(["span-exec-target", name, &id.to_string()]));
    panic!("exec {copy}: {err}");
}

/// `threads` threads emitting at once, each its own numbered sequence, so
/// a recording can be checked event by event: the emit path is counted in
/// per-thread state, and this is it under load.
fn threads(name: &str, threads: u32, count: u64) {
    let tp = tracepoint(name, &[("thread", FieldType::U32), ("n", FieldType::U64)]);
    wait_enabled(&tp);
    let all_started = std::sync::Barrier::new(threads as usize);
    std::thread::scope(|s| {
        for thread in 0..threads {
            let (tp, all_started) = (&tp, &all_started);
            s.spawn(move || {
                all_started.wait();
                for n in 0..count {
                    emit(tp, &[Value::U32(thread), Value::U64(n)]);
                }
            });
        }
    });
}

/// Bursts of events on a fixed period, as a program that does a piece of
/// work now and then traces it.
fn bursts(name: &str, bursts: u64, size: u64, period_us: u64, pad: &str) {
    let tp = tracepoint(name, &[("n", FieldType::U64), ("pad", FieldType::Str)]);
    wait_enabled(&tp);
    let period = Duration::from_micros(period_us);
    let start = Instant::now();
    let mut n = 0;
    for burst in 1..=bursts {
        for _ in 0..size {
            emit(&tp, &[Value::U64(n), Value::Str(pad)]);
            n += 1;
        }
        // On the period, not after a pause: a slow burst does not slow the rate.
        let next = start + period * burst as u32;
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
}

/// Events each between two reads of the monotonic clock, for a test of
/// the time the recorder gives them.
fn clock(name: &str, count: u32) {
    let tp = tracepoint(name, &[("i", FieldType::U32)]);
    wait_enabled(&tp);
    let now = || {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid, writable timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    };
    let mut lines = String::new();
    for i in 0..count {
        let before = now();
        emit(&tp, &[Value::U32(i)]);
        let after = now();
        lines.push_str(&format!("clock {i} {before} {after}\n"));
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut out = std::io::stdout();
    let _ = out.write_all(lines.as_bytes()).and_then(|()| out.flush());
}

/// A span with a flood of events inside it, for losses within a span.
fn span_flood(name: &str, count: u64) {
    let provider = usertrace::Provider::new(name).expect("valid provider name");
    let flood = provider.span("flood", vec![]).unwrap();
    let end = provider.span_end().unwrap();
    let tick = tracepoint(&provider.event_name("tick"), &[("n", FieldType::U64)]);
    for tp in [&flood, &end, &tick] {
        wait_enabled(tp);
    }
    let id = flood.begin_span(&[]).unwrap();
    for n in 0..count {
        emit(&tick, &[Value::U64(n)]);
    }
    std::thread::sleep(Duration::from_millis(200));
    end.end_span(id).unwrap();
}

/// Pins the calling thread to `cpu`.
fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is an empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET writes one bit inside `set`; `cpu` is below the CPU count.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size given.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    assert_eq!(rc, 0, "sched_setaffinity({cpu})");
}

/// Burns CPU until `d` of wall time has passed.
fn burn(d: Duration) {
    let start = Instant::now();
    let mut x = 0u64;
    while start.elapsed() < d {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
}

/// This thread's CPU time so far.
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec, which `now` is.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Burns CPU until this thread has run for `d` on a CPU: time it waits
/// while preempted does not count, so it is on-CPU for `d` whatever else
/// the machine runs.
fn burn_cpu(d: Duration) {
    let start = thread_cpu_time();
    let mut x = 0u64;
    while thread_cpu_time() - start < d {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
}

fn sched(name: &str) {
    let provider = usertrace::Provider::new(name).expect("valid provider name");
    let spans: Vec<_> = ["sleep_span", "spin_span", "contended_span", "pipe_span"].iter().map(|s| provider.span(s, vec![]).unwrap()).collect();
    let end = provider.span_end().unwrap();
    for tp in spans.iter().chain([&end]) {
        wait_enabled(tp);
    }
    // Online CPUs, not our affinity mask: a recorder run under `taskset -c 0`
    // leaves the last CPU to the spin.
    // SAFETY: sysconf reads a system value and touches no memory of ours.
    let cpus = usize::try_from(unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }).unwrap_or(1).max(1);
    let timed = |i: usize, label: &str, body: &mut dyn FnMut()| {
        let start = Instant::now();
        let id = spans[i].begin_span(&[]).unwrap();
        body();
        end.end_span(id).unwrap();
        println!("took {label} {}", start.elapsed().as_nanos());
    };
    timed(0, "sleep_span", &mut || std::thread::sleep(Duration::from_millis(300)));
    pin(cpus - 1);
    // 200 ms on a CPU, not of wall time: a busy host that preempts the
    // spin makes the span longer, never its on-CPU time shorter.
    timed(1, "spin_span", &mut || burn_cpu(Duration::from_millis(200)));
    pin(0);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hog = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            pin(0);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                burn(Duration::from_millis(1));
            }
        })
    };
    // The hog is running before the span begins.
    std::thread::sleep(Duration::from_millis(50));
    timed(2, "contended_span", &mut || burn(Duration::from_millis(400)));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    hog.join().unwrap();
    let mut writer = std::process::Command::new("sh").args(["-c", "sleep 0.2; echo go"]).stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut out = writer.stdout.take().unwrap();
    timed(3, "pipe_span", &mut || {
        let mut byte = [0u8; 1];
        std::io::Read::read_exact(&mut out, &mut byte).unwrap();
    });
    writer.wait().unwrap();
    // Its threads now (the main one, and any the library started, such as
    // the registrar): a recording that follows this process follows them.
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        println!("thread {}", task.unwrap().file_name().to_string_lossy());
    }
}

fn set_name(name: &str) {
    let c = CString::new(name).unwrap();
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, c.as_ptr() as libc::c_ulong, 0, 0, 0) };
}

const STAGE: &[(&str, FieldType)] = &[("stage", FieldType::U32), ("note", FieldType::Str)];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or_else(|| panic!("missing argument {i}: see the doc"));
    match arg(1) {
        "seq" => {
            let count: u64 = arg(3).parse().unwrap();
            let pause = Duration::from_micros(args.get(4).map_or(0, |p| p.parse().unwrap()));
            let tp = tracepoint(arg(2), &[("n", FieldType::U64)]);
            wait_enabled(&tp);
            for n in 0..count {
                emit(&tp, &[Value::U64(n)]);
                if !pause.is_zero() {
                    std::thread::sleep(pause);
                }
            }
        }
        "all" => {
            let tp = tracepoint(
                arg(2),
                &[
                    ("u8v", FieldType::U8),
                    ("u16v", FieldType::U16),
                    ("u32v", FieldType::U32),
                    ("u64v", FieldType::U64),
                    ("i8v", FieldType::I8),
                    ("i16v", FieldType::I16),
                    ("i32v", FieldType::I32),
                    ("i64v", FieldType::I64),
                    ("flag", FieldType::Bool),
                    ("f32v", FieldType::F32),
                    ("f64v", FieldType::F64),
                    ("arr", FieldType::CharArray(8)),
                    ("msg", FieldType::Str),
                    ("blob", FieldType::Bytes),
                ],
            );
            wait_enabled(&tp);
            wait_for_stdin_if_asked(&args);
            emit(
                &tp,
                &[
                    Value::U8(250),
                    Value::U16(65_000),
                    Value::U32(4_000_000_000),
                    Value::U64(u64::MAX - 1),
                    Value::I8(-100),
                    Value::I16(-30_000),
                    Value::I32(-2_000_000_000),
                    Value::I64(i64::MIN + 1),
                    Value::Bool(true),
                    Value::F32(1.5),
                    Value::F64(-2.25),
                    Value::Str("abc"),
                    Value::Str("héllo wörld"),
                    Value::Bytes(&[0xde, 0xad, 0xbe, 0xef]),
                ],
            );
        }
        "rename" => {
            let tp = tracepoint(arg(2), STAGE);
            wait_enabled(&tp);
            wait_for_stdin_if_asked(&args);
            emit(&tp, &[Value::U32(1), Value::Str("E1")]);
            set_name("ut_renamed");
            emit(&tp, &[Value::U32(2), Value::Str("E2")]);
            let link = format!("/tmp/ut-new-{}", std::process::id());
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(std::env::current_exe().unwrap(), &link).unwrap();
            drop(tp);
            let err = std::os::unix::process::CommandExt::exec(std::process::Command::new(&link).args(["exec-target", arg(2)]));
            panic!("exec {link}: {err}");
        }
        "exec-target" => {
            let tp = tracepoint(arg(2), STAGE);
            // argv[0] is the symlink (current_exe() would be its target).
            let _ = std::fs::remove_file(&args[0]);
            wait_enabled(&tp);
            emit(&tp, &[Value::U32(3), Value::Str("E3")]);
        }
        "unshare" => {
            // stage 0 as started, stage 1 after unshare(CLONE_NEWUTS), stage
            // 2 from a child forked after that; each with the uts and pid
            // namespace inodes /proc shows it at the time.
            let fields = [("stage", FieldType::U32), ("uts", FieldType::U64), ("pidns", FieldType::U64)];
            let tp = tracepoint(arg(2), &fields);
            wait_enabled(&tp);
            let emit_stage = |stage| emit(&tp, &[Value::U32(stage), Value::U64(ns_inode("uts")), Value::U64(ns_inode("pid"))]);
            emit_stage(0);
            // SAFETY: unshare takes flags only.
            assert_eq!(unsafe { libc::unshare(libc::CLONE_NEWUTS) }, 0, "unshare: {}", std::io::Error::last_os_error());
            emit_stage(1);
            // SAFETY: single-threaded program; the child reads /proc, emits
            // and calls _exit.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                emit_stage(2);
                // SAFETY: _exit skips atexit handlers the parent owns.
                unsafe { libc::_exit(0) };
            }
            assert!(pid > 0, "fork failed");
            let mut status = 0;
            // SAFETY: waiting for our own child.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            assert_eq!(status, 0, "child failed");
        }
        "fork" => {
            let n: u32 = arg(3).parse().unwrap();
            let tp = tracepoint(arg(2), &[("child", FieldType::U32)]);
            wait_enabled(&tp);
            // perf record sets the bit when it opens its event, and enables
            // that event only once it has read /proc: events before then
            // are not recorded.
            if let Some(wait) = std::env::args().nth(4) {
                std::thread::sleep(std::time::Duration::from_millis(wait.parse().unwrap()));
            }
            let mut children = Vec::new();
            for i in 0..n {
                // SAFETY: single-threaded program; the child only calls
                // prctl, writev (emit) and _exit.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    set_name(&format!("ut_child_{i}"));
                    let code = if tp.emit(&[Value::U32(i)]).is_ok() { 0 } else { 4 };
                    // SAFETY: _exit skips atexit handlers the parent owns.
                    unsafe { libc::_exit(code) };
                }
                assert!(pid > 0, "fork failed");
                children.push(pid);
            }
            for pid in children {
                let mut status = 0;
                // SAFETY: waiting for our own child.
                unsafe { libc::waitpid(pid, &mut status, 0) };
                assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "child {pid} failed");
            }
        }
        "spans" => spans(arg(2)),
        "span-exec" => span_exec(arg(2)),
        "span-exec-target" => {
            // argv[0] is the copy: remove it, the process keeps its image.
            let _ = std::fs::remove_file(&args[0]);
            let across: u64 = arg(3).parse().unwrap();
            let provider = usertrace::Provider::new(arg(2)).expect("valid provider name");
            let after = provider.span("after_exec", vec![Field::new("step", FieldType::U32)]).unwrap();
            let end = provider.span_end().unwrap();
            wait_enabled(&after);
            wait_enabled(&end);
            let id = after.begin_span(&[Value::U32(2)]).unwrap();
            end.end_span(id).unwrap();
            // The span the old program began: its id came in argv.
            end.end_span(across).unwrap();
        }
        "span-flood" => span_flood(arg(2), arg(3).parse().unwrap()),
        "sched" => sched(arg(2)),
        "bursts" => {
            let pad = "p".repeat(args.get(6).map_or(0, |p| p.parse().unwrap()));
            bursts(arg(2), arg(3).parse().unwrap(), arg(4).parse().unwrap(), arg(5).parse().unwrap(), &pad)
        }
        "clock" => clock(arg(2), arg(3).parse().unwrap()),
        "threads" => threads(arg(2), arg(3).parse().unwrap(), arg(4).parse().unwrap()),
        "churn" => churn(arg(2), arg(3).parse().unwrap(), std::path::Path::new(arg(4))),
        "spawn" => spawn(arg(2), arg(3).parse().unwrap(), arg(4).parse().unwrap()),
        "register-while-announcing" => register_while_announcing(arg(2), arg(3)),
        "trace-client" => trace::client(arg(2)),
        "trace-server" => trace::server(arg(2)),
        "churn-exec" => {
            // The second half of a churn child, under its exec'd name.
            let tp = quiet_tracepoint(arg(2), CHURN);
            let seq: u32 = arg(3).parse().unwrap();
            emit_as_is(&tp, seq, 2);
            set_name(&format!("x{seq}"));
            emit_as_is(&tp, seq, 3);
        }
        other => panic!("unknown mode {other}"),
    }
}

/// Every churn event says who emitted it: pid, and the comm the kernel had
/// for the thread at that moment (read from /proc just before; only the
/// process itself renames it), so a consumer's attribution can be checked
/// event by event.
const CHURN: &[(&str, FieldType)] =
    &[("pid", FieldType::U32), ("seq", FieldType::U32), ("stage", FieldType::U32), ("comm", FieldType::Str)];

/// Registers without printing `ready` (for exec'd churn children) and
/// without waiting for a tracer.
fn quiet_tracepoint(name: &str, fields: &[(&str, FieldType)]) -> DynamicTracepoint {
    let fields = fields.iter().map(|(n, t)| Field::owned(*n, *t)).collect();
    let tp = DynamicTracepoint::new(name, fields, RegisterOptions::default()).expect("valid definition");
    tp.register().expect("register");
    tp
}

/// Emits pid, seq, stage and the current comm; a write nobody traces is fine.
fn emit_as_is(tp: &DynamicTracepoint, seq: u32, stage: u32) {
    let comm = std::fs::read_to_string("/proc/thread-self/comm").expect("own comm");
    let comm = comm.strip_suffix('\n').unwrap_or(&comm);
    emit(tp, &[Value::U32(std::process::id()), Value::U32(seq), Value::U32(stage), Value::Str(comm)]);
}

/// Processes that fork, rename, exec and exit all the time, so a session
/// opened meanwhile sees each of these happen before, during and after its
/// /proc walk. The parent emits stage 9 and renames itself now and then.
/// It goes on until `stop` exists (at most a minute).
fn churn(name: &str, width: usize, stop: &std::path::Path) {
    let tp = tracepoint(name, CHURN);
    let link = format!("/tmp/ut-cx-{}", std::process::id());
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(std::env::current_exe().unwrap(), &link).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut seq, mut live) = (0u32, 0usize);
    let reap = |live: &mut usize| {
        let mut status = 0;
        // SAFETY: waits for any of our own children.
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        assert!(pid > 0, "waitpid: {}", std::io::Error::last_os_error());
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "churn child {pid} failed: {status:#x}");
        *live -= 1;
    };
    while !stop.exists() && Instant::now() < deadline {
        if seq % 16 == 0 {
            set_name(&format!("p{seq}"));
        }
        emit_as_is(&tp, seq, 9);
        // SAFETY: single-threaded program; the child renames, emits and execs.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            emit_as_is(&tp, seq, 0);
            set_name(&format!("k{seq}"));
            emit_as_is(&tp, seq, 1);
            let err = std::os::unix::process::CommandExt::exec(
                std::process::Command::new(&link).args(["churn-exec", name, &seq.to_string()]),
            );
            eprintln!("ut_emit: exec {link}: {err}");
            // SAFETY: _exit skips atexit handlers the parent owns.
            unsafe { libc::_exit(5) };
        }
        assert!(pid > 0, "fork failed");
        seq += 1;
        live += 1;
        while live >= width {
            reap(&mut live);
        }
    }
    while live > 0 {
        reap(&mut live);
    }
    let _ = std::fs::remove_file(&link);
}

/// With `--on-stdin` after the mode's NAME, waits for a line on stdin:
/// perf enables its events only after its /proc walk, so a test that
/// records with it says when to begin.
fn wait_for_stdin_if_asked(args: &[String]) {
    if args.get(3).map(String::as_str) == Some("--on-stdin") {
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
    }
}

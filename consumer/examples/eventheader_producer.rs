//! A producer nobody here wrote the encoder of: EventHeader events written
//! by Microsoft's `eventheader` (static, compile-time events) and
//! `eventheader_dynamic` (runtime-defined events), for the consumer's
//! guest-kernel tests (tests/kernel/eventheader_events_*.rs).
//!
//! `eventheader_producer [--on-stdin | AFTER_EXEC_PATH]`: registers the
//! providers `UsertraceEhStatic` and `UsertraceEhDynamic`, prints
//! `ready <pid>`, and as soon as a recorder enables them (within 60 s)
//! writes:
//! - `UsertraceEhStatic_L4K1` `Every`: a field of every type the static
//!   macros have (u64 past 2^63, UTF-16 strings, nested structs, arrays);
//! - `UsertraceEhStatic_L4K1` `Work` start and stop, with activity ids;
//! - `UsertraceEhDynamic_L5K2` `Dynamic`: runtime-defined fields, arrays of
//!   strings and of structs, and a 128-bit value.
//!
//! With `--on-stdin` it waits for a line on stdin before writing, so that
//! several recorders (`usertrace record` and `perf record`) can all attach
//! first: each write goes out as soon as any one of them enables it.
//!
//! With AFTER_EXEC_PATH (a link to this program under another name) it then
//! execs that path with the argument `after-exec`, which registers again and
//! writes `UsertraceEhStatic_L4K1` `AfterExec { u32 pid }`, so a recorder's
//! process names can be checked across the exec.
//!
//! Exit status 0, 2 if nobody enabled the events in time, 3 if a provider
//! could not register.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

use eventheader as eh;
use eventheader_dynamic as ehd;

eh::define_provider!(STATIC, "UsertraceEhStatic");

/// The activity the `Work` start and stop events carry, and its parent.
pub const ACTIVITY: [u8; 16] =
    [0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f];
pub const PARENT: [u8; 16] =
    [0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let after_exec = args.get(1).is_some_and(|a| a == "after-exec");
    let on_stdin = args.get(1).is_some_and(|a| a == "--on-stdin");
    // SAFETY: the provider is a static of this program, which never unloads;
    // it is unregistered before exit and before exec (register's contract).
    let error = unsafe { STATIC.register() };
    if error != 0 {
        eprintln!("eventheader_producer: registering UsertraceEhStatic: errno {error}");
        std::process::exit(3);
    }
    let mut dynamic = ehd::Provider::new("UsertraceEhDynamic", &ehd::Provider::new_options());
    let set = dynamic.register_set(ehd::Level::Verbose, 0x2);
    if set.errno() != 0 {
        eprintln!("eventheader_producer: registering UsertraceEhDynamic: errno {}", set.errno());
        std::process::exit(3);
    }

    // Said once, by the first image: after the exec nobody reads the pipe
    // any more, and a write to it would fail.
    if !after_exec {
        println!("ready {}", std::process::id());
        std::io::stdout().flush().unwrap();
    }
    if on_stdin {
        let mut go = String::new();
        std::io::stdin().read_line(&mut go).unwrap();
    }

    // Each write_event! site has its own tracepoint and enable bit, and
    // returns 0 only once a recorder has enabled it; the first event is
    // retried until then. provider_enabled! is not used: with rust-lld its
    // tracepoint can be left out of the provider's linker section (seen with
    // Rust 1.95), and is then never registered nor enabled.
    let deadline = Instant::now() + Duration::from_secs(60);
    let retry = |what: &str, write: &mut dyn FnMut() -> u32| loop {
        if write() == 0 {
            return;
        }
        if Instant::now() > deadline {
            eprintln!("eventheader_producer: nobody enabled {what} in 60 s");
            STATIC.unregister();
            std::process::exit(2);
        }
        std::thread::sleep(Duration::from_millis(5));
    };

    if after_exec {
        retry("AfterExec", &mut write_after_exec);
        STATIC.unregister();
        return;
    }

    retry("Every", &mut write_every);
    assert_eq!(write_activity(), 0, "write Work");
    retry("UsertraceEhDynamic_L5K2", &mut || u32::from(!set.enabled()));
    assert_eq!(write_dynamic(&set), 0, "write Dynamic");

    if let Some(path) = args.get(1).filter(|_| !on_stdin) {
        STATIC.unregister();
        dynamic.unregister();
        let error = std::process::Command::new(path).arg("after-exec").exec();
        panic!("exec {path}: {error}");
    }
    STATIC.unregister();
}

fn write_after_exec() -> u32 {
    let pid = std::process::id();
    eh::write_event!(STATIC, "AfterExec", level(Informational), keyword(0x1), u32("pid", &pid))
}

fn utf16(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

fn utf32(s: &str) -> Vec<u32> {
    s.chars().map(u32::from).collect()
}

fn write_every() -> u32 {
    let guid = eh::Guid::from_bytes_be(&[0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8]);
    let mut ipv6 = [0u8; 16];
    ipv6[15] = 1;
    let wide = utf16("wörld €");
    let wider = utf32("a😀");
    eh::write_event!(
        STATIC,
        "Every",
        level(Informational),
        keyword(0x1),
        id_version(5, 1),
        tag(0x107),
        u8("u8", &200u8),
        i8("i8", &-100i8),
        u16("u16", &65_000u16),
        i16("i16", &-30_000i16),
        u32("u32", &4_000_000_000u32),
        i32("i32", &-2_000_000_000i32),
        u64("u64", &(u64::MAX - 1)),
        u64("past63", &(1u64 << 63 | 5)),
        i64("i64", &i64::MIN),
        u32_hex("hex", &0xdead_beefu32),
        errno("errno", &2),
        pid("pid", &1234u32),
        time64("time", &86_400i64),
        bool8("yes", &true),
        bool32("odd_bool", &7),
        f32("f32", &1.5f32),
        f64("f64", &-0.25f64),
        guid("guid", &guid),
        ipv4("ipv4", &[127, 0, 0, 1]),
        ipv6("ipv6", &ipv6),
        // A port travels in network byte order, as the caller gives it.
        port("port", &8080u16.to_be()),
        char16("c16", &u16::from(b'Z')),
        str8("s8", "héllo"),
        cstr8("z8", "zero-terminated"),
        str16("s16", &wide),
        cstr16("z16", &wide),
        str32("s32", &wider),
        cstr32("z32", &wider),
        str8_json("json", r#"{"a":1}"#),
        binary("bin", &[0xde, 0xad]),
        u32_slice("arr", &[1u32, 2, 3]),
        i16_slice("neg", &[-1i16, -2]),
        struct("pt", {
            u32("x", &7u32),
            struct("inner", {
                i8("y", &-2i8),
                str16("name", &wide),
            }),
        }),
    )
}

/// Both writes' results: 0 if both were written.
fn write_activity() -> u32 {
    let e = eh::write_event!(
        STATIC,
        "Work",
        level(Informational),
        keyword(0x1),
        opcode(ActivityStart),
        activity_id(&ACTIVITY),
        related_id(&PARENT),
        str8("what", "compile"),
    );
    e | eh::write_event!(
        STATIC,
        "Work",
        level(Informational),
        keyword(0x1),
        opcode(ActivityStop),
        activity_id(&ACTIVITY),
        u32("status", &0u32),
    )
}

/// The 128-bit value of `Dynamic`: bytes 0x00 to 0x0f.
pub const V128: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

fn write_dynamic(set: &ehd::EventSet) -> i32 {
    let mut b = ehd::EventBuilder::new();
    b.reset("Dynamic", 0x22)
        .id_version(9, 2)
        .add_value("big", u64::MAX, ehd::FieldFormat::Default, 0)
        .add_value("signed", -5i32, ehd::FieldFormat::SignedInt, 0)
        .add_value("v128", V128, ehd::FieldFormat::Default, 0)
        .add_str("wide", utf16("grüße"), ehd::FieldFormat::Default, 0)
        .add_str_sequence("names", ["alpha", "beta"], ehd::FieldFormat::Default, 0)
        .add_value_sequence("floats", &[0.5f64, -1.0], ehd::FieldFormat::Float, 0)
        .add_struct("outer", 2, 0)
        .add_value("a", 1u8, ehd::FieldFormat::Default, 0)
        .add_struct("deep", 1, 0)
        .add_cstr("leaf", "end", ehd::FieldFormat::Default, 0);
    b.write(set, None, None)
}

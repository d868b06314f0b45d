//! `convert`, `report` and `export` of a file show a progress bar (bytes
//! read against the file's size) on a terminal, and nothing more anywhere
//! else: with stderr a pipe, what they print is what they printed before
//! there was a bar; with `-q`, or reading standard input, a terminal gets
//! no bar either. The terminal is a pseudo-terminal this test opens, so it
//! runs on any host.

use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use usertrace_output::{jsonl, Record, Value};

mod support;

/// A recording of some 5 MB: 12,000 events of about 400 bytes.
fn recording(dir: &Path) -> PathBuf {
    let records: Vec<Record> = (0..12_000)
        .map(|n| support::worker_event(n, "job_done", vec![("n".into(), Value::Unsigned(n)), ("pad".into(), Value::Str("x".repeat(300)))]))
        .collect();
    let file = dir.join("recording.jsonl");
    jsonl::write_file(&file, &records).unwrap();
    assert!(std::fs::metadata(&file).unwrap().len() > 4 << 20);
    file
}

/// Runs `usertrace ARGS` with its stderr on a new pseudo-terminal and its
/// standard input from `stdin`; returns its exit code and what it wrote to
/// the terminal. Fails the test after two minutes.
fn on_a_terminal(args: &[&str], stdin: Stdio) -> (Option<i32>, String) {
    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize { ws_row: 24, ws_col: 120, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: openpty(3) writes the descriptors it opens to `master` and
    // `slave`; the name may be NULL, the termios NULL (the defaults), and
    // the window size points at one, which it only reads.
    let opened = unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), &size) };
    assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: openpty just opened both, and nothing else owns them.
    let (mut master, slave) = unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut child = {
        // The command, and with it this process's copy of the terminal's
        // slave side, is dropped once the child has its own: reading the
        // master then ends (EIO) when the child is done with it.
        let mut command = Command::new(env!("CARGO_BIN_EXE_usertrace"));
        command.args(args).stdin(stdin).stdout(Stdio::null()).stderr(Stdio::from(slave));
        command.spawn().unwrap()
    };
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        // EIO: the slave side is closed, and everything was read.
        while let Ok(n @ 1..) = master.read(&mut buf) {
            out.extend_from_slice(&buf[..n]);
        }
        out
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("usertrace {args:?} still ran after 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status.code(), String::from_utf8_lossy(&reader.join().unwrap()).into_owned())
}

#[test]
fn off_a_terminal_stderr_says_only_what_it_said_before() {
    let dir = support::scratch("progress-pipe");
    let input = recording(&dir);
    let input = input.to_str().unwrap();
    for out in ["out.jsonl", "out.pftrace", "out.json"] {
        let out = dir.join(out);
        let o = Command::new(env!("CARGO_BIN_EXE_usertrace")).args(["convert", input, out.to_str().unwrap()]).output().unwrap();
        assert_eq!((o.status.code(), String::from_utf8_lossy(&o.stderr).as_ref()), (Some(0), ""), "{}", out.display());
    }
    let o = Command::new(env!("CARGO_BIN_EXE_usertrace")).args(["report", input]).output().unwrap();
    assert_eq!((o.status.code(), String::from_utf8_lossy(&o.stderr).as_ref()), (Some(0), ""));
    assert!(String::from_utf8_lossy(&o.stdout).contains("job_done"));
    // Nobody listens at port 9: the summary says what was not sent, and
    // every line of stderr is one of export's own, with no drawing in it.
    let o = support::usertrace_without_otel_env(&["export", input, "--otlp", "http://127.0.0.1:9", "--timeout", "1"], &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(!stderr.is_empty() && stderr.lines().all(|l| l.starts_with("usertrace export: ")), "{stderr}");
    assert!(!stderr.contains('\r') && !stderr.contains('\x1b'), "{stderr:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn on_a_terminal_convert_shows_the_bytes_read_against_the_file_s_size() {
    let dir = support::scratch("progress-pty");
    let input = recording(&dir);
    let size = std::fs::metadata(&input).unwrap().len();
    let (input, out) = (input.to_str().unwrap(), dir.join("out.pftrace"));
    let (code, shown) = on_a_terminal(&["convert", input, out.to_str().unwrap()], Stdio::null());
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("usertrace convert [") && shown.contains(": reading "), "{shown:?}");
    // indicatif's binary units: the file's size in MiB, to two decimals.
    let total = format!("/{:.2} MiB (", size as f64 / f64::from(1 << 20));
    assert!(shown.contains(&total), "{total} in {shown:?}");
    // One line, redrawn in place, and erased at the end.
    assert!(!shown.contains('\n') && shown.ends_with("\r\x1b[2K"), "{shown:?}");
    assert!(out.exists());

    // A perf.data file: how far into its records the reader has come.
    let archive = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/archive.data");
    let size = std::fs::metadata(&archive).unwrap().len();
    let (code, shown) = on_a_terminal(&["convert", archive.to_str().unwrap(), dir.join("archive.jsonl").to_str().unwrap()], Stdio::null());
    assert_eq!(code, Some(0), "{shown}");
    let total = format!("/{:.2} KiB (", size as f64 / 1024.0);
    assert!(shown.contains("usertrace convert [") && shown.contains(&total), "{total} in {shown:?}");

    // -q, or the recording on standard input: nothing at all.
    let (code, shown) = on_a_terminal(&["-q", "convert", input, out.to_str().unwrap()], Stdio::null());
    assert_eq!((code, shown.as_str()), (Some(0), ""));
    let (code, shown) = on_a_terminal(&["convert", "-", out.to_str().unwrap()], Stdio::from(File::open(input).unwrap()));
    assert_eq!((code, shown.as_str()), (Some(0), ""));
    std::fs::remove_dir_all(&dir).unwrap();
}

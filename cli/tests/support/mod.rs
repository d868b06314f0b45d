//! What the host CLI tests share: scratch directories and their entries,
//! the peak memory of the children a test ran, a worker's event, and
//! running `usertrace` with a clean OTLP environment or within a time
//! limit.
#![allow(dead_code)] // each test file uses its own part

use std::path::PathBuf;
use std::process::{Command, Output};

use usertrace_output::{EventRecord, Record, Value};

/// An empty directory of this test process's own under the system's
/// temporary directory, named after `test`.
pub fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("usertrace-cli-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The largest resident set of any child waited for so far, in bytes:
/// getrusage(RUSAGE_CHILDREN) covers every child this process has waited
/// for, so a file that reads it holds one test.
pub fn children_peak_rss() -> u64 {
    // SAFETY: getrusage(2) writes one `struct rusage` to the pointer,
    // which points at one, zeroed.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage), 0);
        usage
    };
    // ru_maxrss is in KiB on Linux.
    usage.ru_maxrss as u64 * 1024
}

/// Event `event` of the worker (pid and tid 7) at 1000 + `n` ns.
pub fn worker_event(n: u64, event: &str, fields: Vec<(String, Value)>) -> Record {
    Record::Event(EventRecord {
        time_ns: 1_000 + n,
        cpu: 0,
        pid: 7,
        tid: 7,
        comm: "worker".into(),
        process: "worker".into(),
        namespaces: None,
        event: event.into(),
        tracepoint: None,
        fields,
        error: None,
        stack: Vec::new(),
    })
}

/// Runs `usertrace ARGS` with none of this process's `OTEL_*` variables,
/// only those of `env`: what a test's settings are must not depend on the
/// shell that runs it.
pub fn usertrace_without_otel_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_usertrace"));
    cmd.args(args);
    for (var, _) in std::env::vars() {
        if var.starts_with("OTEL_") {
            cmd.env_remove(var);
        }
    }
    cmd.envs(env.iter().copied());
    cmd.output().unwrap()
}

/// Runs `usertrace ARGS`, failing the test if it is still running after
/// `limit`: a reader that loops on a bad file must fail its test, not
/// hang the suite. The child is killed first.
pub fn usertrace_within(args: &[&str], limit: std::time::Duration) -> Output {
    use std::io::Read;
    use std::process::Stdio;
    let mut child =
        Command::new(env!("CARGO_BIN_EXE_usertrace")).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // Read both pipes as it runs, so a child with much to say never blocks.
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).unwrap();
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("usertrace {args:?} was still running after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    Output { status, stdout: stdout.join().unwrap(), stderr: stderr.join().unwrap() }
}

/// The names of the entries of `dir`, sorted.
pub fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

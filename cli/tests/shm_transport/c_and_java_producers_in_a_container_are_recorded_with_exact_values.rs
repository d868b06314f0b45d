//! The C library and the Java binding, unchanged, each in a container made
//! as runtimes make them (its own /dev/shm and PID namespace, uid 1000, no
//! capabilities): a root recorder outside records their events with their
//! exact values under their host pids, and names each pid 1 inside. (The
//! Rust core's and Python's are the other tests' producers.)
//!
//! Needs what harness/test-all builds before `cargo test`: the C library
//! installed by `ffi-c/run-tests.sh host` (USERTRACE_C_BUILD, default
//! /tmp/usertrace-c-tests) and the Java jar of `bindings-java/run-tests.sh
//! host`. Elsewhere a test without them says it skipped; under CI it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::container::Container;
use crate::support::*;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

/// `path` if it exists; else `None` after saying why the test skips, or a
/// failure under CI, whose test-all builds it first.
fn built(path: PathBuf, how: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    assert!(std::env::var_os("CI").is_none(), "CI is set but {} is missing: {how}", path.display());
    eprintln!("skipped: no {} ({how})", path.display());
    None
}

/// The events `record` gets from `container` for `pattern` over two
/// seconds, after checking they all came from it, and its process record.
fn recorded(container: &Container, pattern: &str) -> (Vec<Value>, Value) {
    let out = Command::new(usertrace()).args(["record", "-e", pattern, "--format", "json", "--", "sleep", "2"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events = event_lines(&stdout);
    assert!(!events.is_empty() && events.iter().all(|e| e["pid"] == container.host_pid), "{stdout}{stderr}");
    let process = stdout.lines().find(|l| l.starts_with("{\"type\":\"process\"")).map(|l| serde_json::from_str::<Value>(l).unwrap());
    let process = process.unwrap_or_else(|| panic!("no process record: {stdout}"));
    assert_eq!((process["pid"].as_u64(), process["pid_in_container"].as_u64()), (Some(u64::from(container.host_pid)), Some(1)), "{process}");
    (events, process)
}

fn c_producer(provider: &str) -> String {
    format!(
        r#"#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <usertrace.h>
USERTRACE_EVENT(seq, USERTRACE_FIELD_U32(n), USERTRACE_FIELD_STR(text));
USERTRACE_PROVIDER({provider}, &seq);
int main(void) {{
  if (usertrace_provider_register(&{provider}) != USERTRACE_OK) return 1;
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  struct timespec tick = {{0, 10 * 1000 * 1000}};
  while (!USERTRACE_ENABLED(seq)) nanosleep(&tick, NULL);
  char text[8];
  for (unsigned n = 0; n < 5; n++) {{
    snprintf(text, sizeof text, "c%u", n);
    USERTRACE_EMIT(seq, usertrace_u32(n), usertrace_str(text));
    nanosleep(&tick, NULL);
  }}
  /* Gone within milliseconds of its last event, before the recorder
     reads its ring: it is named by what the recorder read when it took
     its registry. */
  return 0;
}}
"#
    )
}

#[test]
fn a_c_producer_in_a_container_is_recorded_with_exact_values() {
    let build = std::env::var_os("USERTRACE_C_BUILD").map_or_else(|| PathBuf::from("/tmp/usertrace-c-tests"), PathBuf::from);
    let Some(prefix) = built(build.join("prefix"), "ffi-c/run-tests.sh host installs the C library there") else { return };
    let _one = crate::container::exclusive();
    let name = unique("shm_c");
    let dir = std::env::temp_dir().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    let (source, program) = (dir.join("producer.c"), dir.join("producer"));
    std::fs::write(&source, c_producer(&name)).unwrap();
    let lib = prefix.join("lib");
    let cc = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror", "-o"])
        .arg(&program)
        .arg(&source)
        .arg(format!("-I{}", prefix.join("include").display()))
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lusertrace")
        .output()
        .unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    let container = Container::start_program(&program.display().to_string(), &[], None);
    let (events, _) = recorded(&container, &format!("{name}_*"));
    let _ = std::fs::remove_dir_all(&dir);
    let values: Vec<(u64, &str)> = events.iter().map(|e| (e["fields"]["n"].as_u64().unwrap(), e["fields"]["text"].as_str().unwrap())).collect();
    assert_eq!(values, vec![(0, "c0"), (1, "c1"), (2, "c2"), (3, "c3"), (4, "c4")]);
}

const JAVA_PRODUCER: &str = r#"import dev.usertrace.Field;
import dev.usertrace.Provider;
import dev.usertrace.Tracepoint;

public class Producer {
    public static void main(String[] args) throws Exception {
        try (Provider app = new Provider(args[0])) {
            Tracepoint seq = app.tracepoint("seq", Field.u32("n"), Field.string("text"));
            System.out.println("ready " + ProcessHandle.current().pid());
            System.out.flush();
            while (!seq.isEnabled()) {
                Thread.sleep(10);
            }
            for (int n = 0; n < 5; n++) {
                seq.emit(n, "java" + n);
                Thread.sleep(10);
            }
            // Exits at once, as the C producer does.
        }
    }
}
"#;

#[test]
fn a_java_producer_in_a_container_is_recorded_with_exact_values() {
    let target = repo().join("bindings-java/java/usertrace/target");
    let version = env!("CARGO_PKG_VERSION");
    let Some(jar) = built(target.join(format!("usertrace-{version}.jar")), "bindings-java/run-tests.sh host builds it") else { return };
    let _one = crate::container::exclusive();
    let name = unique("shm_java");
    let dir = std::env::temp_dir().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("Producer.java");
    std::fs::write(&source, JAVA_PRODUCER).unwrap();
    // The JDK's source launcher: no build step; the jar as it ships.
    let command_line = format!("java -cp {} {} {name}", jar.display(), source.display());
    let container = Container::start_program(&command_line, &[], None);
    let (events, _) = recorded(&container, &format!("{name}_*"));
    let _ = std::fs::remove_dir_all(&dir);
    let values: Vec<(u64, &str)> = events.iter().map(|e| (e["fields"]["n"].as_u64().unwrap(), e["fields"]["text"].as_str().unwrap())).collect();
    assert_eq!(values, vec![(0, "java0"), (1, "java1"), (2, "java2"), (3, "java3"), (4, "java4")]);
}

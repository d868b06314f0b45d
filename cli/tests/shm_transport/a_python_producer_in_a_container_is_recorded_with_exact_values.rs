//! The Python binding, unchanged, in a container made as runtimes make
//! them (its own /dev/shm and PID namespace, uid 1000, no capabilities):
//! a root recorder outside records its events with their exact values
//! under its host pid, and names it pid 1 inside.
//!
//! Needs the binding's wheel installed in one of bindings-python's venvs
//! (`bindings-python/run-tests.sh build`, in USERTRACE_PY_VENVS or
//! /tmp/usertrace-python) and a system `python3` that uid 1000 may run
//! (a venv's interpreter may live under /root, which it may not read);
//! skipped, saying so, without them. The wheel is abi3, so any
//! venv's copy runs on the system's Python.

use std::path::PathBuf;
use std::process::Command;

use crate::container::Container;
use crate::support::*;

/// A site-packages holding the `usertrace` package, if one was built.
fn site_packages() -> Option<PathBuf> {
    let venvs = PathBuf::from(std::env::var_os("USERTRACE_PY_VENVS").unwrap_or_else(|| "/tmp/usertrace-python".into()));
    let mut found: Vec<PathBuf> = std::fs::read_dir(&venvs).ok()?.flatten().map(|venv| venv.path().join("lib")).collect();
    found.sort();
    found.into_iter().filter_map(|lib| std::fs::read_dir(lib).ok()).flatten().flatten().map(|python| python.path().join("site-packages")).find(|site| site.join("usertrace/__init__.py").exists())
}

const PRODUCER: &str = "\
import os, sys, time, usertrace
app = usertrace.Provider(sys.argv[1])
tp = app.tracepoint('seq', n='u32', text=str)
print('ready', os.getpid(), usertrace.transport(), flush=True)
while not tp.enabled:
    time.sleep(0.01)
for n in range(5):
    tp.emit(n, 'py%d' % n)
    time.sleep(0.1)
";

#[test]
fn a_python_producer_in_a_container_is_recorded_with_exact_values() {
    let (Some(site), true) = (site_packages(), std::path::Path::new("/usr/bin/python3").exists()) else {
        eprintln!("skipped: no built Python binding (bindings-python/run-tests.sh build) or no /usr/bin/python3");
        return;
    };
    let _one = crate::container::exclusive();
    let name = unique("shm_py");
    let script = std::env::temp_dir().join(format!("{name}.py"));
    std::fs::write(&script, PRODUCER).unwrap();
    let command_line = format!("/usr/bin/python3 {} {name}", script.display());
    let container = Container::start_program(&command_line, &[("PYTHONPATH", site.to_str().unwrap()), ("PYTHONDONTWRITEBYTECODE", "1")], None);
    let out = Command::new(usertrace()).args(["record", "-e", &format!("{name}_*"), "--format", "json", "--", "sleep", "2"]).output().unwrap();
    let _ = std::fs::remove_file(&script);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events = event_lines(&stdout);
    let values: Vec<(u64, &str)> = events.iter().map(|e| (e["fields"]["n"].as_u64().unwrap(), e["fields"]["text"].as_str().unwrap())).collect();
    assert_eq!(values, vec![(0, "py0"), (1, "py1"), (2, "py2"), (3, "py3"), (4, "py4")], "{stderr}");
    assert!(events.iter().all(|e| e["pid"] == container.host_pid && e["event"] == format!("{name}_seq").as_str()), "{stdout}");
    let process = stdout.lines().find(|l| l.starts_with("{\"type\":\"process\"")).map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
    let process = process.unwrap_or_else(|| panic!("no process record: {stdout}"));
    assert_eq!((process["pid"].as_u64(), process["pid_in_container"].as_u64()), (Some(u64::from(container.host_pid)), Some(1)), "{process}");
}

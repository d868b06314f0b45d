//! `usertrace status` with nothing overridden, on this very host: when the
//! kernel's own config (/proc/config.gz, else /boot/config-RELEASE) says
//! CONFIG_USER_EVENTS is not set, the first line says this kernel lacks
//! user_events and which kernels have it, no line says to mount tracefs,
//! and recording is not "allowed". On a kernel whose config says `=y`, or
//! cannot be read, the first line claims no such thing.

use std::io::Read as _;
use std::process::Command;

use serde_json::Value;

/// The host's config, read here independently of `status`.
fn host_config() -> Option<(String, String)> {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?.trim().to_owned();
    if let Ok(gz) = std::fs::read("/proc/config.gz") {
        let mut text = String::new();
        if flate2::read::GzDecoder::new(&gz[..]).read_to_string(&mut text).is_ok() {
            return Some(("/proc/config.gz".into(), text));
        }
    }
    let path = format!("/boot/config-{release}");
    Some((path.clone(), std::fs::read_to_string(&path).ok()?))
}

fn status(format: &str) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_usertrace")).args(["status", "--format", format]).env_remove("USERTRACE_TRACEFS").output().unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn status_says_first_what_this_kernel_s_config_says() {
    let (code, text) = status("text");
    let (json_code, json) = status("json");
    let v: Value = serde_json::from_str(&json).unwrap();
    let first = text.lines().next().unwrap_or_default();
    assert_eq!(first, format!("user_events:  {}", v["user_events"]["message"].as_str().unwrap()), "{text}");
    assert_eq!(code, json_code);

    let lacking = host_config().filter(|(_, c)| !c.lines().any(|l| l.trim() == "CONFIG_USER_EVENTS=y"));
    let Some((source, config)) = lacking else {
        assert!(!first.contains("lacks user_events"), "the config does not deny user_events: {text}");
        return;
    };
    let says = if config.lines().any(|l| l.trim() == "# CONFIG_USER_EVENTS is not set") {
        format!("{source} says `# CONFIG_USER_EVENTS is not set`")
    } else {
        format!("{source} has no CONFIG_USER_EVENTS line")
    };
    let release = v["kernel"].as_str().unwrap();
    assert!(first.starts_with(&format!("user_events:  user_events is not available: this kernel ({release}) lacks user_events ({says}")), "{text}");
    for kernel in ["Ubuntu 24.04 and later", "Azure Linux", "WSL2", "CONFIG_USER_EVENTS=y"] {
        assert!(first.contains(kernel), "{kernel}: {text}");
    }
    assert!(!text.contains("mount -t tracefs") && !text.contains("mount it"), "no advice to mount: {text}");
    // Without user_events, programs here take shared memory, and recording
    // needs only perf's task records and ptrace rights.
    assert!(text.contains("\ntransport:    shm: USERTRACE_TRANSPORT=auto: "), "{text}");
    assert!(text.contains("\nrecording:    allowed through shared memory") || text.contains("\nrecording:    not allowed: shared memory"), "{text}");
    assert_eq!(code, Some(1), "{text}");
    assert_eq!((&v["user_events"]["state"], &v["transport"]["name"]), (&Value::from("user_events_missing"), &Value::from("shm")), "{json}");
    assert_eq!(v["kernel_config"]["source"], source, "{json}");
}

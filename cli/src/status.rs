//! `usertrace status`: what works, what does not, and what to do about it.
//!
//! The truth comes first. The kernel's build config (`/proc/config.gz`,
//! else `/boot/config-RELEASE`) is read before the tracefs probe is
//! believed: when it says CONFIG_USER_EVENTS is not set, no mount or
//! permission will help, and the first line says so. Only when the config
//! says `=y`, or cannot be read, does the probe's advice (mount tracefs,
//! grant access) lead. A `user_events_data` that exists outranks the
//! config: a file under `/boot` can be stale, the kernel's tracefs cannot.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde::Serialize;
use usertrace::{Availability, Status};

use crate::args::Format;
use crate::json::{print_line, RecordingStatus, StatusLine, TransportStatus, UserEventsStatus};
use crate::stdout::outln;

/// CAP_PERFMON's bit in /proc/self/status's CapEff (Linux 5.8+).
const CAP_PERFMON: u32 = 38;
const CAP_SYS_ADMIN: u32 = 21;

/// Where the core looks for tracefs first (its `tracefs::TRACEFS_ENV`,
/// which it does not export).
const TRACEFS_ENV: &str = "USERTRACE_TRACEFS";

/// Say whether user_events tracing works here, and what to do if not
///
/// Says whether programs here can register user_events and whether this
/// user may record them, and what to do if not; the first line is the
/// verdict. The kernel's build config (/proc/config.gz, else
/// /boot/config-RELEASE) is read first. The exit status is 0 when
/// user_events is available, 1 when it is not.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// text: a line per finding, the verdict first; json: one JSON object
    /// (kernel, tracefs, tried, user_events {available, state, message},
    /// recording {allowed, perf_event_paranoid, cap_perfmon, message},
    /// kernel_config {source, user_events, tried})
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: &StatusArgs) -> ExitCode {
    let status = usertrace::status();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_owned();
    let config = KernelConfig::read(&config_paths(&kernel));
    let findings = Findings::new(&status, kernel, config, perf_permission(), transport());
    match args.format {
        Format::Text => {
            for line in findings.text_lines() {
                outln!("{line}");
            }
        }
        Format::Json => print_line(&findings.json()),
    }
    if findings.line.user_events.available {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The transport a program started here would take (the core's choice,
/// under this process's USERTRACE_TRANSPORT), and why.
fn transport() -> TransportStatus {
    match usertrace::transport() {
        Ok(choice) => TransportStatus { name: choice.transport.name(), reason: choice.reason },
        Err(error) => TransportStatus { name: "invalid", reason: error.to_string() },
    }
}

/// Where the running kernel's build config may be, in the order tried.
fn config_paths(release: &str) -> Vec<PathBuf> {
    let mut paths = vec![PathBuf::from("/proc/config.gz")];
    if !release.is_empty() {
        paths.push(PathBuf::from(format!("/boot/config-{release}")));
    }
    paths
}

/// What the kernel's build config says about CONFIG_USER_EVENTS.
#[derive(Debug, Clone, PartialEq, Eq)]
struct KernelConfig {
    /// The files looked at, in order.
    tried: Vec<PathBuf>,
    /// The first that could be read as a kernel config, and what it says;
    /// `None` when none could.
    found: Option<(PathBuf, ConfigValue)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ConfigValue {
    /// `CONFIG_USER_EVENTS=y`.
    Set,
    /// `# CONFIG_USER_EVENTS is not set`.
    NotSet,
    /// No line at all: the kernel is older than 6.4, or was built without
    /// ftrace (Kconfig leaves out options whose dependencies are unmet).
    Absent,
}

impl KernelConfig {
    /// Reads the first of `paths` that holds a kernel config, gzipped
    /// (as `/proc/config.gz` is) or plain.
    fn read(paths: &[PathBuf]) -> KernelConfig {
        let found = paths.iter().find_map(|path| Some((path.clone(), user_events_in(&read_config_file(path)?)?)));
        KernelConfig { tried: paths.to_vec(), found }
    }

    fn value(&self) -> Option<ConfigValue> {
        self.found.as_ref().map(|(_, value)| *value)
    }

    /// The `config:` line of the text.
    fn describe(&self) -> String {
        match &self.found {
            Some((path, ConfigValue::Set)) => format!("{}: CONFIG_USER_EVENTS=y", path.display()),
            Some((path, ConfigValue::NotSet)) => format!("{}: # CONFIG_USER_EVENTS is not set", path.display()),
            Some((path, ConfigValue::Absent)) => format!("{}: no CONFIG_USER_EVENTS line", path.display()),
            None => format!("unreadable (tried {})", join(&self.tried)),
        }
    }

    fn json(&self) -> KernelConfigJson {
        KernelConfigJson {
            source: self.found.as_ref().map(|(path, _)| path.display().to_string()),
            user_events: match self.value() {
                Some(ConfigValue::Set) => "y",
                Some(ConfigValue::NotSet) => "not_set",
                Some(ConfigValue::Absent) => "absent",
                None => "unreadable",
            },
            tried: self.tried.iter().map(|p| p.display().to_string()).collect(),
        }
    }
}

/// A config file's text, gunzipped when it starts with gzip's magic.
fn read_config_file(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..]).read_to_end(&mut text).ok()?;
        text
    } else {
        bytes
    };
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// What a kernel config's text says about CONFIG_USER_EVENTS; `None` when
/// the text is no kernel config at all (no `CONFIG_` line), so that an
/// empty or foreign file is not taken for a kernel without user_events.
fn user_events_in(config: &str) -> Option<ConfigValue> {
    let mut is_config = false;
    let mut value = ConfigValue::Absent;
    for line in config.lines().map(str::trim) {
        is_config |= line.starts_with("CONFIG_") || line.starts_with("# CONFIG_");
        // The last line wins, as it does for Kconfig.
        if line == "# CONFIG_USER_EVENTS is not set" || line == "CONFIG_USER_EVENTS=n" {
            value = ConfigValue::NotSet;
        } else if line == "CONFIG_USER_EVENTS=y" {
            value = ConfigValue::Set;
        }
    }
    is_config.then_some(value)
}

/// Whether perf lets this process open tracepoint events on every CPU with
/// raw samples: CAP_PERFMON (or CAP_SYS_ADMIN), or perf_event_paranoid <= -1.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Permission {
    allowed: bool,
    paranoid: Option<i32>,
    cap_perfmon: bool,
    /// Why, and if not allowed, what to do.
    detail: String,
}

fn perf_permission() -> Permission {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").ok().and_then(|s| s.trim().parse::<i32>().ok());
    let caps = effective_capabilities();
    let has = |cap: u32| caps.is_some_and(|c| c & (1u64 << cap) != 0);
    permission(paranoid, has(CAP_PERFMON) || has(CAP_SYS_ADMIN))
}

fn permission(paranoid: Option<i32>, cap_perfmon: bool) -> Permission {
    let paranoid_text = paranoid.map_or("unknown".to_owned(), |p| p.to_string());
    let (allowed, detail) = if cap_perfmon {
        (true, format!("this process has CAP_PERFMON (perf_event_paranoid is {paranoid_text})"))
    } else if paranoid.is_some_and(|p| p <= -1) {
        (true, format!("perf_event_paranoid is {paranoid_text}"))
    } else {
        (
            false,
            format!(
                "perf_event_paranoid is {paranoid_text} and this process lacks CAP_PERFMON; run as root, \
                 `setcap cap_perfmon+ep $(command -v usertrace)`, or `sysctl kernel.perf_event_paranoid=-1`"
            ),
        )
    };
    Permission { allowed, paranoid, cap_perfmon, detail }
}

fn effective_capabilities() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?.trim();
    u64::from_str_radix(hex, 16).ok()
}

/// Everything `status` says, in the words both formats print.
struct Findings {
    line: StatusLine,
    config: KernelConfig,
}

/// The JSON object: [`StatusLine`]'s fields, then `kernel_config`.
#[derive(Serialize)]
struct StatusJson<'a> {
    #[serde(flatten)]
    line: &'a StatusLine,
    kernel_config: KernelConfigJson,
}

#[derive(Serialize)]
struct KernelConfigJson {
    /// The file read; null when none could be.
    source: Option<String>,
    /// `y`, `not_set`, `absent` or `unreadable`.
    user_events: &'static str,
    tried: Vec<String>,
}

impl Findings {
    fn new(status: &Status, kernel: String, config: KernelConfig, permission: Permission, transport: TransportStatus) -> Findings {
        let verdict = Verdict::new(status, &kernel, &config);
        let line = StatusLine {
            kernel,
            tracefs: status.tracefs.as_ref().map(|p| p.display().to_string()),
            tried: status.tried.iter().map(|p| p.display().to_string()).collect(),
            user_events: UserEventsStatus { available: status.is_available(), state: verdict.state, message: verdict.message },
            recording: if transport.name == "shm" { recording_shm(permission) } else { recording(verdict.recordable, permission) },
            transport,
        };
        Findings { line, config }
    }

    fn text_lines(&self) -> Vec<String> {
        let line = &self.line;
        vec![
            format!("user_events:  {}", line.user_events.message),
            format!("kernel:       {}", line.kernel),
            format!("config:       {}", self.config.describe()),
            format!("tracefs:      {}", line.tracefs.as_deref().unwrap_or("not found")),
            format!("tried:        {}", line.tried.join(", ")),
            format!("recording:    {}", line.recording.message),
            format!("transport:    {}: {}", line.transport.name, line.transport.reason),
        ]
    }

    fn json(&self) -> StatusJson<'_> {
        StatusJson { line: &self.line, kernel_config: self.config.json() }
    }
}

/// The user_events verdict, the probe's and the config's findings weighed.
struct Verdict {
    /// The JSON name: fixed words scripts can match on.
    state: &'static str,
    message: String,
    /// Whether there are user_events here to record, given permission.
    recordable: bool,
}

impl Verdict {
    fn new(status: &Status, kernel: &str, config: &KernelConfig) -> Verdict {
        let probed = Verdict { state: status.availability.name(), message: status.to_string(), recordable: false };
        // user_events_data exists (it opened, or failed for a reason other
        // than ENOENT): the kernel has user_events, whatever a file says.
        if status.is_available() || status.errno.is_some_and(|e| e != libc::ENOENT) {
            return Verdict { recordable: true, ..probed };
        }
        // Off Linux there is no config to read and nothing to mount.
        if status.availability == Availability::UserEventsMissing && status.tracefs.is_none() {
            return probed;
        }
        match &config.found {
            Some((path, value @ (ConfigValue::NotSet | ConfigValue::Absent))) => {
                let says = match value {
                    ConfigValue::NotSet => format!("{} says `# CONFIG_USER_EVENTS is not set`", path.display()),
                    _ => format!("{} has no CONFIG_USER_EVENTS line: it predates Linux 6.4 or lacks ftrace", path.display()),
                };
                Verdict { state: Availability::UserEventsMissing.name(), message: lacks_user_events(kernel, &says), recordable: false }
            }
            Some((path, ConfigValue::Set)) => {
                let has = format!("this kernel ({kernel}) has CONFIG_USER_EVENTS=y ({})", path.display());
                let message = match (status.availability, status.data_path()) {
                    (Availability::UserEventsMissing, Some(data)) => format!(
                        "user_events is not available: {} does not exist, yet {has}: {} is not this kernel's tracefs; \
                         mount that with `mount -t tracefs nodev /sys/kernel/tracing`, and unset {TRACEFS_ENV} \
                         or point it there",
                        data.display(),
                        status.tracefs.as_deref().unwrap_or(Path::new("")).display(),
                    ),
                    (Availability::TracefsNotMounted, _) => format!("{probed}; {has}, so mounting tracefs is all it takes", probed = probed.message),
                    _ => probed.message,
                };
                Verdict { message, ..probed }
            }
            None => Verdict {
                message: format!(
                    "{}; the kernel's build config was unreadable (tried {}), so whether it has CONFIG_USER_EVENTS is not known",
                    probed.message,
                    join(&config.tried)
                ),
                ..probed
            },
        }
    }
}

/// The verdict on a kernel built without user_events, and what to do.
fn lacks_user_events(kernel: &str, says: &str) -> String {
    format!(
        "user_events is not available: this kernel ({kernel}) lacks user_events ({says}), so mounting tracefs \
         or granting access will not help; kernels that have it: Ubuntu 24.04 and later, Azure Linux, WSL2, \
         or any Linux 6.4 or later built with CONFIG_USER_EVENTS=y; boot one of those, or record through \
         shared memory (see transport)"
    )
}

/// "allowed" only when there is something to record and perf permits it.
fn recording(recordable: bool, permission: Permission) -> RecordingStatus {
    let Permission { allowed, paranoid, cap_perfmon, detail } = permission;
    let message = match (recordable, allowed) {
        (true, true) => format!("allowed: {detail}"),
        (true, false) => format!("not allowed: {detail}"),
        (false, true) => format!("not possible until user_events is available (see user_events); perf would allow it: {detail}"),
        (false, false) => {
            format!("not possible until user_events is available (see user_events); nor would perf allow it: {detail}")
        }
    };
    RecordingStatus { allowed: recordable && allowed, perf_event_paranoid: paranoid, cap_perfmon, message }
}

/// Recording where producers use shared memory: no user_events needed,
/// only perf's sideband (for names) and ptrace rights over the producers.
fn recording_shm(permission: Permission) -> RecordingStatus {
    let Permission { allowed, paranoid, cap_perfmon, detail } = permission;
    let message = if allowed {
        format!(
            "allowed through shared memory: `usertrace record` finds producers in /dev/shm/usertrace-UID and writes their \
             enable words where the kernel gives it ptrace rights over them (as `perf record -p` needs); {detail}"
        )
    } else {
        format!("not allowed: shared memory would serve, but perf's task records (for names) are refused: {detail}")
    };
    RecordingStatus { allowed, perf_event_paranoid: paranoid, cap_perfmon, message }
}

fn join(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    const KERNEL: &str = "6.8.0-test";

    fn status(availability: Availability, tracefs: Option<&str>, errno: Option<i32>) -> Status {
        let tried = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"].map(PathBuf::from).to_vec();
        Status { availability, tracefs: tracefs.map(PathBuf::from), tried, errno }
    }

    fn config(value: Option<ConfigValue>) -> KernelConfig {
        let tried = vec![PathBuf::from("/proc/config.gz"), PathBuf::from(format!("/boot/config-{KERNEL}"))];
        KernelConfig { tried, found: value.map(|v| (PathBuf::from("/proc/config.gz"), v)) }
    }

    fn findings(status: &Status, value: Option<ConfigValue>) -> Findings {
        Findings::new(status, KERNEL.to_owned(), config(value), permission(Some(2), true), TransportStatus { name: "user_events", reason: "a test".into() })
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("usertrace-status-unit-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_config_says_y_not_set_or_nothing_and_a_non_config_says_nothing() {
        assert_eq!(user_events_in("CONFIG_FTRACE=y\nCONFIG_USER_EVENTS=y\n"), Some(ConfigValue::Set));
        assert_eq!(user_events_in("CONFIG_FTRACE=y\n# CONFIG_USER_EVENTS is not set\n"), Some(ConfigValue::NotSet));
        assert_eq!(user_events_in("# CONFIG_FTRACE is not set\n"), Some(ConfigValue::Absent));
        // The last line wins; a longer name is another option.
        assert_eq!(user_events_in("CONFIG_USER_EVENTS=y\n# CONFIG_USER_EVENTS is not set\n"), Some(ConfigValue::NotSet));
        assert_eq!(user_events_in("CONFIG_USER_EVENTS_X=y\n"), Some(ConfigValue::Absent));
        // An empty or foreign file is no evidence either way.
        assert_eq!(user_events_in(""), None);
        assert_eq!(user_events_in("<html>not found</html>\n"), None);
    }

    #[test]
    fn a_gzipped_config_reads_as_its_plain_text_does() {
        let dir = scratch("gzip");
        let text = "CONFIG_FTRACE=y\n# CONFIG_USER_EVENTS is not set\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text.as_bytes()).unwrap();
        std::fs::write(dir.join("config.gz"), gz.finish().unwrap()).unwrap();
        std::fs::write(dir.join("config"), text).unwrap();
        for name in ["config.gz", "config"] {
            let path = dir.join(name);
            assert_eq!(read_config_file(&path).as_deref(), Some(text), "{name}");
            assert_eq!(KernelConfig::read(std::slice::from_ref(&path)).found, Some((path, ConfigValue::NotSet)), "{name}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_first_readable_config_counts_and_with_none_the_config_is_unreadable() {
        let dir = scratch("order");
        let (missing, corrupt, empty, plain) = (dir.join("missing.gz"), dir.join("corrupt.gz"), dir.join("empty"), dir.join("plain"));
        std::fs::write(&corrupt, [0x1f, 0x8b, 0, 1, 2, 3]).unwrap();
        std::fs::write(&empty, "").unwrap();
        std::fs::write(&plain, "CONFIG_USER_EVENTS=y\n").unwrap();

        let read = KernelConfig::read(&[missing.clone(), corrupt.clone(), plain.clone()]);
        assert_eq!(read.found, Some((plain.clone(), ConfigValue::Set)));
        assert_eq!(read.describe(), format!("{}: CONFIG_USER_EVENTS=y", plain.display()));

        let paths = [missing, corrupt, empty];
        let unreadable = KernelConfig::read(&paths);
        assert_eq!(unreadable, KernelConfig { tried: paths.to_vec(), found: None });
        assert_eq!(unreadable.describe(), format!("unreadable (tried {})", join(&paths)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_kernel_without_user_events_says_so_first_and_not_to_mount_tracefs() {
        let expected = format!(
            "user_events:  user_events is not available: this kernel ({KERNEL}) lacks user_events (/proc/config.gz says \
             `# CONFIG_USER_EVENTS is not set`), so mounting tracefs or granting access will not help; kernels that have \
             it: Ubuntu 24.04 and later, Azure Linux, WSL2, or any Linux 6.4 or later built with CONFIG_USER_EVENTS=y; \
             boot one of those, or record through shared memory (see transport)"
        );
        // Whatever the probe met: no mount, a mount without user_events_data,
        // a tracefs root this user may not look into.
        for probed in [
            status(Availability::TracefsNotMounted, None, None),
            status(Availability::UserEventsMissing, Some("/sys/kernel/tracing"), Some(libc::ENOENT)),
            status(Availability::PermissionDenied, Some("/sys/kernel/tracing"), None),
        ] {
            let f = findings(&probed, Some(ConfigValue::NotSet));
            let lines = f.text_lines();
            assert_eq!(lines[0], expected, "{probed:?}");
            assert_eq!(lines[2], "config:       /proc/config.gz: # CONFIG_USER_EVENTS is not set");
            assert!(!lines.iter().any(|l| l.contains("mount -t") || l.contains("mount it")), "{lines:#?}");
            assert_eq!((f.line.user_events.available, f.line.user_events.state), (false, "user_events_missing"));
            // Root may record, but there is nothing to record.
            assert!(!f.line.recording.allowed);
            assert_eq!(
                lines[5],
                "recording:    not possible until user_events is available (see user_events); perf would allow it: \
                 this process has CAP_PERFMON (perf_event_paranoid is 2)"
            );
        }
        let f = findings(&status(Availability::TracefsNotMounted, None, None), Some(ConfigValue::Absent));
        assert!(
            f.line.user_events.message.contains(&format!(
                "this kernel ({KERNEL}) lacks user_events (/proc/config.gz has no CONFIG_USER_EVENTS line: \
                 it predates Linux 6.4 or lacks ftrace), so mounting tracefs"
            )),
            "{}",
            f.line.user_events.message
        );
        assert_eq!(f.config.json().user_events, "absent");
    }

    #[test]
    fn with_config_y_the_advice_is_to_mount_tracefs() {
        let f = findings(&status(Availability::TracefsNotMounted, None, None), Some(ConfigValue::Set));
        let message = &f.line.user_events.message;
        assert!(message.starts_with("user_events is not available: tracefs is not mounted"), "{message}");
        assert!(message.contains("mount -t tracefs nodev /sys/kernel/tracing"), "{message}");
        assert!(
            message.ends_with(&format!("; this kernel ({KERNEL}) has CONFIG_USER_EVENTS=y (/proc/config.gz), so mounting tracefs is all it takes")),
            "{message}"
        );
        assert_eq!(f.line.user_events.state, "tracefs_not_mounted");
        assert!(!f.line.recording.allowed);

        // A tracefs without user_events_data on such a kernel is not its tracefs.
        let f = findings(&status(Availability::UserEventsMissing, Some("/tmp/fake"), Some(libc::ENOENT)), Some(ConfigValue::Set));
        assert_eq!(
            f.line.user_events.message,
            format!(
                "user_events is not available: /tmp/fake/user_events_data does not exist, yet this kernel ({KERNEL}) has \
                 CONFIG_USER_EVENTS=y (/proc/config.gz): /tmp/fake is not this kernel's tracefs; mount that with \
                 `mount -t tracefs nodev /sys/kernel/tracing`, and unset USERTRACE_TRACEFS or point it there"
            )
        );
        assert_eq!(f.line.user_events.state, "user_events_missing");
    }

    #[test]
    fn with_the_config_unreadable_the_probe_speaks_and_says_the_config_was_unreadable() {
        let probed = status(Availability::TracefsNotMounted, None, None);
        let f = findings(&probed, None);
        assert_eq!(
            f.line.user_events.message,
            format!(
                "{probed}; the kernel's build config was unreadable (tried /proc/config.gz, /boot/config-{KERNEL}), \
                 so whether it has CONFIG_USER_EVENTS is not known"
            )
        );
        assert!(f.line.user_events.message.contains("mount -t tracefs nodev /sys/kernel/tracing"));
        assert_eq!(f.text_lines()[2], format!("config:       unreadable (tried /proc/config.gz, /boot/config-{KERNEL})"));
        assert_eq!((f.line.user_events.state, f.config.json().user_events, f.config.json().source), ("tracefs_not_mounted", "unreadable", None));
    }

    #[test]
    fn a_user_events_data_that_exists_outranks_a_config_that_denies_it() {
        let available = status(Availability::Available, Some("/sys/kernel/tracing"), None);
        let f = findings(&available, Some(ConfigValue::NotSet));
        assert_eq!((f.line.user_events.available, f.line.user_events.state), (true, "available"));
        assert_eq!(f.line.user_events.message, available.to_string());
        assert_eq!(f.line.recording.message, "allowed: this process has CAP_PERFMON (perf_event_paranoid is 2)");
        assert!(f.line.recording.allowed);

        // It exists but may not be opened: whoever has perf may still record.
        let denied = status(Availability::PermissionDenied, Some("/sys/kernel/tracing"), Some(libc::EACCES));
        let f = findings(&denied, Some(ConfigValue::NotSet));
        assert_eq!((f.line.user_events.state, f.line.user_events.message.as_str()), ("permission_denied", denied.to_string().as_str()));
        assert!(f.line.recording.allowed);
    }

    #[test]
    fn recording_is_allowed_only_with_something_to_record_and_perf_s_permission() {
        let said = |recordable, paranoid, cap| {
            let r = recording(recordable, permission(paranoid, cap));
            (r.allowed, r.message)
        };
        assert_eq!(said(true, Some(-1), false), (true, "allowed: perf_event_paranoid is -1".to_owned()));
        let (allowed, message) = said(true, Some(2), false);
        assert!(!allowed && message.starts_with("not allowed: perf_event_paranoid is 2 and this process lacks CAP_PERFMON; run as root"), "{message}");
        let (allowed, message) = said(false, None, false);
        assert!(!allowed, "{message}");
        assert!(message.starts_with("not possible until user_events is available (see user_events); nor would perf allow it: perf_event_paranoid is unknown"), "{message}");
        assert!(!said(false, Some(-1), false).0);
    }

    #[test]
    fn the_text_and_the_json_say_the_same() {
        let f = findings(&status(Availability::TracefsNotMounted, None, None), Some(ConfigValue::NotSet));
        let json = serde_json::to_value(f.json()).unwrap();
        let lines = f.text_lines();
        assert_eq!(lines[0], format!("user_events:  {}", json["user_events"]["message"].as_str().unwrap()));
        assert_eq!(lines[1], format!("kernel:       {}", json["kernel"].as_str().unwrap()));
        assert_eq!(lines[3], "tracefs:      not found");
        assert_eq!(json["tracefs"], serde_json::Value::Null);
        assert_eq!(lines[5], format!("recording:    {}", json["recording"]["message"].as_str().unwrap()));
        assert_eq!(
            json["kernel_config"],
            serde_json::json!({"source": "/proc/config.gz", "user_events": "not_set", "tried": ["/proc/config.gz", format!("/boot/config-{KERNEL}")]})
        );
        // One line, the documented fields in their order, then kernel_config.
        let mut line = Vec::new();
        crate::json::write_line(&f.json(), &mut line);
        let line = String::from_utf8(line).unwrap();
        let at = |key: &str| line.find(&format!("\"{key}\":")).unwrap_or_else(|| panic!("{key}: {line}"));
        let order = ["kernel", "tracefs", "tried", "user_events", "recording", "kernel_config"].map(at);
        assert!(order.is_sorted() && line.ends_with("}\n") && line.matches('\n').count() == 1, "{line}");
    }
}

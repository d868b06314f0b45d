//! What the running kernel's build config says about CONFIG_USER_EVENTS.
//!
//! A probe of tracefs cannot tell a kernel built without user_events from
//! one whose tracefs is merely not mounted: both show no
//! `user_events_data`. The build config can, so [`status()`](crate::status())
//! reads it whenever the probe alone cannot tell, and every language's
//! `status()` and `transport()` then give the same diagnosis as
//! `usertrace status`.
//!
//! The config is looked for in `/proc/config.gz` (CONFIG_IKCONFIG_PROC),
//! else `/boot/config-RELEASE` (what distributions install). The running
//! kernel's config cannot change under a process, so it is read once.

use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// What the kernel's build config says about CONFIG_USER_EVENTS, and where
/// it was looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelConfig {
    /// The running kernel's release (`/proc/sys/kernel/osrelease`); empty
    /// when it could not be read.
    pub release: String,
    /// The files looked at, in order.
    pub tried: Vec<PathBuf>,
    /// The first that could be read as a kernel config, and what it says;
    /// `None` when none could.
    pub found: Option<(PathBuf, ConfigValue)>,
}

/// CONFIG_USER_EVENTS in a kernel config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigValue {
    /// `CONFIG_USER_EVENTS=y`.
    Set,
    /// `# CONFIG_USER_EVENTS is not set`.
    NotSet,
    /// No line at all: the kernel is older than 6.4, or was built without
    /// ftrace (Kconfig leaves out options whose dependencies are unmet).
    Absent,
}

impl KernelConfig {
    /// The running kernel's config, read at the first call and then kept.
    pub fn running() -> KernelConfig {
        static RUNNING: OnceLock<KernelConfig> = OnceLock::new();
        RUNNING
            .get_or_init(|| {
                let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_owned();
                let paths = config_paths(&release);
                KernelConfig::read(release, &paths)
            })
            .clone()
    }

    /// Reads the first of `paths` that holds a kernel config, gzipped (as
    /// `/proc/config.gz` is) or plain, for the kernel `release`.
    pub fn read(release: String, paths: &[PathBuf]) -> KernelConfig {
        let found = paths.iter().find_map(|path| Some((path.clone(), user_events_in(&read_config_file(path)?)?)));
        KernelConfig { release, tried: paths.to_vec(), found }
    }

    /// What the config says, when one was read.
    pub fn value(&self) -> Option<ConfigValue> {
        self.found.as_ref().map(|(_, value)| *value)
    }

    /// Whether the config says this kernel has no user_events: it reads
    /// `# CONFIG_USER_EVENTS is not set`, or has no such line at all.
    pub fn lacks_user_events(&self) -> bool {
        matches!(self.value(), Some(ConfigValue::NotSet | ConfigValue::Absent))
    }

    /// A fixed word for scripts: `y`, `not_set`, `absent` or `unreadable`.
    pub fn name(&self) -> &'static str {
        match self.value() {
            Some(ConfigValue::Set) => "y",
            Some(ConfigValue::NotSet) => "not_set",
            Some(ConfigValue::Absent) => "absent",
            None => "unreadable",
        }
    }

    /// The files tried, comma-separated.
    pub(crate) fn tried_list(&self) -> String {
        self.tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    }
}

/// Where the config was found and what it says, e.g.
/// `/proc/config.gz: # CONFIG_USER_EVENTS is not set`, or
/// `unreadable (tried /proc/config.gz, /boot/config-6.8.0)`.
impl fmt::Display for KernelConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.found {
            Some((path, ConfigValue::Set)) => write!(f, "{}: CONFIG_USER_EVENTS=y", path.display()),
            Some((path, ConfigValue::NotSet)) => write!(f, "{}: # CONFIG_USER_EVENTS is not set", path.display()),
            Some((path, ConfigValue::Absent)) => write!(f, "{}: no CONFIG_USER_EVENTS line", path.display()),
            None => write!(f, "unreadable (tried {})", self.tried_list()),
        }
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
pub(crate) fn user_events_in(config: &str) -> Option<ConfigValue> {
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

#[cfg(test)]
mod tests;

//! Finding tracefs, where user_events lives.
//!
//! tracefs is normally mounted at `/sys/kernel/tracing`; older systems only
//! have it under debugfs, and containers may mount it anywhere, so the search
//! goes: `$USERTRACE_TRACEFS` (alone, if set), the two usual places, then any
//! `tracefs` line of `/proc/mounts`.

use std::path::{Path, PathBuf};

/// Environment variable that names the tracefs mount point to use.
pub const TRACEFS_ENV: &str = "USERTRACE_TRACEFS";

const USUAL_MOUNTS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The candidate tracefs mount points, in the order they are tried.
pub fn candidates() -> Vec<PathBuf> {
    if let Some(dir) = std::env::var_os(TRACEFS_ENV).filter(|v| !v.is_empty()) {
        return vec![PathBuf::from(dir)];
    }
    let mut dirs: Vec<PathBuf> = USUAL_MOUNTS.iter().map(PathBuf::from).collect();
    if let Ok(mounts) = std::fs::read_to_string("/proc/mounts") {
        for dir in tracefs_mount_points(&mounts) {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

/// The mount points of every `tracefs` line in a `/proc/mounts` text.
pub fn tracefs_mount_points(mounts: &str) -> Vec<PathBuf> {
    mounts
        .lines()
        .filter_map(|line| {
            let mut cols = line.split_whitespace();
            let (_source, target, fstype) = (cols.next()?, cols.next()?, cols.next()?);
            (fstype == "tracefs").then(|| PathBuf::from(unescape_mount_path(target)))
        })
        .collect()
}

/// `/proc/mounts` writes space, tab, newline and backslash as octal escapes.
fn unescape_mount_path(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (bytes[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether `dir` looks like a mounted tracefs (an unmounted mount point is an
/// empty directory).
pub fn is_mounted(dir: &Path) -> bool {
    dir.join("events").is_dir() || dir.join("trace").exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_come_from_tracefs_lines_only() {
        let mounts = "proc /proc proc rw 0 0\n\
                      tracefs /sys/kernel/tracing tracefs rw 0 0\n\
                      none /mnt/my\\040trace tracefs rw 0 0\n\
                      debugfs /sys/kernel/debug debugfs rw 0 0\n";
        assert_eq!(
            tracefs_mount_points(mounts),
            vec![PathBuf::from("/sys/kernel/tracing"), PathBuf::from("/mnt/my trace")]
        );
    }

    #[test]
    fn malformed_mount_lines_are_ignored() {
        assert!(tracefs_mount_points("tracefs\n\n  \nx y").is_empty());
    }
}

//! The namespaces a task lives in, so events from containers can be told
//! apart: the inode numbers `/proc/PID/ns/*` shows (`pid:[4026531836]`).
//!
//! The kernel reports them in PERF_RECORD_NAMESPACES at every fork, unshare
//! and setns, but only to sessions that may see them: `attr.namespaces`
//! needs CAP_PERFMON (or CAP_SYS_ADMIN), so a session asks for them and
//! goes on without when refused. Tasks from before the session are read
//! from `/proc/PID/ns`, stamped like the rest of the snapshot.
//! References: include/uapi/linux/perf_event.h (`PERF_RECORD_NAMESPACES`,
//! `NET_NS_INDEX`..`CGROUP_NS_INDEX`).

use std::path::Path;

/// Namespace inode numbers; 0 where unknown (a kernel built without that
/// namespace type, or /proc unreadable).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Namespaces {
    /// Network namespace.
    pub net: u64,
    /// Host and domain name (UTS) namespace.
    pub uts: u64,
    /// System V IPC namespace.
    pub ipc: u64,
    /// PID namespace.
    pub pid: u64,
    /// User namespace.
    pub user: u64,
    /// Mount namespace.
    pub mnt: u64,
    /// Cgroup namespace.
    pub cgroup: u64,
}

/// The namespace types in the kernel's record order, with their names
/// under `/proc/PID/ns`.
pub const KINDS: [&str; 7] = ["net", "uts", "ipc", "pid", "user", "mnt", "cgroup"];

impl Namespaces {
    /// From the `(dev, ino)` pairs of a NAMESPACES record, in `KINDS`
    /// order; a kernel that sends more types than we know is fine.
    pub fn from_inodes(inodes: impl IntoIterator<Item = u64>) -> Namespaces {
        let mut ns = Namespaces::default();
        for (kind, ino) in KINDS.iter().zip(inodes) {
            *ns.slot(kind) = ino;
        }
        ns
    }

    fn slot(&mut self, kind: &str) -> &mut u64 {
        match kind {
            "net" => &mut self.net,
            "uts" => &mut self.uts,
            "ipc" => &mut self.ipc,
            "pid" => &mut self.pid,
            "user" => &mut self.user,
            "mnt" => &mut self.mnt,
            _ => &mut self.cgroup,
        }
    }

    /// `(name, inode)` in `KINDS` order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> {
        let values = [self.net, self.uts, self.ipc, self.pid, self.user, self.mnt, self.cgroup];
        KINDS.into_iter().zip(values)
    }

    /// Reads `task_dir/ns/*` (a `/proc/PID` or `/proc/PID/task/TID`).
    /// `None` if none could be read (no permission, or the task is gone).
    pub fn read(task_dir: &Path) -> Option<Namespaces> {
        let mut ns = Namespaces::default();
        let mut any = false;
        for kind in KINDS {
            if let Some(ino) = std::fs::read_link(task_dir.join("ns").join(kind)).ok().and_then(|l| parse_link(&l.to_string_lossy())) {
                *ns.slot(kind) = ino;
                any = true;
            }
        }
        any.then_some(ns)
    }
}

/// `pid:[4026531836]` → 4026531836.
fn parse_link(link: &str) -> Option<u64> {
    link.split_once(":[")?.1.strip_suffix(']')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_order_maps_to_names() {
        let ns = Namespaces::from_inodes([1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(ns, Namespaces { net: 1, uts: 2, ipc: 3, pid: 4, user: 5, mnt: 6, cgroup: 7 });
        assert_eq!(ns.iter().collect::<Vec<_>>()[3], ("pid", 4));
        assert_eq!(Namespaces::from_inodes([9]).net, 9);
    }

    #[test]
    fn proc_links_parse_and_this_process_is_readable() {
        assert_eq!(parse_link("pid:[4026531836]"), Some(4026531836));
        assert_eq!(parse_link("pid:4026531836"), None);
        assert_eq!(parse_link("mnt:[x]"), None);
        let me = Namespaces::read(Path::new("/proc/self")).expect("our own namespaces are readable");
        let link = std::fs::read_link("/proc/self/ns/pid").unwrap();
        assert_eq!(Some(me.pid), parse_link(&link.to_string_lossy()));
        assert!(Namespaces::read(Path::new("/proc/no-such-task")).is_none());
    }
}

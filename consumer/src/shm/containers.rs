//! Producers in other containers: each container's own /dev/shm, found
//! through the root of one of its processes, and their pids translated.
//!
//! A container needs no volume shared with the recorder: its /dev/shm is
//! `/proc/PID/root/dev/shm` for any of its processes. Processes are
//! grouped by mount namespace (one `readlink` each), and each namespace's
//! /dev/shm is opened once and known by its `(dev, ino)`: a pod's
//! containers, which share one /dev/shm, are visited once, and a
//! container that shares the host's is left to the host's scan.
//!
//! A producer names itself by its pid in its own PID namespace, which may
//! be 1 in every container. Its host pid is the process among those that
//! share its /dev/shm whose `NSpid:` ends with that pid and whose PID
//! namespace is the one its registry names: two containers whose
//! producers are both pid 1 never meet.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::fs::{openat2, Mode, OFlags, ResolveFlags};

use super::place::Place;
use crate::containers::{selected, ContainerIdentity, ContainerSelector};

/// One container's /dev/shm, as the last scan found it.
struct ContainerShm {
    /// Its /dev/shm, opened inside its root.
    shm: OwnedFd,
    /// `/proc/PID/root/dev/shm`, for messages.
    shown: PathBuf,
    /// The host pids of the processes that see it.
    members: Vec<u32>,
    /// Its `usertrace-UID` directories opened so far, by name.
    places: HashMap<String, Arc<Place>>,
    /// Whether any member is selected: if not, nothing in it is read.
    selected: bool,
}

/// How often /proc is walked for containers: a walk stats every process
/// on the node, too much for every rescan (100 ms) of a busy node. A
/// producer in a container started since is found at the next walk.
const WALK_INTERVAL: Duration = Duration::from_millis(500);

/// The containers' /dev/shm directories, kept from scan to scan.
#[derive(Default)]
pub(crate) struct Containers {
    by_shm: HashMap<(u64, u64), ContainerShm>,
    /// When /proc was last walked.
    walked: Option<Instant>,
}

/// What a scan found: the places to list, with the host pids that share
/// each.
pub(crate) struct Found {
    pub(crate) place: Arc<Place>,
    pub(crate) members: Arc<[u32]>,
}

impl Containers {
    /// Returns the `usertrace-*` directories of every container's /dev/shm
    /// that has a selected process (every one with no selectors), each
    /// once, after walking /proc if the last walk is `WALK_INTERVAL` old.
    /// `host_shm` is our own /dev/shm's `(dev, ino)`.
    pub(crate) fn scan(&mut self, host_shm: (u64, u64), selectors: &[ContainerSelector]) -> Vec<Found> {
        if self.walked.is_none_or(|at| at.elapsed() >= WALK_INTERVAL) {
            self.walked = Some(Instant::now());
            self.walk(host_shm, selectors);
        }
        let mut found = Vec::new();
        for shm in self.by_shm.values_mut().filter(|s| s.selected) {
            let members: Arc<[u32]> = shm.members.clone().into();
            for name in usertrace_directories(&shm.shm) {
                if !shm.places.contains_key(&name) {
                    let Ok(place) = Place::open_in(&shm.shm, &shm.shown, &name) else { continue };
                    shm.places.insert(name.clone(), Arc::new(place));
                }
                found.push(Found { place: shm.places[&name].clone(), members: members.clone() });
            }
        }
        found
    }

    /// Walks /proc: which /dev/shm each process sees, and whether any of
    /// a /dev/shm's processes is selected.
    fn walk(&mut self, host_shm: (u64, u64), selectors: &[ContainerSelector]) {
        let own_mnt = mount_namespace(Path::new("/proc/self"));
        let mut shm_of_mnt: HashMap<u64, Option<(u64, u64)>> = HashMap::new();
        for shm in self.by_shm.values_mut() {
            shm.members.clear();
            shm.selected = false;
        }
        for pid in proc_pids() {
            let Some(mnt) = mount_namespace(Path::new(&format!("/proc/{pid}"))) else { continue };
            if Some(mnt) == own_mnt {
                continue;
            }
            let key = *shm_of_mnt.entry(mnt).or_insert_with(|| self.open_shm(pid, host_shm));
            let Some(shm) = key.and_then(|k| self.by_shm.get_mut(&k)) else { continue };
            shm.members.push(pid);
            if !shm.selected {
                shm.selected = selectors.is_empty() || ContainerIdentity::read(pid).is_some_and(|who| selected(selectors, &who));
            }
        }
        // A container that is gone: its places live on in the producers
        // that hold them, until those are read to the end.
        self.by_shm.retain(|_, shm| !shm.members.is_empty());
    }

    /// Opens `/dev/shm` inside the root of process `pid` and files it by
    /// its `(dev, ino)`; None for our own /dev/shm, or if there is none.
    fn open_shm(&mut self, pid: u32, host_shm: (u64, u64)) -> Option<(u64, u64)> {
        let shm = open_in_root(pid, "/dev/shm").ok()?;
        let stat = rustix::fs::fstat(&shm).ok()?;
        let key = (stat.st_dev, stat.st_ino);
        if key == host_shm || self.by_shm.contains_key(&key) {
            return (key != host_shm).then_some(key);
        }
        let shown = PathBuf::from(format!("/proc/{pid}/root/dev/shm"));
        self.by_shm.insert(key, ContainerShm { shm, shown, members: Vec::new(), places: HashMap::new(), selected: false });
        Some(key)
    }
}

/// Opens directory `path` as process `pid` sees it: resolved inside its
/// root, where `..` and every symlink, absolute or not, stay.
fn open_in_root(pid: u32, path: &str) -> std::io::Result<OwnedFd> {
    let root = rustix::fs::open(format!("/proc/{pid}/root"), OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    Ok(openat2(&root, path, flags, Mode::empty(), ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS)?)
}

/// `(dev, ino)` of our own /dev/shm, to tell a container that shares it.
pub(crate) fn host_shm() -> (u64, u64) {
    std::fs::metadata("/dev/shm").map_or((0, 0), |m| (m.dev(), m.ino()))
}

/// The `usertrace-*` names in a /dev/shm, bounded like any listing.
fn usertrace_directories(shm: &OwnedFd) -> Vec<String> {
    let Ok(dir) = rustix::fs::Dir::read_from(shm) else { return Vec::new() };
    let prefix = usertrace::shm_layout::DIRECTORY_PREFIX.rsplit_once('/').map_or("", |(_, p)| p);
    dir.flatten()
        .take(super::place::MAX_NAMES)
        .filter_map(|e| e.file_name().to_str().ok().map(str::to_owned))
        .filter(|name| name.starts_with(prefix))
        .collect()
}

/// Every pid /proc lists.
fn proc_pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect()
}

/// The inode of the mount namespace of a `/proc/PID`.
fn mount_namespace(proc_dir: &Path) -> Option<u64> {
    std::fs::metadata(proc_dir.join("ns/mnt")).ok().map(|m| m.ino())
}

/// The host pid of the process among `members` that is `pid` in PID
/// namespace `pid_namespace` (0: the registry did not say; then the pid
/// alone must name one process).
pub(crate) fn host_pid(members: &[u32], pid: u32, pid_namespace: u64) -> Option<u32> {
    let mut found = members.iter().copied().filter(|&host| {
        crate::containers::own_pid(&format!("/proc/{host}/status")) == Some(pid)
            && (pid_namespace == 0 || std::fs::metadata(format!("/proc/{host}/ns/pid")).is_ok_and(|m| m.ino() == pid_namespace))
    });
    let first = found.next()?;
    // Two candidates and no namespace to choose by: neither is taken.
    found.next().is_none().then_some(first)
}

/// The host tid of the thread `tid` (as its own PID namespace numbers it)
/// of process `host_pid`; None once it has exited.
pub(crate) fn host_tid(host_pid: u32, tid: u32) -> Option<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{host_pid}/task")).ok()?;
    tasks.flatten().filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()).find(|host_tid| {
        crate::containers::own_pid(&format!("/proc/{host_pid}/task/{host_tid}/status")) == Some(tid)
    })
}

/// Whether any process among `members` that could be `pid` in its own
/// namespace is selected: a registry none of them could have made is not
/// even opened. None if no member is `pid` (one that started since the
/// last walk): asked again later.
pub(crate) fn any_selected(members: &[u32], pid: u32, selectors: &[ContainerSelector]) -> Option<bool> {
    let mut candidates = members.iter().filter(|&&host| crate::containers::own_pid(&format!("/proc/{host}/status")) == Some(pid)).peekable();
    candidates.peek()?;
    Some(candidates.any(|&host| ContainerIdentity::read(host).is_some_and(|who| selected(selectors, &who))))
}

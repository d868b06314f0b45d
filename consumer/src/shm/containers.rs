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
//!
//! # Safety
//! The walker thread is started with every signal blocked
//! (`pthread_sigmask`, restored in the caller at once), so that a signal
//! meant for the recorder (SIGUSR2 asks for a dump, SIGINT ends it) is
//! never delivered to it.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::fs::{openat2, Mode, OFlags, ResolveFlags};

use super::handoff::Giver;
use super::place::Place;
use crate::containers::{selected, ContainerIdentity, ContainerSelector};

/// One container's /dev/shm, as the last walk found it.
struct ContainerShm {
    /// Its /dev/shm, opened inside its root.
    shm: Arc<OwnedFd>,
    /// `/proc/PID/root/dev/shm`, for messages.
    shown: Arc<Path>,
    /// The host pids of the processes that see it.
    members: Vec<u32>,
    /// Whether any member is selected: if not, nothing in it is read.
    selected: bool,
}

/// A selected container's /dev/shm, as a walk publishes it.
#[derive(Clone)]
struct Published {
    key: (u64, u64),
    shm: Arc<OwnedFd>,
    shown: Arc<Path>,
    members: Arc<[u32]>,
}

/// How often /proc is walked for containers: a walk stats every process
/// on the node. A producer in a container started since is found at the
/// next walk.
const WALK_INTERVAL: Duration = Duration::from_millis(500);

/// The containers' /dev/shm directories. /proc is walked on a thread of
/// its own: a walk takes tens of milliseconds on a loaded node (more
/// while namespaces are made and torn down), which the drain, reading
/// rings that fill in as long, cannot wait for. The first walk is done
/// at once, so that a recording's first scan sees the containers there.
#[derive(Default)]
pub(crate) struct Containers {
    /// What the last walk found; the walker replaces it whole.
    published: Arc<Mutex<Vec<Published>>>,
    stop: Arc<AtomicBool>,
    walker: Option<JoinHandle<()>>,
    /// Whether the first walk was done (on the caller's thread).
    walked_once: bool,
    /// The `usertrace-UID` directories opened so far, by /dev/shm and name.
    places: HashMap<((u64, u64), String), Arc<Place>>,
    /// The node's `user_events_data`, to hand to producers waiting for it
    /// (`handoff.rs`); None: no handoff.
    pub(crate) handoff: Option<PathBuf>,
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
    /// once, as the last walk of /proc found them. `host_shm` is our own
    /// /dev/shm's `(dev, ino)`.
    pub(crate) fn scan(&mut self, host_shm: (u64, u64), selectors: &[ContainerSelector]) -> Vec<Found> {
        if !self.walked_once {
            self.walked_once = true;
            let handoff = self.handoff.take().map(Giver::new);
            let mut walker = Walker { host_shm, selectors: selectors.to_vec(), by_shm: HashMap::new(), handoff };
            *lock(&self.published) = walker.walk();
            let (published, stop) = (self.published.clone(), self.stop.clone());
            // Without a thread (none may be made), the first walk stands.
            self.walker = spawn_without_signals(move || walker.run(&published, &stop));
        }
        let published = lock(&self.published).clone();
        self.places.retain(|(key, _), _| published.iter().any(|p| p.key == *key));
        let mut found = Vec::new();
        for shm in published {
            for name in usertrace_directories(&shm.shm) {
                let place = match self.places.get(&(shm.key, name.clone())) {
                    Some(place) => place.clone(),
                    None => {
                        let Ok(place) = Place::open_in(&shm.shm, &shm.shown, &name) else { continue };
                        let place = Arc::new(place);
                        self.places.insert((shm.key, name), place.clone());
                        place
                    }
                };
                found.push(Found { place, members: shm.members.clone() });
            }
        }
        found
    }
}

impl Drop for Containers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(walker) = self.walker.take() {
            let _ = walker.join();
        }
    }
}

/// Starts `run` on a thread of its own that no signal is delivered to:
/// it is born with every signal blocked (a thread inherits its creator's
/// mask), and the caller's mask is restored after.
fn spawn_without_signals(run: impl FnOnce() + Send + 'static) -> Option<JoinHandle<()>> {
    let mut all = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    let mut before = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigfillset initializes the set it is given, and
    // pthread_sigmask(SIG_BLOCK, set, old) only reads `all` and writes the
    // calling thread's previous mask into `before` ("pthread_sigmask(3)").
    let blocked = unsafe { libc::sigfillset(all.as_mut_ptr()) == 0 && libc::pthread_sigmask(libc::SIG_BLOCK, all.as_ptr(), before.as_mut_ptr()) == 0 };
    if !blocked {
        return None;
    }
    let thread = std::thread::Builder::new().name("usertrace-containers".into()).spawn(run).ok();
    // SAFETY: `before` was written by the successful call above; this sets
    // the calling thread's mask back to it.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, before.as_ptr(), std::ptr::null_mut()) };
    thread
}

/// The published list, even if a walker panicked while holding it.
fn lock(published: &Mutex<Vec<Published>>) -> std::sync::MutexGuard<'_, Vec<Published>> {
    published.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The walker's own state, kept from walk to walk.
struct Walker {
    host_shm: (u64, u64),
    selectors: Vec<ContainerSelector>,
    by_shm: HashMap<(u64, u64), ContainerShm>,
    /// Hands `user_events_data` to the producers waiting for it.
    handoff: Option<Giver>,
}

impl Walker {
    /// Walks every `WALK_INTERVAL` until `stop`, publishing each walk.
    fn run(mut self, published: &Mutex<Vec<Published>>, stop: &AtomicBool) {
        // In short sleeps, so that a recorder that ends waits little.
        let step = Duration::from_millis(50);
        let mut last = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(step);
            if last.elapsed() >= WALK_INTERVAL {
                last = Instant::now();
                let found = self.walk();
                *lock(published) = found;
            }
        }
    }

    /// Walks /proc: which /dev/shm each process sees, and whether any of
    /// a /dev/shm's processes is selected; returns the selected ones.
    fn walk(&mut self) -> Vec<Published> {
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
            let key = *shm_of_mnt.entry(mnt).or_insert_with(|| self.open_shm(pid));
            let Some(shm) = key.and_then(|k| self.by_shm.get_mut(&k)) else { continue };
            shm.members.push(pid);
            if !shm.selected {
                let selectors = &self.selectors;
                shm.selected = selectors.is_empty() || ContainerIdentity::read(pid).is_some_and(|who| selected(selectors, &who));
            }
        }
        // A container that is gone: its places live on in the producers
        // that hold them, until those are read to the end.
        self.by_shm.retain(|_, shm| !shm.members.is_empty());
        self.hand_over();
        let selected = self.by_shm.iter().filter(|(_, s)| s.selected);
        selected.map(|(key, s)| Published { key: *key, shm: s.shm.clone(), shown: s.shown.clone(), members: s.members.clone().into() }).collect()
    }

    /// Serves the producers in selected containers that wait for a
    /// `user_events_data` descriptor.
    fn hand_over(&mut self) {
        let Some(giver) = self.handoff.as_mut() else { return };
        for shm in self.by_shm.values().filter(|s| s.selected) {
            giver.serve_shm(&shm.shm, &usertrace_directories(&shm.shm), &shm.members, &self.selectors);
        }
        giver.end_walk();
    }

    /// Opens `/dev/shm` inside the root of process `pid` and files it by
    /// its `(dev, ino)`; None for our own /dev/shm, or if there is none.
    fn open_shm(&mut self, pid: u32) -> Option<(u64, u64)> {
        let shm = open_in_root(pid, "/dev/shm").ok()?;
        let stat = rustix::fs::fstat(&shm).ok()?;
        let key = (stat.st_dev, stat.st_ino);
        if key == self.host_shm || self.by_shm.contains_key(&key) {
            return (key != self.host_shm).then_some(key);
        }
        let shown: Arc<Path> = PathBuf::from(format!("/proc/{pid}/root/dev/shm")).into();
        self.by_shm.insert(key, ContainerShm { shm: Arc::new(shm), shown, members: Vec::new(), selected: false });
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

//! A container made the way runtimes make one, for the tests of producers
//! in containers: user, mount, PID, IPC and UTS namespaces (`unshare`), a
//! private tmpfs on /dev/shm and a /proc of its own, and the program run
//! as uid 1000 with no capabilities and `no_new_privs` (`setpriv`). No
//! tracefs is mounted in it (nor on this host). Optionally in a cgroup v2
//! named as containerd names a pod's container, so that its identity is
//! the one a node would show.
//!
//! The user namespace maps its root to the host's root and uids 1.. to
//! 200001..: `unshare` has no way to map a range without newuidmap and
//! /etc/subuid, so the map is written from here, after `unshare` has
//! exec'd its shell; that shell, root inside, is what keeps the
//! capabilities to mount /dev/shm and /proc once the map is in. The
//! program itself runs as 1000 inside, 201000 here.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use crate::support::ut_emit;

/// Held by each test that makes containers, and by the timing-sensitive
/// bursts test: one at a time, so that the recorders of the others (which
/// read every container on the host) and the bursts' recorder see few
/// containers, and little of their start-up, at once.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Waits until no other test makes containers; hold it for the test.
pub fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A running container whose program (`ut_emit`, or one given) is pid 1
/// inside.
pub struct Container {
    unshare: Child,
    _go: ChildStdin,
    /// The program's pid here.
    pub host_pid: u32,
    /// Its cgroup (`/sys/fs/cgroup/...`), if it was given one; removed at
    /// the end with the directories above it made for it.
    cgroup: Vec<PathBuf>,
}

/// The identity a container is given: a pod uid and a container id, which
/// its cgroup path carries as the kubelet and containerd write them.
pub struct Identity {
    pub pod_uid: String,
    pub container_id: String,
}

impl Identity {
    /// A fresh, unique one.
    pub fn new() -> Identity {
        let mut bytes = [0u8; 48];
        std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes)).unwrap();
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let u = &hex[64..96];
        let pod_uid = format!("{}-{}-{}-{}-{}", &u[..8], &u[8..12], &u[12..16], &u[16..20], &u[20..32]);
        Identity { pod_uid, container_id: hex[..64].to_owned() }
    }

    /// Its cgroup path under a cgroup v2 root, as the systemd driver
    /// writes it.
    fn cgroup_path(&self) -> String {
        format!(
            "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{}.slice/cri-containerd-{}.scope",
            self.pod_uid.replace('-', "_"),
            self.container_id
        )
    }
}

/// Where cgroup v2 is mounted writable here, if it is.
pub fn cgroup2_root() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let root = mounts.lines().find_map(|l| {
        let (before, after) = l.split_once(" - ")?;
        let fields: Vec<&str> = before.split_whitespace().collect();
        let writable = !fields.get(5)?.split(',').any(|o| o == "ro");
        (after.starts_with("cgroup2 ") && writable).then(|| PathBuf::from(fields[4]))
    })?;
    // Writable for us: a test directory can be made and removed.
    let probe = root.join(format!("usertrace-probe-{}", std::process::id()));
    std::fs::create_dir(&probe).ok()?;
    std::fs::remove_dir(&probe).ok()?;
    Some(root)
}

impl Container {
    /// Starts `ut_emit ARGS` in a new container (in `identity`'s cgroup if
    /// given), and waits for it to say "ready 1".
    pub fn start(args: &[&str], identity: Option<&Identity>) -> Container {
        Container::start_program(&format!("{} {}", ut_emit().display(), args.join(" ")), &[], identity)
    }

    /// Starts `command_line` (words without quotes, in this host's file
    /// system, readable by uid 201000) with `env` in a new container, and
    /// waits for it to say "ready 1".
    pub fn start_program(command_line: &str, env: &[(&str, &str)], identity: Option<&Identity>) -> Container {
        let program = format!("exec setpriv --reuid=1000 --regid=1000 --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs {command_line}");
        let inside = format!("mount -t tmpfs -o mode=1777,size=64m tmpfs /dev/shm && mount -t proc proc /proc && {program}");
        // `read` waits for the map and the cgroup; the second `sh` is
        // exec'd once the map is in, so that it is root inside.
        let mut unshare = Command::new("unshare")
            .args(["--user", "--mount", "--pid", "--ipc", "--uts", "--fork", "--kill-child", "sh", "-c"])
            .arg(format!("read go; exec sh -c '{inside}'"))
            .env("USERTRACE_TRANSPORT", "shm")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let host_pid = child_of(unshare.id());
        for map in ["uid_map", "gid_map"] {
            std::fs::write(format!("/proc/{host_pid}/{map}"), "0 0 1\n1 200001 65535\n").unwrap();
        }
        let cgroup = identity.map(|id| enter_cgroup(host_pid, id)).unwrap_or_default();
        let mut go = unshare.stdin.take().unwrap();
        go.write_all(b"go\n").unwrap();
        let mut ready = String::new();
        BufReader::new(unshare.stdout.take().unwrap()).read_line(&mut ready).unwrap();
        assert!(ready.starts_with("ready 1"), "pid 1 in its container: {ready:?}");
        Container { unshare, _go: go, host_pid, cgroup }
    }

    /// Its /dev/shm/usertrace-1000, as this host reaches it (for the test
    /// to plant files in; the recorder never goes through this path).
    pub fn shm_dir(&self) -> PathBuf {
        PathBuf::from(format!("/proc/{}/root/dev/shm/usertrace-1000", self.host_pid))
    }

    /// Whether `line` names a file of this container's /dev/shm as the
    /// recorder reaches it: through the root of whichever of its
    /// processes (unshare's, or the program's) it met first.
    pub fn names_ours(&self, line: &str) -> bool {
        [self.unshare.id(), self.host_pid].iter().any(|pid| line.contains(&format!("/proc/{pid}/root/dev/shm/usertrace-1000/")))
    }

    /// Its registry's file name.
    pub fn registry(&self) -> String {
        let names = std::fs::read_dir(self.shm_dir()).unwrap().flatten().map(|e| e.file_name().into_string().unwrap());
        names.into_iter().find(|n| n.starts_with("1.") && n.ends_with(".registry")).expect("its registry")
    }

    /// Whether its program still runs.
    pub fn running(&mut self) -> bool {
        self.unshare.try_wait().unwrap().is_none()
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = self.unshare.kill();
        let _ = self.unshare.wait();
        // Its processes are gone once unshare is (--kill-child): the
        // cgroups empty, they can be removed, innermost first.
        for dir in &self.cgroup {
            for _ in 0..50 {
                if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
}

/// The one child of `parent`, once it has one.
fn child_of(parent: u32) -> u32 {
    for _ in 0..200 {
        let children = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children")).unwrap_or_default();
        if let Some(child) = children.split_whitespace().next() {
            return child.parse().unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    panic!("unshare made no child");
}

/// Moves `pid` into `identity`'s cgroup, made for it; returns the
/// directories made, innermost first. Nothing if cgroup v2 is not
/// writable here (the caller checks `cgroup2_root` first).
fn enter_cgroup(pid: u32, identity: &Identity) -> Vec<PathBuf> {
    let Some(root) = cgroup2_root() else { return Vec::new() };
    let path = root.join(identity.cgroup_path());
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(path.join("cgroup.procs"), pid.to_string()).unwrap();
    // Only the pod's and the container's own: the kubepods slices may be
    // another test's too, and are left (empty) where they are.
    vec![path.clone(), path.parent().map(Path::to_owned).unwrap()]
}

/// Watches one file for opens (fanotify, which names the process that
/// opened it: other recorders of a parallel run may open it too).
pub struct OpenWatch(std::os::fd::OwnedFd);

impl OpenWatch {
    /// Starts watching `path`.
    pub fn new(path: &Path) -> OpenWatch {
        use std::os::fd::FromRawFd;
        // SAFETY: fanotify_init takes flags only; a negative result is checked.
        let fd = unsafe { libc::fanotify_init(libc::FAN_CLASS_NOTIF | libc::FAN_CLOEXEC | libc::FAN_NONBLOCK, libc::O_RDONLY as u32) };
        assert!(fd >= 0, "fanotify_init (root is needed): {}", std::io::Error::last_os_error());
        // SAFETY: fd is a new descriptor we own from here on.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid descriptor and a NUL-terminated path; the result is checked.
        let marked = unsafe { libc::fanotify_mark(std::os::fd::AsRawFd::as_raw_fd(&fd), libc::FAN_MARK_ADD, libc::FAN_OPEN, libc::AT_FDCWD, c_path.as_ptr()) };
        assert_eq!(marked, 0, "fanotify_mark {}: {}", path.display(), std::io::Error::last_os_error());
        OpenWatch(fd)
    }

    /// Whether process `pid` opened the file since the watch began.
    pub fn opened_by(&self, pid: u32) -> bool {
        let mut buf = vec![0u8; 64 * 1024];
        let mut opened = false;
        loop {
            // SAFETY: reads into a buffer of its own length; nonblocking.
            let n = unsafe { libc::read(std::os::fd::AsRawFd::as_raw_fd(&self.0), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                return opened;
            }
            let mut at = 0;
            while at + size_of::<libc::fanotify_event_metadata>() <= n as usize {
                // SAFETY: the kernel wrote whole records; read unaligned from the buffer.
                let event: libc::fanotify_event_metadata = unsafe { std::ptr::read_unaligned(buf.as_ptr().add(at).cast()) };
                if event.fd >= 0 {
                    // SAFETY: each event hands us a descriptor of the file, ours to close.
                    unsafe { libc::close(event.fd) };
                }
                opened |= event.pid as u32 == pid;
                at += (event.event_len as usize).max(1);
            }
        }
    }
}

//! Which processes a recording has named, and by what full name.
//!
//! A perf record names a thread by its 16-byte comm. A timeline wants the
//! process's real name: the executable it ran and its command line. Those
//! live only in `/proc/PID`, so they are read as early as the session can:
//! when the ring yields the exec's COMM record, or, for a process that was
//! running before the session, when its first event is released. A process
//! is described once per exec, and only if it emitted an event: the rest of
//! the system's processes cost nothing.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use rustc_hash::{FxHashMap, FxHashSet};

/// A process's full name, as far as `/proc` still showed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessInfo {
    /// The executable's path (`/proc/PID/exe`); None if it had exited.
    pub executable: Option<String>,
    /// The arguments (`/proc/PID/cmdline`); None if it had exited or is a
    /// kernel thread.
    pub command_line: Option<Vec<String>>,
    /// The id of the container it runs in, from its cgroup path
    /// (`/proc/PID/cgroup`, read as `processes::container_id` reads it);
    /// None outside one.
    pub container_id: Option<String>,
    /// The uid of the Kubernetes pod it runs in, from the same cgroup path
    /// (`containers::pod_uid`); None outside one.
    pub pod_uid: Option<String>,
    /// Its pid inside its own PID namespace (the last of `NSpid:` in
    /// `/proc/PID/status`), where that is not its pid here: two containers
    /// whose programs are both pid 1 differ by their host pids.
    pub pid_in_container: Option<u32>,
    /// The OpenTelemetry resource its environment declares
    /// (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, read by
    /// [`usertrace::resource`]'s rule from `/proc/PID/environ`); empty if
    /// it declares none or had exited.
    pub resource: BTreeMap<String, String>,
}

/// How much of `/proc/PID/environ` is read: the variables past it are not
/// seen. Far above a service's environment, and a bound on what a process
/// can make the recorder hold.
const ENVIRON_LIMIT: u64 = 256 * 1024;

impl ProcessInfo {
    /// Reads `proc_root/PID` (normally `/proc`).
    pub fn read(proc_root: &Path, pid: u32) -> ProcessInfo {
        let dir = proc_root.join(pid.to_string());
        let executable = std::fs::read_link(dir.join("exe")).ok().map(|p| p.to_string_lossy().into_owned());
        let command_line = std::fs::read(dir.join("cmdline")).ok().filter(|b| !b.is_empty()).map(|bytes| {
            let bytes = bytes.strip_suffix(&[0]).unwrap_or(&bytes);
            bytes.split(|&b| b == 0).map(|arg| String::from_utf8_lossy(arg).into_owned()).collect()
        });
        let cgroup = std::fs::read_to_string(dir.join("cgroup")).unwrap_or_default();
        let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
        let pid_in_container = crate::containers::pid_in_container(&status);
        let resource = read_environ(&dir).map(|block| usertrace::resource::from_environ(&block).into_iter().collect()).unwrap_or_default();
        ProcessInfo {
            executable,
            command_line,
            container_id: container_id(&cgroup),
            pod_uid: crate::containers::pod_uid(&cgroup),
            pid_in_container,
            resource,
        }
    }
}

impl ProcessInfo {
    /// Whether `/proc` showed nothing of it: it had exited (or is a
    /// kernel thread, which has no executable and no command line).
    pub(crate) fn is_gone(&self) -> bool {
        self.executable.is_none() && self.command_line.is_none()
    }

    /// Takes from `now` (read later, of the same program) what this lacks.
    fn fill_in(&mut self, now: ProcessInfo) {
        self.executable = self.executable.take().or(now.executable);
        self.command_line = self.command_line.take().or(now.command_line);
        self.container_id = self.container_id.take().or(now.container_id);
        self.pod_uid = self.pod_uid.take().or(now.pod_uid);
        self.pid_in_container = self.pid_in_container.or(now.pid_in_container);
        if self.resource.is_empty() {
            self.resource = now.resource;
        }
    }
}

/// Every process running now, described, but kernel threads: what a
/// session knows of a process that was running when it started and exits
/// before its first event is read (a container's short-lived program on a
/// loaded node), when `/proc` no longer shows it. A read per process at
/// the start, once; `Described` forgets each at its exit.
pub(crate) fn describe_running(proc_root: &Path) -> FxHashMap<u32, ProcessInfo> {
    let Ok(entries) = std::fs::read_dir(proc_root) else { return FxHashMap::default() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .map(|pid| (pid, ProcessInfo::read(proc_root, pid)))
        .filter(|(_, info)| !info.is_gone())
        .collect()
}

/// The first [`ENVIRON_LIMIT`] bytes of `dir/environ`.
fn read_environ(dir: &Path) -> Option<Vec<u8>> {
    let mut block = Vec::new();
    std::fs::File::open(dir.join("environ")).ok()?.take(ENVIRON_LIMIT).read_to_end(&mut block).ok()?;
    Some(block)
}

/// The container id in a process's cgroup membership (`/proc/PID/cgroup`),
/// as OpenTelemetry's `container.id` wants it: the 64 hex digits the
/// runtimes (Docker, containerd, CRI-O, Podman) put in the path of the
/// cgroup they make for each container, in either cgroup version:
///
/// ```text
/// 0::/system.slice/docker-<id>.scope
/// 0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod<uid>.slice/cri-containerd-<id>.scope
/// 12:memory:/docker/<id>
/// 0::/machine.slice/libpod-<id>.scope/container
/// ```
///
/// The innermost matching path segment wins; a segment matches when, once
/// `.scope` and anything up to the last `-` or `:` are cut off, 64 hex
/// digits remain. None when no segment does (not in a container).
pub fn container_id(cgroup: &str) -> Option<String> {
    const LEN: usize = 64;
    cgroup
        .lines()
        .filter_map(|line| line.splitn(3, ':').nth(2))
        .flat_map(|path| path.rsplit('/'))
        .map(|segment| segment.strip_suffix(".scope").unwrap_or(segment))
        .map(|segment| segment.rsplit(['-', ':']).next().unwrap_or(segment))
        .find(|id| id.len() == LEN && id.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_ascii_lowercase)
}

/// The processes described so far, and what was read at their execs.
#[derive(Debug, Default)]
pub(crate) struct Descriptions {
    /// Read at an exec, waiting for the process's first event.
    read_at_exec: FxHashMap<u32, ProcessInfo>,
    /// Described since their last exec.
    described: FxHashSet<u32>,
}

/// What the session should say about a process.
#[derive(Debug, PartialEq)]
pub(crate) enum Describe {
    /// Nothing: not one of the processes that emitted events.
    Nothing,
    /// Emit this description of the process.
    Process(ProcessInfo),
}

impl Descriptions {
    /// The process exec'd; `info` was read when its COMM record came. If it
    /// had events before, it is described again now, under its new name.
    pub(crate) fn exec(&mut self, pid: u32, info: ProcessInfo) -> Describe {
        if self.described.contains(&pid) {
            Describe::Process(info)
        } else {
            self.read_at_exec.insert(pid, info);
            Describe::Nothing
        }
    }

    /// The process emitted an event: describe it if not yet done.
    pub(crate) fn event(&mut self, pid: u32, read: impl FnOnce() -> ProcessInfo) -> Describe {
        if !self.described.insert(pid) {
            return Describe::Nothing;
        }
        match self.read_at_exec.remove(&pid) {
            // An exec told before its program was known (a `perf record`
            // file maps it later), or read while the kernel was still
            // laying out the new program (its arguments and environment
            // come after its name): what is known now fills it in.
            Some(mut info) if info.executable.is_none() || info.command_line.is_none() || info.resource.is_empty() => {
                info.fill_in(read());
                Describe::Process(info)
            }
            Some(info) => Describe::Process(info),
            None => Describe::Process(read()),
        }
    }

    /// Whether the process has emitted events (its exits are then told).
    pub(crate) fn is_described(&self, pid: u32) -> bool {
        self.described.contains(&pid)
    }

    /// The process ended: forget it, so a reused pid is described afresh.
    pub(crate) fn exit(&mut self, pid: u32) {
        self.described.remove(&pid);
        self.read_at_exec.remove(&pid);
    }

    /// How many processes are remembered (bounded by the live ones).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.described.len() + self.read_at_exec.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(exe: &str) -> ProcessInfo {
        let resource = [("service.name".to_owned(), "svc".to_owned())].into();
        ProcessInfo { executable: Some(exe.into()), command_line: Some(vec![exe.into(), "--flag".into()]), resource, ..ProcessInfo::default() }
    }

    #[test]
    fn the_processes_running_are_described_and_kernel_threads_left_out() {
        let running = describe_running(Path::new("/proc"));
        let me = std::process::id();
        let exe = std::env::current_exe().unwrap();
        assert_eq!(running.get(&me).and_then(|i| i.executable.as_deref()), exe.to_str());
        assert!(running.values().all(|info| !info.is_gone()));
    }

    #[test]
    fn a_process_is_described_at_its_first_event_with_what_its_exec_read() {
        let mut d = Descriptions::default();
        assert_eq!(d.exec(7, info("/bin/worker")), Describe::Nothing);
        assert_eq!(d.event(7, || panic!("read at exec already")), Describe::Process(info("/bin/worker")));
        assert_eq!(d.event(7, || panic!("described already")), Describe::Nothing);
    }

    #[test]
    fn an_environment_not_yet_laid_out_at_the_exec_is_read_at_the_first_event() {
        let mut d = Descriptions::default();
        let at_exec = ProcessInfo { resource: BTreeMap::new(), ..info("/bin/worker") };
        assert_eq!(d.exec(7, at_exec), Describe::Nothing);
        let now = ProcessInfo { executable: Some("/elsewhere".into()), ..info("/bin/worker") };
        assert_eq!(d.event(7, || now), Describe::Process(info("/bin/worker")), "the exec's program, the resource read now");
        // Read before its arguments were laid out: they are read now.
        let at_exec = ProcessInfo { command_line: None, ..info("/bin/worker") };
        assert_eq!(d.exec(8, at_exec), Describe::Nothing);
        assert_eq!(d.event(8, || info("/bin/worker")), Describe::Process(info("/bin/worker")));
    }

    #[test]
    fn an_exec_after_events_describes_the_process_again() {
        let mut d = Descriptions::default();
        assert_eq!(d.event(7, || info("/bin/sh")), Describe::Process(info("/bin/sh")));
        assert_eq!(d.exec(7, info("/bin/worker")), Describe::Process(info("/bin/worker")));
    }

    #[test]
    fn exits_forget_so_memory_follows_the_live_processes() {
        let mut d = Descriptions::default();
        for pid in 0..1000 {
            d.exec(pid, info("/bin/x"));
            d.event(pid, ProcessInfo::default);
            d.exit(pid);
        }
        assert_eq!(d.len(), 0);
    }

    const ID: &str = "3f5e2c0b9a8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f";

    #[test]
    fn a_container_id_is_found_in_each_runtimes_cgroup_path() {
        let cases = [
            format!("0::/system.slice/docker-{ID}.scope\n"),
            format!("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0b5c2b1e_4d1f_4a7e_9b7e_1c2d3e4f5a6b.slice/cri-containerd-{ID}.scope\n"),
            format!("0::/kubepods/burstable/pod0b5c2b1e-4d1f-4a7e-9b7e-1c2d3e4f5a6b/{ID}\n"),
            format!("12:memory:/docker/{ID}\n11:cpu,cpuacct:/docker/{ID}\n"),
            format!("0::/machine.slice/libpod-{ID}.scope/container\n"),
            format!("0::/system.slice/crio-conmon-0000.scope\n0::/kubepods.slice/crio-{ID}.scope\n"),
            format!("0::/system.slice/docker-{}.scope\n", ID.to_uppercase()),
        ];
        for cgroup in &cases {
            assert_eq!(container_id(cgroup).as_deref(), Some(ID), "{cgroup}");
        }
    }

    #[test]
    fn outside_a_container_there_is_no_container_id() {
        for cgroup in [
            "0::/user.slice/user-1000.slice/session-2.scope\n",
            "0::/\n",
            "0::/system.slice/docker.service\n",
            // 63 and 65 digits, and a non-hex letter: not an id.
            &format!("0::/docker/{}\n", &ID[1..]),
            &format!("0::/docker/{ID}0\n"),
            &format!("0::/docker/{}g\n", &ID[1..]),
            "garbage without colons",
            "",
        ] {
            assert_eq!(container_id(cgroup), None, "{cgroup}");
        }
    }

    #[test]
    fn this_process_reads_as_its_own_executable_and_arguments() {
        let me = ProcessInfo::read(Path::new("/proc"), std::process::id());
        assert_eq!(me.executable.as_deref(), std::env::current_exe().ok().map(|p| p.to_string_lossy().into_owned()).as_deref());
        assert_eq!(me.command_line.unwrap(), std::env::args().collect::<Vec<_>>());
    }

    #[test]
    fn a_child_s_resource_is_read_from_the_environment_it_was_started_with() {
        let mut child = std::process::Command::new("sleep")
            .arg("10")
            .env("OTEL_SERVICE_NAME", "checkout")
            .env("OTEL_RESOURCE_ATTRIBUTES", "team=pay%2Cments,deployment.environment=test")
            .spawn()
            .unwrap();
        // Until its exec is through (the kernel names the new program
        // before it lays out the new stack), the child's environment is
        // ours or empty.
        let mut info = ProcessInfo::read(Path::new("/proc"), child.id());
        for _ in 0..500 {
            if !info.resource.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            info = ProcessInfo::read(Path::new("/proc"), child.id());
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let expected: BTreeMap<String, String> = [("service.name", "checkout"), ("team", "pay,ments"), ("deployment.environment", "test")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        assert_eq!(info.resource, expected);
    }
}

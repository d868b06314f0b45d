//! Which container a process runs in, as the host sees it, and the
//! operator's choice of containers a recorder serves.
//!
//! A container has no name the kernel knows. What names it is the cgroup
//! its runtime made for it (`/proc/PID/cgroup`): Docker, containerd,
//! CRI-O and Podman put the container's 64-hex id in that path, and the
//! kubelet puts the pod's uid in the path of the pod's cgroup above it.
//! A process's pid inside its PID namespace is the last number of the
//! `NSpid:` line of `/proc/PID/status`. Every rule for reading these lives
//! here, so that the shared-memory source, the process descriptions and
//! the selector read a container the same way.

use std::fmt;

/// A process's place among the host's containers, from its cgroup file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerIdentity {
    /// Its cgroup path: the cgroup v2 (`0::`) line's, else the first v1
    /// line that names a container, else the first line's.
    pub cgroup: String,
    /// The container id (64 hex digits), where a runtime named one.
    pub container_id: Option<String>,
    /// The Kubernetes pod uid, where the kubelet's cgroup names one.
    pub pod_uid: Option<String>,
}

impl ContainerIdentity {
    /// From the text of `/proc/PID/cgroup`.
    pub fn parse(cgroup_file: &str) -> ContainerIdentity {
        ContainerIdentity {
            cgroup: cgroup_path(cgroup_file).to_owned(),
            container_id: crate::processes::container_id(cgroup_file),
            pod_uid: pod_uid(cgroup_file),
        }
    }

    /// Reads `/proc/PID/cgroup`; None if the process is gone.
    pub fn read(pid: u32) -> Option<ContainerIdentity> {
        std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok().map(|text| ContainerIdentity::parse(&text))
    }
}

/// The paths of a cgroup file's lines (`HIERARCHY:CONTROLLERS:PATH`).
fn paths(cgroup_file: &str) -> impl Iterator<Item = (&str, &str)> {
    cgroup_file.lines().filter_map(|line| {
        let mut parts = line.splitn(3, ':');
        let hierarchy = parts.next()?;
        Some((hierarchy, parts.nth(1)?))
    })
}

/// The cgroup path a selector compares: the first that names a container,
/// cgroup v2's (`0::`, one tree for every controller) looked at first;
/// else v2's; else the first line's. (A host with both versions mounted
/// may keep a container's v1 paths and leave its v2 path at `/`.)
fn cgroup_path(cgroup_file: &str) -> &str {
    let v2_first = || paths(cgroup_file).filter(|(h, _)| *h == "0").chain(paths(cgroup_file).filter(|(h, _)| *h != "0"));
    v2_first()
        .find(|(_, path)| crate::processes::container_id(&format!("0::{path}")).is_some())
        .or_else(|| v2_first().next())
        .map_or("", |(_, path)| path)
}

/// The pod uid in a cgroup file, as the kubelet writes it under either
/// cgroup driver:
///
/// ```text
/// 0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b4f..._9c2e.slice/cri-containerd-<id>.scope
/// 4:memory:/kubepods/besteffort/pod1b4f...-9c2e/<id>
/// ```
///
/// The systemd driver writes the uid's dashes as underscores; it comes
/// back with dashes, as the API server shows it. Only under a `kubepods`
/// segment: a `pod...` directory elsewhere is someone else's name.
pub fn pod_uid(cgroup_file: &str) -> Option<String> {
    paths(cgroup_file).find_map(|(_, path)| {
        let mut segments = path.split('/').skip_while(|s| !s.starts_with("kubepods"));
        segments.find_map(|segment| {
            let segment = segment.strip_suffix(".slice").unwrap_or(segment);
            let after = segment.rsplit_once("-pod").map(|(_, uid)| uid).or_else(|| segment.strip_prefix("pod"))?;
            let uid = after.replace('_', "-").to_ascii_lowercase();
            is_uuid(&uid).then_some(uid)
        })
    })
}

/// 8-4-4-4-12 hex digits.
fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups.iter().zip([8, 4, 4, 4, 12]).all(|(g, len)| g.len() == len && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The pids of the `NSpid:` line of a `/proc/PID/status` (or
/// `/proc/PID/task/TID/status`), outermost first: the first is the pid
/// in the PID namespace of that /proc, the last the one the process knows
/// itself by. None without the line (a kernel before 4.1) or if garbled.
pub fn ns_pids(status: &str) -> Option<Vec<u32>> {
    let line = status.lines().find_map(|l| l.strip_prefix("NSpid:"))?;
    let pids: Vec<u32> = line.split_whitespace().map(str::parse).collect::<Result<_, _>>().ok()?;
    (!pids.is_empty()).then_some(pids)
}

/// The pid a task knows itself by, in its own PID namespace: the last of
/// [`ns_pids`] of `status_path`.
pub(crate) fn own_pid(status_path: &str) -> Option<u32> {
    ns_pids(&std::fs::read_to_string(status_path).ok()?)?.last().copied()
}

/// The pid a process has inside its container, from its status text,
/// where that is not its pid here: None in our own PID namespace.
pub fn pid_in_container(status: &str) -> Option<u32> {
    ns_pids(status).filter(|pids| pids.len() > 1).and_then(|pids| pids.last().copied())
}

/// Which containers a recorder serves, when the operator narrows it: a
/// process matches if any of the selector's terms does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContainerSelector {
    /// `cgroup:PATH`: its cgroup path is PATH or lies under it.
    CgroupPrefix(String),
    /// `id:HEX`: its container id is HEX, or starts with it (at least 12
    /// digits, as `docker ps` shortens them).
    ContainerId(String),
    /// `pod:UID`: its pod's uid.
    PodUid(String),
}

/// A selector that does not parse, with what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectorError {
    /// The text given.
    pub text: String,
    /// What was wrong with it, and what is expected.
    pub why: &'static str,
}

impl fmt::Display for SelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "container selector {:?}: {}", self.text, self.why)
    }
}

impl std::error::Error for SelectorError {}

impl std::str::FromStr for ContainerSelector {
    type Err = SelectorError;

    fn from_str(text: &str) -> Result<ContainerSelector, SelectorError> {
        let error = |why| SelectorError { text: text.to_owned(), why };
        let (kind, value) = text.split_once(':').ok_or_else(|| error("expected cgroup:PATH, id:CONTAINER_ID or pod:POD_UID"))?;
        match kind {
            "cgroup" if value.starts_with('/') => Ok(ContainerSelector::CgroupPrefix(value.trim_end_matches('/').to_owned())),
            "cgroup" => Err(error("a cgroup path starts with / (as in /proc/PID/cgroup)")),
            "id" if value.len() >= 12 && value.len() <= 64 && value.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Ok(ContainerSelector::ContainerId(value.to_ascii_lowercase()))
            }
            "id" => Err(error("a container id is 12 to 64 hex digits")),
            "pod" if is_uuid(&value.to_ascii_lowercase()) => Ok(ContainerSelector::PodUid(value.to_ascii_lowercase())),
            "pod" => Err(error("a pod uid is 8-4-4-4-12 hex digits (kubectl get pod NAME -o jsonpath='{.metadata.uid}')")),
            _ => Err(error("the kind is one of cgroup, id or pod")),
        }
    }
}

impl ContainerSelector {
    /// Whether a process of this identity is selected.
    pub fn matches(&self, who: &ContainerIdentity) -> bool {
        match self {
            ContainerSelector::CgroupPrefix(prefix) => {
                who.cgroup.strip_prefix(prefix.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with('/') || prefix.is_empty())
            }
            ContainerSelector::ContainerId(id) => who.container_id.as_deref().is_some_and(|c| c.starts_with(id.as_str())),
            ContainerSelector::PodUid(uid) => who.pod_uid.as_deref() == Some(uid.as_str()),
        }
    }
}

/// Whether any of `selectors` takes `who`; every process when there are
/// none (a root recorder serves the whole host, as `perf record -a` does).
pub fn selected(selectors: &[ContainerSelector], who: &ContainerIdentity) -> bool {
    selectors.is_empty() || selectors.iter().any(|s| s.matches(who))
}

#[cfg(test)]
mod tests;

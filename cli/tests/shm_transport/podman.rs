//! Debian's podman as the container tests run it: runc, a containers.conf
//! of the test's own, and root file systems the tests build from this
//! host's binaries and the libraries they link.
//!
//! Debian 12's crun refuses this host's hybrid cgroups ("cgroups in hybrid
//! mode not supported, drop all controllers from cgroupv2"), so runc runs
//! the containers; and podman's default RLIMIT_NOFILE and RLIMIT_NPROC for
//! root are above what runc may set here (no CAP_SYS_RESOURCE: "error
//! setting rlimit type 6: operation not permitted"), so the containers.conf
//! sets small ones.

use std::path::{Path, PathBuf};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// Whether podman and runc are installed. Under CI, which installs both
/// (harness/setup), their absence is a failure, not a skip.
pub fn installed() -> bool {
    let here = Path::new("/usr/bin/podman").exists() && Path::new("/usr/bin/runc").exists();
    if !here {
        assert!(std::env::var_os("CI").is_none(), "CI is set but podman or runc is missing: run harness/setup");
        eprintln!("skipped: podman and runc are not installed (apt-get install -y podman runc)");
    }
    here
}

/// A scratch folder for one test's containers: its containers.conf and
/// root file systems; removed when dropped, with the named containers.
pub struct Podman {
    dir: PathBuf,
    conf: PathBuf,
    names: Vec<String>,
}

impl Podman {
    pub fn new(name: &str) -> Podman {
        let dir = std::env::temp_dir().join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let conf = dir.join("containers.conf");
        // Ample for the tests' programs, and far below any hard limit:
        // here even this host's own RLIMIT_NPROC hard limit is refused to runc.
        std::fs::write(&conf, "[containers]\ndefault_ulimits = [\"nofile=4096:4096\", \"nproc=4096:4096\"]\n").unwrap();
        Podman { dir, conf, names: Vec::new() }
    }

    /// `podman --runtime runc ARGS`, with this test's containers.conf.
    pub fn command(&self) -> Command {
        let mut podman = Command::new("podman");
        podman.args(["--runtime", "/usr/bin/runc"]).env("CONTAINERS_CONF", &self.conf);
        podman
    }

    /// `podman run --rm --name NAME ...`: the container is removed when
    /// this is dropped, whatever the test did.
    pub fn run(&mut self, name: &str) -> Command {
        self.names.push(name.to_owned());
        let mut run = self.command();
        run.args(["run", "--rm", "--name", name]);
        run
    }

    /// Spawns `run` (a `run` of this test's), a program that says "ready
    /// PID" once registered, and waits for it to say "ready 1": pid 1 in its
    /// container. Fails the test with podman's stderr if it does not.
    pub fn start_ready(run: &mut Command) -> Child {
        let mut child = run.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let mut ready = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut ready).unwrap();
        if !ready.starts_with("ready 1") {
            let _ = child.kill();
            panic!("podman did not start it: {ready:?} {}", std::io::read_to_string(child.stderr.take().unwrap()).unwrap_or_default());
        }
        child
    }

    /// The id podman knows container `name` by.
    pub fn id(&self, name: &str) -> String {
        let inspect = self.command().args(["inspect", "--format", "{{.Id}}", name]).output().unwrap();
        String::from_utf8_lossy(&inspect.stdout).trim().to_owned()
    }

    /// A root file system named `name` holding each of `binaries` at
    /// /usr/bin/ under its own file name, and the libraries they link.
    pub fn rootfs(&self, name: &str, binaries: &[&Path]) -> PathBuf {
        let root = self.dir.join(name);
        std::fs::create_dir_all(root.join("usr/bin")).unwrap();
        for binary in binaries {
            std::fs::copy(binary, root.join("usr/bin").join(binary.file_name().unwrap())).unwrap();
            let ldd = Command::new("ldd").arg(binary).output().unwrap();
            for library in String::from_utf8_lossy(&ldd.stdout).split_whitespace().filter(|w| w.starts_with('/')) {
                let to = root.join(library.trim_start_matches('/'));
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(library, to).unwrap();
            }
        }
        root
    }
}

impl Drop for Podman {
    fn drop(&mut self) {
        for name in &self.names {
            let _ = self.command().args(["rm", "--force", "--time", "0", name]).output();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

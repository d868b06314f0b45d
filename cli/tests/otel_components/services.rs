//! Services that a test starts as children over HTTP, each writing what it
//! prints to `<name>.log` in one folder, and the GET they are called with.

use std::fs::File;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// The children started so far; killed if still running when dropped (a
/// failed test).
pub struct Services {
    children: Vec<(&'static str, Child)>,
    dir: PathBuf,
    /// How long one may take to start listening, or to end.
    limit: Duration,
}

impl Drop for Services {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Services {
    pub fn new(dir: &Path, limit: Duration) -> Services {
        Services { children: Vec::new(), dir: dir.to_owned(), limit }
    }

    /// Starts `command` as `name`, its output to `<name>.log`.
    pub fn spawn(&mut self, name: &'static str, mut command: Command) {
        let log = File::create(self.log_of(name)).unwrap();
        let child = command.stdout(log.try_clone().unwrap()).stderr(log).spawn().unwrap_or_else(|e| panic!("{name}: {e}"));
        self.children.push((name, child));
    }

    /// What `name` printed so far.
    pub fn printed(&self, name: &str) -> String {
        std::fs::read_to_string(self.log_of(name)).unwrap_or_default()
    }

    /// Returns once `port` takes connections; fails at once if a service
    /// exits meanwhile.
    pub fn wait_listening(&mut self, port: u16) {
        let deadline = Instant::now() + self.limit;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            self.none_exited();
            assert!(Instant::now() < deadline, "port {port} not listening in {:?}:\n{}", self.limit, self.logs());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Fails, with every service's output, if one has exited.
    pub fn none_exited(&mut self) {
        let exited = self.children.iter_mut().find_map(|(name, child)| child.try_wait().unwrap().map(|status| (*name, status)));
        if let Some((name, status)) = exited {
            panic!("{name} exited ({status}) before listening:\n{}", self.logs());
        }
    }

    /// Ends each in the order started: sends it `signal(name)` if that is
    /// some, then waits; each must end as `well(name, status)` says.
    pub fn end(&mut self, signal: impl Fn(&str) -> Option<i32>, well: impl Fn(&str, ExitStatus) -> bool) {
        for i in 0..self.children.len() {
            let (name, child) = &mut self.children[i];
            if let Some(signal) = signal(name) {
                // SAFETY: kill(2) on our own child, not yet reaped.
                unsafe { libc::kill(child.id() as i32, signal) };
            }
            let status = wait_for(child, self.limit);
            let name = *name;
            assert!(status.is_some_and(|s| well(name, s)), "{name} ended {status:?}:\n{}", self.logs());
        }
    }

    /// What every service printed, for a failure's message.
    pub fn logs(&self) -> String {
        let names: Vec<&str> = self.children.iter().map(|(name, _)| *name).collect();
        service_logs(&self.dir, &names)
    }

    fn log_of(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.log"))
    }
}

/// What the services `names` printed into `dir`, for a failure's message.
pub fn service_logs(dir: &Path, names: &[&str]) -> String {
    names.iter().map(|s| format!("{s}:\n{}\n", std::fs::read_to_string(dir.join(format!("{s}.log"))).unwrap_or_default())).collect()
}

/// The child's exit status, or None if it did not exit within `limit`.
pub fn wait_for(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// GET `url` (with a `traceparent`); the reply's body, which must be a 200's.
pub fn get(url: &str, traceparent: Option<&str>) -> String {
    let mut request = ureq::get(url);
    if let Some(t) = traceparent {
        request = request.header("traceparent", t);
    }
    let mut reply = request.call().unwrap_or_else(|e| panic!("GET {url}: {e}"));
    reply.body_mut().read_to_string().unwrap()
}

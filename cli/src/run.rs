//! What `record` and `stat` share: their options, and running a session
//! until the command exits or Ctrl-C.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use usertrace_consumer::{Output, Session, SessionOptions, Stats, Window};

use crate::launch::HeldChild;
use usertrace_consumer::AttachRequests;

/// Options common to `record` and `stat`.
#[derive(Debug, Default)]
pub struct RunArgs {
    pub patterns: Vec<String>,
    pub ring_pages: Option<usize>,
    pub command: Vec<String>,
}

impl RunArgs {
    /// Takes `-e PATTERN`, `--buffer-size N` and `-- CMD...` from `args`;
    /// returns the arguments it did not know, for the caller to handle.
    pub fn parse(args: &[String], mut other: impl FnMut(&str, Option<&String>) -> Result<bool, String>) -> Result<RunArgs, String> {
        let mut out = RunArgs::default();
        let mut i = 0;
        while i < args.len() {
            let arg = args[i].as_str();
            let next = args.get(i + 1);
            match arg {
                "--" => {
                    out.command = args[i + 1..].to_vec();
                    if out.command.is_empty() {
                        return Err("`--` must be followed by a command".into());
                    }
                    break;
                }
                "-e" | "--event" => {
                    out.patterns.push(next.ok_or("-e needs a pattern")?.clone());
                    i += 1;
                }
                "--buffer-size" => {
                    let n = next.ok_or("--buffer-size needs a number of pages")?;
                    let pages: usize = n.parse().map_err(|_| format!("--buffer-size: {n:?} is not a number of pages"))?;
                    if pages == 0 || !pages.is_power_of_two() {
                        return Err(format!("--buffer-size: {pages} is not a power of two"));
                    }
                    out.ring_pages = Some(pages);
                    i += 1;
                }
                _ => {
                    if other(arg, next)? {
                        i += 1;
                    }
                }
            }
            i += 1;
        }
        if out.patterns.is_empty() {
            return Err("give at least one event pattern with -e".into());
        }
        Ok(out)
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // ATOMICS: Relaxed; the main loop only needs to see the flag eventually.
    STOP.store(true, Ordering::Relaxed);
}

fn catch_interrupts() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is
        // async-signal-safe; sigaction is given a fully initialised struct.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// How a run ended.
pub struct Summary {
    pub stats: Stats,
    pub duration: Duration,
    pub exit: ExitCode,
}

/// Opens the session, starts the command (if any), and feeds every output
/// to `sink` until the command exits or Ctrl-C. Errors are printed.
pub fn run(args: &RunArgs, name: &str, mut sink: impl FnMut(Output)) -> Result<Summary, ExitCode> {
    catch_interrupts();
    let attach_requests = if args.command.is_empty() { None } else { AttachRequests::new().ok() };
    let held = if args.command.is_empty() {
        None
    } else {
        let handoff = attach_requests.as_ref().map(|r| r.for_child(&args.patterns));
        match HeldChild::spawn(&args.command, handoff) {
            Ok(h) => Some(h),
            Err(e) => {
                eprintln!("usertrace {name}: cannot start {:?}: {e}", args.command[0]);
                return Err(ExitCode::from(127));
            }
        }
    };
    let options = SessionOptions {
        patterns: args.patterns.clone(),
        ring_pages: args.ring_pages.unwrap_or(SessionOptions::default().ring_pages),
        // The command may register its events after it starts.
        wait_for_exact: held.is_some(),
        ..SessionOptions::default()
    };
    let start = Instant::now();
    let mut session = match Session::open(&options) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("usertrace {name}: {e}");
            return Err(ExitCode::from(1));
        }
    };
    if let Some(requests) = attach_requests {
        session.listen_for_attach_requests(requests);
    }
    if session.attached().next().is_none() {
        let list = args.patterns.join(" ");
        eprintln!("usertrace {name}: no event matches {list} yet; attaching when one is registered");
    }
    let report = |output: Output, sink: &mut dyn FnMut(Output)| {
        match &output {
            Output::Attached { format, window, .. } => {
                let note = match window {
                    Window::Held => String::new(),
                    Window::Open(errno) => format!(
                        " (other CPUs could not be held: {errno}; events written in the first moments on other CPUs may be lost)"
                    ),
                };
                eprintln!("usertrace {name}: attached {}{note}", format.full_name());
            }
            Output::Lost { cpu, count, sideband: false, .. } => {
                eprintln!("usertrace {name}: CPU {cpu} lost {count} events: the ring was full (try a larger --buffer-size)");
            }
            Output::Lost { cpu, count, sideband: true, .. } => {
                eprintln!(
                    "usertrace {name}: CPU {cpu} lost {count} task records: process names may be wrong \
                     (try a larger --buffer-size)"
                );
            }
            Output::Event(_) => {}
        }
        sink(output);
    };
    let mut child = match held.map(HeldChild::release).transpose() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("usertrace {name}: cannot start {:?}: {e}", args.command[0]);
            return Err(ExitCode::from(127));
        }
    };
    let mut exit = ExitCode::SUCCESS;
    let mut last_progress = Instant::now();
    loop {
        let outputs = match session.poll(Duration::from_millis(100)) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("usertrace {name}: {e}");
                exit = ExitCode::from(1);
                break;
            }
        };
        for o in outputs {
            report(o, &mut sink);
        }
        if let Some(c) = child.as_mut() {
            match c.try_wait() {
                Ok(Some(status)) => {
                    exit = exit_code(status);
                    break;
                }
                Ok(None) => {}
                Err(e) => {
                    eprintln!("usertrace {name}: waiting for the command: {e}");
                    exit = ExitCode::from(1);
                    break;
                }
            }
        } else if STOP.load(Ordering::Relaxed) {
            // ATOMICS: see on_signal.
            break;
        }
        if last_progress.elapsed() >= Duration::from_secs(10) {
            last_progress = Instant::now();
            let s = session.stats();
            eprintln!(
                "usertrace {name}: {} events, {} lost, {:.0}s so far",
                s.events,
                s.lost_total(),
                start.elapsed().as_secs_f64()
            );
        }
    }
    for o in session.flush() {
        report(o, &mut sink);
    }
    Ok(Summary { stats: session.stats(), duration: start.elapsed(), exit })
}

fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitCode::from(code as u8),
        (None, Some(sig)) => ExitCode::from(128u8.wrapping_add(sig as u8)),
        _ => ExitCode::from(1),
    }
}

/// The one-line summary on stderr.
pub fn print_summary(name: &str, summary: &Summary) {
    let s = &summary.stats;
    eprintln!(
        "usertrace {name}: {} events, {} lost, {:.3}s",
        s.events,
        s.lost_total(),
        summary.duration.as_secs_f64()
    );
    if s.lost_sideband > 0 {
        eprintln!("usertrace {name}: {} task records were lost; some process names may be wrong", s.lost_sideband);
    }
    if s.malformed > 0 {
        eprintln!("usertrace {name}: {} malformed records were skipped", s.malformed);
    }
}

//! What `record` and `stat` share: their options, and running a session
//! until the command exits, `--duration` ends or Ctrl-C.
//!
//! # Safety
//! The Ctrl-C handler only stores to an atomic (async-signal-safe), and is
//! installed with a fully initialised `sigaction`; SIGTERM goes only to our
//! own child, while it is not yet reaped.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::process::{Child, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use usertrace_consumer::archive::ArchiveOptions;
use usertrace_consumer::{ContainerSelector, FlightOptions, Output, Session, SessionOptions, Stacks, Stats, Window};

use crate::launch::HeldChild;
use crate::verbosity::{detail, note, say};
use usertrace_consumer::AttachRequests;

/// Options common to `record` and `stat`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Events to attach: [SYSTEM:]NAME, with * and ? as wildcards, or
    /// PROVIDER:L<level>[K<keyword>] for EventHeader events (LinuxTracepoints,
    /// OpenTelemetry, .NET): level up to LEVEL (decimal), keyword sharing a
    /// bit with KEYWORD (hex) or 0; PROVIDER may have wildcards. Repeat -e or
    /// separate patterns with commas. Events registered later that match are
    /// attached when they appear
    // Checked by clap: a bad pattern is a bad value (status 2).
    #[arg(short = 'e', long = "event", value_name = "PATTERN", required = true, value_delimiter = ',', value_parser = parse_pattern)]
    pub patterns: Vec<String>,

    /// Keep only events emitted by these processes (repeat -p or separate
    /// with commas); lost counts still cover every process
    #[arg(short = 'p', long = "pid", value_name = "PID", value_delimiter = ',', value_parser = parse_pid, allow_negative_numbers = true)]
    pub pids: Vec<u32>,

    /// Stop after this many seconds of recording (fractions allowed). With
    /// CMD, stop when CMD exits or when the time is up, whichever comes
    /// first; in the second case CMD is sent SIGTERM and the exit status
    /// is 0
    // A negative number is a bad value to explain, not an unknown option.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub duration: Option<Duration>,

    /// Data pages per CPU ring, a power of two [default: 256]
    #[arg(long = "buffer-size", value_name = "PAGES", value_parser = parse_pages)]
    pub ring_pages: Option<usize>,

    /// All CPUs: accepted for perf's habit, and what usertrace always
    /// does (user_events are recorded on every CPU; -p chooses processes)
    #[arg(short = 'a', long = "all-cpus")]
    pub all_cpus: bool,

    /// Also record the scheduler's view (sched_switch, sched_waking,
    /// sched_migrate_task) of the threads of every process whose events
    /// are recorded, and of CMD: each span then says how long it ran,
    /// waited for a CPU and slept, and who woke it. Filtered in the
    /// kernel to those threads; a process is followed from its first
    /// event (CMD from its start)
    #[arg(long)]
    pub sched: bool,

    /// Read shared-memory producers only in the containers this selects
    /// (repeat, or separate with commas; any one selects): cgroup:PATH
    /// (the cgroup path in /proc/PID/cgroup, or one under it),
    /// id:CONTAINER_ID (12 to 64 hex digits) or pod:POD_UID. A process
    /// outside is not read and its tracepoints stay off. By default a
    /// root recorder reads every container on the host
    #[arg(long = "containers", value_name = "SELECTOR", value_delimiter = ',', value_parser = parse_selector)]
    pub containers: Vec<ContainerSelector>,

    /// Do not hand user_events_data to producers in containers that wait
    /// for it (set to USERTRACE_TRANSPORT=user_events, with no tracefs of
    /// their own). By default a root recorder on a kernel with user_events
    /// hands one to each such producer in the selected containers, and
    /// records its events over user_events
    #[arg(long = "no-handoff")]
    pub no_handoff: bool,

    /// A command to run, held until recording has started, and recorded
    /// until it exits; its exit status becomes ours. Everything after it
    /// is its own arguments; `--` before it is accepted
    #[arg(value_name = "CMD", trailing_var_arg = true)]
    pub command: Vec<String>,
}

/// `s` if it is an event pattern; kept as text, which the session parses.
pub fn parse_pattern(s: &str) -> Result<String, String> {
    usertrace_consumer::Pattern::parse(s).map(|_| s.to_owned()).map_err(|e| e.to_string())
}

fn parse_selector(s: &str) -> Result<ContainerSelector, String> {
    s.parse().map_err(|e: usertrace_consumer::SelectorError| e.to_string())
}

fn parse_pid(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(pid) if pid > 0 => Ok(pid),
        _ => Err("not a process id: give a positive number, as `pidof NAME` prints it".into()),
    }
}

fn parse_seconds(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs.is_finite() => {
            Duration::try_from_secs_f64(secs).map_err(|_| "too many seconds: give at most about 584 years".into())
        }
        _ => Err("give a number of seconds above 0, such as 10 or 0.5".into()),
    }
}

fn parse_pages(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(pages) if pages.is_power_of_two() => Ok(pages),
        Ok(_) => Err("the number of pages must be a power of two: 1, 2, 4, ... 256 (the default), 512...".into()),
        Err(_) => Err("give a number of pages, a power of two such as 64".into()),
    }
}

/// How often the loop wakes to look at the command, Ctrl-C and the clock.
const POLL: Duration = Duration::from_millis(100);

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
    /// Events left out by `-p`.
    pub skipped: u64,
    pub duration: Duration,
    pub exit: ExitCode,
}

impl Summary {
    /// Events that reached the sink.
    pub fn events(&self) -> u64 {
        self.stats.events.saturating_sub(self.skipped)
    }
}

/// What a session keeps of the rings' records, besides what it hands on.
pub enum Recording<'a> {
    /// Nothing more.
    Live,
    /// Nothing more, and the sink wants no events: they are only counted,
    /// by name in the summary's `Stats::counted`.
    Counted,
    /// Every record, written into this perf.data file, all processes'
    /// (`-p` chooses only what the sink sees).
    Archive(ArchiveOptions),
    /// The same, and the archive is all there is: the sink wants no
    /// events, which are then only counted.
    ArchiveOnly(ArchiveOptions),
    /// The last seconds, as a flight recorder; `control` is called once
    /// the session is open, after each poll, and once more after the last
    /// events are released, to ask for dumps. Without
    /// `events_wanted` (no trigger looks at events), events are only
    /// counted, as for [`ArchiveOnly`](Self::ArchiveOnly).
    Flight { options: FlightOptions, control: &'a mut dyn FnMut(&mut Session), events_wanted: bool },
}

impl Recording<'_> {
    /// Whether the sink looks at events. One that does not has them only
    /// counted, so that the session's thread keeps up with the rings
    /// (`SessionOptions::yield_events`).
    fn sink_wants_events(&self) -> bool {
        match self {
            Recording::Live | Recording::Archive(_) => true,
            Recording::Counted | Recording::ArchiveOnly(_) => false,
            Recording::Flight { events_wanted, .. } => *events_wanted,
        }
    }
}


/// The control of a flight recorder's dumps, called with the session.
type Control<'a> = Option<&'a mut dyn FnMut(&mut Session)>;

/// Opens the session, starts the command (if any), and feeds every output
/// to `sink` (leaving out events of processes not given with `-p`) until
/// the command exits, `--duration` ends or Ctrl-C; see [`Recording`] for
/// what else the session keeps. Errors are printed.
/// `stacks` says which events carry their emitting thread's user stack
/// (`record --call-graph fp`).
pub fn run(args: &RunArgs, name: &str, recording: Recording<'_>, stacks: Stacks, mut sink: impl FnMut(Output)) -> Result<Summary, ExitCode> {
    catch_interrupts();
    warn_of_pids_not_running(args, name);
    let attach_requests = if args.command.is_empty() { None } else { AttachRequests::new().ok() };
    let held = hold_command(args, name, attach_requests.as_ref())?;
    let (options, mut control) = session_options(args, recording, stacks, held.is_some());
    let start = Instant::now();
    let mut session = Session::open(&options).map_err(|e| {
        say!("usertrace {name}: {e}");
        ExitCode::from(1)
    })?;
    if let Some(requests) = attach_requests {
        session.listen_for_attach_requests(requests);
    }
    if let Some(control) = control.as_mut() {
        control(&mut session);
    }
    say_what_is_recorded(args, name, &options, &session);
    // A Cell: `report` counts into it while the progress line reads it.
    let skipped = Cell::new(0u64);
    let mut report = |output: Output| {
        if let Some(output) = kept_after_saying(args, name, output, &skipped) {
            sink(output);
        }
    };
    let mut child = held.map(HeldChild::release).transpose().map_err(|e| {
        say!("usertrace {name}: {}", cannot_start(&args.command[0], &e));
        ExitCode::from(127)
    })?;
    if let (Some(c), true) = (&child, args.sched) {
        session.follow_scheduling(c.id());
    }
    let progress = ProgressLine { name, start, skipped: &skipped };
    let exit = poll_until_done(args, name, &mut session, child.as_mut(), &mut control, &mut report, &progress);
    session.flush_each(&mut report);
    // The last events may hold triggers: their dumps are asked for before
    // finish_archive closes every open one.
    if let Some(control) = control.as_mut() {
        control(&mut session);
    }
    if let Err(e) = session.finish_archive() {
        say!("usertrace {name}: {e}");
        return Err(ExitCode::from(1));
    }
    Ok(Summary { stats: session.stats(), skipped: skipped.get(), duration: start.elapsed(), exit })
}

fn warn_of_pids_not_running(args: &RunArgs, name: &str) {
    for pid in &args.pids {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            say!("usertrace {name}: no process {pid} is running now; its events will show if one starts with that pid");
        }
    }
}

/// The command, started and held until recording has begun; None
/// without one. Err: it could not start (said; exit status 127).
fn hold_command(args: &RunArgs, name: &str, attach_requests: Option<&AttachRequests>) -> Result<Option<HeldChild>, ExitCode> {
    if args.command.is_empty() {
        return Ok(None);
    }
    let handoff = attach_requests.map(|r| r.for_child(&args.patterns));
    HeldChild::spawn(&args.command, handoff).map(Some).map_err(|e| {
        say!("usertrace {name}: {}", cannot_start(&args.command[0], &e));
        ExitCode::from(127)
    })
}

/// The session's options for these arguments and this recording, and the
/// flight recorder's control if it is one.
fn session_options<'a>(args: &RunArgs, recording: Recording<'a>, stacks: Stacks, holds_command: bool) -> (SessionOptions, Control<'a>) {
    let mut options = SessionOptions {
        patterns: args.patterns.clone(),
        ring_pages: args.ring_pages.unwrap_or(SessionOptions::default().ring_pages),
        // The command may register its events after it starts.
        wait_for_exact: holds_command,
        sched: args.sched,
        stacks,
        containers: args.containers.clone(),
        hand_off: !args.no_handoff,
        ..SessionOptions::default()
    };
    // With -p, events are handed on whatever the sink, to count those
    // left out.
    options.yield_events = recording.sink_wants_events() || !args.pids.is_empty();
    let mut control = None;
    match recording {
        Recording::Live | Recording::Counted => {}
        Recording::Archive(archive) | Recording::ArchiveOnly(archive) => options.archive = Some(archive),
        Recording::Flight { options: flight, control: c, .. } => {
            options.flight = Some(flight);
            control = Some(c);
        }
    }
    (options, control)
}

/// What the session records (with -v), and what it cannot.
fn say_what_is_recorded(args: &RunArgs, name: &str, options: &SessionOptions, session: &Session) {
    detail!(
        "usertrace {name}: on every CPU, rings of {} pages ({} KiB) each; events matching {}; namespaces {}",
        options.ring_pages,
        options.ring_pages * 4,
        args.patterns.join(","),
        if session.records_namespaces() { "recorded" } else { "not recorded (they need root or CAP_PERFMON)" }
    );
    // perf takes a stack only where the kernel writes the event: programs
    // on a kernel without user_events write theirs to shared memory.
    if options.stacks != Stacks::None && !usertrace::status().is_available() {
        say!(
            "usertrace {name}: --call-graph: this kernel has no usable user_events, so programs write their events \
             through shared memory, where perf cannot take their stacks: their events will carry none"
        );
    }
    if session.attached().next().is_none() {
        let list = args.patterns.join(" ");
        note!("usertrace {name}: no event matches {list} yet; attaching when one is registered");
    }
}

/// Says what an output tells the user (attached, refused, lost), and
/// gives it back for the sink unless -p leaves its process out (an event
/// left out is counted in `skipped`).
fn kept_after_saying(args: &RunArgs, name: &str, output: Output, skipped: &Cell<u64>) -> Option<Output> {
    let given = |pid: &u32| args.pids.is_empty() || args.pids.contains(pid);
    match &output {
        Output::Attached { format, window, .. } => {
            let note = match window {
                Window::Held => String::new(),
                Window::Open(errno) => format!(
                    " (other CPUs could not be held: {errno}; events written in the first moments on other CPUs may be lost)"
                ),
            };
            note!("usertrace {name}: attached {}{note}", format.full_name());
        }
        // A warning, not a note: events asked for will be missing.
        Output::NotRecorded(not) if not.file.is_some() => {
            let file = not.file.as_deref().unwrap_or(std::path::Path::new("")).display();
            say!("usertrace {name}: refused {file}, which is not read: {}", not.reason);
        }
        Output::NotRecorded(not) => {
            let comm = if not.comm.is_empty() { String::new() } else { format!(" ({})", not.comm) };
            say!(
                "usertrace {name}: process {}{comm} has tracepoints in shared memory that match, but they are not recorded: {}",
                not.pid, not.reason
            );
        }
        Output::Lost { count, thread: Some(tid), .. } => {
            say!(
                "usertrace {name}: thread {tid} lost {count} events: its shared-memory ring was full \
                 (start the program with a larger USERTRACE_SHM_RING_KIB; 256 by default)"
            );
        }
        Output::Lost { cpu, count, sideband: false, .. } => {
            say!("usertrace {name}: CPU {cpu} lost {count} events: the ring was full (try a larger --buffer-size)");
        }
        Output::Lost { cpu, count, sideband: true, .. } => {
            say!("usertrace {name}: CPU {cpu} lost {count} task records: process names may be wrong (try a larger --buffer-size)");
        }
        Output::Event(event) if !given(&event.pid) => {
            skipped.set(skipped.get() + 1);
            return None;
        }
        Output::Process { pid, .. } | Output::Exit { pid, .. } if !given(pid) => return None,
        Output::Event(_) | Output::Process { .. } | Output::Exit { .. } => {}
    }
    Some(output)
}

/// The progress note, every 10 s (each second with -v; never with -q).
struct ProgressLine<'a> {
    name: &'a str,
    /// When the session was opened.
    start: Instant,
    /// Events that -p left out, which the count leaves out too.
    skipped: &'a Cell<u64>,
}

impl ProgressLine<'_> {
    fn every(&self) -> Duration {
        if crate::verbosity::details() { Duration::from_secs(1) } else { Duration::from_secs(10) }
    }

    fn say(&self, stats: &Stats) {
        note!(
            "usertrace {}: {} events, {} lost, {:.0}s so far",
            self.name,
            stats.events.saturating_sub(self.skipped.get()),
            stats.lost_total(),
            self.start.elapsed().as_secs_f64()
        );
    }
}

/// Polls the session, handing each output to `report`, until the command
/// exits, `--duration` ends, Ctrl-C or the session fails; returns the
/// exit status: the command's, 1 on a failure, else 0.
fn poll_until_done(
    args: &RunArgs,
    name: &str,
    session: &mut Session,
    mut child: Option<&mut Child>,
    control: &mut Control<'_>,
    report: &mut impl FnMut(Output),
    progress: &ProgressLine<'_>,
) -> ExitCode {
    // From here on events are recorded: opening the session (reading
    // /proc, which is slow on a busy machine) is not part of the time.
    let deadline = args.duration.and_then(|d| Instant::now().checked_add(d));
    let mut last_progress = Instant::now();
    loop {
        let timeout = deadline.map_or(POLL, |d| d.saturating_duration_since(Instant::now()).min(POLL));
        if let Err(e) = session.poll_each(timeout, &mut *report) {
            say!("usertrace {name}: {e}");
            return ExitCode::from(1);
        }
        if let Some(control) = control.as_mut() {
            control(session);
        }
        if let Some(c) = child.as_mut() {
            match c.try_wait() {
                Ok(Some(status)) => return exit_code(status),
                Ok(None) => {}
                Err(e) => {
                    say!("usertrace {name}: waiting for the command: {e}");
                    return ExitCode::from(1);
                }
            }
        } else if STOP.load(Ordering::Relaxed) {
            // ATOMICS: see on_signal.
            return ExitCode::SUCCESS;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            if let Some(c) = &child {
                // As `perf stat --timeout` does: the time asked for is up,
                // so the command is asked to end rather than left running
                // unobserved. SIGTERM, not SIGKILL, so that it can clean up.
                // SAFETY: kill(2) on our own child's pid, not yet reaped
                // (try_wait above saw it running), so the pid is still its.
                unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
            }
            return ExitCode::SUCCESS;
        }
        if last_progress.elapsed() >= progress.every() {
            last_progress = Instant::now();
            progress.say(&session.stats());
        }
    }
}

/// Why CMD did not start, and what to check.
fn cannot_start(program: &str, e: &std::io::Error) -> String {
    let hint = match e.kind() {
        std::io::ErrorKind::NotFound => "; check its name, or give its path",
        std::io::ErrorKind::PermissionDenied => "; check that it is executable",
        _ => "",
    };
    format!("cannot start `{program}`: {e}{hint}")
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
    // The recorder's own drops are apart from what the rings lost.
    let dropped = if s.dropped > 0 { format!(", {} dropped by the recorder", s.dropped) } else { String::new() };
    // Quiet hides the counts of a run with no holes, never of one with.
    let whole = s.lost_total() == 0 && s.dropped == 0;
    if !whole || crate::verbosity::notes() {
        say!(
        "usertrace {name}: {} events, {} lost{dropped}, {:.3}s",
        summary.events(),
        s.lost_total(),
        summary.duration.as_secs_f64()
        );
    }
    if s.dropped > 0 {
        say!(
            "usertrace {name}: {} events were read from the rings but dropped: the outputs could not keep up and \
             the recorder's queue was full (a perf.data archive, -o FILE.data, still has them)",
            s.dropped
        );
    }
    if summary.skipped > 0 {
        note!("usertrace {name}: {} events of processes not given with -p were left out", summary.skipped);
    }
    if s.lost_sideband > 0 {
        say!("usertrace {name}: {} task records were lost; some process names may be wrong", s.lost_sideband);
    }
    if s.malformed > 0 {
        say!("usertrace {name}: {} malformed records were skipped", s.malformed);
    }
}

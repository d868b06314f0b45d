//! `usertrace record --flight-recorder`: keep the last seconds of every
//! process's events in memory, and write them out as a perf.data archive
//! when something asks: SIGUSR2, `usertrace dump`, an event that matches
//! a `--trigger`, or a span longer than a `--trigger-span`.
//!
//! The window itself is the consumer's (`FlightOptions`); this module
//! chooses what asks for a dump, keeps a storm of triggers from filling
//! the disk, names the files as `perf record --switch-output` does, and
//! writes them on a thread of their own, so that recording never waits for
//! the disk.
//!
//! # Safety
//!
//! Two calls into libc, each in a function of its own: `sigaction` for
//! SIGUSR2 (the handler only stores to an atomic, which is
//! async-signal-safe) and `mallopt` (an allocator parameter).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use clap::Args;
use usertrace_consumer::{DumpRequest, FlightDump, FlightOptions, Output, Session, Stacks, Switch};
use usertrace_output::timeline::TimelineBuilder;
use usertrace_output::{ClockRecord, Record, SlowSpan};

use crate::control_socket::{ControlSocket, Waiting};
use usertrace_consumer::output_records::to_record;
use crate::record::open_archive;
use crate::run::{print_summary, run, Recording, RunArgs};
use crate::trigger::Trigger;
use crate::verbosity::{note, say};

/// The flight recorder's options, in `record`'s help.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("kept_in_memory").args(["flight_recorder", "switch_output"])))]
pub struct FlightArgs {
    /// Keep the last DURATION of events in memory (30s when given
    /// alone) instead of writing them all, and write them to
    /// PATH.YYYYMMDDHHMMSSmmm.data (-o PATH.data) when SIGUSR2, `usertrace
    /// dump`, a --trigger event or a --trigger-span asks. --max-size caps
    /// the memory: whichever of the two is smaller wins
    #[arg(long = "flight-recorder", value_name = "DURATION", num_args = 0..=1, require_equals = true,
          default_missing_value = "30s", value_parser = parse_duration)]
    pub flight_recorder: Option<Duration>,

    /// The most memory the flight recorder's events take, such as 64MiB,
    /// 512M or 2G (a fixed part for the rings and tables comes on top);
    /// with --switch-output, a file also ends once its records reach half
    /// of SIZE, so that it and the one before it, still being written,
    /// fit [default: 64MiB]
    #[arg(long = "max-size", value_name = "SIZE", value_parser = parse_size, requires = "kept_in_memory")]
    pub max_size: Option<usize>,

    /// Keep recording this long after a trigger before its dump closes
    /// [default: 1s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "flight_recorder")]
    pub after: Option<Duration>,

    /// Dump when an event matches: PATTERN as -e takes it, then
    /// optionally :FIELD OP VALUE with OP one of == != < <= > >= and VALUE
    /// a number or a quoted string, e.g. 'myapp_request:status>=500' or
    /// "myapp_log:level=='error'" (FIELD may be STRUCT.MEMBER for an
    /// EventHeader struct). Repeatable
    #[arg(long = "trigger", value_name = "PATTERN[:FIELD OP VALUE]", value_parser = Trigger::parse, requires = "flight_recorder")]
    pub triggers: Vec<Trigger>,

    /// Dump when a span named NAME (wildcards allowed) lasts longer than
    /// DURATION, e.g. 'handle_request>250ms'. Repeatable
    #[arg(long = "trigger-span", value_name = "NAME>DURATION", value_parser = SlowSpan::parse, requires = "flight_recorder")]
    pub span_triggers: Vec<SlowSpan>,

    /// Write at most N dumps; later triggers are counted and ignored [default: 10]
    #[arg(long = "max-dumps", value_name = "N", requires = "flight_recorder")]
    pub max_dumps: Option<u32>,

    /// At least this long between the triggers of two dumps; a trigger
    /// sooner joins the dump still open, or is counted and ignored [default: 10s]
    #[arg(long = "dump-interval", value_name = "DURATION", value_parser = parse_duration, requires = "flight_recorder")]
    pub dump_interval: Option<Duration>,

    /// Instead of a window, write a continuous archive, a new file each
    /// SIZE of records (uppercase units: 100M, 1G; gathered in memory
    /// until written, within --max-size) or TIME (30s, 10m), or at each SIGUSR2 only
    /// (`signal`, the default), named PATH.YYYYMMDDHHMMSSmmm.data after -o
    /// PATH.data, as perf record --switch-output names them. Every event
    /// is in exactly one file
    #[arg(long = "switch-output", value_name = "SIZE|TIME|signal", num_args = 0..=1, require_equals = true,
          default_missing_value = "signal", value_parser = parse_switch, conflicts_with = "flight_recorder")]
    pub switch_output: Option<Switch>,

    /// With --switch-output, keep only the newest N files, removing older
    /// ones (perf's --switch-max-files)
    #[arg(long = "max-files", value_name = "N", requires = "switch_output", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_files: Option<u32>,
}

/// `100M` or `1G` (a size: perf's uppercase units, or KiB/MiB/GiB), `30s`
/// or `10m` (a time), or `signal`.
pub fn parse_switch(s: &str) -> Result<Switch, String> {
    if s == "signal" {
        return Ok(Switch::Asked);
    }
    let unit = s.trim_start_matches(|c: char| c.is_ascii_digit());
    if unit.starts_with(['B', 'K', 'M', 'G']) {
        return parse_size(s).map(Switch::Size);
    }
    parse_duration(s).map(Switch::Every).map_err(|_| format!("`{s}`: give a size (100M, 1G), a time (30s, 10m) or `signal`"))
}

const DEFAULT_MAX_SIZE: usize = 64 << 20;
const DEFAULT_AFTER: Duration = Duration::from_secs(1);
const DEFAULT_MAX_DUMPS: u32 = 10;
const DEFAULT_INTERVAL: Duration = Duration::from_secs(10);

/// `250ms`, `2s`, `1m30s`, as humantime reads them; above 0.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    match humantime::parse_duration(s) {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => Err("give a time above 0, such as 500ms, 5s or 1m".into()),
        Err(e) => Err(format!("{e}: give a time such as 500ms, 5s or 1m")),
    }
}

/// `64MiB`, `512M`, `2G`, `100k` or a number of bytes: binary units,
/// as perf's `--max-size` takes them.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let hint = "give a size such as 64MiB, 512M or 2G";
    let digits = s.trim().find(|c: char| !c.is_ascii_digit()).unwrap_or(s.trim().len());
    let (number, unit) = s.trim().split_at(digits);
    let number: usize = number.parse().map_err(|_| hint.to_owned())?;
    let unit = unit.trim();
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(format!("unknown unit `{unit}`: {hint}")),
    };
    match number.checked_mul(1 << shift) {
        Some(0) => Err(format!("0 bytes keeps nothing: {hint}")),
        Some(bytes) => Ok(bytes),
        None => Err(format!("too large: {hint}")),
    }
}

impl FlightArgs {
    /// The window, or the continuous archive, these options ask for; None
    /// for a plain recording.
    pub fn options(&self) -> Option<FlightOptions> {
        let (keep, switch) = match (self.flight_recorder, self.switch_output) {
            (Some(keep), _) => (keep, None),
            (None, Some(switch)) => (Duration::ZERO, Some(switch)),
            (None, None) => return None,
        };
        Some(FlightOptions { keep, max_bytes: self.max_size.unwrap_or(DEFAULT_MAX_SIZE), after: self.after.unwrap_or(DEFAULT_AFTER), switch })
    }
}

/// The file of a dump asked for at local time `at`: PATH.data (or PATH)
/// becomes PATH.YYYYMMDDHHMMSSmmm.data, as perf's --switch-output names
/// its files, in local time as perf does.
pub fn dump_path(archive: &Path, at: chrono::DateTime<chrono::Local>) -> PathBuf {
    let stem = match archive.extension() {
        Some(ext) if ext == "data" => archive.with_extension(""),
        _ => archive.to_owned(),
    };
    let mut name = stem.into_os_string();
    name.push(at.format(".%Y%m%d%H%M%S%3f.data").to_string());
    PathBuf::from(name)
}

/// SIGUSR2 asked for a dump (perf's signal for its own switch-output).
static SIGUSR2_SEEN: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigusr2(_: libc::c_int) {
    // ATOMICS: Relaxed; the loop only needs to see the flag eventually.
    SIGUSR2_SEEN.store(true, Ordering::Relaxed);
}

#[allow(unsafe_code)]
fn catch_sigusr2() {
    // SAFETY: the handler only stores to an atomic, which is
    // async-signal-safe; sigaction is given a fully initialised struct.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigusr2 as extern "C" fn(libc::c_int) as usize;
        libc::sigaction(libc::SIGUSR2, &action, std::ptr::null_mut());
    }
}

/// Makes every large buffer (a round, a window's chunk) its own mapping,
/// returned to the system when freed. glibc otherwise raises its mmap
/// threshold after the first such free, and later rounds come from the
/// heap, whose freed pages stay resident: the recorder's memory would
/// creep past its cap with fragmentation.
#[allow(unsafe_code)]
fn keep_large_buffers_returnable() {
    // SAFETY: mallopt(3) only sets an allocator parameter; a fixed
    // threshold also turns off its dynamic adjustment.
    unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024) };
}

/// Which triggers become dumps: at most --max-dumps, and no two whose
/// triggers are closer than --dump-interval, except that a trigger while
/// a dump is still open (within --after of its own) joins it.
struct Gate {
    max_dumps: u32,
    interval: Duration,
    after: Duration,
    started: u32,
    /// The trigger of the last dump started, monotonic ns.
    last: Option<u64>,
    /// Triggers ignored: too many dumps, or too soon.
    ignored: u64,
    token: u64,
}

impl Gate {
    /// What a trigger at `time_ns` does. A join is decided here, not by
    /// the window: the trigger may reach it only after the dump closed.
    fn admit(&mut self, time_ns: u64) -> Admit {
        let since = self.last.map(|last| Duration::from_nanos(time_ns.saturating_sub(last)));
        if since.is_some_and(|since| since < self.after) {
            return Admit::Join(self.token);
        }
        if self.started >= self.max_dumps || since.is_some_and(|since| since < self.interval) {
            self.ignored += 1;
            return Admit::Ignore;
        }
        self.started += 1;
        self.last = Some(time_ns);
        self.token += 1;
        Admit::Start(self.token)
    }
}

/// How the dumps started by the gate ended, as the writer thread counts
/// them: the gate's messages and the closing summary say what is true
/// (started is not written).
#[derive(Default)]
struct DumpCounts {
    written: AtomicU32,
    failed: AtomicU32,
}

impl DumpCounts {
    fn written(&self) -> u32 {
        // ATOMICS: Relaxed; counts read for a message, they order nothing.
        self.written.load(Ordering::Relaxed)
    }

    fn failed(&self) -> u32 {
        // ATOMICS: as in `written`.
        self.failed.load(Ordering::Relaxed)
    }

    /// How `started` dumps ended so far: `1 written, 1 still open`.
    fn outcomes(&self, started: u32) -> String {
        let (written, failed) = (self.written(), self.failed());
        let open = started.saturating_sub(written + failed);
        let mut parts = vec![format!("{written} written")];
        if failed > 0 {
            parts.push(format!("{failed} failed"));
        }
        if open > 0 {
            parts.push(format!("{open} still open"));
        }
        parts.join(", ")
    }
}

/// What becomes of a trigger.
#[derive(Debug, PartialEq)]
enum Admit {
    /// It starts a dump, known by this token.
    Start(u64),
    /// The dump of this token is still open: the trigger is in it.
    Join(u64),
    /// Too many dumps, or too soon after the last.
    Ignore,
}

/// What a trigger asks of the session.
enum Asked {
    Start(DumpRequest),
    Join(u64),
    Ignore,
}

/// What asks for dumps while the session records.
struct Askers<'a> {
    args: &'a FlightArgs,
    gate: Gate,
    /// Requests from events, which the sink sees, for the loop to send.
    queued: Vec<DumpRequest>,
    spans: Option<TimelineBuilder>,
    socket: Option<ControlSocket>,
    counts: Arc<DumpCounts>,
}

impl Askers<'_> {
    /// A dump to ask the session for, or the token of the open dump that
    /// takes this trigger in, or neither.
    fn ask(&mut self, reason: String, time_ns: u64) -> Asked {
        match self.gate.admit(time_ns) {
            Admit::Start(token) => {
                say!("usertrace record: dump asked for by {reason}");
                Asked::Start(DumpRequest { reason, time_ns, token })
            }
            Admit::Join(token) => {
                note!("usertrace record: {reason} falls inside the dump still open");
                Asked::Join(token)
            }
            Admit::Ignore => {
                note!("usertrace record: not dumping for {reason}: {}", self.why_ignored());
                Asked::Ignore
            }
        }
    }

    fn why_ignored(&self) -> String {
        if self.gate.started >= self.gate.max_dumps {
            format!("--max-dumps {} reached ({} started: {})", self.gate.max_dumps, self.gate.started, self.counts.outcomes(self.gate.started))
        } else {
            format!("less than --dump-interval {} after the last dump's trigger", humantime::format_duration(self.gate.interval))
        }
    }

    /// Looks at an output the session released, for triggers.
    fn observe(&mut self, output: &Output) {
        let Output::Event(event) = output else { return };
        let fired = self.args.triggers.iter().find_map(|t| t.fires(event));
        if let Some(reason) = fired {
            let reason = format!("{reason} (pid {}, {})", event.pid, event.process);
            if let Asked::Start(r) = self.ask(reason, event.time_ns) {
                self.queued.push(r);
            }
        }
        let Some(spans) = &mut self.spans else { return };
        let Some(Record::Event(record)) = to_record(Output::Event(event.clone())) else { return };
        spans.push(&Record::Event(record));
        let slow: Vec<String> = spans
            .drain_closed_spans()
            .filter_map(|span| {
                let duration = Duration::from_nanos(span.end_ns.saturating_sub(span.start_ns));
                let trigger = self.args.span_triggers.iter().find(|t| t.matches(&span.name, duration))?;
                Some(format!("span {} of {} (pid {}) over {}", span.name, humantime::format_duration(round_ms(duration)), span.pid, humantime::format_duration(trigger.longer_than())))
            })
            .collect();
        for reason in slow {
            if let Asked::Start(r) = self.ask(reason, event.time_ns) {
                self.queued.push(r);
            }
        }
    }
}

fn round_ms(d: Duration) -> Duration {
    Duration::from_millis(d.as_millis() as u64)
}

/// Runs `record --flight-recorder` until the command exits, --duration
/// ends or Ctrl-C, writing a dump for each trigger let through.
pub fn run_flight(run_args: &RunArgs, args: &FlightArgs, archive: &Path, options: FlightOptions) -> ExitCode {
    if let Err(e) = usertrace_output::check_writable(&dump_path(archive, chrono::Local::now())) {
        say!("usertrace record: {e}");
        return ExitCode::from(1);
    }
    catch_sigusr2();
    keep_large_buffers_returnable();
    let socket = match ControlSocket::bind() {
        Ok(socket) => Some(socket),
        Err(e) => {
            say!("usertrace record: `usertrace dump` cannot reach this recorder ({e}); SIGUSR2 still dumps");
            None
        }
    };
    let switching = options.switch.is_some();
    // A continuous archive switches at every SIGUSR2, however many.
    let gate = Gate {
        max_dumps: if switching { u32::MAX } else { args.max_dumps.unwrap_or(DEFAULT_MAX_DUMPS) },
        interval: if switching { Duration::ZERO } else { args.dump_interval.unwrap_or(DEFAULT_INTERVAL) },
        after: if switching { Duration::ZERO } else { options.after },
        started: 0,
        last: None,
        ignored: 0,
        token: 0,
    };
    let spans = (!args.span_triggers.is_empty()).then(TimelineBuilder::lean);
    // Only --trigger and --trigger-span look at events; without them the
    // session counts events and the window alone keeps them.
    let events_wanted = !args.triggers.is_empty() || !args.span_triggers.is_empty();
    let counts = Arc::new(DumpCounts::default());
    let askers = RefCell::new(Askers { args, gate, queued: Vec::new(), spans, socket, counts: counts.clone() });
    let mut writer: Option<JoinHandle<()>> = None;
    let waiting = Waiting::default();
    if !switching {
        note!(
            "usertrace record: flight recorder: keeping the last {} (at most {} MiB), dumps to {}",
            humantime::format_duration(options.keep),
            options.max_bytes >> 20,
            dump_path(archive, chrono::Local::now()).display()
        );
    }
    let max_files = args.max_files.map(|n| n as usize);
    let mut control = |session: &mut Session| {
        if writer.is_none() {
            if let Some(dumps) = session.take_dumps() {
                let (archive, waiting, counts) = (archive.to_owned(), waiting.clone(), counts.clone());
                writer = std::thread::Builder::new()
                    .name("usertrace-dumps".into())
                    .spawn(move || write_dumps(dumps, &archive, &waiting, &counts, max_files))
                    .ok();
            }
        }
        let mut askers = askers.borrow_mut();
        let now = usertrace_consumer::monotonic_ns();
        // ATOMICS: see on_sigusr2.
        if SIGUSR2_SEEN.swap(false, Ordering::Relaxed) {
            if let Asked::Start(r) = askers.ask("SIGUSR2".into(), now) {
                session.dump(r);
            }
        }
        let asked = askers.socket.as_mut().map(|s| s.accept()).unwrap_or_default();
        for (client, stream) in asked {
            match askers.ask(format!("usertrace dump ({client})"), now) {
                Asked::Start(r) => {
                    waiting.wait(r.token, stream);
                    session.dump(r);
                }
                Asked::Join(token) => waiting.wait(token, stream),
                Asked::Ignore => {
                    let why = askers.why_ignored();
                    Waiting::answer(stream, &format!("error: not dumping: {why}"));
                }
            }
        }
        for r in askers.queued.drain(..) {
            session.dump(r);
        }
    };
    let result = run(run_args, "record", Recording::Flight { options, control: &mut control, events_wanted }, Stacks::None, |output| askers.borrow_mut().observe(&output));
    let summary = match result {
        Ok(summary) => summary,
        Err(code) => return code,
    };
    print_summary("record", &summary);
    // Every open dump was closed by the session's end: the writer ends
    // once it has written them.
    let writer_ended = writer.is_none_or(|w| w.join().is_ok());
    // A caller still waiting has a dump that was never written: say so
    // rather than leave it to its timeout.
    let why = if writer_ended { "the recording ended before this dump was written" } else { "the dump writer failed" };
    waiting.answer_all(&format!("error: {why}"));
    let askers = askers.borrow();
    say!("usertrace record: {}", closing_summary(switching, askers.gate.started, &counts, askers.gate.ignored));
    summary.exit
}

/// The last line: how many dumps were started and how each ended, or
/// for a continuous archive how many files were written.
fn closing_summary(switching: bool, started: u32, counts: &DumpCounts, ignored: u64) -> String {
    let plural = |n: u32| if n == 1 { "" } else { "s" };
    let ended = if switching {
        let (written, failed) = (counts.written(), counts.failed());
        let failed = if failed > 0 { format!(", {failed} failed") } else { String::new() };
        format!("{written} file{} written{failed}", plural(written))
    } else {
        format!("{started} dump{} started: {}", plural(started), counts.outcomes(started))
    };
    match ignored {
        0 => ended,
        n => format!("{ended}; {n} triggers ignored (--max-dumps, --dump-interval)"),
    }
}

/// Writes each dump as it closes, and tells whoever waits for it; keeps
/// only the newest `max_files`, if given; counts what it wrote and what
/// failed into `counts`.
fn write_dumps(dumps: Receiver<FlightDump>, archive: &Path, waiting: &Waiting, counts: &DumpCounts, max_files: Option<usize>) {
    // One reading of both clocks for every name: read anew for each dump,
    // a preemption between the two reads (tens of ms in an emulated
    // guest) could name a later dump before an earlier one.
    let clock = crate::clock::now();
    let mut files = std::collections::VecDeque::new();
    for dump in dumps {
        let request = dump.request().clone();
        let tokens: Vec<u64> = std::iter::once(request.token).chain(dump.joined().iter().map(|r| r.token)).collect();
        let path = unused_dump_path(archive, local_time(clock, dump.named_ns()));
        let answer = match write_dump(dump, &path) {
            Ok(summary) => {
                // ATOMICS: see DumpCounts::written.
                counts.written.fetch_add(1, Ordering::Relaxed);
                let window = match summary.window {
                    Some((first, last)) => format!(
                        "window {:.3}–{:.3} s ({:.1} s)",
                        first as f64 / 1e9,
                        last as f64 / 1e9,
                        (last - first) as f64 / 1e9
                    ),
                    None => "no events".into(),
                };
                let lost = if summary.lost > 0 { format!(", {} lost by the rings inside it", summary.lost) } else { String::new() };
                say!("usertrace record: wrote {} for {}: {window}, {} events{lost}", path.display(), request.reason, summary.events);
                files.push_back(path.clone());
                while max_files.is_some_and(|max| files.len() > max) {
                    let Some(oldest) = files.pop_front() else { break };
                    match std::fs::remove_file(&oldest) {
                        Ok(()) => note!("usertrace record: removed {} (--max-files)", oldest.display()),
                        Err(e) => say!("usertrace record: removing {} (--max-files): {e}", oldest.display()),
                    }
                }
                path.display().to_string()
            }
            Err(message) => {
                // ATOMICS: see DumpCounts::written.
                counts.failed.fetch_add(1, Ordering::Relaxed);
                say!("usertrace record: dump for {} failed: {message}", request.reason);
                format!("error: {message}")
            }
        };
        for token in tokens {
            waiting.answer_token(token, &answer);
        }
    }
}

/// Local time at CLOCK_MONOTONIC `time_ns`, by the reading `clock`.
fn local_time(clock: ClockRecord, time_ns: u64) -> chrono::DateTime<chrono::Local> {
    let unix_ns = clock.unix_ns as i64 + (time_ns as i64 - clock.time_ns as i64);
    chrono::DateTime::from_timestamp_nanos(unix_ns).with_timezone(&chrono::Local)
}

/// [`dump_path`], a millisecond later while that file exists: two dumps
/// asked for in the same millisecond are two files, the later one
/// sorting after the earlier.
fn unused_dump_path(archive: &Path, mut at: chrono::DateTime<chrono::Local>) -> PathBuf {
    loop {
        let path = dump_path(archive, at);
        if !path.exists() {
            return path;
        }
        at += chrono::Duration::milliseconds(1);
    }
}

fn write_dump(dump: FlightDump, path: &Path) -> Result<usertrace_consumer::DumpSummary, String> {
    let (file, options) = open_archive(path, &crate::clock::now())?;
    let summary = dump.write(&options).map_err(|e| e.to_string())?;
    file.commit().map_err(|e| e.to_string())?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn dumps_are_named_as_perf_names_switched_files() {
        let at = chrono::Local.with_ymd_and_hms(2026, 12, 3, 9, 8, 7).unwrap() + chrono::Duration::milliseconds(42);
        assert_eq!(dump_path(Path::new("/var/lib/x/flight.data"), at), Path::new("/var/lib/x/flight.20261203090807042.data"));
        assert_eq!(dump_path(Path::new("flight"), at), Path::new("flight.20261203090807042.data"));
    }

    /// The systemd profile in deploy/ runs a command line this build
    /// takes, with the flight recorder's options as the unit says.
    #[test]
    fn the_deploy_profile_is_a_command_line_record_takes() {
        use clap::Parser;
        let unit = include_str!("../../deploy/usertrace-flight-recorder.service");
        let exec = unit.lines().find_map(|l| l.strip_prefix("ExecStart=")).unwrap();
        let words: Vec<&str> = exec.split_whitespace().map(|w| if w == "${USERTRACE_EVENTS}" { "*" } else { w }).collect();
        assert_eq!(words[0], "/usr/local/bin/usertrace");
        let cli = crate::args::Cli::try_parse_from(&words).unwrap_or_else(|e| panic!("{exec}: {e}"));
        let crate::args::Command::Record(record) = cli.command else { panic!("{exec}: not record") };
        let flight = &record.flight;
        assert_eq!(flight.flight_recorder, Some(Duration::from_secs(30)));
        assert_eq!((flight.max_size, flight.max_dumps), (Some(64 << 20), Some(20)));
        assert_eq!(flight.dump_interval, Some(Duration::from_secs(60)));
        assert_eq!((flight.triggers.len(), flight.span_triggers.len()), (1, 1));
        let outputs = record.outputs().unwrap();
        assert_eq!(outputs.archive, Some(Path::new("/var/lib/usertrace/flight/flight.data")));
        assert!(unit.contains("StateDirectory=usertrace/flight\n"), "the unit makes the dumps' directory");
    }

    /// The DaemonSet profile runs the same recorder as the systemd one.
    #[test]
    fn the_daemonset_profile_runs_the_systemd_profiles_command() {
        let unit = include_str!("../../deploy/usertrace-flight-recorder.service");
        let daemonset = include_str!("../../deploy/usertrace-flight-recorder-daemonset.yaml");
        let exec = unit.lines().find_map(|l| l.strip_prefix("ExecStart=")).unwrap().replace("${USERTRACE_EVENTS}", "\"$USERTRACE_EVENTS\"");
        let called = daemonset.lines().find_map(|l| l.trim().strip_prefix("- exec ")).unwrap();
        // The shell's quotes aside (systemd does not glob; sh would).
        assert_eq!(called.replace('\'', ""), exec);
        assert!(daemonset.contains("mountPath: /var/lib/usertrace/flight}"));
    }

    #[test]
    fn dumps_are_named_in_the_order_of_their_times_by_one_clock_reading() {
        let clock = ClockRecord { time_ns: 5_000_000_000, unix_ns: 1_796_000_000_000_000_000 };
        let names: Vec<PathBuf> = [4_999_999_999u64, 5_000_000_000, 5_001_000_000, 65_000_000_000]
            .iter()
            .map(|&t| dump_path(Path::new("f.data"), local_time(clock, t)))
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert_ne!(names[1], names[2], "a millisecond apart");
        let at = local_time(clock, 65_000_000_000).with_timezone(&chrono::Utc);
        assert_eq!(at.timestamp_nanos_opt(), Some(1_796_000_060_000_000_000));
    }

    #[test]
    fn switch_output_reads_sizes_in_perfs_uppercase_and_times_in_lowercase() {
        assert_eq!(parse_switch("100M"), Ok(Switch::Size(100 << 20)));
        assert_eq!(parse_switch("1G"), Ok(Switch::Size(1 << 30)));
        assert_eq!(parse_switch("10m"), Ok(Switch::Every(Duration::from_secs(600))));
        assert_eq!(parse_switch("30s"), Ok(Switch::Every(Duration::from_secs(30))));
        assert_eq!(parse_switch("signal"), Ok(Switch::Asked));
        assert!(parse_switch("often").unwrap_err().contains("a size (100M, 1G), a time (30s, 10m) or `signal`"));
    }

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("0").unwrap_err().contains("keeps nothing"));
        assert!(parse_size("12 parsecs").unwrap_err().contains("unknown unit `parsecs`"));
    }

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("soon").unwrap_err().contains("such as 500ms"));
    }

    fn gate(max_dumps: u32, interval_ms: u64, after_ms: u64) -> Gate {
        Gate {
            max_dumps,
            interval: Duration::from_millis(interval_ms),
            after: Duration::from_millis(after_ms),
            started: 0,
            last: None,
            ignored: 0,
            token: 0,
        }
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn a_storm_of_triggers_gives_at_most_max_dumps() {
        let mut g = gate(2, 0, 100);
        // 100 triggers over one second, 10 ms apart.
        let said: Vec<Admit> = (0..100).map(|i| g.admit(i * 10 * MS)).collect();
        // The first opens a dump; those within --after join it; the one at
        // 100 ms opens the second; after that, all are ignored.
        assert_eq!(said[0], Admit::Start(1));
        assert!(said[1..10].iter().all(|a| *a == Admit::Join(1)), "{said:?}");
        assert_eq!(said[10], Admit::Start(2));
        assert!(said[11..20].iter().all(|a| *a == Admit::Join(2)), "{said:?}");
        assert!(said[20..].iter().all(|a| *a == Admit::Ignore), "{said:?}");
        assert_eq!((g.started, g.ignored), (2, 80));
    }

    #[test]
    fn triggers_sooner_than_the_interval_are_ignored_once_the_dump_closed() {
        let mut g = gate(10, 500, 100);
        assert_eq!(g.admit(0), Admit::Start(1));
        assert_eq!(g.admit(50 * MS), Admit::Join(1), "within --after: joins the open dump");
        assert_eq!(g.admit(200 * MS), Admit::Ignore, "after it closed, before the interval");
        assert_eq!(g.admit(500 * MS), Admit::Start(2));
        assert_eq!((g.started, g.ignored), (2, 1));
    }
}

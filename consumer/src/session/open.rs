//! Opening a session, in the order it happens: the patterns and tracefs,
//! the rings of every CPU, the archive or the flight recorder's window,
//! then the threads already running, read from `/proc` once the sideband
//! records every change to them (so none falls between the two).

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use usertrace::Pattern;

use super::sideband::{carriers, open_sideband};
use super::{find_tracefs, SessionOptions};
use crate::archive::ArchiveWriter;
use crate::attach::perf_error;
use crate::drain::{Archive, CpuRing};
use crate::error::Error;
use crate::flight::FlightWindow;
use crate::ring::Ring;
use crate::sched_scope::SCHED_PATTERNS;
use crate::stack_scope::Stacks;
use crate::threads::ThreadTable;
use crate::{procfs, sys};

/// The patterns the session attaches: the user's, and the scheduler's
/// with `--sched`.
pub(super) fn patterns(options: &SessionOptions) -> Result<Vec<Pattern>, Error> {
    let sched_patterns: &[&str] = if options.sched { &SCHED_PATTERNS } else { &[] };
    let patterns = options.patterns.iter().map(String::as_str).chain(sched_patterns.iter().copied()).map(Pattern::parse).collect::<Result<Vec<_>, _>>()?;
    if patterns.is_empty() {
        return Err(Error::NoPatterns);
    }
    Ok(patterns)
}

/// Where tracefs is. Without user_events, producers use shared memory,
/// which needs no tracefs: the session records them alone. The
/// scheduler's tracepoints are the kernel's own and need only tracefs
/// itself, so --sched works wherever tracefs is mounted.
pub(super) fn tracefs(options: &SessionOptions) -> Result<PathBuf, Error> {
    if let Some(t) = &options.tracefs {
        return Ok(t.clone());
    }
    match find_tracefs() {
        Ok(t) => Ok(t),
        Err(Error::Unavailable(status)) if status.availability == usertrace::Availability::UserEventsMissing && status.tracefs.is_some() => {
            Ok(status.tracefs.clone().expect("checked just above"))
        }
        Err(Error::Unavailable(status)) if !options.sched => Ok(status.tracefs.clone().unwrap_or_else(|| "/sys/kernel/tracing".into())),
        Err(e) => Err(e),
    }
}

/// Every online CPU's sideband and events rings.
pub(super) struct Rings {
    pub rings: Vec<CpuRing>,
    /// Whether the sideband records namespaces: it does unless the
    /// kernel refused them to this user.
    pub namespaces: bool,
    sideband_wakeup: u32,
    events_wakeup: u32,
}

const PAGE: u32 = 4096;

/// Opens and maps the rings, `ring_pages` data pages each (a power of two).
pub(super) fn open_rings(ring_pages: usize, namespaces: bool) -> Result<Rings, Error> {
    let cpus = sys::online_cpus().map_err(|error| Error::Io { path: "/sys/devices/system/cpu/online".into(), error })?;
    let pages = ring_pages.max(1).next_power_of_two();
    // Task records are few, but a fork storm must fit.
    let sideband_pages = pages.max(16);
    let wakeup = |pages: usize| (pages as u32 * PAGE / 4).max(PAGE);
    let mut opened = Rings { rings: Vec::with_capacity(cpus.len()), namespaces, sideband_wakeup: wakeup(sideband_pages), events_wakeup: wakeup(pages) };
    for &cpu in &cpus {
        let ring_error = |error| Error::Io { path: format!("perf ring of CPU {cpu}").into(), error };
        let sideband = open_sideband(cpu, opened.sideband_wakeup, &mut opened.namespaces)?;
        let sideband_ring = Ring::map(sideband.as_fd(), sideband_pages).map_err(ring_error)?;
        let mut attr = sys::ring_owner_attr(opened.events_wakeup);
        let events = sys::open(&mut attr, cpu, None).map_err(|e| perf_error("perf_event_open(ring)", cpu, e))?;
        let events_ring = Ring::map(events.as_fd(), pages).map_err(ring_error)?;
        opened.rings.push(CpuRing { cpu, sideband, sideband_ring, events, events_ring });
    }
    Ok(opened)
}

impl Rings {
    /// Starts the sideband: from here on, every fork, exec, rename and
    /// exit is recorded.
    pub(super) fn enable_sideband(&self) -> Result<(), Error> {
        for r in &self.rings {
            sys::enable(r.sideband.as_fd()).map_err(|e| perf_error("PERF_EVENT_IOC_ENABLE(sideband)", r.cpu, e))?;
        }
        Ok(())
    }
}

/// The perf.data archive or the flight recorder's window the options ask
/// for, and the perf id its synthesized task records carry (the first
/// sideband's).
pub(super) fn open_archive(options: &SessionOptions, rings: &Rings, tracefs: &Path) -> Result<(Option<Archive>, u64), Error> {
    let sideband_id = match rings.rings.first() {
        Some(r) if options.archive.is_some() || options.flight.is_some() => sys::event_id(r.sideband.as_fd()).map_err(|e| perf_error("PERF_EVENT_IOC_ID", r.cpu, e))?,
        _ => 0,
    };
    let carriers = || carriers(&rings.rings, rings.sideband_wakeup, rings.events_wakeup, rings.namespaces);
    let cpus = rings.rings.len() as u32;
    let archive = match (&options.archive, &options.flight) {
        (_, Some(flight)) => Some(Archive::Flight(Box::new(FlightWindow::new(flight.clone(), carriers()?, tracefs.to_owned(), cpus, sideband_id)))),
        (Some(file), None) => {
            let mut writer = ArchiveWriter::create(file, tracefs, cpus)?;
            writer.describe_all(&carriers()?);
            Some(Archive::File(Box::new(writer)))
        }
        (None, None) => None,
    };
    Ok((archive, sideband_id))
}

/// The threads running now, read from `/proc`; each also goes into the
/// archive as a task record (with its mappings where stacks are recorded)
/// or seeds the flight window.
pub(super) fn snapshot(options: &SessionOptions, archive: &mut Option<Archive>, sideband_id: u64, namespaces: bool) -> Result<ThreadTable, Error> {
    let mut threads = ThreadTable::new();
    procfs::snapshot(Path::new("/proc"), &mut threads, namespaces, |thread| match archive {
        Some(Archive::File(file)) => {
            file.synthesize_thread(thread, sideband_id);
            // Where stacks are recorded, the code each process had
            // mapped already, for naming their frames from the file.
            if options.stacks != Stacks::None && thread.pid == thread.tid {
                file.synthesize_maps(Path::new("/proc"), thread, sideband_id);
            }
        }
        Some(Archive::Flight(window)) => window.seed(thread),
        None => {}
    });
    if let Some(Archive::File(file)) = archive {
        file.finish_init()?;
    }
    Ok(threads)
}

//! The session's dummy events: the sideband event of each CPU, opened with
//! namespaces where permitted, and both carriers as an archive names them.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use usertrace::Errno;

use crate::archive::{Descriptions, EVENTS_NAME, SIDEBAND_NAME};
use crate::attach::perf_error;
use crate::drain::CpuRing;
use crate::error::Error;
use crate::sys;

/// The two dummy events of every CPU, as an archive names them.
pub(super) fn carriers(rings: &[CpuRing], sideband_wakeup: u32, events_wakeup: u32, namespaces: bool) -> Result<Descriptions, Error> {
    let ids = |fd: fn(&CpuRing) -> BorrowedFd<'_>| -> Result<Vec<u64>, Error> {
        rings.iter().map(|r| sys::event_id(fd(r)).map_err(|e| perf_error("PERF_EVENT_IOC_ID", r.cpu, e))).collect()
    };
    let mut carriers = Descriptions::default();
    carriers.carrier(&ids(|r| r.sideband.as_fd())?, &sys::sideband_attr(sideband_wakeup, namespaces), SIDEBAND_NAME);
    carriers.carrier(&ids(|r| r.events.as_fd())?, &sys::ring_owner_attr(events_wakeup), EVENTS_NAME);
    Ok(carriers)
}

/// Opens one CPU's sideband event, with namespaces while `namespaces` holds;
/// a refusal of those (they need CAP_PERFMON) turns them off for the rest
/// of the session, rather than failing it.
pub(super) fn open_sideband(cpu: u32, wakeup_bytes: u32, namespaces: &mut bool) -> Result<OwnedFd, Error> {
    if *namespaces {
        match sys::open(&mut sys::sideband_attr(wakeup_bytes, true), cpu, None) {
            Err(Errno(libc::EACCES | libc::EPERM)) => *namespaces = false,
            other => return other.map_err(|e| perf_error("perf_event_open(sideband)", cpu, e)),
        }
    }
    sys::open(&mut sys::sideband_attr(wakeup_bytes, false), cpu, None).map_err(|e| perf_error("perf_event_open(sideband)", cpu, e))
}

//! `usertrace list`'s view of shared memory: every tracepoint live
//! producers have registered, read only. Nothing is taken or written, and
//! a container's producers are found, and their files opened, as a
//! recording finds them.

use usertrace::shm_layout::parse_registry_file_name;

use std::path::PathBuf;

use super::producer::{Producer, Refusal};
use super::{ShmSource, SYSTEM};
use crate::format::EventFormat;
use crate::sys;

/// A tracepoint registered through shared memory, as `usertrace list`
/// shows it.
#[derive(Debug, Clone)]
pub struct SharedTracepoint {
    /// Its layout, as user_events would show it (id 0: it has none).
    pub format: EventFormat,
    /// The processes that have it registered.
    pub pids: Vec<u32>,
    /// The pids of the recorders that hold those processes.
    pub recorders: Vec<u32>,
}

/// What `usertrace list` finds in shared memory.
#[derive(Debug, Clone, Default)]
pub struct SharedListing {
    /// Every tracepoint that live producers have registered, each once.
    pub tracepoints: Vec<SharedTracepoint>,
    /// The registries that were refused, each with why (a permission the
    /// recorder lacks, a planted link, a file that is not a registry): an
    /// operator checking that a program is seen needs to know. A registry
    /// still being made, or held by a recorder, is not among them.
    pub refused: Vec<(PathBuf, String)>,
}

/// Every tracepoint that live producers have registered through shared
/// memory and this user may see (every user's, for root); each once, with
/// the processes that have it; and the registries refused. Nothing is
/// taken or written.
pub fn shared_tracepoints() -> SharedListing {
    let mut source = ShmSource::new(Vec::new(), Vec::new());
    let mut found: Vec<(String, SharedTracepoint)> = Vec::new();
    let mut refused = Vec::new();
    for (place, members) in source.places() {
        for name in place.names() {
            if parse_registry_file_name(&name).is_none() {
                continue;
            }
            let mut producer = match Producer::open(&place, &name, &members) {
                Ok(producer) => producer,
                Err(Refusal::Malformed(why)) => {
                    refused.push((place.path(&name), why));
                    continue;
                }
                Err(Refusal::Unfinished | Refusal::Held { .. }) => continue,
            };
            if !producer.is_alive() {
                continue;
            }
            let recorder = producer.recorder().filter(|&r| sys::process_exists(r));
            for (_, slot) in producer.changed_slots() {
                let Ok(slot) = slot else { continue };
                let Ok((name, fields)) = usertrace::descriptor::parse_descriptor(&slot.descriptor) else { continue };
                let at = match found.iter().position(|(d, _)| *d == slot.descriptor) {
                    Some(at) => at,
                    None => {
                        let text = usertrace::descriptor::tracefs_format(SYSTEM, &name, 0, &fields);
                        let Ok(format) = EventFormat::parse(SYSTEM, &text) else { continue };
                        found.push((slot.descriptor.clone(), SharedTracepoint { format, pids: Vec::new(), recorders: Vec::new() }));
                        found.len() - 1
                    }
                };
                let listed = &mut found[at].1;
                if !listed.pids.contains(&producer.host_pid) {
                    listed.pids.push(producer.host_pid);
                }
                if let Some(r) = recorder.filter(|r| !listed.recorders.contains(r)) {
                    listed.recorders.push(r);
                }
            }
        }
    }
    let mut listed: Vec<SharedTracepoint> = found.into_iter().map(|(_, t)| t).collect();
    listed.sort_by(|a, b| a.format.name.cmp(&b.format.name));
    for t in &mut listed {
        t.pids.sort_unstable();
        t.recorders.sort_unstable();
    }
    SharedListing { tracepoints: listed, refused }
}

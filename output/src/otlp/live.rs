//! Mapping a recording that arrives in batches: a span may begin in one
//! batch and end in a later one, so a batch's spans that are still open
//! at its end are held back, and their begin records carried into the
//! next batch, where the timeline pairs them with their ends. Children
//! exported before their parent still name it: ids depend only on the
//! span's begin (see [`super::ids`]).

use std::collections::{BTreeMap, HashSet};

use super::mapping::{map_timeline, namespaces_by_pid, Clock, Otlp, ResourceSettings};
use crate::record::{Namespaces, Record};
use crate::timeline::{Timeline, SPAN_BEGIN};

/// What the timeline writes into a span still open at the end of the
/// records it was given.
const STILL_OPEN: &str = "recording ended";

/// Maps batch after batch of one recording.
#[derive(Debug)]
pub struct BatchMapper {
    resource: ResourceSettings,
    clock: Clock,
    /// The latest process record of each pid, for names and command lines.
    processes: BTreeMap<u32, Record>,
    namespaces: BTreeMap<u32, Namespaces>,
    /// Begins of spans still open, in time order.
    carried: Vec<Record>,
}

impl BatchMapper {
    /// A mapper for one recording.
    pub fn new(resource: ResourceSettings, clock: Clock) -> BatchMapper {
        BatchMapper { resource, clock, processes: BTreeMap::new(), namespaces: BTreeMap::new(), carried: Vec::new() }
    }

    /// How many span begins are carried to the next batch.
    pub fn open_spans(&self) -> usize {
        self.carried.len()
    }

    /// The next batch's spans that have ended, and all its log records.
    pub fn map_batch(&mut self, batch: &[Record]) -> Otlp {
        self.map(batch, false)
    }

    /// The spans still open at the end of the recording, closed there
    /// (`unfinished = "recording ended"`).
    pub fn finish(&mut self) -> Otlp {
        self.map(&[], true)
    }

    fn map(&mut self, batch: &[Record], last: bool) -> Otlp {
        let mut input: Vec<Record> = self.processes.values().cloned().collect();
        input.append(&mut self.carried);
        input.extend_from_slice(batch);
        for r in batch {
            if let Record::Process(p) = r {
                self.processes.insert(p.pid, r.clone());
            }
        }
        self.namespaces.extend(namespaces_by_pid(batch));
        let timeline = Timeline::build(&input);
        let otlp = map_timeline(&timeline, &self.namespaces, &self.resource, self.clock, |s| last || s.unfinished != Some(STILL_OPEN));
        if !last {
            let open: HashSet<(u32, u64, u64)> = timeline
                .spans
                .iter()
                .filter(|s| s.unfinished == Some(STILL_OPEN))
                .filter_map(|s| Some((s.pid, s.id?, s.start_ns)))
                .collect();
            self.carried = input
                .into_iter()
                .filter(|r| match r {
                    Record::Event(e) => match e.fields.first() {
                        Some((name, v)) if name == SPAN_BEGIN => v.as_u64().is_some_and(|id| open.contains(&(e.pid, id, e.time_ns))),
                        _ => false,
                    },
                    _ => false,
                })
                .collect();
        }
        otlp
    }
}

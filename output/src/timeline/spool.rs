//! Putting a timeline's items into write order without holding them all:
//! an external merge sort of encoded items by [`Key`].
//!
//! Items are gathered in memory up to a budget, then sorted and written to
//! a temporary file as one sorted run; at the end every run and what is
//! still in memory are merged, each read through a small buffer. A
//! recording whose items fit the budget never touches the disk. Runs are
//! merged into one of the next level whenever [`FAN_IN`] of one level
//! accumulate, so that a huge recording is merged from a few dozen files,
//! not thousands.
//!
//! A run's file is removed from its directory as soon as it is created:
//! it lives only as long as its open descriptor, and nothing is left
//! behind by a crash or a kill.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Bytes of items (and their index) held before a run is written.
pub(super) const BUDGET: usize = 16 << 20;
/// Runs of one level merged into one of the next.
const FAN_IN: usize = 64;
/// The buffer each run is read and written through.
const RUN_BUFFER: usize = 64 << 10;

/// Where an item goes in the output: by time, then by `class` (which
/// orders items of one time that must keep an order on one track), then
/// `a` and `b`, whose meaning is the class's. Every item's key is unique.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Key {
    pub(super) time_ns: u64,
    pub(super) class: u8,
    pub(super) a: u64,
    pub(super) b: u64,
}

impl Key {
    const BYTES: usize = 25;

    fn to_bytes(self) -> [u8; Key::BYTES] {
        let mut out = [0; Key::BYTES];
        out[..8].copy_from_slice(&self.time_ns.to_le_bytes());
        out[8] = self.class;
        out[9..17].copy_from_slice(&self.a.to_le_bytes());
        out[17..].copy_from_slice(&self.b.to_le_bytes());
        out
    }

    fn from_bytes(b: &[u8; Key::BYTES]) -> Key {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
        Key { time_ns: u64_at(0), class: b[8], a: u64_at(9), b: u64_at(17) }
    }
}

/// One item in memory: its key, and where its bytes are and how many.
type Entry = (Key, usize, u32);

/// Items being gathered, and the runs written so far.
pub(super) struct Spool {
    data: Vec<u8>,
    index: Vec<Entry>,
    budget: usize,
    /// Where runs are written; `None`: never (everything stays in memory).
    dir: Option<PathBuf>,
    runs: Vec<Run>,
}

struct Run {
    level: u32,
    file: File,
}

impl Spool {
    /// A spool that writes its runs in `dir`.
    pub(super) fn spilling_to(dir: PathBuf) -> Spool {
        Spool::with_budget(Some(dir), BUDGET)
    }

    /// A spool that holds everything in memory, for items that already are
    /// (a built [`Timeline`](super::Timeline)): it never fails.
    pub(super) fn in_memory() -> Spool {
        Spool::with_budget(None, usize::MAX)
    }

    pub(super) fn with_budget(dir: Option<PathBuf>, budget: usize) -> Spool {
        Spool { data: Vec::new(), index: Vec::new(), budget, dir, runs: Vec::new() }
    }

    /// Adds the item `key`, whose bytes `encode` appends. Fails when a
    /// run cannot be written (never for a spool in memory).
    pub(super) fn push(&mut self, key: Key, encode: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        let start = self.data.len();
        encode(&mut self.data);
        // An item is one record's fields, far under 4 GiB (a line of a
        // recording is at most 16 MiB).
        let len = (self.data.len() - start) as u32;
        self.index.push((key, start, len));
        if self.data.len() + self.index.len() * size_of::<Entry>() >= self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// How many runs have been written (for tests).
    #[cfg(test)]
    pub(super) fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Writes what is held as a sorted run.
    fn spill(&mut self) -> io::Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        self.index.sort_unstable_by_key(|e| e.0);
        let mut out = BufWriter::with_capacity(RUN_BUFFER, temporary(dir)?);
        for &(key, start, len) in &self.index {
            write_item(&mut out, key, &self.data[start..start + len as usize])?;
        }
        self.runs.push(Run { level: 0, file: rewound(out)? });
        self.data.clear();
        self.index.clear();
        self.cascade()
    }

    /// Merges the last [`FAN_IN`] runs into one while they are of one level.
    fn cascade(&mut self) -> io::Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        while self.runs.len() >= FAN_IN {
            let tail = self.runs.len() - FAN_IN;
            let level = self.runs[tail].level;
            if self.runs[tail..].iter().any(|r| r.level != level) {
                break;
            }
            let sources = self.runs.drain(tail..).map(|r| Source::file(r.file)).collect::<io::Result<Vec<_>>>()?;
            let mut merge = Merge::new(sources);
            let mut out = BufWriter::with_capacity(RUN_BUFFER, temporary(dir)?);
            while let Some((key, payload)) = merge.next()? {
                write_item(&mut out, key, payload)?;
            }
            self.runs.push(Run { level: level + 1, file: rewound(out)? });
        }
        Ok(())
    }

    /// Every item, in key order.
    pub(super) fn finish(mut self) -> io::Result<Merge> {
        self.index.sort_unstable_by_key(|e| e.0);
        let mut sources = self.runs.drain(..).map(|r| Source::file(r.file)).collect::<io::Result<Vec<_>>>()?;
        sources.push(Source::Memory { data: std::mem::take(&mut self.data), index: std::mem::take(&mut self.index), next: 0 });
        Ok(Merge::new(sources))
    }
}

/// A new file in `dir` for a run, already unlinked (`tempfile`'s, which
/// uses O_TMPFILE where the file system has it).
fn temporary(dir: &Path) -> io::Result<File> {
    tempfile::tempfile_in(dir)
}

/// Flushes a run and rewinds it for reading.
fn rewound(out: BufWriter<File>) -> io::Result<File> {
    let mut file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(file)
}

/// An item in a run: its key, its length as a varint, its bytes.
fn write_item(out: &mut impl Write, key: Key, payload: &[u8]) -> io::Result<()> {
    out.write_all(&key.to_bytes())?;
    let mut len = Vec::with_capacity(5);
    prost::encoding::encode_varint(payload.len() as u64, &mut len);
    out.write_all(&len)?;
    out.write_all(payload)
}

/// A sorted sequence of items: a run's file, or what was left in memory.
enum Source {
    File { reader: BufReader<File>, payload: Vec<u8> },
    Memory { data: Vec<u8>, index: Vec<Entry>, next: usize },
}

impl Source {
    fn file(file: File) -> io::Result<Source> {
        Ok(Source::File { reader: BufReader::with_capacity(RUN_BUFFER, file), payload: Vec::new() })
    }

    /// Moves to the next item; its key, or `None` at the end.
    fn advance(&mut self) -> io::Result<Option<Key>> {
        match self {
            Source::Memory { index, next, .. } => {
                let key = index.get(*next).map(|e| e.0);
                *next += 1;
                Ok(key)
            }
            Source::File { reader, payload } => {
                let mut key = [0; Key::BYTES];
                match reader.read_exact(&mut key) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
                    Err(e) => return Err(e),
                }
                let len = read_varint(reader)?;
                payload.resize(usize::try_from(len).map_err(|_| corrupt())?, 0);
                reader.read_exact(payload)?;
                Ok(Some(Key::from_bytes(&key)))
            }
        }
    }

    /// The bytes of the item [`Source::advance`] moved to.
    fn payload(&self) -> &[u8] {
        match self {
            Source::File { payload, .. } => payload,
            Source::Memory { data, index, next } => {
                let (_, start, len) = index[*next - 1];
                &data[start..start + len as usize]
            }
        }
    }
}

fn read_varint(reader: &mut impl Read) -> io::Result<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let mut byte = [0];
        reader.read_exact(&mut byte)?;
        value |= u64::from(byte[0] & 0x7f) << shift;
        if byte[0] & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(corrupt())
}

pub(super) fn corrupt() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "a temporary file of sorted timeline items was corrupted")
}

/// The items of several sources, in key order.
pub(super) struct Merge {
    sources: Vec<Source>,
    /// The next key of every source not yet at its end.
    heap: BinaryHeap<Reverse<(Key, usize)>>,
    /// The source whose item was returned last, to move on first.
    returned: Option<usize>,
    started: bool,
}

impl Merge {
    fn new(sources: Vec<Source>) -> Merge {
        Merge { heap: BinaryHeap::with_capacity(sources.len()), sources, returned: None, started: false }
    }

    /// The next item's key and bytes, or `None` after the last.
    pub(super) fn next(&mut self) -> io::Result<Option<(Key, &[u8])>> {
        if !self.started {
            self.started = true;
            for (i, source) in self.sources.iter_mut().enumerate() {
                if let Some(key) = source.advance()? {
                    self.heap.push(Reverse((key, i)));
                }
            }
        }
        if let Some(i) = self.returned.take() {
            if let Some(key) = self.sources[i].advance()? {
                self.heap.push(Reverse((key, i)));
            }
        }
        let Some(Reverse((key, i))) = self.heap.pop() else { return Ok(None) };
        self.returned = Some(i);
        Ok(Some((key, self.sources[i].payload())))
    }
}

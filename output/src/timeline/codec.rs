//! The bytes of one timeline item while it waits in the spool to be
//! written: varints, length-prefixed strings and tagged values. Its time
//! is its key's, not repeated here. Only this process reads them back.

use std::io;

use prost::encoding::{decode_varint, encode_varint};

use super::build::REASONS;
use super::spool::corrupt;
use super::{Instant, LostMarker, Placement, SchedEvent, SchedEventKind, SchedSummary, Span, SpanTrace, Waker};
use crate::record::{StackFrame, Value};

const BEGIN: u8 = 0;
const END: u8 = 1;
const INSTANT: u8 = 2;
const LOST: u8 = 3;
const SCHED: u8 = 4;

/// A [`SchedEventKind`]'s tag.
const SWITCH: u8 = 0;
const WAKING: u8 = 1;
const MIGRATE: u8 = 2;

/// An item as read back, before the stream places it.
// Decoded one at a time and placed at once (see `Item`).
#[allow(clippy::large_enum_variant)]
pub(super) enum Decoded {
    /// `span.placement` is not yet known: `Thread { depth: 0 }` or
    /// `Async { lane: 0 }` as `on_thread` says.
    Begin { span: Span, on_thread: bool, serial: u64 },
    End { pid: u32, tid: u32, name: String, on_thread: bool, serial: u64 },
    Instant(Instant),
    Lost(LostMarker),
    Sched(SchedEvent),
}

pub(super) fn begin(out: &mut Vec<u8>, span: &Span, on_thread: bool, serial: u64) {
    out.push(BEGIN);
    ids(out, span.pid, span.tid, on_thread, serial);
    encode_varint(span.id.unwrap_or(0), out);
    encode_varint(span.end_ns, out);
    let reason = span.unfinished.and_then(|why| REASONS.iter().position(|r| *r == why)).map_or(0, |i| i as u64 + 1);
    encode_varint(reason, out);
    string(out, &span.name);
    args(out, &span.args);
    sched(out, span.sched.as_ref());
    stack(out, &span.stack);
    optional(out, span.trace, |out, t| {
        encode_varint((t.trace_id >> 64) as u64, out);
        encode_varint(t.trace_id as u64, out);
        encode_varint(t.parent_span_id, out);
    });
}

/// A stack: its frame count, then each frame's address, and each of its
/// optional names as 0, or 1 and the value.
fn stack(out: &mut Vec<u8>, frames: &[StackFrame]) {
    encode_varint(frames.len() as u64, out);
    for f in frames {
        encode_varint(f.address, out);
        for text in [&f.module, &f.function, &f.file] {
            optional(out, text.as_deref(), string);
        }
        optional(out, f.module_offset, |out, v| encode_varint(v, out));
        optional(out, f.line, |out, v| encode_varint(u64::from(v), out));
    }
}

fn optional<T>(out: &mut Vec<u8>, value: Option<T>, write: impl FnOnce(&mut Vec<u8>, T)) {
    match value {
        None => out.push(0),
        Some(v) => {
            out.push(1);
            write(out, v);
        }
    }
}

/// A span's scheduler summary: 0, or 1 and its figures and wakers.
fn sched(out: &mut Vec<u8>, sched: Option<&SchedSummary>) {
    let Some(s) = sched else {
        out.push(0);
        return;
    };
    out.push(1);
    encode_varint(u64::from(s.tid), out);
    out.push(u8::from(s.ended_on_another_thread));
    let figures = [s.on_cpu_ns, s.runnable_ns, s.sleeping_ns, s.uninterruptible_ns, s.other_blocked_ns, s.unknown_ns, s.context_switches, s.migrations];
    for figure in figures {
        encode_varint(figure, out);
    }
    encode_varint(s.top_wakers.len() as u64, out);
    for w in &s.top_wakers {
        encode_varint(u64::from(w.pid), out);
        encode_varint(u64::from(w.tid), out);
        string(out, &w.thread);
        string(out, &w.process);
        encode_varint(w.count, out);
    }
}

/// The end of a span; `name` is kept for an async span only (Chrome's
/// `e` names its span; nothing reads a thread slice's).
pub(super) fn end(out: &mut Vec<u8>, span: &Span, on_thread: bool, serial: u64) {
    out.push(END);
    ids(out, span.pid, span.tid, on_thread, serial);
    string(out, if on_thread { "" } else { &span.name });
}

pub(super) fn instant(out: &mut Vec<u8>, instant: &Instant) {
    out.push(INSTANT);
    encode_varint(u64::from(instant.pid), out);
    encode_varint(u64::from(instant.tid), out);
    string(out, &instant.name);
    args(out, &instant.args);
    stack(out, &instant.stack);
}

pub(super) fn lost(out: &mut Vec<u8>, lost: &LostMarker) {
    out.push(LOST);
    encode_varint(u64::from(lost.cpu), out);
    encode_varint(lost.count, out);
    out.push(u8::from(lost.sideband));
    string(out, &lost.name);
}

pub(super) fn sched_event(out: &mut Vec<u8>, e: &SchedEvent) {
    out.push(SCHED);
    encode_varint(u64::from(e.cpu), out);
    encode_varint(u64::from(e.tid), out);
    match &e.kind {
        SchedEventKind::Switch { prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid, next_prio } => {
            out.push(SWITCH);
            string(out, prev_comm);
            for v in [i64::from(*prev_pid), i64::from(*prev_prio), *prev_state] {
                signed(out, v);
            }
            string(out, next_comm);
            for v in [*next_pid, *next_prio] {
                signed(out, i64::from(v));
            }
        }
        SchedEventKind::Waking { comm, pid, prio, target_cpu } => {
            out.push(WAKING);
            string(out, comm);
            for v in [*pid, *prio, *target_cpu] {
                signed(out, i64::from(v));
            }
        }
        SchedEventKind::Migrate { comm, pid, prio, orig_cpu, dest_cpu } => {
            out.push(MIGRATE);
            string(out, comm);
            for v in [*pid, *prio, *orig_cpu, *dest_cpu] {
                signed(out, i64::from(v));
            }
        }
    }
}

/// Zigzag: small magnitudes of either sign in few bytes.
fn signed(out: &mut Vec<u8>, v: i64) {
    encode_varint(((v << 1) ^ (v >> 63)) as u64, out);
}

fn ids(out: &mut Vec<u8>, pid: u32, tid: u32, on_thread: bool, serial: u64) {
    encode_varint(u64::from(pid), out);
    encode_varint(u64::from(tid), out);
    out.push(u8::from(on_thread));
    encode_varint(serial, out);
}

fn string(out: &mut Vec<u8>, s: &str) {
    bytes(out, s.as_bytes());
}

fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    encode_varint(b.len() as u64, out);
    out.extend_from_slice(b);
}

fn args(out: &mut Vec<u8>, args: &[(String, Value)]) {
    encode_varint(args.len() as u64, out);
    for (name, value) in args {
        string(out, name);
        self::value(out, value);
    }
}

fn value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Unsigned(v) => {
            out.push(0);
            encode_varint(*v, out);
        }
        Value::Signed(v) => {
            out.push(1);
            signed(out, *v);
        }
        Value::Bool(v) => out.push(2 + u8::from(*v)),
        Value::F32(v) => {
            out.push(4);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Value::F64(v) => {
            out.push(5);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Value::Str(s) => {
            out.push(6);
            string(out, s);
        }
        Value::Bytes(b) => {
            out.push(7);
            bytes(out, b);
        }
        Value::Array(items) => {
            out.push(8);
            encode_varint(items.len() as u64, out);
            items.iter().for_each(|item| self::value(out, item));
        }
        Value::Struct(members) => {
            out.push(9);
            args(out, members);
        }
    }
}

/// Reads back the item of `time_ns` that `buf` holds.
pub(super) fn decode(time_ns: u64, buf: &[u8]) -> io::Result<Decoded> {
    let mut r = Reader { buf };
    let decoded = match r.byte()? {
        BEGIN => {
            let (pid, tid, on_thread, serial) = r.ids()?;
            let id = Some(r.varint()?).filter(|&id| id != 0);
            let end_ns = r.varint()?;
            let unfinished = match r.varint()? {
                0 => None,
                n => Some(*REASONS.get(n as usize - 1).ok_or_else(corrupt)?),
            };
            let name = r.string()?;
            let args = r.args()?;
            let sched = r.sched()?;
            let stack = r.stack()?;
            let trace = r.trace()?;
            let placement = if on_thread { Placement::Thread { depth: 0 } } else { Placement::Async { lane: 0 } };
            let span = Span { pid, tid, name, start_ns: time_ns, end_ns, args, placement, id, unfinished, sched, stack, trace };
            Decoded::Begin { span, on_thread, serial }
        }
        END => {
            let (pid, tid, on_thread, serial) = r.ids()?;
            Decoded::End { pid, tid, name: r.string()?, on_thread, serial }
        }
        INSTANT => {
            let (pid, tid) = (r.u32()?, r.u32()?);
            let (name, args) = (r.string()?, r.args()?);
            Decoded::Instant(Instant { time_ns, pid, tid, name, args, stack: r.stack()? })
        }
        LOST => {
            let (cpu, count, sideband) = (r.u32()?, r.varint()?, r.byte()? != 0);
            Decoded::Lost(LostMarker { time_ns, cpu, count, sideband, name: r.string()? })
        }
        SCHED => {
            let (cpu, tid) = (r.u32()?, r.u32()?);
            let kind = match r.byte()? {
                SWITCH => SchedEventKind::Switch {
                    prev_comm: r.string()?,
                    prev_pid: r.i32()?,
                    prev_prio: r.i32()?,
                    prev_state: r.signed()?,
                    next_comm: r.string()?,
                    next_pid: r.i32()?,
                    next_prio: r.i32()?,
                },
                WAKING => SchedEventKind::Waking { comm: r.string()?, pid: r.i32()?, prio: r.i32()?, target_cpu: r.i32()? },
                MIGRATE => SchedEventKind::Migrate { comm: r.string()?, pid: r.i32()?, prio: r.i32()?, orig_cpu: r.i32()?, dest_cpu: r.i32()? },
                _ => return Err(corrupt()),
            };
            Decoded::Sched(SchedEvent { time_ns, cpu, tid, kind })
        }
        _ => return Err(corrupt()),
    };
    Ok(decoded)
}

struct Reader<'a> {
    buf: &'a [u8],
}

impl Reader<'_> {
    fn byte(&mut self) -> io::Result<u8> {
        let (&b, rest) = self.buf.split_first().ok_or_else(corrupt)?;
        self.buf = rest;
        Ok(b)
    }

    fn varint(&mut self) -> io::Result<u64> {
        decode_varint(&mut self.buf).map_err(|_| corrupt())
    }

    fn u32(&mut self) -> io::Result<u32> {
        u32::try_from(self.varint()?).map_err(|_| corrupt())
    }

    fn signed(&mut self) -> io::Result<i64> {
        let z = self.varint()?;
        Ok((z >> 1) as i64 ^ -((z & 1) as i64))
    }

    fn i32(&mut self) -> io::Result<i32> {
        i32::try_from(self.signed()?).map_err(|_| corrupt())
    }

    fn ids(&mut self) -> io::Result<(u32, u32, bool, u64)> {
        Ok((self.u32()?, self.u32()?, self.byte()? != 0, self.varint()?))
    }

    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        if n > self.buf.len() {
            return Err(corrupt());
        }
        let (taken, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(taken)
    }

    fn bytes(&mut self) -> io::Result<Vec<u8>> {
        let n = usize::try_from(self.varint()?).map_err(|_| corrupt())?;
        Ok(self.take(n)?.to_vec())
    }

    fn string(&mut self) -> io::Result<String> {
        String::from_utf8(self.bytes()?).map_err(|_| corrupt())
    }

    fn sched(&mut self) -> io::Result<Option<SchedSummary>> {
        if self.byte()? == 0 {
            return Ok(None);
        }
        let (tid, ended_on_another_thread) = (self.u32()?, self.byte()? != 0);
        let mut figures = [0u64; 8];
        for figure in &mut figures {
            *figure = self.varint()?;
        }
        let [on_cpu_ns, runnable_ns, sleeping_ns, uninterruptible_ns, other_blocked_ns, unknown_ns, context_switches, migrations] = figures;
        let n = self.varint()?;
        let mut top_wakers = Vec::with_capacity((n as usize).min(self.buf.len()));
        for _ in 0..n {
            let (pid, tid) = (self.u32()?, self.u32()?);
            let (thread, process) = (self.string()?, self.string()?);
            top_wakers.push(Waker { pid, tid, thread, process, count: self.varint()? });
        }
        Ok(Some(SchedSummary {
            tid,
            ended_on_another_thread,
            on_cpu_ns,
            runnable_ns,
            sleeping_ns,
            uninterruptible_ns,
            other_blocked_ns,
            unknown_ns,
            context_switches,
            migrations,
            top_wakers,
        }))
    }

    fn stack(&mut self) -> io::Result<Vec<StackFrame>> {
        let n = self.varint()?;
        // Bounded by what is there, as `args`.
        let mut frames = Vec::with_capacity((n as usize).min(self.buf.len()));
        for _ in 0..n {
            let address = self.varint()?;
            let mut text = [None, None, None];
            for t in &mut text {
                if self.byte()? != 0 {
                    *t = Some(self.string()?);
                }
            }
            let [module, function, file] = text;
            let module_offset = if self.byte()? != 0 { Some(self.varint()?) } else { None };
            let line = if self.byte()? != 0 { Some(u32::try_from(self.varint()?).map_err(|_| corrupt())?) } else { None };
            frames.push(StackFrame { address, module, module_offset, function, file, line });
        }
        Ok(frames)
    }

    /// A span's trace context: 0, or 1 and the trace id's halves and the
    /// parent's id.
    fn trace(&mut self) -> io::Result<Option<SpanTrace>> {
        if self.byte()? == 0 {
            return Ok(None);
        }
        let (hi, lo) = (self.varint()?, self.varint()?);
        Ok(Some(SpanTrace { trace_id: u128::from(hi) << 64 | u128::from(lo), parent_span_id: self.varint()? }))
    }

    fn args(&mut self) -> io::Result<Vec<(String, Value)>> {
        let n = self.varint()?;
        // Bounded by what is there: a corrupted count must not allocate.
        let mut args = Vec::with_capacity((n as usize).min(self.buf.len()));
        for _ in 0..n {
            let name = self.string()?;
            args.push((name, self.value()?));
        }
        Ok(args)
    }

    fn value(&mut self) -> io::Result<Value> {
        Ok(match self.byte()? {
            0 => Value::Unsigned(self.varint()?),
            1 => Value::Signed(self.signed()?),
            2 => Value::Bool(false),
            3 => Value::Bool(true),
            4 => Value::F32(f32::from_le_bytes(self.take(4)?.try_into().map_err(|_| corrupt())?)),
            5 => Value::F64(f64::from_le_bytes(self.take(8)?.try_into().map_err(|_| corrupt())?)),
            6 => Value::Str(self.string()?),
            7 => Value::Bytes(self.bytes()?),
            8 => {
                let n = self.varint()?;
                let mut items = Vec::with_capacity((n as usize).min(self.buf.len()));
                for _ in 0..n {
                    items.push(self.value()?);
                }
                Value::Array(items)
            }
            9 => Value::Struct(self.args()?),
            _ => return Err(corrupt()),
        })
    }
}

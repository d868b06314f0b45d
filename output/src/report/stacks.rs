//! Where each kind of span began: its begins' user stacks
//! (`record --call-graph fp`), counted per distinct stack, and the most
//! frequent printed under the span's figures.
//!
//! Stacks are told apart by their frames as named, not by their
//! addresses: the same program in two processes (another load address)
//! gives the same stack. A named frame is its function, file, line and
//! module; an unnamed one its module and offset, or, with no module known,
//! its address.

use std::fmt;
use std::hash::{Hash, Hasher};

use rustc_hash::FxHasher;
use serde::Serialize;

use crate::record::StackFrame;

/// The distinct stacks counted per span name. A recording is read as a
/// stream, so what a span name holds is bounded: at most this many stacks
/// (each as deep as the recorder walked, perf's `kernel.perf_event_max_stack`,
/// 127 by default), the first met kept and counted exactly; a begin from
/// any further stack is only counted, as a begin from another stack
/// ([`SpanStats::begins_from_other_stacks`](super::SpanStats::begins_from_other_stacks)).
/// The most frequent stack is seldom first met after 32 others.
pub const MAX_DISTINCT_STACKS: usize = 32;

/// The stacks a span name lists: its most frequent.
pub const TOP_BEGIN_STACKS: usize = 3;

/// The frames of a stack the text prints, after usertrace's own (its
/// emit path, counted in one line); the rest are counted. JSON has them
/// all.
pub const FRAMES_SHOWN: usize = 8;

/// The frames a begin's stack can hold before usertrace's own (the libc
/// syscall wrapper, `writev`, and what it calls).
const WRAPPER_FRAMES: usize = 2;

/// Whether a function is usertrace's emit path: the Rust producer crate
/// (`usertrace::`, whose C exports are `usertrace_*`), the bindings'
/// (`usertrace_jni::`, `usertrace_tracing::`, the Python extension's
/// `_native::`) and the JNI exports of `dev.usertrace`.
fn in_usertrace(function: &str) -> bool {
    let name = function.trim_start_matches('<');
    name.starts_with("usertrace::") || name.starts_with("usertrace_") || name.starts_with("_native::") || name.starts_with("Java_dev_usertrace_")
}

/// How many of a stack's innermost frames are usertrace's emit path: the
/// innermost run of its functions and the syscall wrapper they call. The
/// text leaves them out, as every begin has them and they would fill its
/// first frames shown (a debug build's span begin takes ten); what began
/// the span is the frame that called them.
pub(super) fn emit_frames(frames: &[Frame]) -> usize {
    let ours = |f: &Frame| f.function.as_deref().is_some_and(in_usertrace);
    match frames.iter().take(WRAPPER_FRAMES + 1).position(ours) {
        Some(first) => first + frames[first..].iter().take_while(|f| ours(f)).count(),
        None => 0,
    }
}

/// One frame of a begin stack as the report names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Frame {
    /// The function, demangled, where the program's files name it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// The source file, where there is debug information.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The line in `file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The file mapped at the frame's address, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    /// Of an unnamed frame, its offset in `module`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Of an unnamed frame with no module known, its address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<u64>,
}

/// A frame as stacks are compared: the one rule for what tells two frames
/// apart, read from a recorded frame or a kept one alike.
#[derive(PartialEq, Eq, Hash)]
struct FrameKey<'a> {
    function: Option<&'a str>,
    file: Option<&'a str>,
    line: Option<u32>,
    module: Option<&'a str>,
    offset: Option<u64>,
    address: Option<u64>,
}

impl<'a> FrameKey<'a> {
    fn of_recorded(f: &'a StackFrame) -> FrameKey<'a> {
        let unnamed = f.function.is_none();
        FrameKey {
            function: f.function.as_deref(),
            file: f.file.as_deref(),
            line: f.line,
            module: f.module.as_deref(),
            // A named frame's offset would split one call site among the
            // builds and load addresses of one program; its name does not.
            offset: f.module_offset.filter(|_| unnamed),
            address: (unnamed && f.module_offset.is_none()).then_some(f.address),
        }
    }

    fn of_kept(f: &'a Frame) -> FrameKey<'a> {
        FrameKey {
            function: f.function.as_deref(),
            file: f.file.as_deref(),
            line: f.line,
            module: f.module.as_deref(),
            offset: f.offset,
            address: f.address,
        }
    }

    fn owned(&self) -> Frame {
        Frame {
            function: self.function.map(str::to_owned),
            file: self.file.map(str::to_owned),
            line: self.line,
            module: self.module.map(str::to_owned),
            offset: self.offset,
            address: self.address,
        }
    }
}

impl fmt::Display for Frame {
    /// `spans (src/main.rs:42)`, `spans`, `/usr/bin/app+0x1234`, or
    /// `0x7f0012345678`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.function, &self.module) {
            (Some(function), _) => {
                f.write_str(function)?;
                match (&self.file, self.line) {
                    (Some(file), Some(line)) => write!(f, " ({file}:{line})"),
                    (Some(file), None) => write!(f, " ({file})"),
                    _ => Ok(()),
                }
            }
            (None, Some(module)) => match self.offset {
                Some(offset) => write!(f, "{module}+{offset:#x}"),
                None => write!(f, "{module}"),
            },
            (None, None) => write!(f, "{:#x}", self.address.unwrap_or(0)),
        }
    }
}

/// How many of a span name's begins had one stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BeginStack {
    /// The begins.
    pub count: u64,
    /// The stack, innermost frame first.
    pub frames: Vec<Frame>,
}

/// A span name's begin stacks as they are counted, at most
/// [`MAX_DISTINCT_STACKS`] of them.
#[derive(Default)]
pub(super) struct StackCounts {
    /// Each distinct stack with its frames' hash and its count, in the
    /// order first met (which breaks ties between counts).
    kept: Vec<(u64, BeginStack)>,
    /// Begins from a stack met once `kept` was full.
    other: u64,
}

impl StackCounts {
    /// Counts a begin from `stack` (innermost first); a begin without a
    /// stack is not counted.
    pub(super) fn add(&mut self, stack: &[StackFrame]) {
        if stack.is_empty() {
            return;
        }
        let mut hasher = FxHasher::default();
        stack.iter().for_each(|f| FrameKey::of_recorded(f).hash(&mut hasher));
        let hash = hasher.finish();
        // A few dozen hashes compared, and the frames of the one that
        // matches: a begin from a stack already met allocates nothing.
        let same = |kept: &BeginStack| kept.frames.len() == stack.len() && kept.frames.iter().zip(stack).all(|(k, s)| FrameKey::of_kept(k) == FrameKey::of_recorded(s));
        if let Some((_, kept)) = self.kept.iter_mut().find(|(h, kept)| *h == hash && same(kept)) {
            kept.count += 1;
        } else if self.kept.len() < MAX_DISTINCT_STACKS {
            let frames = stack.iter().map(|f| FrameKey::of_recorded(f).owned()).collect();
            self.kept.push((hash, BeginStack { count: 1, frames }));
        } else {
            self.other += 1;
        }
    }

    /// The [`TOP_BEGIN_STACKS`] most frequent stacks, most first, and how
    /// many begins came from the others; `None` when no begin had a stack.
    pub(super) fn top(self) -> Option<(Vec<BeginStack>, u64)> {
        if self.kept.is_empty() {
            return None;
        }
        let mut stacks: Vec<BeginStack> = self.kept.into_iter().map(|(_, s)| s).collect();
        // Stable: equal counts keep the order first met.
        stacks.sort_by_key(|s| std::cmp::Reverse(s.count));
        let others: u64 = stacks.iter().skip(TOP_BEGIN_STACKS).map(|s| s.count).sum::<u64>() + self.other;
        stacks.truncate(TOP_BEGIN_STACKS);
        Some((stacks, others))
    }
}

/// A span name's begin stacks, under its figures; nothing when its begins
/// had none:
///
/// ```text
///   began at (innermost frame first)
///     2 of 3 begins:
///       ... 6 frames in usertrace
///       inner (app.c:3)
///       /usr/lib/libc.so.6+0x29d90
///       main (app.c:9)
///       ... 4 more frames
///     1 of 3 begins from other stacks
/// ```
pub(super) fn begin_stack_lines(f: &mut fmt::Formatter<'_>, stacks: &[BeginStack], others: u64, begins: u64) -> fmt::Result {
    if stacks.is_empty() {
        return Ok(());
    }
    writeln!(f, "  began at (innermost frame first)")?;
    for stack in stacks {
        writeln!(f, "    {} of {begins} begins:", stack.count)?;
        let emit = emit_frames(&stack.frames);
        if emit > 0 {
            writeln!(f, "      ... {emit} frame{} in usertrace", if emit == 1 { "" } else { "s" })?;
        }
        for frame in stack.frames[emit..].iter().take(FRAMES_SHOWN) {
            writeln!(f, "      {frame}")?;
        }
        let left_out = (stack.frames.len() - emit).saturating_sub(FRAMES_SHOWN);
        if left_out > 0 {
            writeln!(f, "      ... {left_out} more frame{}", if left_out == 1 { "" } else { "s" })?;
        }
    }
    if others > 0 {
        writeln!(f, "    {others} of {begins} begins from other stacks")?;
    }
    Ok(())
}

//! How much a command says on stderr besides its results: perf's `-q` and
//! `-v`, given anywhere on the command line.
//!
//! - quiet (`-q`): no progress and no notes (what was attached, the
//!   closing counts of a run that lost nothing). Errors still print, and so
//!   does every warning that what was written is incomplete (lost or
//!   dropped events, undecodable ones): quiet must never hide that a
//!   recording has holes.
//! - normal: as today.
//! - verbose (`-v`): also how a session is set up, and progress every
//!   second rather than every ten.
//!
//! One process-wide level, set once by `main` before any command runs, as
//! perf keeps its `quiet` and `verbose`: threading a flag through every
//! function that might print a note would be all plumbing and no meaning.

use std::sync::atomic::{AtomicU8, Ordering};

/// How much to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    Quiet = 0,
    Normal = 1,
    Verbose = 2,
}

static LEVEL: AtomicU8 = AtomicU8::new(Verbosity::Normal as u8);

impl Verbosity {
    /// From the count of `-q` and `-v` given (clap refuses both at once).
    pub fn from_flags(quiet: bool, verbose: u8) -> Verbosity {
        match (quiet, verbose) {
            (true, _) => Verbosity::Quiet,
            (false, 0) => Verbosity::Normal,
            (false, _) => Verbosity::Verbose,
        }
    }

    /// Makes `self` the level of every later [`notes`] and [`details`].
    pub fn set(self) {
        // ATOMICS: a lone value with nothing published through it; main
        // sets it before starting any thread that reads it.
        LEVEL.store(self as u8, Ordering::Relaxed);
    }

    fn current() -> Verbosity {
        match LEVEL.load(Ordering::Relaxed) {
            0 => Verbosity::Quiet,
            1 => Verbosity::Normal,
            _ => Verbosity::Verbose,
        }
    }
}

/// Whether notes (progress, what was attached, a clean run's counts) are
/// printed: unless `-q`.
pub fn notes() -> bool {
    Verbosity::current() >= Verbosity::Normal
}

/// Whether details (the session's setup) are printed: with `-v`.
pub fn details() -> bool {
    Verbosity::current() >= Verbosity::Verbose
}

/// Writes `args` and a newline to stderr in one write. `eprintln!` writes
/// a formatted line piece by piece (stderr has no buffer), and the command
/// a recording runs often shares that terminal or pipe: its output then
/// lands in the middle of our line (`5 events, 0thread_id=13`). A line of
/// less than PIPE_BUF bytes written at once is never split.
pub fn line(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut text = args.to_string();
    text.push('\n');
    // Nothing to do if stderr is gone; as eprintln! would, but quietly.
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// A line on stderr, in one write, unless `-q`.
macro_rules! note {
    ($($arg:tt)*) => {
        if $crate::verbosity::notes() {
            $crate::verbosity::line(format_args!($($arg)*));
        }
    };
}

/// A line on stderr, in one write, with `-v` only.
macro_rules! detail {
    ($($arg:tt)*) => {
        if $crate::verbosity::details() {
            $crate::verbosity::line(format_args!($($arg)*));
        }
    };
}

/// A line on stderr, in one write, always: errors and warnings that may
/// come while a recording's command runs and prints.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::verbosity::line(format_args!($($arg)*))
    };
}

pub(crate) use {detail, note, say};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_wins_and_any_v_is_verbose() {
        assert_eq!(Verbosity::from_flags(false, 0), Verbosity::Normal);
        assert_eq!(Verbosity::from_flags(true, 0), Verbosity::Quiet);
        assert_eq!(Verbosity::from_flags(false, 1), Verbosity::Verbose);
        assert_eq!(Verbosity::from_flags(false, 3), Verbosity::Verbose);
    }
}

//! Standard output, as every command prints to it: through [`out!`] and
//! [`outln!`] (or [`write_bytes`]), never `print!`, which panics when the
//! reader has gone. The first failure is kept and later output dropped;
//! [`finish`], which `main` calls once the command is done, turns it into
//! the exit status:
//! - the reader has gone (EPIPE: `usertrace report big.jsonl | head -1`):
//!   the command's own status, quietly, as `head` expects;
//! - any other failure (a full disk): one line on stderr, and status 1.

use std::fmt;
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::{Mutex, PoisonError};

/// The first failure to write standard output, if any.
static FAILURE: Mutex<Option<io::Error>> = Mutex::new(None);

/// Writes `args` to standard output, unless an earlier write failed.
pub fn print(args: fmt::Arguments<'_>) {
    write_with(|out| out.write_fmt(args));
}

/// Writes `bytes` to standard output, unless an earlier write failed.
pub fn write_bytes(bytes: &[u8]) {
    write_with(|out| out.write_all(bytes));
}

fn write_with(write: impl FnOnce(&mut io::StdoutLock<'static>) -> io::Result<()>) {
    let mut failure = FAILURE.lock().unwrap_or_else(PoisonError::into_inner);
    if failure.is_none() {
        if let Err(e) = write(&mut io::stdout().lock()) {
            *failure = Some(e);
        }
    }
}

/// `print!`, to standard output as this module keeps it.
macro_rules! out {
    ($($arg:tt)*) => { $crate::stdout::print(format_args!($($arg)*)) };
}

/// `println!`, to standard output as this module keeps it.
macro_rules! outln {
    () => { $crate::stdout::print(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::stdout::print(format_args!("{}\n", format_args!($($arg)*))) };
}

pub(crate) use {out, outln};

/// The exit status of `command`, which would exit with `code`, once what
/// it printed is flushed: as the module docs say.
pub fn finish(command: &str, code: ExitCode) -> ExitCode {
    write_with(|out| out.flush());
    let failure = FAILURE.lock().unwrap_or_else(PoisonError::into_inner).take();
    match failure {
        None => code,
        Some(e) if e.kind() == io::ErrorKind::BrokenPipe => code,
        Some(e) => {
            eprintln!("usertrace {command}: cannot write standard output: {e}");
            ExitCode::from(1)
        }
    }
}

/// Whether `e`, from a write to standard output, says its reader has gone:
/// for what writes standard output as a file (`-o -`, `convert IN -`).
pub fn reader_gone(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

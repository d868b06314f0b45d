//! A progress bar on stderr while `convert`, `export` and `report` read a
//! file: the bytes read against the file's size.
//!
//! Shown only where someone watches and the end is known: stderr is a
//! terminal, `-q` was not given, and the input is a regular file of known,
//! non-zero size (not `-`, a FIFO or a device). Anywhere else the bar is
//! hidden, and stderr carries exactly what it did without one: scripts and
//! logs see no difference. The bar is cleared when the command ends, so
//! that only its messages remain.

use std::borrow::Cow;
use std::io::{IsTerminal as _, Read};
use std::path::Path;

use indicatif::{ProgressBar, ProgressBarIter, ProgressDrawTarget, ProgressStyle};

/// The bar's layout: how far, how fast, how long to go, then what is read
/// (or written), cut to what fits on the line so that the bar never wraps.
const TEMPLATE: &str = "{prefix} [{bar:25}] {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, {eta} left): {wide_msg}";

/// The progress of reading one input; hidden where no bar is wanted.
#[derive(Clone)]
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// The progress of `command` (e.g. `usertrace convert`) reading
    /// `input`: a bar if stderr is a terminal, notes are on (no `-q`) and
    /// `input` is a regular file with a size; hidden otherwise.
    pub fn reading(command: &'static str, input: &Path) -> Progress {
        let size = shown_size(input, std::io::stderr().is_terminal() && crate::verbosity::notes());
        let Some(size) = size else { return Progress { bar: ProgressBar::hidden() } };
        let style = ProgressStyle::with_template(TEMPLATE).expect("the template is valid").progress_chars("=> ");
        let bar = ProgressBar::with_draw_target(Some(size), ProgressDrawTarget::stderr()).with_style(style);
        bar.set_prefix(command);
        bar.set_message(format!("reading {}", input.display()));
        Progress { bar }
    }

    /// `input`, counting what is read from it.
    pub fn counting<R: Read>(&self, input: R) -> ProgressBarIter<R> {
        self.bar.wrap_read(input)
    }

    /// Says how far into the input reading has come, for a reader that
    /// reads by itself (a perf.data file).
    pub fn set_position(&self, bytes: u64) {
        self.bar.set_position(bytes);
    }

    /// Says what is done now that the input is read (e.g. `writing OUT`).
    pub fn set_message(&self, message: impl Into<Cow<'static, str>>) {
        self.bar.set_message(message);
    }

    /// Runs `print` with the bar out of the way, so that a message is not
    /// drawn over it (and the bar is redrawn below).
    pub fn suspend<T>(&self, print: impl FnOnce() -> T) -> T {
        self.bar.suspend(print)
    }

    /// Clears the bar: the command's own messages follow.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The size of `input` when a bar should show: `shown` (stderr is a
/// terminal and notes are on), and `input` is a regular file, not `-`,
/// with a size to count towards.
fn shown_size(input: &Path, shown: bool) -> Option<u64> {
    if !shown || input.as_os_str() == "-" {
        return None;
    }
    let metadata = std::fs::metadata(input).ok()?;
    (metadata.is_file() && metadata.len() > 0).then_some(metadata.len())
}

#[cfg(test)]
mod tests;

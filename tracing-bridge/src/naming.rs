//! How a callsite's tracepoints are named: valid user_events names
//! (`[A-Za-z0-9_]`), derived from what `tracing` knows of the callsite.
//!
//! | callsite | tracepoint |
//! |----------|------------|
//! | span `info_span!("handle request")`, `#[instrument] fn handle()` | `<provider>_handle_request`, `<provider>_handle` |
//! | event with a name, `info!(name: "cache_miss", ...)` | `<provider>_cache_miss` |
//! | event without one (tracing names it `event src/db.rs:42`) | `<provider>_<target>_<line>`: `myapp::db` at line 42 is `<provider>_myapp_db_42` |
//!
//! Each name goes through the core's one rule for names
//! ([`usertrace::span::event_name_for`]): a run of characters outside
//! `[A-Za-z0-9_]` becomes one `_`, and is dropped at either end. A name
//! with nothing valid in it becomes `span` or `event`. Field names take the
//! same rule (`http.method` is `http_method`); a field whose name is then
//! taken (by the event's leading field or by an earlier field) gets `_2`,
//! `_3`... after it.
//!
//! The provider is the name given to [`layer_for`](crate::layer_for), else
//! the program's own: the file name of `argv[0]` by the same rule
//! (`my-server` is `my_server`), `rust` if nothing is left.
//!
//! A tracepoint's name is at most [`MAX_NAME`] bytes: a longer one is cut
//! and ends in `_` and 8 hex digits of a hash of the whole name, so that
//! two long names stay apart. When another definition of the same name is
//! already registered (another callsite, or another program, with other
//! fields), the callsite takes the name followed by `_` and 8 hex digits of
//! a hash of where it is (target, file, line, name): the same in every run
//! of one build.

use std::borrow::Cow;

use tracing_core::Metadata;

/// The longest tracepoint name this crate registers, in bytes, suffixes
/// (`_text`, `_end`, a collision's hash) included.
pub const MAX_NAME: usize = 128;

/// Room kept after a callsite's base name: `_text` or `_end`, then a
/// collision's `_` and 8 hex digits.
const SUFFIX_ROOM: usize = "_text".len() + 9;

/// The longest provider name taken from the program's name.
const MAX_PROVIDER: usize = 48;

/// The provider name [`layer()`](crate::layer()) and [`log::init`](crate::log::init)
/// use: the program's file name made valid (see the [module](self) docs).
pub fn default_provider() -> String {
    let program = std::env::args_os()
        .next()
        .and_then(|arg0| std::path::Path::new(&arg0).file_name().map(|n| n.to_string_lossy().into_owned()))
        .or_else(|| {
            let exe = std::env::current_exe().ok()?;
            Some(exe.file_name()?.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    provider_from_program(&program)
}

/// The provider for a program named `program`.
pub(crate) fn provider_from_program(program: &str) -> String {
    match sanitize(program) {
        Some(name) => truncate_at_char(&name, MAX_PROVIDER).to_owned(),
        None => "rust".to_owned(),
    }
}

/// `name` by the core's rule, or `None` if no character of it is valid.
pub(crate) fn sanitize(name: &str) -> Option<Cow<'_, str>> {
    usertrace::span::event_name_for(name).ok()
}

/// The event part (after `<provider>_`) of the callsite's base tracepoint,
/// before any suffix; at most what leaves the whole name room for them.
pub(crate) fn event_name(provider: &str, meta: &Metadata<'_>) -> String {
    let raw: Cow<'_, str> = match (meta.is_event(), meta.line()) {
        (true, Some(line)) if is_default_event_name(meta) => Cow::Owned(format!("{}_{line}", meta.target())),
        _ => Cow::Borrowed(meta.name()),
    };
    let name = sanitize(&raw).map_or(if meta.is_span() { "span" } else { "event" }.into(), Cow::into_owned);
    cap(provider, name)
}

/// Whether an event is named as `tracing` names it when no `name:` is
/// given: `event <file>:<line>`.
fn is_default_event_name(meta: &Metadata<'_>) -> bool {
    let (Some(file), Some(line)) = (meta.file(), meta.line()) else { return false };
    meta.name().strip_prefix("event ").and_then(|rest| rest.strip_prefix(file)).and_then(|rest| rest.strip_prefix(':'))
        == Some(line.to_string().as_str())
}

/// `name`, cut so that `<provider>_<name>` and a suffix fit [`MAX_NAME`],
/// with a hash of the whole name when cut.
fn cap(provider: &str, name: String) -> String {
    let room = MAX_NAME.saturating_sub(provider.len() + 1 + SUFFIX_ROOM);
    if name.len() <= room {
        return name;
    }
    let hash = format!("_{:08x}", fnv1a(&[name.as_bytes()]));
    let keep = room.saturating_sub(hash.len()).max(1);
    format!("{}{hash}", truncate_at_char(&name, keep))
}

/// What a callsite adds to its names when another definition has taken them.
pub(crate) fn collision_suffix(meta: &Metadata<'_>) -> String {
    let line = meta.line().unwrap_or(0).to_le_bytes();
    let hash = fnv1a(&[
        meta.target().as_bytes(),
        meta.file().unwrap_or("").as_bytes(),
        &line,
        meta.name().as_bytes(),
    ]);
    format!("_{hash:08x}")
}

/// The field names of one event: `leading` (the fields this crate puts
/// first, e.g. `level` or `span_begin`) are taken; each of `names` is
/// made valid and, if taken, numbered.
pub(crate) fn field_names<'a>(leading: &[&str], names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut taken: Vec<String> = leading.iter().map(|s| (*s).to_owned()).collect();
    let mut out = Vec::new();
    for name in names {
        let base = sanitize(name).map_or_else(|| "field".to_owned(), Cow::into_owned);
        let mut candidate = base.clone();
        let mut n = 2;
        while taken.contains(&candidate) {
            candidate = format!("{base}_{n}");
            n += 1;
        }
        taken.push(candidate.clone());
        out.push(candidate);
    }
    out
}

/// The longest prefix of `s` of at most `max` bytes that ends on a
/// character boundary.
pub(crate) fn truncate_at_char(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// 32-bit FNV-1a over `parts`, each followed by a 0 byte: small, and the
/// same in every run and on every machine (std's hashers are neither).
fn fnv1a(parts: &[&[u8]]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for part in parts {
        for &b in part.iter().chain(&[0u8]) {
            hash ^= u32::from(b);
            hash = hash.wrapping_mul(0x0100_0193);
        }
    }
    hash
}

#[cfg(test)]
mod tests;

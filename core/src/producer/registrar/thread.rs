//! The registrar's thread on Linux: started at the first call, with every
//! signal blocked; its requests; and the fork handlers (see the parent
//! module).

use std::cell::Cell;
use std::sync::mpsc;

use super::{perform, register_word, Request, WORDS};
use crate::sys::{self, Errno};

/// The thread's name, as `ps -L` and perf show it.
const NAME: &str = "usertrace-reg";

struct Job {
    request: Request,
    reply: mpsc::SyncSender<Result<u32, Errno>>,
}

/// The registrar of process `pid` (a fork child inherits its parent's, and
/// not its thread).
pub(super) struct Registrar {
    pid: u32,
    jobs: mpsc::Sender<Job>,
}

thread_local! {
    static ON_REGISTRAR: Cell<bool> = const { Cell::new(false) };
}

/// Runs `request` on the registrar and waits for its answer; on the
/// registrar itself, runs it at once.
pub(super) fn submit(request: Request) -> Result<u32, Errno> {
    if ON_REGISTRAR.with(Cell::get) {
        return perform(request);
    }
    let jobs = registrar()?;
    let (reply, answer) = mpsc::sync_channel(1);
    // It lives until the process exits: a closed channel means it died
    // (a panic, which `serve` catches), so say so rather than hang.
    jobs.send(Job { request, reply }).map_err(|_| GONE)?;
    answer.recv().map_err(|_| GONE)?
}

/// What a call answers if the registrar cannot be started or is gone:
/// `pthread_create`'s "try again".
const GONE: Errno = Errno(libc::EAGAIN);

/// This process's registrar, started if it has none.
fn registrar() -> Result<mpsc::Sender<Job>, Errno> {
    let mut state = WORDS.lock();
    let pid = sys::pid();
    if let Some(registrar) = state.registrar.as_ref().filter(|r| r.pid == pid) {
        return Ok(registrar.jobs.clone());
    }
    // A fork child's copy of its parent's: the channel may have been in use
    // by a thread the child does not have, so it is never touched, only
    // leaked.
    if let Some(parents) = state.registrar.take() {
        std::mem::forget(parents);
    }
    install_fork_handlers();
    let (jobs, receiver) = mpsc::channel();
    sys::spawn_without_signals(NAME, move || serve(receiver)).map_err(|e| Errno(e.raw_os_error().unwrap_or(GONE.0)))?;
    state.registrar = Some(Registrar { pid, jobs: jobs.clone() });
    Ok(jobs)
}

/// The registrar's life: every request, one after another, until the
/// process exits (the state keeps a sender, so the channel never closes).
fn serve(receiver: mpsc::Receiver<Job>) {
    ON_REGISTRAR.with(|on| on.set(true));
    for Job { request, reply } in receiver {
        // A panic must not end this thread: its enablers would go with it.
        let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| perform(request)));
        let _ = reply.send(answer.unwrap_or(Err(Errno(libc::EIO))));
    }
}

fn install_fork_handlers() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        // SAFETY: the child handler makes only ioctls and atomic stores,
        // all async-signal-safe, on a list the prepare handler locked.
        // Without the handlers (ENOMEM) a fork child's tracepoints stay off.
        let _ = unsafe { sys::at_fork(before_fork, in_parent, in_child) };
    });
}

/// Locks the list, so no thread changes it while the child is copied.
unsafe extern "C" fn before_fork() {
    WORDS.acquire();
}

unsafe extern "C" fn in_parent() {
    WORDS.release();
}

/// Registers every word again, on the child's only thread: see the
/// parent module. A failure cannot be reported here; that word stays off
/// in the child, and its unregistration will find no enabler (ENOENT).
/// EADDRINUSE is a word the kernel copied itself (a child of a child,
/// whose threads all share one `user_event_mm`).
unsafe extern "C" fn in_child() {
    // SAFETY: `before_fork` took the lock on this thread, the only one of
    // the child: nothing else can reach the list until it is released.
    let state = unsafe { &*WORDS.state.get() };
    for word in &state.words {
        let _ = register_word(word.fd, word.address, &word.name_args, word.flags);
    }
    WORDS.release();
}

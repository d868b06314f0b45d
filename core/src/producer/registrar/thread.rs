//! The registrar's thread on Linux: started at the first call, with every
//! signal blocked; its requests; and the fork handlers (see the parent
//! module).

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::{mpsc, Arc, Condvar, Mutex, PoisonError};

use super::{perform, register_word, Request, WORDS};
use crate::sys::{self, Errno};

/// The thread's name, as `ps -L` and perf show it.
const NAME: &str = "usertrace-reg";

struct Job {
    request: Request,
    reply: mpsc::SyncSender<Result<u32, Errno>>,
}

/// The requests waiting for the registrar.
///
/// A mutex and a condition variable, not a channel: the registrar must
/// never make a thread-local with a destructor once it serves requests.
/// glibc registers such a destructor under the dynamic loader's lock
/// (`__cxa_thread_atexit_impl` takes `dl_load_lock`), and a C plugin's
/// destructor unregisters its tracepoints inside `dlclose`, which holds
/// that lock while it waits for our answer. A channel's first blocking
/// receive makes one (std's `mpmc` context): with a channel here, 9 of 40
/// runs of `dlclose_keeps_library` hung in the guest. Mutex and Condvar
/// are futexes, with nothing thread-local.
#[derive(Default)]
struct Jobs {
    waiting: Mutex<VecDeque<Job>>,
    added: Condvar,
}

impl Jobs {
    fn push(&self, job: Job) {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner).push_back(job);
        self.added.notify_one();
    }

    fn next(&self) -> Job {
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(job) = waiting.pop_front() {
                return job;
            }
            waiting = self.added.wait(waiting).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// The registrar of process `pid` (a fork child inherits its parent's, and
/// not its thread).
pub(super) struct Registrar {
    pid: u32,
    jobs: Arc<Jobs>,
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
    jobs.push(Job { request, reply });
    // It lives until the process exits and answers every request (`serve`
    // catches a panic): a closed reply would mean it dropped the request.
    answer.recv().map_err(|_| GONE)?
}

/// What a call answers if the registrar cannot be started or is gone:
/// `pthread_create`'s "try again".
const GONE: Errno = Errno(libc::EAGAIN);

/// This process's registrar, started if it has none.
fn registrar() -> Result<Arc<Jobs>, Errno> {
    let mut state = WORDS.lock();
    let pid = sys::pid();
    if let Some(registrar) = state.registrar.as_ref().filter(|r| r.pid == pid) {
        return Ok(registrar.jobs.clone());
    }
    // A fork child's copy of its parent's: the queue's lock may have been
    // held by a thread the child does not have, so it is never touched,
    // only leaked.
    if let Some(parents) = state.registrar.take() {
        std::mem::forget(parents);
    }
    install_fork_handlers();
    let jobs = Arc::new(Jobs::default());
    let served = jobs.clone();
    sys::spawn_without_signals(NAME, move || serve(&served)).map_err(|e| Errno(e.raw_os_error().unwrap_or(GONE.0)))?;
    state.registrar = Some(Registrar { pid, jobs: jobs.clone() });
    Ok(jobs)
}

/// The registrar's life: every request, one after another, until the
/// process exits (the state keeps the queue).
fn serve(jobs: &Jobs) {
    ON_REGISTRAR.with(|on| on.set(true));
    loop {
        let Job { request, reply } = jobs.next();
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

//! The "raw JNI writev" baseline of the emit benchmark
//! (`dev.usertrace.bench.RawWritev`): registers an event by hand on its own
//! `user_events_data` descriptor, then each call is one `writev` of bytes
//! Java laid out in the kernel's format beforehand. It is what an emit costs
//! with no encoding, validation or bookkeeping.
//!
//! # Safety
//! Handles are `Box::into_raw` of [`Raw`], freed once by `close0`, which the
//! benchmark calls after its last `writev0`. The enable word is unregistered
//! before the box is freed.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::fmt;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::AtomicU32;

use jni::errors::ThrowRuntimeExAndDefault;
use jni::objects::{JClass, JString};
use jni::sys::{jint, jlong};
use jni::EnvUnowned;
use usertrace::__private::abi::{UserReg, UserUnreg};
use usertrace::__private::sys;

/// Why `open0` failed; thrown as a `RuntimeException` (the benchmark's
/// setup fails with it), as is a panic.
#[derive(Debug)]
struct Failure(String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failure {}

impl From<jni::errors::Error> for Failure {
    fn from(e: jni::errors::Error) -> Self {
        Failure(format!("JNI call failed: {e}"))
    }
}

type Result<T> = std::result::Result<T, Failure>;

#[repr(C, align(8))]
struct Raw {
    word: AtomicU32,
    index: u32,
    fd: OwnedFd,
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_bench_RawWritev_open0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    tracefs: JString<'caller>,
    name_args: JString<'caller>,
) -> jlong {
    env.with_env(|env| -> Result<jlong> {
        let path = CString::new(format!("{}/user_events_data", tracefs.try_to_string(env)?))
            .map_err(|e| Failure(e.to_string()))?;
        let args = CString::new(name_args.try_to_string(env)?).map_err(|e| Failure(e.to_string()))?;
        let fd = sys::open_read_write(&path).map_err(|e| Failure(format!("open {path:?}: {e}")))?;
        let raw = Box::new(Raw { word: AtomicU32::new(0), index: 0, fd });
        let raw = Box::into_raw(raw);
        // SAFETY: `raw` is a fresh, live box; the word stays at its address
        // until close0 unregisters it, then frees it.
        let r = unsafe { &mut *raw };
        let mut reg = UserReg {
            size: std::mem::size_of::<UserReg>() as u32,
            enable_bit: 0,
            enable_size: 4,
            flags: 0,
            enable_addr: r.word.as_ptr() as u64,
            name_args: args.as_ptr() as u64,
            write_index: 0,
        };
        if let Err(e) = sys::register(r.fd.as_raw_fd(), &mut reg) {
            // SAFETY: registration failed, so the kernel never saw the word.
            drop(unsafe { Box::from_raw(raw) });
            return Err(Failure(format!("register {args:?}: {e}")));
        }
        r.index = reg.write_index;
        Ok(raw as usize as jlong)
    })
    .resolve::<ThrowRuntimeExAndDefault>()
}

/// One `writev` of the write index and `length` bytes at `address`.
/// Returns 0 or the errno.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_bench_RawWritev_writev0<'caller>(
    _env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    address: jlong,
    length: jint,
) -> jint {
    // Nothing here can panic: no boundary needed, as a raw baseline should be.
    // SAFETY: see the module docs; Java passes its direct buffer's address
    // and a length within its capacity.
    let raw = unsafe { &*(handle as usize as *const Raw) };
    let iov = [
        libc::iovec { iov_base: &raw.index as *const u32 as *mut libc::c_void, iov_len: 4 },
        libc::iovec { iov_base: address as usize as *mut libc::c_void, iov_len: length as usize },
    ];
    match sys::writev(raw.fd.as_raw_fd(), &iov) {
        Ok(_) => 0,
        Err(e) => e.0,
    }
}

/// [`writev0`](Java_dev_usertrace_bench_RawWritev_writev0) with the
/// payload cut into pieces, one `iovec` each, where the core would cut it
/// (a field, a `__rel_loc` word, a string's bytes, its NUL): what the kernel
/// charges for the core's iovecs, apart from everything before the syscall.
/// `cuts` holds up to four offsets, 16 bits each from the low end, each
/// above the one before and below `length`; the first 0 ends them.
/// Returns 0 or the errno.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_bench_RawWritev_writevCut0<'caller>(
    _env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    address: jlong,
    length: jint,
    cuts: jlong,
) -> jint {
    // Nothing here can panic (each index below is at most 5, as n counts
    // the index, up to four cuts and the last piece): no boundary needed, as
    // in writev0.
    // SAFETY: as writev0's.
    let raw = unsafe { &*(handle as usize as *const Raw) };
    let base = address as usize as *mut u8;
    let length = length as usize;
    let empty = libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 };
    let mut iov = [empty; 6];
    iov[0] = libc::iovec { iov_base: &raw.index as *const u32 as *mut libc::c_void, iov_len: 4 };
    let (mut n, mut start) = (1, 0usize);
    for k in 0..4 {
        let cut = ((cuts as u64 >> (16 * k)) & 0xffff) as usize;
        if cut == 0 || cut <= start || cut >= length {
            break;
        }
        // SAFETY: start < cut < length: within the buffer Java passed.
        iov[n] = libc::iovec { iov_base: unsafe { base.add(start) } as *mut libc::c_void, iov_len: cut - start };
        n += 1;
        start = cut;
    }
    // SAFETY: start < length (or 0), within the buffer.
    iov[n] = libc::iovec { iov_base: unsafe { base.add(start) } as *mut libc::c_void, iov_len: length - start };
    n += 1;
    match sys::writev(raw.fd.as_raw_fd(), iov.get(..n).unwrap_or(&iov)) {
        Ok(_) => 0,
        Err(e) => e.0,
    }
}

/// A JNI call with `writev0`'s arguments that does nothing: the floor of
/// any emit from Java, for `EmitPathBench` on a host without user_events.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_bench_RawWritev_nothing0<'caller>(
    _env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    address: jlong,
    length: jint,
) -> jint {
    // Uses its arguments, as writev0 does, so the call is not a constant.
    (handle ^ address) as jint ^ length
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_usertrace_bench_RawWritev_close0<'caller>(
    mut env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<()> {
        // SAFETY: see the module docs.
        let raw = unsafe { Box::from_raw(handle as usize as *mut Raw) };
        let unreg = UserUnreg {
            size: std::mem::size_of::<UserUnreg>() as u32,
            disable_addr: raw.word.as_ptr() as u64,
            ..Default::default()
        };
        if sys::unregister(raw.fd.as_raw_fd(), &unreg).is_err() {
            // The kernel may still write the word: never free it.
            std::mem::forget(raw);
        }
        Ok(())
    })
    .resolve::<ThrowRuntimeExAndDefault>()
}

//! The panic boundary of every export, and how errors become exceptions.
//!
//! `jni`'s `with_env` runs the body under `catch_unwind`; [`Throw`] then
//! turns what came out into a Java exception:
//! - a `usertrace::Error` into `dev.usertrace.UsertraceException` with the
//!   error's stable code (the table every binding shares), except a value
//!   that does not suit its field (kind `VALUE_MISMATCH`);
//! - that, and any other bad argument, into `IllegalArgumentException`;
//! - a panic into `java.lang.Error`, since it is a bug in this library.
//!
//! The emit path (`emit0`, `beginSpan0`, `endSpan0`) goes through [`hot`]
//! instead, which catches panics itself and enters `with_env` only to throw.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use jni::errors::ErrorPolicy;
use jni::objects::{JObject, JThrowable, JValue};
use jni::{jni_sig, jni_str, Env, EnvUnowned};

/// Everything an export can fail with.
#[derive(Debug)]
pub(crate) enum Failure {
    Usertrace(usertrace::Error),
    IllegalArgument(String),
    /// A JNI call failed; usually an exception is pending already.
    Jni(jni::errors::Error),
}

impl From<jni::errors::Error> for Failure {
    fn from(e: jni::errors::Error) -> Self {
        Failure::Jni(e)
    }
}

impl From<usertrace::Error> for Failure {
    fn from(e: usertrace::Error) -> Self {
        Failure::Usertrace(e)
    }
}

pub(crate) type Result<T> = std::result::Result<T, Failure>;

/// Runs the body of a hot export (one that needs no `Env`) under its own
/// `catch_unwind`, and enters jni's `with_env` only when it failed or
/// panicked, to throw as every export does ([`Throw`]).
///
/// Why not `with_env` always: it builds an `AttachGuard` twice per call (in
/// `with_env` and in `resolve`), each a JavaVM lookup and thread-local guard
/// levels pushed and popped (through `__tls_get_addr` in a cdylib). Measured
/// natively (perf, an enabled emit of 3 fields up to the kernel), that was
/// about two thirds of all the time before the `writev`. `catch_unwind`
/// itself costs nothing until something panics.
#[inline]
pub(crate) fn hot<'caller, T: Default>(env: &mut EnvUnowned<'caller>, body: impl FnOnce() -> Result<T>) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => value,
        failed => env
            .with_env(move |_env| -> Result<T> {
                match failed {
                    Ok(result) => result,
                    // Caught again by with_env, which throws java.lang.Error
                    // (Throw::on_panic): no panic leaves this function.
                    Err(payload) => resume_unwind(payload),
                }
            })
            .resolve::<Throw>(),
    }
}

/// The error policy of every export: throw, and return the default value.
pub(crate) struct Throw;

impl<T: Default> ErrorPolicy<T, Failure> for Throw {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'local: 'native_method, 'native_method>(
        env: &mut Env<'local>,
        _cap: &mut (),
        err: Failure,
    ) -> jni::errors::Result<T> {
        if env.exception_check() {
            return Ok(T::default());
        }
        match err {
            // A value that does not suit its field is a bad argument, as
            // the values EventWriter refuses itself (an int out of range).
            Failure::Usertrace(e) if e.kind() == usertrace::ErrorKind::ValueMismatch => {
                throw_new(env, "java/lang/IllegalArgumentException", &e.to_string())
            }
            Failure::Usertrace(e) => throw_usertrace(env, e.kind().code(), &e.to_string()),
            Failure::IllegalArgument(msg) => throw_new(env, "java/lang/IllegalArgumentException", &msg),
            Failure::Jni(e) => throw_new(env, "java/lang/IllegalStateException", &format!("usertrace: JNI call failed: {e}")),
        }
        Ok(T::default())
    }

    fn on_panic<'local: 'native_method, 'native_method>(
        env: &mut Env<'local>,
        _cap: &mut (),
        payload: Box<dyn std::any::Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        // A payload's Drop could itself panic: leak it instead.
        std::mem::forget(payload);
        if !env.exception_check() {
            throw_new(env, "java/lang/Error", &format!("usertrace: bug in the native library: {msg}"));
        }
        Ok(T::default())
    }
}

fn throw_new(env: &mut Env<'_>, class: &str, msg: &str) {
    let class = jni::strings::JNIString::new(class);
    let msg = jni::strings::JNIString::new(msg);
    let _ = env.throw_new(class, msg);
}

/// Throws `new UsertraceException(code, message)`.
fn throw_usertrace(env: &mut Env<'_>, code: i32, msg: &str) {
    let thrown = (|| -> jni::errors::Result<()> {
        let jmsg = env.new_string(msg)?;
        let obj = env.new_object(
            jni_str!("dev/usertrace/UsertraceException"),
            jni_sig!("(ILjava/lang/String;)V"),
            &[JValue::Int(code), JValue::Object(&JObject::from(jmsg))],
        )?;
        let throwable = env.cast_local::<JThrowable>(obj)?;
        env.throw(throwable)
    })();
    if !env.exception_check() {
        // Constructing the exception failed without throwing: say so plainly.
        let _ = thrown;
        throw_new(env, "java/lang/IllegalStateException", msg);
    }
}

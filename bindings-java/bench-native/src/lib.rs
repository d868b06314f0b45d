//! The JNI library of the Java benchmarks, and of nothing else: native
//! methods that only a baseline needs, loaded by the bench jar itself
//! (`dev.usertrace.bench.BenchNative`).
//!
//! A crate of its own so that the library users load (`libusertrace_jni.so`,
//! built from bindings-java/src/) exports none of it: these entry points take
//! raw addresses from Java and check nothing, as a baseline must not.

// Unsafe is opt-in per module.
#![deny(unsafe_code)]

mod raw_writev;

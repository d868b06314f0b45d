//! Marks the JNI library never to be unloaded (`-z nodelete`). A JVM
//! unloads a JNI library when its class loader is collected; over
//! user_events the core's registrar thread lives until the process exits,
//! in this library's code.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    println!("cargo:rerun-if-changed=build.rs");
}

//! Gives the shared library its SONAME, so programs linked against it load
//! `libusertrace.so.0` (the ABI version), not the unversioned dev symlink;
//! and marks it never to be unloaded (`-z nodelete`): over user_events its
//! registrar thread lives until the process exits, in the library's code,
//! after a `dlclose` of its last user too.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libusertrace.so.0");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    println!("cargo:rerun-if-changed=build.rs");
}

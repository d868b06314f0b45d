//! Gives the shared library its SONAME, so programs linked against it load
//! `libusertrace.so.0` (the ABI version), not the unversioned dev symlink.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libusertrace.so.0");
    println!("cargo:rerun-if-changed=build.rs");
}

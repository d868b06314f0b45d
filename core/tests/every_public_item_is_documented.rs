//! Every public item of the two library crates has docs, and rustdoc has
//! nothing else to complain about (a broken link, say): `#![warn(missing_docs)]`
//! alone lets coverage slip back one warning at a time (it was about 50%
//! before issue 10).
//!
//! Runs rustdoc with its warnings denied, in its own target directory so it
//! neither waits for nor invalidates the build running this test.

use std::path::Path;
use std::process::Command;

const PACKAGES: [&str; 2] = ["usertrace", "usertrace-consumer"];

#[test]
fn rustdoc_finds_no_undocumented_public_item_and_nothing_else_to_warn_about() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("doc-check");
    let mut command = Command::new(cargo);
    command.args(["doc", "--offline", "--no-deps", "--target-dir"]).arg(&target_dir);
    for package in PACKAGES {
        command.args(["--package", package]);
    }
    let out = command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        // Not `-D missing_docs`: the crates' own `#![warn(missing_docs)]`
        // would win over it. `-W` keeps the lint on should that attribute
        // go, and `-D warnings` turns whatever warns into an error. The
        // encoded form of the flags would take precedence over ours.
        .env_remove("CARGO_ENCODED_RUSTDOCFLAGS")
        .env("RUSTDOCFLAGS", "-W missing_docs -D warnings")
        .output()
        .expect("run cargo doc");
    assert!(
        out.status.success(),
        "cargo doc with warnings denied failed; document these items (one line on what it is \
         and why is enough), or fix what rustdoc says:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

//! A program that only emits (a Rust app, the C library, the Python and
//! Java bindings) must not link the perf ring reader or its mmap helper:
//! those belong to the `usertrace-consumer` crate.

use std::process::Command;

const CONSUMER_ONLY: [&str; 2] = ["perf-event-open-sys", "memmap2"];
const PRODUCER_ONLY_PACKAGES: [&str; 4] = ["usertrace", "usertrace-c", "usertrace-python", "usertrace-java"];

fn normal_dependencies(package: &str) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "--offline", "--edges", "normal", "--prefix", "none", "--package", package])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo tree");
    assert!(out.status.success(), "cargo tree -p {package}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn producer_only_packages_depend_on_no_consumer_crate() {
    for package in PRODUCER_ONLY_PACKAGES {
        let tree = normal_dependencies(package);
        assert!(tree.lines().next().is_some_and(|l| l.starts_with(package)), "{package}: {tree}");
        for crate_name in CONSUMER_ONLY {
            assert!(!tree.lines().any(|l| l.starts_with(&format!("{crate_name} "))), "{package} links {crate_name}:\n{tree}");
        }
    }
}

#[test]
fn the_consumer_crate_is_where_they_are() {
    // The control: the same check finds them where they belong.
    let tree = normal_dependencies("usertrace-consumer");
    for crate_name in CONSUMER_ONLY {
        assert!(tree.lines().any(|l| l.starts_with(&format!("{crate_name} "))), "{tree}");
    }
}

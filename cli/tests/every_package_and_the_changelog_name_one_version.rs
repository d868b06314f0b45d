//! One version for every package: the Rust crates' (the workspace's), the
//! Maven artifacts' and the newest release the CHANGELOG names. The C
//! library and the Python package take theirs from the crates at build
//! time. Runs on any host.

use std::fs;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

/// The text of the first `<tag>` element at two spaces' indent: a pom's
/// own version or its parent's, as these poms are laid out.
fn first_element(text: &str, indent: &str, tag: &str) -> Option<String> {
    let open = format!("{indent}<{tag}>");
    text.lines().find_map(|l| l.strip_prefix(&open)?.strip_suffix(&format!("</{tag}>")).map(str::to_owned))
}

#[test]
fn every_package_and_the_changelog_name_one_version() {
    let version = env!("CARGO_PKG_VERSION");
    let changelog = fs::read_to_string(repo().join("CHANGELOG.md")).unwrap();
    let newest = changelog
        .lines()
        .filter_map(|l| l.strip_prefix("## ["))
        .filter_map(|l| l.split_once(']').map(|(v, _)| v))
        .find(|v| *v != "Unreleased");
    assert_eq!(newest, Some(version), "the CHANGELOG's newest release");

    let parent = fs::read_to_string(repo().join("bindings-java/pom.xml")).unwrap();
    assert_eq!(first_element(&parent, "  ", "version").as_deref(), Some(version), "bindings-java/pom.xml");
    for module in ["usertrace", "agent", "logback", "log4j2", "opentelemetry", "bench", "testing"] {
        let path = repo().join(format!("bindings-java/java/{module}/pom.xml"));
        let pom = fs::read_to_string(&path).unwrap();
        assert_eq!(first_element(&pom, "    ", "version").as_deref(), Some(version), "the parent version in {}", path.display());
    }
}

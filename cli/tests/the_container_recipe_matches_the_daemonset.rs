//! deploy/Containerfile builds the image deploy/usertrace-daemonset.yaml
//! runs: the same image name, the command where the DaemonSet calls it,
//! and a builder on the minimum Rust the workspace states. No container
//! engine runs here: this checks that the files agree. Runs on any host.

use std::fs;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

#[test]
fn the_container_recipe_matches_the_daemonset() {
    let recipe = fs::read_to_string(repo().join("deploy/Containerfile")).unwrap();
    let daemonset = fs::read_to_string(repo().join("deploy/usertrace-daemonset.yaml")).unwrap();
    let workspace = fs::read_to_string(repo().join("Cargo.toml")).unwrap();

    let image = daemonset.lines().find_map(|l| l.trim().strip_prefix("image: ")).unwrap();
    assert_eq!(image, "REGISTRY/usertrace:VERSION");
    assert!(recipe.contains(&format!("-t {image} .")), "the recipe's build line names the DaemonSet's image");
    let called = daemonset.lines().find_map(|l| l.trim().strip_prefix("- exec ")).unwrap();
    let binary = called.split_whitespace().next().unwrap();
    assert!(recipe.contains(&format!("COPY --from=build /src/target/release/usertrace {binary}\n")), "{binary}");
    assert!(recipe.contains(&format!("ENTRYPOINT [\"{binary}\"]")));

    let msrv = workspace.lines().find_map(|l| l.strip_prefix("rust-version = \"")).unwrap().trim_end_matches('"');
    assert!(recipe.contains(&format!("FROM docker.io/library/rust:{msrv}-bookworm AS build")), "builder on Rust {msrv}");
    assert!(recipe.contains("cargo build --release --locked -p usertrace-cli --bin usertrace"));
}

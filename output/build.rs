//! Generates the Rust types of Perfetto's trace protos (vendored under
//! `proto/`, see its README) with prost. protox compiles the .proto files
//! in pure Rust, so building needs no `protoc`.

use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new("proto");
    println!("cargo:rerun-if-changed=proto/protos");
    let descriptors = protox::compile(["protos/perfetto/trace/trace.proto"], [root])?;
    prost_build::Config::new().compile_fds(descriptors)?;
    Ok(())
}

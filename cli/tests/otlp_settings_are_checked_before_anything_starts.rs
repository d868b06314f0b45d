//! A bad OTLP endpoint, compression, header or resource attribute stops
//! `usertrace export` and `usertrace record --otlp` with exit status 2 and
//! a message naming it, before a file is read or a session is opened (so
//! this holds on a host without user_events too: otherwise `record` would
//! fail later, with 1).

use std::process::{Command, Output};

fn usertrace(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_usertrace"));
    cmd.args(args);
    for var in ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_RESOURCE_ATTRIBUTES"] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    cmd.output().unwrap()
}

fn refused(out: &Output, says: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(says), "{stderr:?} does not say {says:?}");
}

#[test]
fn export_refuses_bad_settings_before_reading_the_file() {
    let missing = "/nonexistent/recording.jsonl";
    refused(&usertrace(&["export", missing, "--otlp", "localhost:4318"], &[]), "it has no scheme");
    refused(&usertrace(&["export", missing, "--otlp", "ftp://h/"], &[]), "the scheme is ftp");
    refused(&usertrace(&["export", missing, "--otlp", "http://h:4318", "--compression", "zstd"], &[]), "unknown OTLP compression \"zstd\"");
    refused(&usertrace(&["export", missing], &[]), "no OTLP endpoint");
    refused(&usertrace(&["export", missing], &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h"), ("OTEL_EXPORTER_OTLP_HEADERS", "nokey")]), "OTEL_EXPORTER_OTLP_HEADERS has a bad entry \"nokey\"");
    refused(&usertrace(&["export", missing, "--otlp", "http://h"], &[("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")]), "OTEL_EXPORTER_OTLP_TIMEOUT=\"soon\"");
    refused(&usertrace(&["export", missing, "--otlp", "http://h"], &[("OTEL_RESOURCE_ATTRIBUTES", "team")]), "OTEL_RESOURCE_ATTRIBUTES has a bad entry \"team\"");
    refused(&usertrace(&["export", missing, "--config", "/nonexistent/usertrace.toml"], &[]), "cannot use the config file /nonexistent/usertrace.toml");
    let bad = std::env::temp_dir().join(format!("usertrace-bad-config-{}.toml", std::process::id()));
    std::fs::write(&bad, "[otlp]\nendpoint = \"http://h\"\ncompresion = \"gzip\"\n").unwrap();
    refused(&usertrace(&["export", missing, "--config", bad.to_str().unwrap()], &[]), "compresion");
    std::fs::write(&bad, "[otlp]\nendpoint = \"http://h\"\ncompression = \"lz4\"\n").unwrap();
    refused(&usertrace(&["export", missing, "--config", bad.to_str().unwrap()], &[]), "unknown OTLP compression \"lz4\"");
    let _ = std::fs::remove_file(&bad);
    // With good settings the file is what fails, with 1.
    let out = usertrace(&["export", missing, "--otlp", "http://127.0.0.1:9"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn record_refuses_a_bad_endpoint_before_recording() {
    refused(&usertrace(&["record", "-e", "x", "--otlp", "not a url", "--", "true"], &[]), "is not usable");
    refused(&usertrace(&["record", "-e", "x", "--otlp", "http://h", "--compression", "brotli"], &[]), "use gzip or none");
}

//! `usertrace export --timeout` takes 1 to 86400 seconds: 0 would drop
//! everything unsent, and a value beyond a day is a typo (2^64 - 1 once
//! overflowed the exporter's clock and panicked). Either is a usage error,
//! exit status 2, before the file is read.

use std::process::{Command, Output};

fn export_with_timeout(timeout: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_usertrace"))
        .args(["export", "/nonexistent/recording.jsonl", "--otlp", "http://127.0.0.1:9", "--timeout", timeout])
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .output()
        .unwrap()
}

#[test]
fn a_timeout_of_zero_or_beyond_a_day_is_a_usage_error() {
    for timeout in ["0", "86401", "18446744073709551615", "99999999999999999999999"] {
        let out = export_with_timeout(timeout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--timeout {timeout}: {stderr}");
        assert!(stderr.contains("--timeout"), "--timeout {timeout}: {stderr}");
        assert!(!stderr.contains("panicked"), "--timeout {timeout}: {stderr}");
    }
}

#[test]
fn a_timeout_within_range_is_taken() {
    let out = export_with_timeout("86400");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Accepted: the failure is the missing file's (exit 1), not the flag's.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("/nonexistent/recording.jsonl"), "{stderr}");
}

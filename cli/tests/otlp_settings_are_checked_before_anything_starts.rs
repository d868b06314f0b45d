//! A bad OTLP endpoint, compression, header or resource attribute stops
//! `usertrace export` and `usertrace record --otlp` with exit status 2 and
//! a message naming it, before a file is read or a session is opened (so
//! this holds on a host without user_events too: otherwise `record` would
//! fail later, with 1).

use std::process::Output;

mod support;
use support::usertrace_without_otel_env as usertrace;

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
    refused(&usertrace(&["export", missing], &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h"), ("OTEL_EXPORTER_OTLP_HEADERS", "nokey")]), "OTEL_EXPORTER_OTLP_HEADERS entry 1 is not usable: it has no '='");
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
fn timeouts_batch_sizes_and_caps_out_of_range_are_refused() {
    let missing = "/nonexistent/recording.jsonl";
    for timeout in ["0", "600001", "18446744073709551616"] {
        let says = format!("OTEL_EXPORTER_OTLP_TIMEOUT=\"{timeout}\" is not a number of milliseconds from 1 to 600000 (10 minutes)");
        refused(&usertrace(&["export", missing, "--otlp", "http://h"], &[("OTEL_EXPORTER_OTLP_TIMEOUT", timeout)]), &says);
    }
    let config = std::env::temp_dir().join(format!("usertrace-range-config-{}.toml", std::process::id()));
    for (table, says) in [
        ("[otlp]\ntimeout_ms = 0\n", "OTEL_EXPORTER_OTLP_TIMEOUT=\"0\" is not a number of milliseconds"),
        ("[otlp]\ntimeout_ms = 3600000\n", "OTEL_EXPORTER_OTLP_TIMEOUT=\"3600000\" is not a number of milliseconds"),
        ("[otlp.queue]\nmax_batch_age_ms = 0\n", "otlp.queue.max_batch_age_ms = 0 in the config file is out of range: it must be from 1 to 600000"),
        ("[otlp.queue]\nmax_batch_age_ms = 86400000\n", "otlp.queue.max_batch_age_ms = 86400000 in the config file is out of range"),
        ("[otlp.queue]\nmax_batch_records = 0\n", "otlp.queue.max_batch_records = 0 in the config file is out of range: it must be at least 1"),
        ("[otlp.queue]\nmemory_cap_mib = 0\n", "otlp.queue.memory_cap_mib = 0 in the config file is out of range: it must be at least 1"),
    ] {
        std::fs::write(&config, format!("[otlp]\nendpoint = \"http://h\"\n{}", table.replacen("[otlp]\n", "", 1))).unwrap();
        refused(&usertrace(&["export", missing, "--config", config.to_str().unwrap()], &[]), says);
    }
    let _ = std::fs::remove_file(&config);
}

#[test]
fn a_certificate_file_that_cannot_be_used_is_refused_naming_it() {
    let missing = "/nonexistent/recording.jsonl";
    refused(&usertrace(&["export", missing, "--otlp", "https://h", "--otlp-certificate", "/nonexistent/ca.pem"], &[]), "--otlp-certificate names \"/nonexistent/ca.pem\", which is not usable: cannot read it");
    refused(&usertrace(&["export", missing, "--otlp", "https://h"], &[("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/nonexistent/client.key")]), "OTEL_EXPORTER_OTLP_CLIENT_KEY is given without its pair");
    let not_pem = std::env::temp_dir().join(format!("usertrace-not-pem-{}.pem", std::process::id()));
    std::fs::write(&not_pem, "hello\n").unwrap();
    refused(
        &usertrace(&["record", "-e", "x", "--otlp", "https://h", "--otlp-certificate", not_pem.to_str().unwrap(), "--", "true"], &[]),
        "which is not usable: it holds no PEM certificate",
    );
    let _ = std::fs::remove_file(&not_pem);
}

#[test]
fn record_refuses_a_bad_endpoint_before_recording() {
    refused(&usertrace(&["record", "-e", "x", "--otlp", "not a url", "--", "true"], &[]), "is not usable");
    refused(&usertrace(&["record", "-e", "x", "--otlp", "http://h", "--compression", "brotli"], &[]), "use gzip or none");
}

#[test]
fn a_bad_tail_rule_or_one_without_an_endpoint_is_refused_before_recording() {
    refused(&usertrace(&["record", "-e", "x", "--tail", "error", "--", "true"], &[]), "--tail chooses which traces --otlp sends: give --otlp URL");
    refused(&usertrace(&["record", "-e", "x", "--otlp", "http://h", "--tail", "handle>soon", "--", "true"], &[]), "give a time such as 250ms");
    refused(&usertrace(&["export", "/nonexistent/recording.jsonl", "--otlp", "http://h", "--tail", "slow"], &[]), "give NAME>DURATION");
}

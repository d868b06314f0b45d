//! `usertrace stat --otlp`: a node agent that counts as it exports says
//! what became of every event counted, in its JSON and its table: to a
//! real Jaeger, all exported; to an endpoint where nothing listens, none,
//! and every one dropped or failed. A kernel test never passes by
//! skipping: without Jaeger it fails.

use std::process::Command;

use serde_json::{json, Value};

use crate::otel_components::jaeger::Jaeger;
use crate::otel_components::{component, free_port};
use crate::support::*;

fn stat_json(name: &str, endpoint: &str) -> Value {
    let out = Command::new(usertrace())
        .args(["stat", "-e", &format!("{name}_*"), "--format", "json", "--otlp", endpoint, "--"])
        .arg(ut_emit())
        .args(["spans", name])
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_RESOURCE_ATTRIBUTES")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("usertrace stat: OTLP: "), "the stderr summary says it too: {stderr}");
    let line = stdout.lines().find(|l| l.starts_with('{')).unwrap_or_else(|| panic!("no JSON line: {stdout}"));
    serde_json::from_str(line).unwrap()
}

#[test]
fn stat_counts_what_it_exports_and_what_it_could_not() {
    let binary = component("jaeger").expect("a kernel test never skips: build jaeger with harness/build-otel-components");
    let jaeger = Jaeger::start(&binary, "stat", None);

    // ut_emit spans: eight events, four of them spans once paired.
    let name = unique("stat_otlp");
    let stat = stat_json(&name, &jaeger.endpoint());
    assert_eq!(stat["events"], 8, "{stat}");
    assert_eq!(stat["otlp"], json!({"exported": 8, "dropped": 0, "failed": 0, "spans": 4, "log_records": 0, "retries": 0}), "{stat}");
    assert_eq!(jaeger.spans_named(&name, 4).len(), 4, "Jaeger has the spans");

    // Nothing listens: retried until the exporter's time at exit runs out.
    let name = unique("stat_otlp_down");
    let stat = stat_json(&name, &format!("http://127.0.0.1:{}", free_port()));
    assert_eq!(stat["events"], 8, "{stat}");
    let otlp = &stat["otlp"];
    assert_eq!(otlp["exported"], 0, "{stat}");
    assert_eq!(otlp["dropped"].as_u64().unwrap() + otlp["failed"].as_u64().unwrap(), 8, "every event counted is accounted for: {stat}");
    assert!(otlp["retries"].as_u64().unwrap() > 0, "connection refused is retried: {stat}");
}

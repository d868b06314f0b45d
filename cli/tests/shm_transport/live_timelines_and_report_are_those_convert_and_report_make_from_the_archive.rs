//! `record` writes every output with the sinks that `convert` and
//! `report` run over a file (issue 46): the same recording gives the same
//! bytes live as from its archive, written beside it in the same run, in
//! every format: Perfetto and Chrome (laid out as events come), JSON lines
//! and text (written as they come), and `--report` (folded as they come).

use std::path::Path;
use std::process::Command;

use crate::support::*;

/// `usertrace record -e P_* -o DIR/spans.data -o DIR/OTHER [EXTRA] -- ut_emit spans P`;
/// its stdout.
fn record_spans(provider: &str, dir: &Path, other: &str, extra: &[&str]) -> String {
    let pattern = format!("{provider}_*");
    let data = dir.join("spans.data");
    let out = Command::new(usertrace())
        .args(["record", "-e", &pattern, "-o", data.to_str().unwrap(), "-o", dir.join(other).to_str().unwrap()])
        .args(extra)
        .arg("--")
        .arg(ut_emit())
        .args(["spans", provider])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn live_timelines_and_report_are_those_convert_and_report_make_from_the_archive() {
    let provider = unique("live_file");
    let dir = std::env::temp_dir().join(&provider);
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("spans.data");
    for (other, format) in [("live.pftrace", "perfetto"), ("live.json", "chrome"), ("live.jsonl", "json"), ("live.txt", "text")] {
        record_spans(&provider, &dir, other, &[]);
        let converted = dir.join(format!("converted.{}", other.rsplit('.').next().unwrap()));
        usertrace_ok(&["convert", data.to_str().unwrap(), converted.to_str().unwrap(), "--format", format]);
        let (live, from_file) = (bytes(&dir.join(other)), bytes(&converted));
        let outer = format!("{provider}_outer");
        assert!(live.windows(outer.len()).any(|w| w == outer.as_bytes()), "{other} names the span {outer}");
        assert!(live == from_file, "{other}: {} bytes live, {} from the archive", live.len(), from_file.len());
    }
    let printed = record_spans(&provider, &dir, "live.jsonl", &["--report"]);
    // After what ut_emit itself printed (its stdout is the recorder's).
    let live = &printed[printed.find("recording: ").unwrap_or_else(|| panic!("no report in {printed}"))..];
    let report = usertrace_ok(&["report", data.to_str().unwrap()]);
    assert!(report.contains(&format!("span {provider}_outer: 1 finished")), "{report}");
    assert_eq!(live, report, "--report live, and `report` of the archive");
    let _ = std::fs::remove_dir_all(&dir);
}

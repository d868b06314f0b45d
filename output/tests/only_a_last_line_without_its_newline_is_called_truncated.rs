//! A bad line in the middle of a recording is corrupt, not cut short:
//! only the last line, when it has no newline, may be truncated, and only
//! it is reported so.

use usertrace_output::jsonl::Reader;

const GOOD: &str = "{\"type\":\"exit\",\"time_ns\":1,\"pid\":5,\"tid\":5}\n";

fn error_of(input: &str) -> String {
    Reader::new(input.as_bytes()).find_map(Result::err).expect("an error").to_string()
}

#[test]
fn a_line_cut_short_in_the_middle_is_called_corrupt() {
    let text = error_of(&format!("{GOOD}{{\"type\":\"exit\",\"time_ns\":\n{GOOD}"));
    assert!(text.starts_with("line 2: "), "{text}");
    assert!(!text.contains("truncated"), "{text}");
    assert!(text.contains("the file may be corrupt"), "{text}");
}

#[test]
fn a_cut_last_line_with_its_newline_is_called_corrupt() {
    let text = error_of(&format!("{GOOD}{{\"type\":\"exit\",\"time_ns\":\n"));
    assert!(!text.contains("truncated"), "{text}");
}

#[test]
fn a_last_line_without_its_newline_may_be_truncated() {
    let text = error_of(&format!("{GOOD}{{\"type\":\"exit\",\"time_ns\":"));
    assert!(text.starts_with("line 2: "), "{text}");
    assert!(text.contains("the file may be truncated"), "{text}");
}

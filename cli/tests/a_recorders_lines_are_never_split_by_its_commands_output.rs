//! `usertrace record -- CMD` and CMD usually print to one terminal or
//! pipe. The recorder's lines (progress every second with `-v`, what it
//! attached, its summary) are each written whole, in one write, so that a
//! command printing all the while never lands in the middle of one. Runs
//! on any host: nothing needs to be recorded.

use std::process::Command;

#[test]
fn a_recorders_lines_are_never_split_by_its_commands_output() {
    let usertrace = env!("CARGO_BIN_EXE_usertrace");
    // Both to one pipe, as on a terminal; a command that prints without
    // pause for three seconds, through three of the recorder's progress lines.
    let command = "import os, time\nend = time.time() + 3\nwhile time.time() < end: os.write(1, b'command-line-0123456789\\n')";
    let script = format!("{usertrace} record -v -e 'ut_never_registered_*' -- python3 -c \"{command}\" 2>&1");
    let out = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let ours: Vec<&str> = text.lines().filter(|l| *l != "command-line-0123456789").collect();
    assert!(ours.iter().filter(|l| l.ends_with("so far")).count() >= 2, "progress lines: {ours:#?}");
    for line in &ours {
        assert!(line.starts_with("usertrace record: ") && !line.contains("command-line"), "a split line: {line:?}\n{ours:#?}");
    }
}

use std::path::PathBuf;

use super::*;

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("usertrace-progress-unit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_bar_needs_a_watcher_and_a_regular_file_with_a_size() {
    let dir = scratch();
    let (file, empty, fifo) = (dir.join("recording.jsonl"), dir.join("empty.jsonl"), dir.join("fifo"));
    std::fs::write(&file, "{}\n".repeat(100)).unwrap();
    std::fs::write(&empty, "").unwrap();
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());

    assert_eq!(shown_size(&file, true), Some(300));
    // No terminal, or -q: nothing, whatever the input.
    assert_eq!(shown_size(&file, false), None);
    // Standard input, a FIFO, a directory, an empty or missing file: no end to count towards.
    for input in [PathBuf::from("-"), fifo, dir.clone(), empty, dir.join("missing")] {
        assert_eq!(shown_size(&input, true), None, "{}", input.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_hidden_bar_passes_every_byte_through() {
    // Off a terminal (as under cargo test) the bar is hidden: reading
    // through it is reading the input.
    let progress = Progress::reading("usertrace test", Path::new("-"));
    let mut read = String::new();
    progress.counting(&b"line one\nline two\n"[..]).read_to_string(&mut read).unwrap();
    assert_eq!(read, "line one\nline two\n");
    progress.set_position(5);
    progress.set_message("writing");
    assert_eq!(progress.suspend(|| 7), 7);
    progress.finish();
}

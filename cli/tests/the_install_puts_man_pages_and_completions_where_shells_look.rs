//! `cli/install.sh PREFIX` installs the command with a manual page per
//! command and bash, zsh and fish completions where those look, all
//! generated from the command line's own declaration: the bash completion
//! completes a command and an option, and each page documents its
//! command's options. Runs on any host.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const COMMANDS: [&str; 8] = ["status", "list", "record", "stat", "convert", "export", "report", "completions"];

fn install() -> PathBuf {
    let prefix = std::env::temp_dir().join(format!("usertrace-install-{}", std::process::id()));
    let _ = fs::remove_dir_all(&prefix);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh");
    let out = Command::new("bash").arg(script).arg(&prefix).env("USERTRACE_BIN", env!("CARGO_BIN_EXE_usertrace")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    prefix
}

/// What bash completes `words` to, the last word being completed.
fn bash_completes(script: &Path, words: &[&str]) -> Vec<String> {
    let array = words.iter().map(|w| format!("'{w}'")).collect::<Vec<_>>().join(" ");
    let cword = words.len() - 1;
    let program = format!(
        "source '{}'; COMP_WORDS=({array}); COMP_CWORD={cword}; _usertrace usertrace '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        words[cword],
        words[cword - 1]
    );
    let out = Command::new("bash").args(["--norc", "-c", &program]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_owned).collect()
}

#[test]
fn the_install_puts_man_pages_and_completions_where_shells_look() {
    let prefix = install();
    let installed = prefix.join("bin/usertrace");
    let version = Command::new(&installed).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8(version.stdout).unwrap(), format!("usertrace {}\n", env!("CARGO_PKG_VERSION")));

    let man1 = prefix.join("share/man/man1");
    let top = fs::read_to_string(man1.join("usertrace.1")).unwrap();
    assert!(top.contains(".TH usertrace 1"), "{top}");
    for command in COMMANDS {
        let page = fs::read_to_string(man1.join(format!("usertrace-{command}.1"))).unwrap();
        assert!(page.contains(&format!(".TH usertrace-{command} 1")), "{command}: {page}");
        assert!(page.contains(&format!("usertrace {command}")), "{command}: the synopsis names the whole command: {page}");
        assert!(page.contains(env!("CARGO_PKG_VERSION")), "{command}: dated by the version: {page}");
        // The top page lists every command.
        assert!(top.contains(command), "usertrace.1 lacks {command}");
    }
    let record = fs::read_to_string(man1.join("usertrace-record.1")).unwrap();
    for option in [r"\-\-buffer\-size", r"\-\-all\-cpus", r"\-\-quiet", r"\-\-verbose", r"\-\-output"] {
        assert!(record.contains(option), "usertrace-record.1 lacks {option}");
    }
    // Hidden from the help, and from the pages.
    assert!(!man1.join("usertrace-man-pages.1").exists());

    let bash = prefix.join("share/bash-completion/completions/usertrace");
    assert_eq!(bash_completes(&bash, &["usertrace", "rec"]), ["record"]);
    assert_eq!(bash_completes(&bash, &["usertrace", "record", "--buf"]), ["--buffer-size"]);
    assert_eq!(bash_completes(&bash, &["usertrace", "completions", "fi"]), ["fish"]);
    let zsh = fs::read_to_string(prefix.join("share/zsh/site-functions/_usertrace")).unwrap();
    assert!(zsh.starts_with("#compdef usertrace"), "{zsh}");
    assert!(zsh.contains("--buffer-size"), "{zsh}");
    let fish = fs::read_to_string(prefix.join("share/fish/vendor_completions.d/usertrace.fish")).unwrap();
    assert!(fish.contains("-l buffer-size"), "{fish}");
    fs::remove_dir_all(&prefix).unwrap();
}

#[test]
fn completions_refuses_an_unknown_shell() {
    let out = Command::new(env!("CARGO_BIN_EXE_usertrace")).args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("tcsh") && stderr.contains("bash"), "{stderr}");
}

#[test]
fn man_pages_names_a_missing_directory() {
    let missing = std::env::temp_dir().join(format!("usertrace-no-such-dir-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_usertrace")).arg("man-pages").arg(&missing).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr, format!("usertrace man-pages: {} is not a directory: create it first\n", missing.display()));
}

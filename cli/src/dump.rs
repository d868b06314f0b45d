//! `usertrace dump`: ask a running flight recorder (`record
//! --flight-recorder`) for a dump, and print the file it wrote.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::control_socket::{directory, recorders};
use crate::stdout::out;

/// Ask a running flight recorder for a dump, and print its file's name
///
/// Reaches `usertrace record --flight-recorder` of this user (root: of
/// any user) through its socket, as SIGUSR2 would, and waits until the
/// dump is written (the recorder's --after, then the writing).
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// The recorder's pid, when more than one runs
    #[arg(short = 'p', long = "pid", value_name = "PID")]
    pub pid: Option<u32>,

    /// Give up waiting for the dump after this long
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = crate::flight::parse_duration)]
    pub timeout: Duration,
}

pub fn run(args: &DumpArgs) -> ExitCode {
    let found = recorders();
    let socket = match (args.pid, found.as_slice()) {
        (Some(pid), _) => match found.iter().find(|(p, _)| *p == pid) {
            Some((_, path)) => path.clone(),
            None => {
                eprintln!("usertrace dump: no flight recorder of yours runs as pid {pid} (looked in {})", directory().display());
                return ExitCode::from(1);
            }
        },
        (None, [(_, path)]) => path.clone(),
        (None, []) => {
            eprintln!(
                "usertrace dump: no flight recorder of yours is running (looked in {}); start one with \
                 `usertrace record --flight-recorder -e PATTERN -o PATH.data`",
                directory().display()
            );
            return ExitCode::from(1);
        }
        (None, many) => {
            let pids: Vec<String> = many.iter().map(|(pid, _)| pid.to_string()).collect();
            eprintln!("usertrace dump: {} flight recorders are running (pids {}): choose one with -p PID", many.len(), pids.join(", "));
            return ExitCode::from(2);
        }
    };
    let answer = UnixStream::connect(&socket).and_then(|mut stream| {
        stream.set_read_timeout(Some(args.timeout))?;
        stream.write_all(b"dump\n")?;
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line)?;
        Ok(line)
    });
    match answer {
        Ok(line) if line.trim().is_empty() => {
            eprintln!("usertrace dump: the recorder ended before its dump was written");
            ExitCode::from(1)
        }
        Ok(line) => match line.trim().strip_prefix("error: ") {
            Some(why) => {
                eprintln!("usertrace dump: {why}");
                ExitCode::from(1)
            }
            None => {
                out!("{}\n", line.trim());
                ExitCode::SUCCESS
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock || e.kind() == std::io::ErrorKind::TimedOut => {
            eprintln!("usertrace dump: no answer within {}; the dump may still be written", humantime::format_duration(args.timeout));
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("usertrace dump: {}: {e}", socket.display());
            ExitCode::from(1)
        }
    }
}

//! `usertrace status`: what works, what does not, and what to do about it.

use std::process::ExitCode;

pub fn run(args: &[String]) -> ExitCode {
    if let Some(extra) = args.first() {
        eprintln!("usertrace status: unexpected argument {extra:?}");
        return ExitCode::from(2);
    }
    let status = usertrace::status();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    println!("kernel:       {}", kernel.trim());
    let tried = status.tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
    println!("tracefs:      {}", status.tracefs.as_ref().map_or("not found".into(), |p| p.display().to_string()));
    println!("tried:        {tried}");
    println!("user_events:  {status}");
    if status.is_available() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

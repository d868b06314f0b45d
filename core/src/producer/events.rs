//! Operations on events by name, whoever registered them.

use std::ffi::CString;

use super::data_file;
use crate::sys::{self, Errno};
use crate::{tracefs, Error};

/// Deletes the event `name` (`DIAG_IOCSDEL`). It must not be registered by
/// any process; a persistent event needs CAP_PERFMON. The kernel releases an
/// unregistration's reference after an RCU grace period, so right after the
/// last unregister this may briefly report [`Error::EventBusy`].
pub fn delete_event(name: &str) -> Result<(), Error> {
    super::definition::validate_name("event", name)?;
    let fd = data_file::data_fd()?;
    let cname = CString::new(name).expect("validated names contain no NUL");
    match sys::delete(fd, &cname) {
        Ok(()) => Ok(()),
        Err(Errno(libc::ENOENT)) => Err(Error::UnknownEvent { event: name.to_owned() }),
        Err(Errno(libc::EBUSY)) => Err(Error::EventBusy { event: name.to_owned() }),
        Err(Errno(libc::EPERM | libc::EACCES)) => Err(Error::PermissionDenied { op: "deletion", event: name.to_owned() }),
        Err(errno) => Err(Error::Kernel { op: "deletion", event: name.to_owned(), errno }),
    }
}

/// The fields `name` is registered with, as tracefs `dynamic_events` shows
/// them (`u:NAME fields`), when that file is readable.
pub fn registered_format(name: &str) -> Option<String> {
    let text = tracefs::candidates()
        .into_iter()
        .find_map(|dir| std::fs::read_to_string(dir.join("dynamic_events")).ok())?;
    find_user_event(&text, name)
}

fn find_user_event(dynamic_events: &str, name: &str) -> Option<String> {
    dynamic_events.lines().find_map(|line| {
        let rest = line.strip_prefix("u:")?;
        let (event, fields) = rest.split_once(' ').unwrap_or((rest, ""));
        (event == name).then(|| format!("{event} {fields}").trim_end().to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registered_format_is_found_by_exact_name() {
        let text = "p:kprobes/x do_sys_open\nu:ev_long u8 x\nu:ev u32 a;__rel_loc char[] b\nu:bare\n";
        assert_eq!(find_user_event(text, "ev").as_deref(), Some("ev u32 a;__rel_loc char[] b"));
        assert_eq!(find_user_event(text, "bare").as_deref(), Some("bare"));
        assert_eq!(find_user_event(text, "missing"), None);
    }
}

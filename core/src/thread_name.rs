//! The calling thread's name as the kernel shows it: `comm`, which perf,
//! `ps` and every usertrace timeline read, at most 15 bytes.
//!
//! A runtime that names its threads only for itself leaves the kernel's name
//! as the process's: CPython before 3.14 keeps a `threading.Thread`'s name
//! to itself, so its threads all show as `python3`. A binding that knows the
//! runtime's name gives it to the kernel here, through one rule for every
//! language: cut to 15 bytes at a character boundary, so that a timeline
//! never shows half a character, and never containing NUL.

use std::ffi::CString;

use crate::sys;
use crate::Errno;

/// The most bytes of a thread name the kernel keeps (`TASK_COMM_LEN` - 1).
pub const THREAD_NAME_MAX_BYTES: usize = 15;

/// `name` as the kernel will keep it: up to the first NUL, cut to
/// [`THREAD_NAME_MAX_BYTES`] at a UTF-8 character boundary.
pub fn kernel_thread_name(name: &str) -> &str {
    let name = name.split('\0').next().unwrap_or_default();
    let mut end = name.len().min(THREAD_NAME_MAX_BYTES);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// Names the calling thread `name`, as [`kernel_thread_name`] cuts it, for
/// perf, `ps` and the timeline. An empty name is left alone (the thread
/// keeps its name). Off Linux, fails with `ENOSYS`.
pub fn set_current_thread_name(name: &str) -> Result<(), Errno> {
    let name = kernel_thread_name(name);
    if name.is_empty() {
        return Ok(());
    }
    let name = CString::new(name).expect("kernel_thread_name stops at the first NUL");
    sys::set_thread_name(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_cut_to_fifteen_bytes_at_a_character_boundary() {
        assert_eq!(kernel_thread_name("hotl-side"), "hotl-side");
        assert_eq!(kernel_thread_name("a-very-long-thread-name"), "a-very-long-thr");
        // 'é' is two bytes: 14 + 2 would be 16, so it is left out whole.
        assert_eq!(kernel_thread_name("abcdefghijklmné"), "abcdefghijklmn");
        assert_eq!(kernel_thread_name("worker\0hidden"), "worker");
        assert_eq!(kernel_thread_name(""), "");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_kernel_shows_the_name_given() {
        let comm = std::thread::spawn(|| {
            set_current_thread_name("ut-thread-näme-long").unwrap();
            std::fs::read_to_string("/proc/thread-self/comm").unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(comm, "ut-thread-näme\n");
    }
}

//! The shared-memory files' paths, built on the stack.
//!
//! The fork child handler must publish the child's registry before any
//! child code runs, where only async-signal-safe calls are allowed: no
//! allocation. So every path, there and everywhere else, is formatted into
//! a fixed buffer here, by the names [`shm_layout`](crate::shm_layout) gives.

use std::ffi::CStr;

use crate::shm_layout::{DIRECTORY_PREFIX, REGISTRY_SUFFIX, RING_SUFFIX, WAKE_SUFFIX};

/// Longer than the longest path: the prefix (19), four u32s (40), a `/`,
/// two `.` and the longest suffix (9), and the NUL.
const CAPACITY: usize = 80;

/// A NUL-terminated path in a stack buffer.
pub(crate) struct ShmPath {
    bytes: [u8; CAPACITY],
    len: usize,
}

impl ShmPath {
    /// `/dev/shm/usertrace-UID`.
    pub(crate) fn directory(uid: u32) -> ShmPath {
        let mut path = ShmPath { bytes: [0; CAPACITY], len: 0 };
        path.push(DIRECTORY_PREFIX.as_bytes());
        path.push_u32(uid);
        path
    }

    /// `/dev/shm/usertrace-UID/PID.INSTANCE.registry`.
    pub(crate) fn registry(uid: u32, pid: u32, instance: u32) -> ShmPath {
        let mut path = ShmPath::directory(uid);
        path.push(b"/");
        path.push_u32(pid);
        path.push(b".");
        path.push_u32(instance);
        path.push(REGISTRY_SUFFIX.as_bytes());
        path
    }

    /// `/dev/shm/usertrace-UID/PID.INSTANCE.TID.ring`.
    pub(crate) fn ring(uid: u32, pid: u32, instance: u32, tid: u32) -> ShmPath {
        let mut path = ShmPath::directory(uid);
        path.push(b"/");
        path.push_u32(pid);
        path.push(b".");
        path.push_u32(instance);
        path.push(b".");
        path.push_u32(tid);
        path.push(RING_SUFFIX.as_bytes());
        path
    }

    /// `/dev/shm/usertrace-UID/RECORDER.wake`: the wake socket of the
    /// recorder `recorder`, as this user's directory holds it.
    pub(crate) fn wake(uid: u32, recorder: u32) -> ShmPath {
        let mut path = ShmPath::directory(uid);
        path.push(b"/");
        path.push_u32(recorder);
        path.push(WAKE_SUFFIX.as_bytes());
        path
    }

    /// The path as the kernel takes it.
    pub(crate) fn as_cstr(&self) -> &CStr {
        // The buffer starts zeroed and `push` keeps `len < CAPACITY`, so a
        // NUL follows the path; the pieces pushed hold none.
        CStr::from_bytes_until_nul(&self.bytes).unwrap_or(c"")
    }

    /// For messages (which may allocate: they are errors).
    pub(crate) fn display(&self) -> String {
        self.as_cstr().to_string_lossy().into_owned()
    }

    fn push(&mut self, piece: &[u8]) {
        // The capacity holds the longest path; a longer one is cut, never
        // written past the buffer (and then names no file of ours).
        let n = piece.len().min(CAPACITY - 1 - self.len);
        self.bytes[self.len..self.len + n].copy_from_slice(&piece[..n]);
        self.len += n;
    }

    fn push_u32(&mut self, mut n: u32) {
        let mut digits = [0u8; 10];
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[at..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shm_layout::{directory, registry_file_name, ring_file_name, wake_socket_file_name};

    #[test]
    fn paths_are_the_names_the_layout_gives() {
        assert_eq!(ShmPath::directory(1000).display(), directory(1000).display().to_string());
        let registry = directory(0).join(registry_file_name(4_294_967_295, 7));
        assert_eq!(ShmPath::registry(0, u32::MAX, 7).display(), registry.display().to_string());
        let ring = directory(u32::MAX).join(ring_file_name(u32::MAX, u32::MAX, u32::MAX));
        assert_eq!(ShmPath::ring(u32::MAX, u32::MAX, u32::MAX, u32::MAX).display(), ring.display().to_string());
        let wake = directory(u32::MAX).join(wake_socket_file_name(u32::MAX));
        assert_eq!(ShmPath::wake(u32::MAX, u32::MAX).display(), wake.display().to_string());
    }
}

//! Native-endian integers at an offset of a record's bytes, `None` past
//! the end: how every reader of perf records (the drain, the scheduler
//! scope, the archive reader) looks into a record it has not parsed whole.

pub(crate) fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    bytes.get(at..at.checked_add(2)?).map(|b| u16::from_ne_bytes([b[0], b[1]]))
}

pub(crate) fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    bytes.get(at..at.checked_add(4)?).map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
}

pub(crate) fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    bytes.get(at..at.checked_add(8)?).and_then(|b| b.try_into().ok()).map(u64::from_ne_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_inside_and_none_past_the_end() {
        let bytes: Vec<u8> = 1u64.to_ne_bytes().into_iter().chain(7u32.to_ne_bytes()).collect();
        assert_eq!(u64_at(&bytes, 0), Some(1));
        assert_eq!(u32_at(&bytes, 8), Some(7));
        assert_eq!(u16_at(&bytes, 8), Some(if cfg!(target_endian = "little") { 7 } else { 0 }));
        assert_eq!(u32_at(&bytes, 9), None);
        assert_eq!(u64_at(&bytes, usize::MAX - 2), None);
    }
}

//! Arbitrary bytes as a producer's shared-memory files: the registry
//! header, a slot, a ring header and a ring's published bytes, as the
//! recorder reads them (`usertrace::shm_layout`). Each reader must return
//! a value or a typed error, never panic, and what it accepts must stay
//! inside the bytes it was given: a record's payload within its record,
//! the walk within the copy, a slot's descriptor a real descriptor or an
//! error, a ring's data length within its file.
//!
//! Input: the first byte picks the reader, the rest is its bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use usertrace::shm_layout::{records, RecordHeader, RegistryHeader, RingHeader, Slot, RECORD_ALIGN, RING_HEADER_LEN, SLOTS};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else { return };
    match pick % 4 {
        0 => {
            let mut walked = 0usize;
            for item in records(bytes) {
                let Ok((header, payload)) = item else { break };
                let len = header.len as usize;
                assert!(len % RECORD_ALIGN == 0 && payload.len() <= len - 24 && (header.slot as usize) < SLOTS);
                walked += len;
                assert!(walked <= bytes.len(), "the walk left the copy");
            }
            let _ = RecordHeader::parse(bytes, bytes.len());
        }
        1 => {
            let _ = RegistryHeader::parse(bytes);
        }
        2 => {
            if let Ok(Some(slot)) = Slot::parse(bytes) {
                assert!(slot.enable_address != 0 && slot.enable_address % 4 == 0);
                let _ = usertrace::descriptor::parse_descriptor(&slot.descriptor);
            }
        }
        _ => {
            // The file length the header must fit: from the input's first 8
            // bytes, so that lengths near the limits are tried.
            let file_len = bytes.get(..8).map_or(0, |b| u64::from_ne_bytes(b.try_into().unwrap()));
            if let Ok(ring) = RingHeader::parse(bytes.get(8..).unwrap_or_default(), file_len) {
                assert!(ring.data_len.is_power_of_two() && (RING_HEADER_LEN + ring.data_len) as u64 <= file_len);
            }
        }
    }
});

//! What a user_events payload looks like on the wire, for readers of it.
//!
//! A writer puts the 4-byte write index first (the kernel strips it), then
//! every fixed-size field in declaration order, then the data of the
//! variable-length fields. A variable-length field's fixed slot is a
//! `__rel_loc` word: length in the high 16 bits, and the offset of the data
//! counted from the end of the word itself in the low 16. The field types
//! and their kernel declarations are listed on [`FieldType`](crate::FieldType).
//!
//! The consumer decodes with these same definitions, so the two halves
//! cannot drift apart.

pub use crate::abi::{MAX_CHAR_ARRAY_LEN, MAX_NAME_ARGS_LEN, MAX_PAYLOAD_LEN, TRACE_ENTRY_LEN};

/// Encodes a `__rel_loc`/`__data_loc` word from its offset and length.
#[inline]
pub const fn dyn_loc(offset: u16, len: u16) -> u32 {
    crate::abi::dyn_loc(offset, len)
}

/// Splits a `__rel_loc`/`__data_loc` word into `(offset, len)`.
#[inline]
pub const fn split_dyn_loc(word: u32) -> (u16, u16) {
    ((word & 0xffff) as u16, (word >> 16) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loc_word_splits_back_into_what_built_it() {
        assert_eq!(dyn_loc(8, 6), 0x0006_0008);
        assert_eq!(split_dyn_loc(dyn_loc(0xfff0, 3)), (0xfff0, 3));
    }
}

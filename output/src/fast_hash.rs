//! FNV-1a, a hash for the small keys the writers look up once or more per
//! event (names, pids and span ids). std's SipHash resists collision
//! floods from hostile input, which these maps do not need to: their keys
//! come from one recording, and a flood only slows it down.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A HashMap hashed with FNV-1a.
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;

/// The 64-bit FNV-1a hasher.
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

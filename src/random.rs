//! Seeded hashing and random numbers, one of each: FNV-1a for names and
//! paths, the SplitMix64 finaliser for keys, and a SplitMix64 generator
//! for choosing moves and openings. Everything here is reproducible from
//! its seed on any machine (a held-out split, a sample of positions, a
//! match's openings).
//!
//! ```
//! use niwatori::random::{FNV_OFFSET, Rng, fnv1a, mix};
//! let mut a = Rng::new(7);
//! let mut b = Rng::new(7);
//! assert_eq!(a.below(1000), b.below(1000));
//! // FNV-1a of "a", and the finaliser of 0 (a fixed point)
//! assert_eq!(fnv1a(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
//! assert_eq!(mix(0), 0);
//! ```

/// FNV-1a's starting state (the 64-bit offset basis).
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a (64-bit) of `bytes`, continued from the state `h`.
pub fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The SplitMix64 finaliser: a well-mixed 64-bit hash of `z`.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// SplitMix64: tiny, fast, and good enough for choosing moves and plies.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// Seeded from the clock and the process id (for play that need not
    /// repeat, such as the USI option `RandomOpeningPly`).
    pub fn from_entropy() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Self(nanos ^ (u64::from(std::process::id()) << 32))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 11) as u128 * n as u128) >> 53) as usize
    }
}

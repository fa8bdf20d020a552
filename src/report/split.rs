//! The train / held-out split: whole record files, chosen by a seeded hash
//! of their path relative to the folder given, so a file is always on the
//! same side for the same seed, on any machine.

use std::path::Path;

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Whether the record at `relative` (path below the kifu folder) is held out.
///
/// ```
/// use niwatori::report::split::is_held_out;
/// let p = std::path::Path::new("wcsc28/game1.csa");
/// assert_eq!(is_held_out(p, 0.1, 7), is_held_out(p, 0.1, 7));
/// assert!(!is_held_out(p, 0.0, 7));
/// assert!(is_held_out(p, 1.0, 7));
/// ```
pub fn is_held_out(relative: &Path, fraction: f64, seed: u64) -> bool {
    let key = relative.to_string_lossy().replace('\\', "/");
    let u = (mix(fnv1a(key.as_bytes()) ^ mix(seed)) >> 11) as f64 / (1u64 << 53) as f64;
    u < fraction
}

//! The train / held-out split: whole record files, chosen by a seeded hash
//! of their path relative to the folder given, so a file is always on the
//! same side for the same seed, on any machine.

use std::path::Path;

use crate::random::{FNV_OFFSET, fnv1a, mix};

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
    let u = (mix(fnv1a(FNV_OFFSET, key.as_bytes()) ^ mix(seed)) >> 11) as f64 / (1u64 << 53) as f64;
    u < fraction
}

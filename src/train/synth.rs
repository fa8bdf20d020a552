//! Seeded synthetic feature files shaped like `niwatori extract`'s output
//! (small integer values, targets in [-1, 1] with 6 decimals), for tests
//! and benchmarks at any scale.
//!
//! ```
//! let mut text = Vec::new();
//! niwatori::train::synth::write_rows(&mut text, 3, 1000, 20, 7).unwrap();
//! assert_eq!(text.iter().filter(|&&b| b == b'\n').count(), 3);
//! ```

use std::io::Write;

use rand::{Rng, SeedableRng};

/// Write `rows` rows over `features` features with about `per_row`
/// non-zeros each; the same seed gives the same bytes.
pub fn write_rows(
    out: &mut impl Write,
    rows: usize,
    features: u32,
    per_row: usize,
    seed: u64,
) -> std::io::Result<()> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    // A hidden linear rule, so there is something to learn.
    let truth: Vec<f64> = (0..features).map(|_| rng.gen_range(-0.05..0.05)).collect();
    let mut line = String::new();
    let mut idx: Vec<u32> = Vec::with_capacity(per_row * 2);
    for _ in 0..rows {
        idx.clear();
        let k = rng.gen_range(per_row / 2..=per_row * 3 / 2).max(1);
        for _ in 0..k {
            idx.push(rng.gen_range(1..=features));
        }
        idx.sort_unstable();
        idx.dedup();
        let vals: Vec<u32> = idx
            .iter()
            .map(|_| {
                if rng.gen_bool(0.8) {
                    1
                } else {
                    rng.gen_range(2..=10)
                }
            })
            .collect();
        let score: f64 = idx
            .iter()
            .zip(&vals)
            .map(|(&j, &v)| truth[j as usize - 1] * f64::from(v))
            .sum::<f64>()
            + rng.gen_range(-0.2..0.2);
        let y = score.tanh();
        line.clear();
        line.push_str(&format!("{y:.6}"));
        for (j, v) in idx.iter().zip(&vals) {
            line.push_str(&format!(" {j}:{v}"));
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

//! Evaluation noise for varied play: the same position always gets the same
//! offset (a hash of its key), so a search stays consistent.

use rsshogi::board::Position;

use super::Evaluator;
use crate::random::mix;

/// An evaluation plus a deterministic offset in `[-amplitude, amplitude]`.
pub struct Noisy<E> {
    pub inner: E,
    pub amplitude: i32,
    pub seed: u64,
}

impl<E: Evaluator> Evaluator for Noisy<E> {
    fn evaluate(&self, pos: &Position) -> i32 {
        let span = 2 * self.amplitude as u64 + 1;
        let offset = (mix(pos.key().low_u64() ^ self.seed) % span) as i32 - self.amplitude;
        self.inner.evaluate(pos) + offset
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn quiet_gain_bound(&self) -> Option<i32> {
        self.inner
            .quiet_gain_bound()
            .map(|b| b + 2 * self.amplitude)
    }
}

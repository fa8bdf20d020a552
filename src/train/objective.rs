//! What a second-order solver needs from a loss (LIBLINEAR's `function`).
//!
//! The solver ([`crate::train::newton`]) sees only this trait, so it knows
//! nothing of SVR and can be tested on a quadratic with a known minimum.

/// A twice-differentiable convex objective `f(w)`.
///
/// Call order, as in LIBLINEAR: [`value`](Objective::value) at `w`, then
/// [`gradient`](Objective::gradient) at the same `w`; the Hessian methods
/// refer to the point of the last `gradient` call.
pub trait Objective {
    /// Number of variables.
    fn dim(&self) -> usize;

    /// `f(w)`; may cache what the gradient needs (e.g. `X·w`).
    fn value(&mut self, w: &[f64]) -> f64;

    /// `∇f(w)` into `g`, at the `w` of the last `value` or line search.
    fn gradient(&mut self, w: &[f64], g: &mut [f64]);

    /// `out = ∇²f(w)·s` at the point of the last `gradient`.
    fn hessian_vector(&self, s: &[f64], out: &mut [f64]);

    /// The diagonal of `∇²f(w)` (for the preconditioner).
    fn diag_hessian(&self, diag: &mut [f64]);

    /// Backtracking line search along `s` from `w` (Armijo, η = 0.01,
    /// halving from `step`, at most 20 tries). On success updates `w` and
    /// `*f` and returns the step; on failure leaves both and returns 0.
    ///
    /// The default evaluates `value` at each trial point; a loss can do
    /// better by caching `X·s`.
    fn line_search_and_update(
        &mut self,
        w: &mut [f64],
        s: &[f64],
        f: &mut f64,
        g: &[f64],
        step: f64,
    ) -> f64 {
        let gts: f64 = g.iter().zip(s).map(|(a, b)| a * b).sum();
        let mut alpha = step;
        let mut trial = vec![0.0; w.len()];
        for _ in 0..20 {
            for ((t, wi), si) in trial.iter_mut().zip(w.iter()).zip(s) {
                *t = wi + alpha * si;
            }
            let ft = self.value(&trial);
            if ft - *f <= 0.01 * alpha * gts {
                w.copy_from_slice(&trial);
                *f = ft;
                return alpha;
            }
            alpha *= 0.5;
        }
        self.value(w);
        0.0
    }

    /// What the objective keeps of the current point besides `w` (the SVR:
    /// `X·w` and `‖w‖²`), for checkpoints that resume bit for bit: the line
    /// search updates it incrementally, and recomputing it from `w` differs
    /// in the last bits. Default: nothing is kept.
    fn cache(&self) -> Vec<f64> {
        Vec::new()
    }

    /// Takes back a [`cache`](Objective::cache) saved at `w`, in place of
    /// `value(w)`; `false` when it does not fit this objective.
    fn restore_cache(&mut self, cache: &[f64]) -> bool {
        cache.is_empty()
    }

    /// Size of the active set at the last `gradient`, for progress reports
    /// (the rows that contribute to the Hessian); `None` if not meaningful.
    fn active_size(&self) -> Option<usize> {
        None
    }
}

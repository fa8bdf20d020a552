//! The L2-regularised L2-loss SVR objective (LIBLINEAR `-s 11`):
//! `f(w) = ½‖w‖² + C Σᵢ max(0, |yᵢ − wᵀxᵢ| − p)²`, and its one-sided
//! sibling for ranking pairs ([`Loss::Rank`], see [`crate::train::pairs`]):
//! `f(w) = ½‖w‖² + C Σᵢ max(0, yᵢ − wᵀxᵢ)²`, each row's label a bound
//! its product must reach.
//!
//! Only the active set (`I = {i : |wᵀxᵢ − yᵢ| > p}`, or `wᵀxᵢ < yᵢ`)
//! contributes to the gradient and the (generalised) Hessian
//! `I + 2C X_Iᵀ X_I`, so each Hessian-vector product is one pass over the
//! active rows.
//!
//! ```
//! use niwatori::rows::libsvm::{parse_block, Rows};
//! use niwatori::train::{dataset::Dataset, svr::SvrLoss};
//! use niwatori::train::objective::Objective;
//! let mut rows = Rows::default();
//! parse_block(b"1 1:1\n", &mut rows).unwrap();
//! let data = Dataset::from_rows(rows, 0, -1.0).unwrap();
//! let mut loss = SvrLoss::new(&data, 1.0, 0.0);
//! // w = 0: f = C·(1 − 0)² = 1
//! assert_eq!(loss.value(&[0.0]), 1.0);
//! ```

use rayon::prelude::*;

use super::dataset::Dataset;
use super::objective::Objective;
use super::ranks::{Alone, Ranks};

/// Which errors `d = wᵀx − y` a row is charged for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Loss {
    /// Those beyond `p` either way: SVR's tube.
    Svr { p: f64 },
    /// Those below the label: a ranking pair's bound (`p` unused).
    Rank,
}

impl Loss {
    /// The part of `d` the row is charged for (0: none).
    #[inline]
    fn excess(self, d: f64) -> f64 {
        match self {
            Loss::Svr { p } if d > p => d - p,
            Loss::Svr { p } if d < -p => d + p,
            Loss::Svr { .. } => 0.0,
            Loss::Rank => d.min(0.0),
        }
    }
}

/// SVR loss over a data set, with the caches LIBLINEAR keeps. Sharded
/// (see [`crate::train::ranks`]), `data` is this rank's rows and every sum
/// over rows is summed over the ranks.
pub struct SvrLoss<'a> {
    data: &'a Dataset,
    ranks: &'a dyn Ranks,
    c: f64,
    loss: Loss,
    /// `X·w` at the current point.
    wx: Vec<f64>,
    /// `‖w‖²` at the current point.
    wtw: f64,
    /// Active rows at the last gradient.
    active: Vec<u32>,
    /// Active rows of all ranks.
    active_total: usize,
}

impl<'a> SvrLoss<'a> {
    pub fn new(data: &'a Dataset, c: f64, p: f64) -> Self {
        Self::sharded(data, c, p, &Alone)
    }

    /// The loss over the rows of all `ranks`, `data` holding this rank's.
    pub fn sharded(data: &'a Dataset, c: f64, p: f64, ranks: &'a dyn Ranks) -> Self {
        Self::with_loss(data, c, Loss::Svr { p }, ranks)
    }

    /// Either loss over the rows of all `ranks`.
    pub fn with_loss(data: &'a Dataset, c: f64, loss: Loss, ranks: &'a dyn Ranks) -> Self {
        SvrLoss {
            data,
            ranks,
            c,
            loss,
            wx: vec![0.0; data.n_rows()],
            wtw: 0.0,
            active: Vec::new(),
            active_total: 0,
        }
    }

    /// `C·max(0, |d| − p)²` (or `C·min(0, d)²`) for `d = wᵀx − y`.
    #[inline]
    fn c_loss(&self, d: f64) -> f64 {
        let e = self.loss.excess(d);
        self.c * e * e
    }

    /// The summed loss at `w + alpha·s`, given `wx` and `xs = X·s`, over
    /// the rows of every rank (exactly, by blocks: see
    /// [`crate::train::exact`]).
    fn total_loss(&self, alpha: f64, xs: Option<&[f64]>) -> f64 {
        let y = self.data.labels();
        let mut sum = match xs {
            None => self.data.sum_rows_exact(|i| self.c_loss(self.wx[i] - y[i])),
            Some(xs) => self
                .data
                .sum_rows_exact(|i| self.c_loss(self.wx[i] + alpha * xs[i] - y[i])),
        };
        self.ranks.sum(&mut sum);
        sum.to_f64()[0]
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl Objective for SvrLoss<'_> {
    fn dim(&self) -> usize {
        self.data.dim()
    }

    fn value(&mut self, w: &[f64]) -> f64 {
        self.data.mul_vec(w, &mut self.wx);
        self.wtw = dot(w, w);
        self.total_loss(0.0, None) + self.wtw / 2.0
    }

    fn gradient(&mut self, w: &[f64], g: &mut [f64]) {
        let y = self.data.labels();
        let loss = self.loss;
        self.active = (0..self.wx.len() as u32)
            .into_par_iter()
            .filter(|&i| loss.excess(self.wx[i as usize] - y[i as usize]) != 0.0)
            .collect();
        let z: Vec<f64> = self
            .active
            .par_iter()
            .map(|&i| self.c * loss.excess(self.wx[i as usize] - y[i as usize]))
            .collect();
        let mut sum = self.data.tmul_rows_exact(&self.active, &z);
        self.ranks.sum(&mut sum);
        sum.write_f64(g);
        let mut active = [self.active.len() as u64];
        self.ranks.sum_counts(&mut active);
        self.active_total = active[0] as usize;
        for (gj, wj) in g.iter_mut().zip(w) {
            *gj = wj + 2.0 * *gj;
        }
    }

    fn hessian_vector(&self, s: &[f64], out: &mut [f64]) {
        let mut sum = self.data.gram_vec_exact(&self.active, s);
        self.ranks.sum(&mut sum);
        sum.write_f64(out);
        for (o, sj) in out.iter_mut().zip(s) {
            *o = sj + 2.0 * self.c * *o;
        }
    }

    fn diag_hessian(&self, diag: &mut [f64]) {
        let mut sum = self.data.sq_col_sums_exact(&self.active);
        self.ranks.sum(&mut sum);
        sum.write_f64(diag);
        for d in diag.iter_mut() {
            *d = 1.0 + 2.0 * self.c * *d;
        }
    }

    /// LIBLINEAR's line search: one `X·s`, then each trial is a pass over
    /// the cached `X·w` and `X·s` only.
    fn line_search_and_update(
        &mut self,
        w: &mut [f64],
        s: &[f64],
        f: &mut f64,
        g: &[f64],
        step: f64,
    ) -> f64 {
        let mut xs = vec![0.0; self.wx.len()];
        self.data.mul_vec(s, &mut xs);
        let sts = dot(s, s);
        let wts = dot(w, s);
        let gts = dot(g, s);
        let f_old = *f;
        let mut alpha = step;
        for _ in 0..20 {
            let trial = self.total_loss(alpha, Some(&xs))
                + (alpha * alpha * sts + self.wtw) / 2.0
                + alpha * wts;
            if trial - f_old <= 0.01 * alpha * gts {
                self.wx
                    .par_iter_mut()
                    .zip(&xs)
                    .for_each(|(wx, xs)| *wx += alpha * xs);
                for (wj, sj) in w.iter_mut().zip(s) {
                    *wj += alpha * sj;
                }
                self.wtw += alpha * alpha * sts + 2.0 * alpha * wts;
                *f = trial;
                return alpha;
            }
            alpha *= 0.5;
        }
        0.0
    }

    /// `‖w‖²`, then `X·w`.
    fn cache(&self) -> Vec<f64> {
        let mut c = Vec::with_capacity(1 + self.wx.len());
        c.push(self.wtw);
        c.extend_from_slice(&self.wx);
        c
    }

    fn restore_cache(&mut self, cache: &[f64]) -> bool {
        let Some((&wtw, wx)) = cache.split_first() else {
            return false;
        };
        if wx.len() != self.wx.len() {
            return false;
        }
        self.wtw = wtw;
        self.wx.copy_from_slice(wx);
        true
    }

    fn active_size(&self) -> Option<usize> {
        Some(self.active_total)
    }
}

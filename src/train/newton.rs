//! Newton's method with preconditioned conjugate gradient and line search
//! (LIBLINEAR 2.4x `newton.cpp`), for any [`Objective`].
//!
//! Each Newton step solves `∇²f·s = −∇f` approximately by CG, where every CG
//! step costs one Hessian-vector product (the Hessian is never formed). The
//! preconditioner is `(1−α)·I + α·diag(∇²f)` with α = 0.01. It stops when
//! `‖∇f(w)‖ ≤ eps·‖∇f(0)‖`.
//!
//! ```
//! use niwatori::train::newton::{minimize, NewtonParams};
//! use niwatori::train::objective::Objective;
//! // f(w) = ½ Σ a_j (w_j − b_j)²
//! struct Quad { a: Vec<f64>, b: Vec<f64> }
//! impl Objective for Quad {
//!     fn dim(&self) -> usize { self.a.len() }
//!     fn value(&mut self, w: &[f64]) -> f64 {
//!         (0..w.len()).map(|j| 0.5 * self.a[j] * (w[j] - self.b[j]).powi(2)).sum()
//!     }
//!     fn gradient(&mut self, w: &[f64], g: &mut [f64]) {
//!         for j in 0..w.len() { g[j] = self.a[j] * (w[j] - self.b[j]); }
//!     }
//!     fn hessian_vector(&self, s: &[f64], out: &mut [f64]) {
//!         for j in 0..s.len() { out[j] = self.a[j] * s[j]; }
//!     }
//!     fn diag_hessian(&self, d: &mut [f64]) { d.copy_from_slice(&self.a); }
//! }
//! let mut q = Quad { a: vec![1.0, 4.0], b: vec![3.0, -2.0] };
//! let mut w = vec![0.0; 2];
//! minimize(&mut q, &mut w, &NewtonParams::default(), None, |_, _, _| Ok::<(), ()>(())).unwrap();
//! assert!((w[0] - 3.0).abs() < 1e-9 && (w[1] + 2.0).abs() < 1e-9);
//! ```

use std::time::Instant;

use super::objective::Objective;

/// Solver settings.
#[derive(Debug, Clone, PartialEq)]
pub struct NewtonParams {
    /// Stop when `‖∇f(w)‖ ≤ eps·‖∇f(0)‖`.
    pub eps: f64,
    /// CG stopping tolerance (LIBLINEAR: 0.5).
    pub eps_cg: f64,
    pub max_iter: usize,
    /// Number of the first iteration (for runs resumed from a checkpoint).
    pub first_iter: usize,
}

impl Default for NewtonParams {
    fn default() -> Self {
        NewtonParams {
            eps: 1e-4,
            eps_cg: 0.5,
            max_iter: 1000,
            first_iter: 1,
        }
    }
}

/// Where a run resumed from a checkpoint starts: the objective at its `w`
/// and the objective's [`cache`](Objective::cache) there, as saved after
/// the iteration before [`NewtonParams::first_iter`].
#[derive(Debug, Clone, PartialEq)]
pub struct Resume {
    pub f: f64,
    pub cache: Vec<f64>,
}

/// One Newton iteration, as reported to the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct IterInfo {
    pub iter: usize,
    pub f: f64,
    pub gnorm: f64,
    pub gnorm0: f64,
    pub active: Option<usize>,
    pub cg_steps: usize,
    pub step_size: f64,
    pub seconds: f64,
}

/// Why the solver stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Converged,
    MaxIter,
    LineSearchFailed,
    NoProgress,
}

/// The outcome of [`minimize`].
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    pub f: f64,
    pub gnorm: f64,
    pub gnorm0: f64,
    /// Number of the last iteration run (`first_iter − 1` if none).
    pub iterations: usize,
    pub stop: Stop,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Minimise `obj` from the starting point `w` (updated in place).
///
/// `each_iter` is called after every iteration with its figures, the
/// current weights and the objective (for progress and checkpoints); its
/// error aborts. With `resume`, `w` is a checkpoint's and the run goes on
/// exactly as the one that saved it would have.
pub fn minimize<O, E>(
    obj: &mut O,
    w: &mut [f64],
    params: &NewtonParams,
    resume: Option<&Resume>,
    mut each_iter: impl FnMut(&IterInfo, &[f64], &O) -> Result<(), E>,
) -> Result<Solution, E>
where
    O: Objective + ?Sized,
{
    let n = obj.dim();
    assert_eq!(w.len(), n);
    let mut g = vec![0.0; n];
    let gnorm0 = {
        let zero = vec![0.0; n];
        obj.value(&zero);
        obj.gradient(&zero, &mut g);
        dot(&g, &g).sqrt()
    };

    let mut f = match resume {
        Some(r) if !r.cache.is_empty() => {
            assert!(
                obj.restore_cache(&r.cache),
                "the checkpoint's cache does not fit the objective"
            );
            r.f
        }
        Some(r) => {
            obj.value(w);
            r.f
        }
        None => obj.value(w),
    };
    obj.gradient(w, &mut g);
    let mut gnorm = dot(&g, &g).sqrt();
    let mut iter = params.first_iter;
    let mut last_done = params.first_iter - 1;
    let mut stop = Stop::MaxIter;
    let (mut s, mut r, mut m) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    if gnorm <= params.eps * gnorm0 {
        stop = Stop::Converged;
    }
    while stop == Stop::MaxIter && iter < params.first_iter + params.max_iter {
        let start = Instant::now();
        obj.diag_hessian(&mut m);
        for mj in m.iter_mut() {
            *mj = 0.99 + 0.01 * *mj;
        }
        let cg_steps = pcg(obj, &g, &m, &mut s, &mut r, params.eps_cg);
        let f_old = f;
        let step_size = obj.line_search_and_update(w, &s, &mut f, &g, 1.0);
        if step_size == 0.0 {
            stop = Stop::LineSearchFailed;
            break;
        }
        obj.gradient(w, &mut g);
        gnorm = dot(&g, &g).sqrt();
        let info = IterInfo {
            iter,
            f,
            gnorm,
            gnorm0,
            active: obj.active_size(),
            cg_steps,
            step_size,
            seconds: start.elapsed().as_secs_f64(),
        };
        each_iter(&info, w, obj)?;
        last_done = iter;
        if gnorm <= params.eps * gnorm0 {
            stop = Stop::Converged;
        } else if (f_old - f).abs() <= 1e-12 * f.abs() {
            stop = Stop::NoProgress;
        }
        iter += 1;
    }
    Ok(Solution {
        f,
        gnorm,
        gnorm0,
        iterations: last_done,
        stop,
    })
}

/// Preconditioned CG for `∇²f·s = −g` with LIBLINEAR's stopping rule on the
/// quadratic model `Q(s) = gᵀs + ½ sᵀ∇²f s`. Returns the number of steps.
fn pcg<O: Objective + ?Sized>(
    obj: &O,
    g: &[f64],
    m: &[f64],
    s: &mut [f64],
    r: &mut [f64],
    eps_cg: f64,
) -> usize {
    let n = g.len();
    let mut z = vec![0.0; n];
    let mut d = vec![0.0; n];
    let mut hd = vec![0.0; n];
    for j in 0..n {
        s[j] = 0.0;
        r[j] = -g[j];
        z[j] = r[j] / m[j];
        d[j] = z[j];
    }
    let mut ztr = dot(&z, r);
    let cgtol = eps_cg.min(ztr.sqrt().sqrt());
    let mut q = 0.0;
    let mut steps = 0;
    while steps < n.max(5) {
        steps += 1;
        obj.hessian_vector(&d, &mut hd);
        let dhd = dot(&d, &hd);
        if dhd <= 1e-16 {
            break;
        }
        let alpha = ztr / dhd;
        for j in 0..n {
            s[j] += alpha * d[j];
            r[j] -= alpha * hd[j];
        }
        // Q(s) = gᵀs + ½ sᵀHs = −½ (sᵀr − sᵀg), as r = −g − Hs.
        let new_q = -0.5 * (dot(s, r) - dot(s, g));
        let q_diff = new_q - q;
        if new_q <= 0.0 && q_diff <= 0.0 {
            if steps as f64 * q_diff >= cgtol * new_q {
                break;
            }
        } else {
            break;
        }
        q = new_q;
        for j in 0..n {
            z[j] = r[j] / m[j];
        }
        let znew = dot(&z, r);
        let beta = znew / ztr;
        for j in 0..n {
            d[j] = z[j] + beta * d[j];
        }
        ztr = znew;
    }
    steps
}

//! SVR hyper-parameters, checked once (linfa's [`ParamGuard`] pattern).
//!
//! ```
//! use linfa::ParamGuard;
//! use niwatori::train::params::SvrParams;
//! let p = SvrParams::default().c(0.5).p(0.05).check().unwrap();
//! assert_eq!((p.c(), p.p(), p.eps(), p.bias()), (0.5, 0.05, 1e-4, -1.0));
//! assert!(SvrParams::default().c(0.0).check().is_err());
//! ```

use linfa::ParamGuard;
use thiserror::Error;

/// A rejected hyper-parameter.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ParamError {
    #[error("C must be positive and finite, got {0}")]
    C(f64),
    #[error("p (epsilon of the loss) must be >= 0 and finite, got {0}")]
    P(f64),
    #[error("e (stopping tolerance) must be positive and finite, got {0}")]
    Eps(f64),
    #[error("bias must be finite (negative means none), got {0}")]
    Bias(f64),
    #[error("max_iter must be at least 1")]
    MaxIter,
}

/// Checked parameters: only these can fit a model.
#[derive(Debug, Clone, PartialEq)]
pub struct SvrValidParams {
    c: f64,
    p: f64,
    eps: f64,
    bias: f64,
    max_iter: usize,
}

impl SvrValidParams {
    pub fn c(&self) -> f64 {
        self.c
    }
    pub fn p(&self) -> f64 {
        self.p
    }
    pub fn eps(&self) -> f64 {
        self.eps
    }
    /// LIBLINEAR `-B`: negative means no bias term.
    pub fn bias(&self) -> f64 {
        self.bias
    }
    pub fn max_iter(&self) -> usize {
        self.max_iter
    }
}

/// Unchecked parameters with LIBLINEAR's defaults for `-s 11`.
#[derive(Debug, Clone, PartialEq)]
pub struct SvrParams(SvrValidParams);

impl Default for SvrParams {
    fn default() -> Self {
        SvrParams(SvrValidParams {
            c: 1.0,
            p: 0.1,
            eps: 1e-4,
            bias: -1.0,
            max_iter: 1000,
        })
    }
}

impl SvrParams {
    pub fn c(mut self, c: f64) -> Self {
        self.0.c = c;
        self
    }
    pub fn p(mut self, p: f64) -> Self {
        self.0.p = p;
        self
    }
    pub fn eps(mut self, eps: f64) -> Self {
        self.0.eps = eps;
        self
    }
    pub fn bias(mut self, bias: f64) -> Self {
        self.0.bias = bias;
        self
    }
    pub fn max_iter(mut self, max_iter: usize) -> Self {
        self.0.max_iter = max_iter;
        self
    }
}

impl ParamGuard for SvrParams {
    type Checked = SvrValidParams;
    type Error = ParamError;

    fn check_ref(&self) -> Result<&SvrValidParams, ParamError> {
        let v = &self.0;
        if !(v.c > 0.0 && v.c.is_finite()) {
            Err(ParamError::C(v.c))
        } else if !(v.p >= 0.0 && v.p.is_finite()) {
            Err(ParamError::P(v.p))
        } else if !(v.eps > 0.0 && v.eps.is_finite()) {
            Err(ParamError::Eps(v.eps))
        } else if !v.bias.is_finite() {
            Err(ParamError::Bias(v.bias))
        } else if v.max_iter == 0 {
            Err(ParamError::MaxIter)
        } else {
            Ok(v)
        }
    }

    fn check(self) -> Result<SvrValidParams, ParamError> {
        self.check_ref()?;
        Ok(self.0)
    }
}

/// The solver's command-line options, as LIBLINEAR's `-s 11` has them and
/// with its defaults: one declaration for `train` and `bench train`.
/// (`learn` keeps its own defaults, chosen on held-out games.)
#[derive(clap::Args, Debug, Clone, Copy, PartialEq)]
pub struct SolverArgs {
    /// Cost C of the loss.
    #[arg(short = 'c', default_value_t = 1.0)]
    pub c: f64,
    /// Epsilon p of the epsilon-insensitive loss.
    #[arg(short = 'p', default_value_t = 0.1)]
    pub p: f64,
    /// Stop when |grad f(w)| <= e * |grad f(0)|.
    #[arg(short = 'e', default_value_t = 1e-4)]
    pub e: f64,
}

impl SolverArgs {
    /// The (unchecked) parameters these options set.
    pub fn params(&self) -> SvrParams {
        SvrParams::default().c(self.c).p(self.p).eps(self.e)
    }
}

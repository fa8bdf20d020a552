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

/// Defaults of the solver's options, per command (as text: clap shows and
/// parses them as typed).
pub trait SolverDefaults:
    Clone + Copy + std::fmt::Debug + PartialEq + Send + Sync + 'static
{
    const C: &'static str;
    const P: &'static str;
    const E: &'static str;
}

/// LIBLINEAR's own defaults for `-s 11` (`train`, `bench train`, `diagnose`).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct LiblinearDefaults;

impl SolverDefaults for LiblinearDefaults {
    const C: &'static str = "1";
    const P: &'static str = "0.1";
    const E: &'static str = "0.0001";
}

/// The solver's command-line options, as LIBLINEAR's `-s 11` has them: one
/// declaration for every command that trains, each with its defaults `D`.
#[derive(clap::Args, Debug, Clone, Copy, PartialEq)]
pub struct SolverArgs<D: SolverDefaults = LiblinearDefaults> {
    /// Cost C of the loss.
    #[arg(short = 'c', default_value = D::C)]
    pub c: f64,
    /// Epsilon p of the epsilon-insensitive loss.
    #[arg(short = 'p', default_value = D::P)]
    pub p: f64,
    /// Stop when |grad f(w)| <= e * |grad f(0)|.
    #[arg(short = 'e', default_value = D::E)]
    pub e: f64,
    #[arg(skip)]
    pub defaults: std::marker::PhantomData<D>,
}

impl<D: SolverDefaults> Default for SolverArgs<D> {
    /// The defaults `D` gives, as the command line would have them.
    fn default() -> Self {
        let parse = |v: &str| v.parse().expect("solver defaults are numbers");
        SolverArgs {
            c: parse(D::C),
            p: parse(D::P),
            e: parse(D::E),
            defaults: std::marker::PhantomData,
        }
    }
}

impl<D: SolverDefaults> SolverArgs<D> {
    /// The (unchecked) parameters these options set.
    pub fn params(&self) -> SvrParams {
        SvrParams::default().c(self.c).p(self.p).eps(self.e)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli<D: SolverDefaults> {
        #[command(flatten)]
        solver: SolverArgs<D>,
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Other;
    impl SolverDefaults for Other {
        const C: &'static str = "0.5";
        const P: &'static str = "0.02";
        const E: &'static str = "0.01";
    }

    #[test]
    fn each_command_gets_its_own_defaults_and_flags_override_them() {
        let parse = |args: &[&str]| {
            Cli::<LiblinearDefaults>::try_parse_from(args)
                .unwrap()
                .solver
        };
        assert_eq!(parse(&["t"]), SolverArgs::default());
        assert_eq!(
            (parse(&["t"]).c, parse(&["t"]).p, parse(&["t"]).e),
            (1.0, 0.1, 1e-4)
        );
        let other = Cli::<Other>::try_parse_from(["t", "-p", "0.3"])
            .unwrap()
            .solver;
        assert_eq!((other.c, other.p, other.e), (0.5, 0.3, 0.01));
        assert_eq!(SolverArgs::<Other>::default().p, 0.02);
    }
}

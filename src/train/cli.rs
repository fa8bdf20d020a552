//! Command-line front-end of `niwatori train`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use linfa::ParamGuard;

use super::params::SolverArgs;
use super::{TrainOptions, train_files_with};

/// Arguments of `niwatori train` (options as LIBLINEAR's `-s 11`).
#[derive(Args, Debug, Clone)]
#[command(allow_negative_numbers = true)]
pub struct TrainArgs {
    /// libsvm files, or directories of *.svm files (searched recursively).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Model file to write (LIBLINEAR format); metadata goes to MODEL.json.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub solver: SolverArgs,
    /// Bias B: add a constant feature B to every row (negative: none).
    #[arg(short = 'B', default_value_t = -1.0)]
    pub bias: f64,
    /// Write MODEL.ckpt after every Newton iteration and resume from it.
    #[arg(long)]
    pub checkpoint: bool,
    /// Maximum Newton iterations.
    #[arg(long, default_value_t = 1000)]
    pub max_iter: usize,
    /// No progress output (the final objective is still printed).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Leave out rows whose label is at the clamp (|label| >= 1: mates):
    /// a bound, not a value, that dominates a squared loss.
    #[arg(long)]
    pub drop_clamped: bool,
}

/// `niwatori train`.
pub fn run(args: TrainArgs) -> Result<()> {
    let params = args
        .solver
        .params()
        .bias(args.bias)
        .max_iter(args.max_iter)
        .check()?;
    let opts = TrainOptions {
        progress: !args.quiet,
        checkpoint: args.checkpoint,
        drop_clamped: args.drop_clamped,
    };
    let s = train_files_with(&args.paths, &params, &args.out, &opts)
        .with_context(|| format!("training {}", args.out.display()))?;
    println!("Objective value = {:.10e}", s.objective);
    println!(
        "{} rows, {} non-zeros, {:.1} MB in memory; load {:.2} s, train {:.2} s, {} iterations{}",
        s.rows,
        s.nonzeros,
        s.bytes as f64 / 1e6,
        s.load_seconds,
        s.train_seconds,
        s.iterations,
        if s.converged { "" } else { " (not converged)" }
    );
    Ok(())
}

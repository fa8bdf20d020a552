//! Command-line front-end of `niwatori train`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use linfa::ParamGuard;

use super::params::SolverArgs;
use super::ranks::{Alone, Ranks};
use super::{TrainOptions, train_files_on};

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
    /// `svr`: fit every row's label; `rank`: each position's game move at
    /// least the rows' margin above each sibling (pairs of rows, from the
    /// sidecars; `-p` unused).
    #[arg(long, value_enum, default_value_t)]
    pub loss: super::LossKind,
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
        loss: args.loss,
    };
    let train = |ranks: &dyn Ranks| {
        train_files_on(&args.paths, &params, &args.out, &opts, ranks)
            .with_context(|| format!("training {}", args.out.display()))
    };
    let (s, ranks, sent) = match crate::mpirun::rank_and_size() {
        None => (train(&Alone)?, 1, 0),
        Some((_, k)) => on_mpi(k, train)?,
    };
    if ranks > 1 {
        // Every rank has the same summary: one prints it.
        println!(
            "{ranks} ranks; rank 0 sent {:.1} MB in reductions, {:.1} kB per iteration",
            sent as f64 / 1e6,
            sent as f64 / 1e3 / s.iterations.max(1) as f64
        );
    }
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

/// Trains as one of the `k` ranks of `mpirun`; a rank that fails ends
/// them all (the others would wait for it in the next reduction), and only
/// rank 0 comes back.
#[cfg(feature = "mpi")]
fn on_mpi(
    k: usize,
    train: impl Fn(&dyn Ranks) -> Result<super::TrainSummary>,
) -> Result<(super::TrainSummary, usize, u64)> {
    let universe =
        super::mpi::initialize().context("MPI_Init_thread (MPI_THREAD_SERIALIZED) under mpirun")?;
    let ranks = super::mpi::MpiRanks::new(&universe);
    anyhow::ensure!(
        ranks.size() == k,
        "mpirun says {k} ranks, MPI {}",
        ranks.size()
    );
    match train(&ranks) {
        Ok(s) if ranks.is_root() => Ok((s, ranks.size(), ranks.bytes_sent())),
        Ok(_) => {
            drop(universe);
            std::process::exit(0)
        }
        Err(e) => {
            eprintln!("niwatori train, rank {} of {k}: {e:#}", ranks.rank());
            ranks.abort(1)
        }
    }
}

#[cfg(not(feature = "mpi"))]
fn on_mpi(
    k: usize,
    _: impl Fn(&dyn Ranks) -> Result<super::TrainSummary>,
) -> Result<(super::TrainSummary, usize, u64)> {
    anyhow::bail!(
        "started by mpirun with {k} ranks, but this niwatori was built without MPI: \
         build with `cargo build --release --features mpi` (needs libopenmpi-dev; \
         scripts/setup.sh installs it)"
    )
}

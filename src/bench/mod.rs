//! The benches, one family: `niwatori bench [search|extract|train]`.
//!
//! Each runs the same public stages as production, measured, with its
//! baseline in the same run (these machines are shared and noisy):
//!
//! ```text
//! search   fixed positions to a fixed depth; the node count is the search's
//!          signature (plain `niwatori bench`, as engines' `bench` is)
//! extract  rows/s of scoring, features and libsvm text, in memory
//! train    wall time and peak memory of `train` against liblinear-train
//! ```

pub mod extract;
pub mod search;
pub mod train;

pub use search::{BenchConfig, BenchReport, Comparison, DEFAULT_DEPTH, POSITIONS, compare, run};

use anyhow::Result;

/// Arguments of `niwatori bench`: a bench by name, or the search bench's
/// own arguments.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub kind: Option<BenchKind>,
    #[command(flatten)]
    pub search: SearchBenchArgs,
}

/// The benches.
#[derive(clap::Subcommand, Debug)]
pub enum BenchKind {
    /// Search fixed positions to a fixed depth (the default bench).
    Search(SearchBenchArgs),
    /// Rows per second of each stage of extraction, in memory.
    Extract(extract::ExtractBenchArgs),
    /// Time and peak memory of `train` against liblinear-train on one file.
    Train(train::TrainBenchArgs),
}

/// Arguments of the search bench.
#[derive(clap::Args, Debug)]
pub struct SearchBenchArgs {
    /// Search depth.
    #[arg(long, default_value_t = DEFAULT_DEPTH)]
    pub depth: u32,
    /// Search each position this long instead (ms); reports the depth reached.
    #[arg(long)]
    pub movetime: Option<u64>,
    /// Search threads (Lazy SMP).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 16)]
    pub hash: usize,
    /// Evaluation: material, material-hand or learned:MODEL.
    #[arg(long, default_value = "material")]
    pub eval: String,
    /// Also bench this evaluation, alternating with --eval, and print
    /// both with the ratios (medians of --runs runs).
    #[arg(long)]
    pub baseline: Option<String>,
    /// Order quiet moves by this move policy (`niwatori policy train`); with
    /// --baseline, the baseline runs without it.
    #[arg(long)]
    pub policy: Option<std::path::PathBuf>,
    /// Runs of each evaluation with --baseline.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
}

/// Runs `niwatori bench`.
pub fn run_cli(args: BenchArgs) -> Result<()> {
    match args.kind {
        None => run_search(args.search),
        Some(BenchKind::Search(a)) => run_search(a),
        Some(BenchKind::Extract(a)) => extract::run(a),
        Some(BenchKind::Train(a)) => train::run(a),
    }
}

/// The search bench: one line per position and the totals, or with
/// `--baseline` both evaluations and their ratios.
fn run_search(args: SearchBenchArgs) -> Result<()> {
    let eval = crate::eval::from_spec(&args.eval)?;
    let config = BenchConfig {
        depth: args.depth,
        movetime_ms: args.movetime,
        threads: args.threads,
        hash_mb: args.hash,
        policy: match &args.policy {
            Some(p) => Some(std::sync::Arc::new(crate::policy::PolicyModel::load(p)?.0)),
            None => None,
        },
    };
    if let Some(baseline_spec) = args.baseline {
        let baseline = crate::eval::from_spec(&baseline_spec)?;
        let c = compare(eval.as_ref(), baseline.as_ref(), &config, args.runs);
        println!(
            "bench depth {}, {} runs each (median time)",
            args.depth, args.runs
        );
        println!(
            "{:<12} {:>12} {:>10} {:>12}",
            "", "nodes", "time ms", "nodes/s"
        );
        let ours = match &args.policy {
            Some(_) => format!("{}+policy", eval.name()),
            None => eval.name().to_string(),
        };
        for (name, r) in [(ours.as_str(), &c.eval), (baseline.name(), &c.baseline)] {
            println!(
                "{:<12} {:>12} {:>10.0} {:>12.0}",
                name,
                r.nodes,
                r.seconds * 1000.0,
                r.nps()
            );
        }
        println!(
            "{:<12} {:>11.2}x {:>9.2}x {:>11.2}x",
            "ratio",
            c.nodes_ratio(),
            c.time_ratio(),
            c.nps_ratio()
        );
        return Ok(());
    }
    let report = run(eval.as_ref(), &config, true);
    println!("===========================");
    println!("Threads         : {}", args.threads);
    println!("Mean depth      : {:.2}", report.mean_depth);
    println!("Total nodes     : {}", report.nodes);
    println!("Total time (ms) : {:.0}", report.seconds * 1000.0);
    println!("Nodes/second    : {:.0}", report.nps());
    Ok(())
}

//! The `extract` subcommand's arguments and entry point.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};

use super::{ExtractOptions, SEARCH_SCORER, StaticScorer, bench, extract};
use crate::eval::{Evaluator, Material};
use crate::features::RelationEncoding;
use crate::rows::FeaturesAt;
use crate::search::SiblingScorer;

/// Which scorer `--bench` uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchScorer {
    /// `search::SiblingScorer`, depth 1 plus quiescence.
    Search,
    /// Minus the static evaluation of the sibling.
    Static,
}

/// Arguments of `niwatori extract`.
#[derive(clap::Args, Debug)]
pub struct ExtractArgs {
    /// Record files (.csa, .kif, .kifu) or directories scanned recursively.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output directory (extract.json and one .svm + .svm.json per game).
    #[arg(long, required_unless_present = "bench")]
    pub out: Option<PathBuf>,
    /// Margin in centipawns between the game move and better-scored siblings.
    #[arg(long, default_value_t = 100)]
    pub margin: i32,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Skip games whose output is already complete.
    #[arg(long)]
    pub resume: bool,
    /// How relation kinds are written: feature value 1..10, or one index per kind.
    #[arg(long, value_enum, default_value_t = RelationEncoding::Value)]
    pub relation_encoding: RelationEncoding,
    /// Which position a row describes: the sibling itself, or the leaf of
    /// its search's principal variation (a quiet position).
    #[arg(long, value_enum, default_value_t = FeaturesAt::Sibling)]
    pub features_at: FeaturesAt,
    /// Measure rows/s of each stage in memory instead of writing files.
    #[arg(long)]
    pub bench: bool,
    /// Runs per stage for --bench (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub bench_runs: usize,
    /// Benchmark only the first N games.
    #[arg(long)]
    pub bench_games: Option<usize>,
    /// Sibling scorer for --bench: the depth-1 search (as extraction uses) or
    /// the static evaluation (isolates the cost of features and writing).
    #[arg(long, value_enum, default_value_t = BenchScorer::Search)]
    pub bench_scorer: BenchScorer,
    /// No progress display.
    #[arg(long)]
    pub quiet: bool,
    /// Label with this learned model instead of material (iterations).
    #[arg(long)]
    pub model: Option<std::path::PathBuf>,
    /// Expand only this fraction of each game's positions (a deterministic
    /// hash of file name, game and ply picks them); 1 expands every one.
    #[arg(long, default_value_t = 1.0)]
    pub sample: f64,
    /// Name each game's output by its record's path below this folder
    /// (as `learn` does), so that a list of files from one tree whose names
    /// repeat across subfolders can be extracted together.
    #[arg(long)]
    pub root: Option<std::path::PathBuf>,
}

/// `--sample` must pick some positions and cannot pick more than all.
pub fn check_sample(sample: f64) -> Result<()> {
    if !(sample > 0.0 && sample <= 1.0) {
        bail!("--sample must be in (0, 1], got {sample}");
    }
    Ok(())
}

/// Runs `niwatori extract`.
pub fn run(args: ExtractArgs) -> Result<()> {
    if args.margin < 0 {
        bail!("--margin must be >= 0, got {}", args.margin);
    }
    if args.jobs == Some(0) {
        bail!("--jobs must be at least 1");
    }
    check_sample(args.sample)?;
    let options = ExtractOptions {
        margin: args.margin,
        encoding: args.relation_encoding,
        features_at: args.features_at,
        jobs: args.jobs,
        resume: args.resume,
        progress: !args.quiet,
        root: args.root.clone(),
        sample: args.sample,
    };
    let eval: Arc<dyn Evaluator> = match &args.model {
        Some(path) => Arc::new(crate::eval::Learned::load(path)?),
        None => Arc::new(Material),
    };
    if args.bench {
        let r = match args.bench_scorer {
            BenchScorer::Search => bench(
                &args.paths,
                &options,
                args.bench_runs,
                args.bench_games,
                || SiblingScorer::new(eval.clone()),
            ),
            BenchScorer::Static => bench(
                &args.paths,
                &options,
                args.bench_runs,
                args.bench_games,
                || StaticScorer::new(eval.clone()),
            ),
        }
        .context("extract --bench")?;
        println!(
            "extract bench: {} games, {} positions, {} threads, evaluator {}, scorer {}, encoding {}, median of {} runs",
            r.games,
            r.positions,
            r.threads,
            eval.name(),
            match args.bench_scorer {
                BenchScorer::Search => SEARCH_SCORER,
                BenchScorer::Static => "static",
            },
            options.encoding.as_str(),
            args.bench_runs.max(1)
        );
        let base = r.stages[0].seconds;
        for s in &r.stages {
            println!(
                "{:<9} {:>9} rows {:>8.3} s {:>10.0} rows/s  x{:.2} baseline time  {:>6.1} nnz/row {:>7.1} bytes/row  runs {:?}",
                format!("{:?}", s.stage).to_lowercase(),
                s.rows,
                s.seconds,
                s.rows_per_sec,
                s.seconds / base.max(1e-9),
                s.nnz_per_row,
                s.bytes_per_row,
                s.runs.iter().map(|x| format!("{x:.3}")).collect::<Vec<_>>()
            );
        }
        return Ok(());
    }
    let out = args.out.context("--out is required")?;
    let s = extract(&args.paths, &out, &options, eval)
        .with_context(|| format!("extract into {}", out.display()))?;
    for p in &s.problems {
        eprintln!("{p}");
    }
    println!(
        "read {} files: {} games complete, {} truncated (first moves used), {} skipped",
        s.files, s.games_complete, s.games_truncated, s.games_skipped
    );
    for (kind, n) in &s.problems_by_kind {
        println!("  {n} x {kind}");
    }
    if s.games_duplicate > 0 {
        println!(
            "{} games repeat an earlier one and were extracted once:",
            s.games_duplicate
        );
        for d in &s.duplicates {
            println!("  {d}");
        }
    }
    let rows = s.rows.max(1) as f64;
    println!(
        "wrote {} games ({} already complete), {} positions, {} rows, {} bytes ({:.1} bytes/row, {:.1} nnz/row) in {:.1} s ({:.0} rows/s) to {}",
        s.games_written,
        s.games_resumed,
        s.positions,
        s.rows,
        s.bytes,
        s.bytes as f64 / rows,
        s.nnz as f64 / rows,
        s.seconds,
        s.rows as f64 / s.seconds.max(1e-9),
        out.display()
    );
    Ok(())
}

//! The `extract` subcommand's arguments and entry point.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};

use super::{ExtractOptions, Shard, extract};
use crate::eval::{Evaluator, Material};
use crate::features::{Blocks, RelationEncoding};
use crate::rows::{Base, FeaturesAt, Labels, RowFormat};

/// How rows are made: the options `extract` and `bench extract` share.
#[derive(clap::Args, Debug, Clone)]
pub struct RowArgs {
    /// Margin in centipawns between the game move and better-scored siblings.
    #[arg(long, default_value_t = 100)]
    pub margin: i32,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// How relation kinds are written: feature value 1..10, or one index per kind.
    #[arg(long, value_enum, default_value_t = RelationEncoding::Value)]
    pub relation_encoding: RelationEncoding,
    /// The blocks beside the hand block: the attack-relation pair and kind
    /// blocks, those and the king-piece block (every piece's square and
    /// kind against each king's square, Bonanza's KP), or the king-piece
    /// block alone (far cheaper to evaluate).
    #[arg(long, value_enum, default_value_t = Blocks::Attacks)]
    pub blocks: Blocks,
    /// Which position a row describes: the sibling itself, or the leaf of
    /// its search's principal variation (a quiet position).
    #[arg(long, value_enum, default_value_t = FeaturesAt::Sibling)]
    pub features_at: FeaturesAt,
    /// Which rows a position gives: every sibling, its target the depth-1
    /// search's score with the game move raised by the margin; or only the
    /// game move's sibling, its target the score the record gives with the
    /// move (`'**` comments, as `niwatori match` and floodgate write them).
    #[arg(long, value_enum, default_value_t = Labels::Siblings)]
    pub labels: Labels,
    /// What targets are measured from: the score itself (`none`), or the
    /// score less the row position's material (`material`: a model of what
    /// material misses, evaluated as material plus the model).
    #[arg(long, value_enum, default_value_t = Base::None)]
    pub base: Base,
    /// Label with this learned model instead of material (iterations).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Expand only this fraction of each game's positions (a deterministic
    /// hash of file name, game and ply picks them); 1 expands every one.
    #[arg(long, default_value_t = 1.0)]
    pub sample: f64,
}

impl RowArgs {
    /// The options these arguments give, checked, and the labelling
    /// evaluation (`--model` or material).
    pub fn options(&self) -> Result<(ExtractOptions, Arc<dyn Evaluator>)> {
        if self.margin < 0 {
            bail!("--margin must be >= 0, got {}", self.margin);
        }
        if self.jobs == Some(0) {
            bail!("--jobs must be at least 1");
        }
        check_sample(self.sample)?;
        let options = ExtractOptions {
            margin: self.margin,
            features: self.blocks.with(self.relation_encoding),
            features_at: self.features_at,
            labels: self.labels,
            base: self.base,
            jobs: self.jobs,
            sample: self.sample,
            ..ExtractOptions::default()
        };
        let eval: Arc<dyn Evaluator> = match &self.model {
            Some(path) => Arc::new(crate::eval::Learned::load(path)?),
            None => Arc::new(Material),
        };
        Ok((options, eval))
    }
}

/// Arguments of `niwatori extract`.
#[derive(clap::Args, Debug)]
pub struct ExtractArgs {
    /// Record files (.csa, .kif, .kifu) or directories scanned recursively.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output directory (extract.json and one .svm + .svm.json per game).
    #[arg(long)]
    pub out: PathBuf,
    /// Rows as libsvm text (.svm, what liblinear-train reads) or compact
    /// binary (.bin, about a tenth of the bytes; `niwatori convert` turns
    /// either into the other).
    #[arg(long, value_enum, default_value_t = RowFormat::Text)]
    pub format: RowFormat,
    #[command(flatten)]
    pub rows: RowArgs,
    /// Skip games whose output is already complete.
    #[arg(long)]
    pub resume: bool,
    /// No progress display.
    #[arg(long)]
    pub quiet: bool,
    /// Name each game's output by its record's path below this folder
    /// (as `learn` does), so that a list of files from one tree whose names
    /// repeat across subfolders can be extracted together.
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Only shard I of K of the games (e.g. 0/4), for several machines or
    /// processes into one folder; their outputs together are the whole
    /// run's. Under `mpirun`, each rank takes its own shard by default.
    #[arg(long, value_name = "I/K")]
    pub shard: Option<Shard>,
    /// Only games whose players are both rated at least R (floodgate
    /// records' `'black_rate`/`'white_rate` comments; unrated games are
    /// left out).
    #[arg(long, value_name = "R")]
    pub min_rating: Option<f64>,
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
    let (mut options, eval) = args.rows.options()?;
    options.resume = args.resume;
    options.progress = !args.quiet;
    options.root = args.root.clone();
    options.format = args.format;
    if options.base != Base::None && !args.format.is_rows() {
        bail!(
            "--base applies to training rows; --format {} writes positions with their scores",
            args.format.name()
        );
    }
    if args.rows.blocks != Blocks::Attacks && !args.format.is_rows() {
        bail!(
            "--blocks applies to training rows; --format {} writes positions without features",
            args.format.name()
        );
    }
    options.min_rating = args.min_rating;
    options.shard = args
        .shard
        .or_else(|| crate::mpirun::rank_and_size().map(|(index, count)| Shard { index, count }));
    let out = args.out;
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
    if let Some(r) = args.min_rating {
        println!(
            "{} games left out by --min-rating {r} (a player rated lower, or unrated)",
            s.games_below_rating
        );
    }
    let rows = s.rows.max(1) as f64;
    if let Some(shard) = options.shard {
        print!("shard {shard}: ");
    }
    println!(
        "{} games ({} already complete), {} positions, {} rows, {} bytes ({:.1} bytes/row, {:.1} nnz/row) in {:.1} s ({:.0} rows/s written) to {}",
        s.games_written,
        s.games_resumed,
        s.positions,
        s.rows,
        s.bytes,
        s.bytes as f64 / rows,
        s.nnz as f64 / rows,
        s.seconds,
        (s.rows - s.rows_resumed) as f64 / s.seconds.max(1e-9),
        out.display()
    );
    Ok(())
}

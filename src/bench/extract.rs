//! `niwatori bench extract`: rows per second of each stage of extraction,
//! in memory (no disk), over the given records.
//!
//! Three stages run on the same games in the same process, each a
//! [`RowSink`] given to the same [`expand_game`] as extraction uses: scoring
//! siblings by the depth-1 search only (the baseline: a sink that takes no
//! features), plus features (counted, not written), plus libsvm text. Each
//! is run several times; medians are reported, so the cost of features and
//! writing is the difference from the baseline measured alongside it.
//!
//! With `--baseline EVAL` every run of every stage is made with both
//! evaluations in turn (labelling with a model against material, say), and
//! the ratios of their rows per second are printed: the machine's noise
//! falls on both alike.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::eval::Evaluator;
use crate::extract::{
    ExtractError, ExtractOptions, RowArgs, RowSink, SEARCH_SCORER, Scratch, SiblingScore,
    StaticScorer, expand_game, read_inputs,
};
use crate::records::Game;
use crate::search::SiblingScorer;

/// How much of extraction a stage does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Generate, apply and score siblings only.
    Score,
    /// Also compute the features (counted, not written).
    Features,
    /// Also write the libsvm rows.
    Write,
}

/// The scores alone: features are not computed.
#[derive(Default)]
struct ScoresOnly;

impl RowSink for ScoresOnly {
    const FEATURES: bool = false;
    fn row(&mut self, _: i32, _: &[(u32, u8)]) {}
}

/// Features computed and dropped.
#[derive(Default)]
struct FeaturesOnly;

impl RowSink for FeaturesOnly {
    fn row(&mut self, _: i32, _: &[(u32, u8)]) {}
}

/// Bytes a sink holds after a game (the libsvm text's length).
trait Held: RowSink + Default + Send {
    fn held(&self) -> usize {
        0
    }
    fn clear(&mut self) {}
}

impl Held for ScoresOnly {}
impl Held for FeaturesOnly {}
impl Held for Vec<u8> {
    fn held(&self) -> usize {
        self.len()
    }
    fn clear(&mut self) {
        Vec::clear(self);
    }
}

/// Which scorer the bench uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchScorer {
    /// `search::SiblingScorer`, depth 1 plus quiescence.
    Search,
    /// Minus the static evaluation of the sibling.
    Static,
}

/// Arguments of `niwatori bench extract`.
#[derive(clap::Args, Debug)]
pub struct ExtractBenchArgs {
    /// Record files (.csa, .kif, .kifu) or directories scanned recursively.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub rows: RowArgs,
    /// Runs per stage (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Only the first N games.
    #[arg(long)]
    pub games: Option<usize>,
    /// Sibling scorer: the depth-1 search (as extraction uses) or the
    /// static evaluation (isolates the cost of features and writing).
    #[arg(long, value_enum, default_value_t = BenchScorer::Search)]
    pub scorer: BenchScorer,
    /// Also label with this evaluation (material, material-hand or
    /// learned:MODEL), alternating run by run with the one `--model`
    /// names, and print both with the ratios of their rows per second.
    #[arg(long)]
    pub baseline: Option<crate::eval::EvalSpec>,
}

/// Median figures of one stage.
#[derive(Clone, Debug)]
pub struct StageFigures {
    /// The stage.
    pub stage: Stage,
    /// Median seconds per run.
    pub seconds: f64,
    /// Rows per run.
    pub rows: usize,
    /// Rows per second (rows / median seconds).
    pub rows_per_sec: f64,
    /// Non-zero features per row (0 for [`Stage::Score`]).
    pub nnz_per_row: f64,
    /// libsvm bytes per row (0 unless [`Stage::Write`]).
    pub bytes_per_row: f64,
    /// Every run's seconds.
    pub runs: Vec<f64>,
}

/// The benchmark's result.
#[derive(Clone, Debug)]
pub struct ExtractBenchReport {
    /// Games measured.
    pub games: usize,
    /// Positions expanded per run.
    pub positions: usize,
    /// Worker threads.
    pub threads: usize,
    /// One entry per stage, baseline first.
    pub stages: Vec<StageFigures>,
}

fn run_stage<S: SiblingScore, F: Fn() -> S + Sync, O: Held>(
    games: &[&Game],
    options: &ExtractOptions,
    make_scorer: &F,
) -> (f64, usize, usize, usize, usize) {
    let t = Instant::now();
    let totals = games
        .par_iter()
        .map_init(
            || (make_scorer(), Scratch::default(), O::default()),
            |(sc, scratch, sink), g| {
                sink.clear();
                match expand_game(g, sc, options, scratch, sink) {
                    Ok(r) => (r.rows, r.nnz, sink.held(), r.positions.len()),
                    Err(_) => (0, 0, 0, 0),
                }
            },
        )
        .reduce(
            || (0, 0, 0, 0),
            |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3),
        );
    (
        t.elapsed().as_secs_f64(),
        totals.0,
        totals.1,
        totals.2,
        totals.3,
    )
}

/// Runs the benchmark `runs` times per stage over the first `max_games`
/// games under `paths`, scoring with scorers from each of `make_scorers`
/// in turn within every run: one report each, in their order.
pub fn bench<S: SiblingScore, F: Fn() -> S + Sync>(
    paths: &[PathBuf],
    options: &ExtractOptions,
    runs: usize,
    max_games: Option<usize>,
    make_scorers: &[F],
) -> Result<Vec<ExtractBenchReport>, ExtractError> {
    let pool = {
        let mut b = rayon::ThreadPoolBuilder::new();
        if let Some(j) = options.jobs {
            b = b.num_threads(j);
        }
        b.build().map_err(|e| ExtractError::Pool(e.to_string()))?
    };
    pool.install(|| {
        let inputs = read_inputs(paths)?;
        let mut games: Vec<&Game> = inputs.files.iter().flat_map(|f| &f.games).collect();
        games.truncate(max_games.unwrap_or(usize::MAX));
        let mut reports: Vec<ExtractBenchReport> = make_scorers
            .iter()
            .map(|_| ExtractBenchReport {
                games: games.len(),
                positions: 0,
                threads: rayon::current_num_threads(),
                stages: Vec::new(),
            })
            .collect();
        for stage in [Stage::Score, Stage::Features, Stage::Write] {
            let mut secs = vec![Vec::new(); make_scorers.len()];
            let mut last = vec![(0, 0, 0, 0); make_scorers.len()];
            for _ in 0..runs.max(1) {
                for (i, make_scorer) in make_scorers.iter().enumerate() {
                    let (s, rows, nnz, bytes, pos) = match stage {
                        Stage::Score => run_stage::<_, _, ScoresOnly>(&games, options, make_scorer),
                        Stage::Features => {
                            run_stage::<_, _, FeaturesOnly>(&games, options, make_scorer)
                        }
                        Stage::Write => run_stage::<_, _, Vec<u8>>(&games, options, make_scorer),
                    };
                    secs[i].push(s);
                    last[i] = (rows, nnz, bytes, pos);
                }
            }
            for ((report, secs), (rows, nnz, bytes, pos)) in reports.iter_mut().zip(secs).zip(last)
            {
                let mut sorted = secs.clone();
                sorted.sort_by(f64::total_cmp);
                let median = sorted[sorted.len() / 2];
                report.positions = pos;
                let per_row = |x: usize| x as f64 / rows.max(1) as f64;
                report.stages.push(StageFigures {
                    stage,
                    seconds: median,
                    rows,
                    rows_per_sec: rows as f64 / median.max(1e-9),
                    nnz_per_row: per_row(nnz),
                    bytes_per_row: per_row(bytes),
                    runs: secs,
                });
            }
        }
        Ok(reports)
    })
}

/// Runs `niwatori bench extract`.
pub fn run(args: ExtractBenchArgs) -> Result<()> {
    let (options, eval) = args.rows.options()?;
    let mut evals: Vec<Arc<dyn Evaluator>> = vec![eval];
    if let Some(spec) = &args.baseline {
        evals.push(spec.load().context("--baseline")?);
    }
    let reports = match args.scorer {
        BenchScorer::Search => {
            let scorers: Vec<_> = evals
                .iter()
                .map(|e| || SiblingScorer::new(e.clone()))
                .collect();
            bench(&args.paths, &options, args.runs, args.games, &scorers)
        }
        BenchScorer::Static => {
            let scorers: Vec<_> = evals
                .iter()
                .map(|e| || StaticScorer::new(e.clone()))
                .collect();
            bench(&args.paths, &options, args.runs, args.games, &scorers)
        }
    }
    .context("bench extract")?;
    for (r, eval) in reports.iter().zip(&evals) {
        println!(
            "extract bench: {} games, {} positions, {} threads, evaluator {}, scorer {}, blocks {}, encoding {}, median of {} runs",
            r.games,
            r.positions,
            r.threads,
            eval.name(),
            match args.scorer {
                BenchScorer::Search => SEARCH_SCORER,
                BenchScorer::Static => "static",
            },
            options.features.blocks().map_or("hand", |b| b.as_str()),
            options.features.encoding.as_str(),
            args.runs.max(1)
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
    }
    if let [r, baseline] = &reports[..] {
        println!(
            "ratio {} / {} rows/s (medians): {}",
            evals[0].name(),
            evals[1].name(),
            r.stages
                .iter()
                .zip(&baseline.stages)
                .map(|(s, b)| format!(
                    "{} {:.2}",
                    format!("{:?}", s.stage).to_lowercase(),
                    s.rows_per_sec / b.rows_per_sec.max(1e-9)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}

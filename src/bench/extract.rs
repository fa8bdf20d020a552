//! `niwatori bench extract`: rows per second of each stage of extraction,
//! in memory (no disk), over the given records.
//!
//! Three stages run on the same games in the same process, each a
//! [`RowSink`] given to the same [`expand_game`] as extraction uses: scoring
//! siblings by the depth-1 search only (the baseline: a sink that takes no
//! features), plus features (counted, not written), plus libsvm text. Each
//! is run several times; medians are reported, so the cost of features and
//! writing is the difference from the baseline measured alongside it.

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
/// games under `paths`, scoring with scorers from `make_scorer`.
pub fn bench<S: SiblingScore, F: Fn() -> S + Sync>(
    paths: &[PathBuf],
    options: &ExtractOptions,
    runs: usize,
    max_games: Option<usize>,
    make_scorer: F,
) -> Result<ExtractBenchReport, ExtractError> {
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
        let mut stages = Vec::new();
        let mut positions = 0;
        for stage in [Stage::Score, Stage::Features, Stage::Write] {
            let mut secs = Vec::new();
            let mut last = (0, 0, 0, 0);
            for _ in 0..runs.max(1) {
                let (s, rows, nnz, bytes, pos) = match stage {
                    Stage::Score => run_stage::<_, _, ScoresOnly>(&games, options, &make_scorer),
                    Stage::Features => {
                        run_stage::<_, _, FeaturesOnly>(&games, options, &make_scorer)
                    }
                    Stage::Write => run_stage::<_, _, Vec<u8>>(&games, options, &make_scorer),
                };
                secs.push(s);
                last = (rows, nnz, bytes, pos);
            }
            let mut sorted = secs.clone();
            sorted.sort_by(f64::total_cmp);
            let median = sorted[sorted.len() / 2];
            let (rows, nnz, bytes, pos) = last;
            positions = pos;
            let per_row = |x: usize| x as f64 / rows.max(1) as f64;
            stages.push(StageFigures {
                stage,
                seconds: median,
                rows,
                rows_per_sec: rows as f64 / median.max(1e-9),
                nnz_per_row: per_row(nnz),
                bytes_per_row: per_row(bytes),
                runs: secs,
            });
        }
        Ok(ExtractBenchReport {
            games: games.len(),
            positions,
            threads: rayon::current_num_threads(),
            stages,
        })
    })
}

/// Runs `niwatori bench extract`.
pub fn run(args: ExtractBenchArgs) -> Result<()> {
    let (options, eval) = args.rows.options()?;
    let scorer_eval: Arc<dyn Evaluator> = eval.clone();
    let r = match args.scorer {
        BenchScorer::Search => bench(&args.paths, &options, args.runs, args.games, || {
            SiblingScorer::new(scorer_eval.clone())
        }),
        BenchScorer::Static => bench(&args.paths, &options, args.runs, args.games, || {
            StaticScorer::new(scorer_eval.clone())
        }),
    }
    .context("bench extract")?;
    println!(
        "extract bench: {} games, {} positions, {} threads, evaluator {}, scorer {}, encoding {}, median of {} runs",
        r.games,
        r.positions,
        r.threads,
        eval.name(),
        match args.scorer {
            BenchScorer::Search => SEARCH_SCORER,
            BenchScorer::Static => "static",
        },
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
    Ok(())
}

//! `niwatori extract --bench`: rows per second of each stage of extraction,
//! in memory (no disk), over the given records.
//!
//! Three stages run on the same games in the same process: scoring siblings
//! by the depth-1 search only (the baseline), plus features, plus libsvm text. Each is run several
//! times; medians are reported, so the cost of features and writing is the
//! difference from the baseline measured alongside it.

use std::path::PathBuf;
use std::time::Instant;

use rayon::prelude::*;

use super::{ExtractError, ExtractOptions, Scratch, SiblingScore, Stage, expand_game, read_inputs};
use crate::records::Game;

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
pub struct BenchReport {
    /// Games measured.
    pub games: usize,
    /// Positions expanded per run.
    pub positions: usize,
    /// Worker threads.
    pub threads: usize,
    /// One entry per stage, baseline first.
    pub stages: Vec<StageFigures>,
}

fn run_stage<S: SiblingScore, F: Fn() -> S + Sync>(
    games: &[&Game],
    stage: Stage,
    options: &ExtractOptions,
    make_scorer: &F,
) -> (f64, usize, usize, usize, usize) {
    let t = Instant::now();
    let totals = games
        .par_iter()
        .map_init(
            || (make_scorer(), Scratch::default(), Vec::new()),
            |(sc, scratch, buf), g| {
                buf.clear();
                match expand_game(g, sc, stage, options, scratch, buf) {
                    Ok(r) => (r.rows, r.nnz, buf.len(), r.positions.len()),
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
) -> Result<BenchReport, ExtractError> {
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
                let (s, rows, nnz, bytes, pos) = run_stage(&games, stage, options, &make_scorer);
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
        Ok(BenchReport {
            games: games.len(),
            positions,
            threads: rayon::current_num_threads(),
            stages,
        })
    })
}

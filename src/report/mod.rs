//! Next-move agreement: how often an evaluation prefers the move that was
//! played, and how well a model fits held-out labels.
//!
//! At depth 1 every legal move's sibling is valued by the evaluation (from
//! the mover's side: statically, or by the labels' depth-1 search, see
//! [`SiblingValue`]) and the moves are ranked; at depth D > 1 the search's
//! best move is compared with the game move. Ties are counted fairly: if
//! `r` moves are strictly better than the game move and `t` (itself
//! included) are level with it, the position counts
//! `clamp((N − r) / t, 0, 1)` towards top-N — the expected credit when ties
//! are broken at random, never move-generation order.
//!
//! ```
//! use niwatori::report::credit;
//! // game move (index 1) tied with two others for best: 1/3 for top-1,
//! // and certainly within the top 3
//! let values = [5.0, 5.0, 1.0, 5.0];
//! assert!((credit(&values, 1, 1) - 1.0 / 3.0).abs() < 1e-12);
//! assert_eq!(credit(&values, 1, 3), 1.0);
//! ```

pub mod cli;
pub mod split;

use std::collections::BTreeMap;
use std::path::Path;

use rayon::prelude::*;
use rsshogi::board::{Move32List, generate_legal_all_move32};
use serde::{Deserialize, Serialize};

use crate::eval::Evaluator;
use crate::extract::PositionSample;
use crate::records::Game;
use crate::search::{Control, Limits, SiblingSearch, think};
use crate::train::dataset::Dataset;
use crate::tt::TranspositionTable;

/// Game phases by move number (1-based ply of the move).
pub const PHASES: [(&str, u32, u32); 3] =
    [("1-30", 1, 30), ("31-80", 31, 80), ("81+", 81, u32::MAX)];

/// The expected top-`n` credit of the move at `game` among `values`
/// (higher is better), ties broken at random.
pub fn credit(values: &[f64], game: usize, n: usize) -> f64 {
    let g = values[game];
    let better = values.iter().filter(|&&v| v > g).count();
    let level = values.iter().filter(|&&v| v == g).count();
    if better >= n {
        0.0
    } else {
        ((n - better) as f64 / level as f64).min(1.0)
    }
}

/// Agreement counts: positions, and summed top-1 / top-3 credits.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    pub positions: u64,
    pub top1: f64,
    pub top3: f64,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.positions += other.positions;
        self.top1 += other.top1;
        self.top3 += other.top3;
    }
}

/// Agreement overall and by phase.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Agreement {
    pub overall: Tally,
    pub by_phase: [Tally; 3],
}

impl Agreement {
    fn add_position(&mut self, move_number: u32, top1: f64, top3: f64) {
        let t = Tally {
            positions: 1,
            top1,
            top3,
        };
        self.overall.add(&t);
        let phase = PHASES
            .iter()
            .position(|&(_, lo, hi)| (lo..=hi).contains(&move_number))
            .unwrap_or(2);
        self.by_phase[phase].add(&t);
    }

    fn merge(mut self, other: Agreement) -> Agreement {
        self.overall.add(&other.overall);
        for (a, b) in self.by_phase.iter_mut().zip(other.by_phase.iter()) {
            a.add(b);
        }
        self
    }

    /// As reported: fractions, with `top3` absent at depth > 1.
    pub fn summary(&self, with_top3: bool) -> AgreementSummary {
        let frac = |t: &Tally| PhaseSummary {
            positions: t.positions,
            top1: t.top1 / t.positions.max(1) as f64,
            top3: with_top3.then(|| t.top3 / t.positions.max(1) as f64),
        };
        AgreementSummary {
            positions: self.overall.positions,
            top1: frac(&self.overall).top1,
            top3: frac(&self.overall).top3,
            by_phase: PHASES
                .iter()
                .zip(self.by_phase.iter())
                .map(|(&(name, _, _), t)| (name.to_string(), frac(t)))
                .collect(),
        }
    }
}

/// One phase's agreement as fractions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseSummary {
    pub positions: u64,
    pub top1: f64,
    pub top3: Option<f64>,
}

/// An evaluation's agreement as fractions (the JSON report's entries).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgreementSummary {
    pub positions: u64,
    pub top1: f64,
    pub top3: Option<f64>,
    pub by_phase: BTreeMap<String, PhaseSummary>,
}

/// How depth 1 values a sibling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SiblingValue {
    /// Its static evaluation (what a model trained on sibling rows predicts).
    #[default]
    Static,
    /// Its depth-1 search plus quiescence with the evaluation, as `extract`
    /// labels it: what a model trained on leaf rows
    /// (`--features-at leaf`) predicts for a sibling.
    Search,
}

impl SiblingValue {
    /// How `model` values a sibling: a model of quiet leaves needs the
    /// depth-1 search its labels came from; a model of siblings is static.
    pub fn for_model(model: &crate::eval::Learned) -> Self {
        if model.leaf_rows() {
            Self::Search
        } else {
            Self::Static
        }
    }

    /// The name used on the command line and in reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Static => "static",
            Self::Search => "search",
        }
    }
}

/// Agreement of `eval` with the moves of `games` at `depth` (1: rank the
/// siblings by their value, see [`SiblingValue`]; more: the search's best
/// move).
pub fn agreement(
    games: &[Game],
    eval: &dyn Evaluator,
    depth: u32,
    siblings: SiblingValue,
) -> Agreement {
    agreement_on_sample(games, eval, depth, siblings, 1.0)
}

/// [`agreement`] on the positions `extract --sample` would pick with this
/// fraction (every one at 1).
pub fn agreement_on_sample(
    games: &[Game],
    eval: &dyn Evaluator,
    depth: u32,
    siblings: SiblingValue,
    sample: f64,
) -> Agreement {
    games
        .par_iter()
        .map(|game| game_agreement(game, eval, depth, siblings, sample))
        .reduce(Agreement::default, Agreement::merge)
}

fn game_agreement(
    game: &Game,
    eval: &dyn Evaluator,
    depth: u32,
    siblings: SiblingValue,
    sample: f64,
) -> Agreement {
    let sample = PositionSample::new(game, sample);
    let mut out = Agreement::default();
    let mut pos = game.start_position();
    let tt = (depth > 1).then(|| TranspositionTable::new(4));
    let mut search = (depth == 1 && siblings == SiblingValue::Search).then(SiblingSearch::new);
    for (ply, &played16) in game.moves.iter().enumerate() {
        let played = pos.move32_from_move(played16);
        let move_number = ply as u32 + 1;
        if !sample.takes(ply + 1) {
            pos.apply_move32(played);
            continue;
        }
        if let Some(tt) = &tt {
            let result = think(
                &pos,
                eval,
                tt,
                &Limits::depth(depth),
                1,
                &Control::new(),
                &mut |_| {},
            );
            let hit = result.best_move.is_some_and(|m| m.to_move() == played16);
            out.add_position(move_number, f64::from(u8::from(hit)), 0.0);
        } else {
            let mut moves = Move32List::new();
            generate_legal_all_move32(&pos, &mut moves);
            let mut values = Vec::with_capacity(moves.len());
            let mut game_index = None;
            for (i, &mv) in moves.iter().enumerate() {
                if mv.to_move() == played16 {
                    game_index = Some(i);
                }
                pos.apply_move32(mv);
                values.push(match &mut search {
                    Some(s) => f64::from(s.score(eval, &mut pos)),
                    None => -f64::from(eval.evaluate(&pos)),
                });
                pos.undo_move32(mv).expect("undo of a move just applied");
            }
            if let Some(g) = game_index {
                out.add_position(move_number, credit(&values, g, 1), credit(&values, g, 3));
            }
        }
        pos.apply_move32(played);
    }
    out
}

/// How well predictions fit labelled rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Regression {
    pub rows: usize,
    /// Root mean squared error, in centipawns.
    pub rmse_cp: f64,
    /// Coefficient of determination of the predictions.
    pub r2: f64,
    /// RMSE (cp) of a least-squares fit to these same rows (an optimistic
    /// floor: the best any weights could do on them).
    pub least_squares_rmse_cp: f64,
}

/// RMSE and R² of `weights` (scaled label units) on `data`, next to a
/// least-squares fit of the same rows; `scale` converts to centipawns.
pub fn regression(data: &Dataset, weights: &[f64], scale: f64) -> Regression {
    let n = data.n_rows();
    let mut w = weights.to_vec();
    w.resize(data.dim(), 0.0);
    let mut pred = vec![0.0; n];
    data.mul_vec(&w, &mut pred);
    let y = data.labels();
    let (rmse, r2) = fit_quality(&pred, y);
    // Least squares: L2-loss SVR with p = 0 and very weak regularisation.
    let params = crate::train::SvrParams::default()
        .c(1e4)
        .p(0.0)
        .eps(1e-3)
        .max_iter(50)
        .bias(data.bias());
    let ls_rmse = match linfa::ParamGuard::check(params) {
        Ok(valid) => {
            let (w_ls, _) = crate::train::fit_quiet(data, &valid);
            let mut p_ls = vec![0.0; n];
            data.mul_vec(&w_ls, &mut p_ls);
            fit_quality(&p_ls, y).0
        }
        Err(_) => f64::NAN,
    };
    Regression {
        rows: n,
        rmse_cp: rmse * scale,
        r2,
        least_squares_rmse_cp: ls_rmse * scale,
    }
}

fn fit_quality(pred: &[f64], y: &[f64]) -> (f64, f64) {
    let n = y.len().max(1) as f64;
    let mean = y.iter().sum::<f64>() / n;
    let sse: f64 = pred.iter().zip(y).map(|(p, t)| (p - t) * (p - t)).sum();
    let sst: f64 = y.iter().map(|t| (t - mean) * (t - mean)).sum();
    (
        (sse / n).sqrt(),
        if sst > 0.0 { 1.0 - sse / sst } else { 0.0 },
    )
}

/// Reads every game of the record files (problems are reported by the
/// caller's reader; unusable files are skipped with a message); a game that
/// repeats an earlier one is kept once.
pub fn read_all_games(files: &[impl AsRef<Path>]) -> Vec<Game> {
    let mut games = Vec::new();
    let mut seen = crate::records::Duplicates::default();
    for file in files {
        match crate::records::read_games(file.as_ref()) {
            Ok(fg) => {
                for p in &fg.problems {
                    eprintln!("{p}");
                }
                for g in fg.games {
                    match seen.first_seen(&g) {
                        Some(first) => eprintln!(
                            "{} game {} repeats {first}: counted once",
                            g.source.display(),
                            g.index + 1
                        ),
                        None => games.push(g),
                    }
                }
            }
            Err(e) => eprintln!("{e}"),
        }
    }
    games
}

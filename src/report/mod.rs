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

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;

use rayon::prelude::*;
use rsshogi::board::{Move32List, generate_legal_all_move32};
use serde::{Deserialize, Serialize};

use crate::eval::{Evaluator, Learned, Material};
use crate::extract::PositionSample;
use crate::policy::PolicyModel;
use crate::progress::{Progress, Unit};
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
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
    let quiet = Progress::start(
        "report",
        games.len() as u64,
        Unit::Items("games"),
        None,
        false,
    );
    agreement_shown(games, eval, depth, siblings, sample, &quiet)
}

/// [`agreement_on_sample`], counting each game and its positions on `progress`.
fn agreement_shown(
    games: &[Game],
    eval: &dyn Evaluator,
    depth: u32,
    siblings: SiblingValue,
    sample: f64,
    progress: &Progress,
) -> Agreement {
    games
        .par_iter()
        .map(|game| {
            let a = game_agreement(game, eval, depth, siblings, sample);
            progress.inc(1, a.overall.positions);
            a
        })
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

/// How many games a [`Report`] counts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportGames {
    pub held_out: usize,
    pub train: usize,
    /// Training games the model's figure on training games comes from.
    pub train_sampled: usize,
}

/// The next-move agreement report: material and the model on the
/// evaluation games (the held-out ones, or the training games when nothing
/// is held out), the model on the training games, and its fit of held-out
/// rows. Written as JSON, printed and plotted from this one type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub depth: u32,
    pub evaluated_on: String,
    pub games: ReportGames,
    pub learned: AgreementSummary,
    pub learned_on_training_games: AgreementSummary,
    pub material: AgreementSummary,
    /// Fraction of each game's positions measured.
    pub positions_sampled: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regression: Option<Regression>,
    pub siblings: SiblingValue,
    /// A move policy's agreement on the same games (`report --policy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<AgreementSummary>,
}

/// A move policy's agreement on the evaluation games and on the training
/// games (`report --policy` without `--model`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicyReport {
    pub evaluated_on: String,
    pub games: ReportGames,
    pub policy: AgreementSummary,
    pub policy_on_training_games: AgreementSummary,
}

impl PolicyReport {
    /// Measures `policy` on `held` (or `train` if nothing is held out) and
    /// on `train`.
    pub fn build(train: &[Game], held: &[Game], policy: &PolicyModel) -> PolicyReport {
        let eval_games = if held.is_empty() { train } else { held };
        PolicyReport {
            evaluated_on: evaluated_on(held),
            games: ReportGames {
                held_out: held.len(),
                train: train.len(),
                train_sampled: train.len(),
            },
            policy: policy_agreement(eval_games, policy).summary(true),
            policy_on_training_games: policy_agreement(train, policy).summary(true),
        }
    }

    pub fn print(&self) {
        println!(
            "next-move agreement of the policy on {} ({} training games, {} held out)",
            self.evaluated_on, self.games.train, self.games.held_out
        );
        print_agreements(&[
            ("policy", &self.policy),
            ("policy_on_training_games", &self.policy_on_training_games),
        ]);
    }
}

fn evaluated_on(held: &[Game]) -> String {
    if held.is_empty() {
        "training games (nothing held out)"
    } else {
        "held-out games"
    }
    .into()
}

/// Agreement of a move policy with the moves of `games`: its top-scored
/// moves against the game move, ties shared as for evaluations.
pub fn policy_agreement(games: &[Game], policy: &PolicyModel) -> Agreement {
    games
        .par_iter()
        .map(|game| {
            let mut out = Agreement::default();
            crate::policy::for_each_position(game, |pos, moves, g, move_number| {
                let scores: Vec<f64> = policy
                    .scores(pos, moves)
                    .into_iter()
                    .map(f64::from)
                    .collect();
                out.add_position(move_number, credit(&scores, g, 1), credit(&scores, g, 3));
            });
            out
        })
        .reduce(Agreement::default, Agreement::merge)
}

/// The agreement table's rows.
fn print_agreements(rows: &[(&str, &AgreementSummary)]) {
    let pct = |v: Option<f64>| v.map_or("   -  ".into(), |x| format!("{:5.1}%", 100.0 * x));
    println!(
        "{:<28} {:>9} {:>7} {:>7}   by phase (top-1)",
        "evaluation", "positions", "top-1", "top-3"
    );
    for (key, e) in rows {
        let phases: Vec<String> = PHASES
            .iter()
            .map(|(p, _, _)| format!("{p} {}", pct(e.by_phase.get(*p).map(|s| s.top1))))
            .collect();
        println!(
            "{:<28} {:>9} {:>7} {:>7}   {}",
            key,
            e.positions,
            pct(Some(e.top1)),
            pct(e.top3),
            phases.join("  ")
        );
    }
}

impl Report {
    /// Measures `model` and material on `held` (or on `train` when nothing
    /// is held out) and `model` on `train`, and, given the held-out rows
    /// `rows`, the model's fit of them.
    pub fn build(
        train: &[Game],
        held: &[Game],
        model: &Arc<Learned>,
        depth: u32,
        siblings: SiblingValue,
        sample: f64,
        rows: Option<&Path>,
    ) -> anyhow::Result<Report> {
        let eval_games = if held.is_empty() { train } else { held };
        let with_top3 = depth == 1;
        // Valuing siblings by search costs a search per sibling: the
        // training games' figure then comes from an even sample as large as
        // the held-out set, not from all of them.
        let train_sample: Vec<Game> = match siblings {
            SiblingValue::Search if !held.is_empty() => {
                let step = train.len() / held.len();
                train.iter().step_by(step.max(1)).cloned().collect()
            }
            _ => train.to_vec(),
        };
        // A bar on a terminal, a line every ten seconds in logs: games of
        // the three measurements, with positions and positions/s.
        let progress = Progress::start(
            "report",
            (2 * eval_games.len() + train_sample.len()) as u64,
            Unit::Items("games"),
            Some("positions"),
            true,
        );
        let run = |eval: &dyn Evaluator, games: &[Game]| -> AgreementSummary {
            agreement_shown(games, eval, depth, siblings, sample, &progress).summary(with_top3)
        };
        let regression = match rows {
            Some(dir) => {
                let loaded = crate::train::load::load(&[dir.to_path_buf()], -1.0, false)
                    .with_context(|| format!("loading held-out rows from {}", dir.display()))?;
                Some(regression(
                    &loaded.data,
                    &model.weights_f64(),
                    model.label_scale(),
                ))
            }
            None => None,
        };
        Ok(Report {
            depth,
            evaluated_on: evaluated_on(held),
            games: ReportGames {
                held_out: held.len(),
                train: train.len(),
                train_sampled: train_sample.len(),
            },
            material: run(&Material, eval_games),
            learned: run(model.as_ref(), eval_games),
            learned_on_training_games: {
                let on_train = run(model.as_ref(), &train_sample);
                progress.finish();
                on_train
            },
            positions_sampled: sample,
            regression,
            siblings,
            policy: None,
        })
    }

    /// Prints the agreement table.
    pub fn print(&self) {
        let siblings = if self.depth == 1 {
            format!(" (siblings valued: {})", self.siblings.as_str())
        } else {
            String::new()
        };
        let sampled = if self.positions_sampled < 1.0 {
            format!(
                ", a {:.0}% sample of positions",
                100.0 * self.positions_sampled
            )
        } else {
            String::new()
        };
        println!(
            "next-move agreement at depth {}{siblings} on {}{sampled} ({} training games, {} held out)",
            self.depth, self.evaluated_on, self.games.train, self.games.held_out
        );
        let mut rows = self.evaluations().to_vec();
        if let Some(p) = &self.policy {
            rows.push(("policy", p));
        }
        print_agreements(&rows);
        if let Some(r) = &self.regression {
            println!(
                "held-out rows: {}  RMSE {:.1} cp  R² {:.3}  (least-squares fit of the same rows: RMSE {:.1} cp)",
                r.rows, r.rmse_cp, r.r2, r.least_squares_rmse_cp
            );
        }
    }

    /// Draws top-1 agreement by phase (and overall) of material and the
    /// model.
    pub fn plot(&self, path: &Path) -> anyhow::Result<()> {
        let series: Vec<crate::plot::PhaseSeries> = self.evaluations()[..2]
            .iter()
            .map(|(key, e)| crate::plot::PhaseSeries {
                name: key.to_string(),
                values: PHASES
                    .iter()
                    .map(|(p, _, _)| {
                        let top1 = e.by_phase.get(*p).map_or(0.0, |s| s.top1);
                        (p.to_string(), top1)
                    })
                    .chain(std::iter::once(("all".to_string(), e.top1)))
                    .collect(),
            })
            .collect();
        let title = format!("next-move agreement, depth {}", self.depth);
        crate::plot::agreement_by_phase(path, &title, &series)?;
        Ok(())
    }

    /// The evaluations measured, by their names in the report.
    fn evaluations(&self) -> [(&'static str, &AgreementSummary); 3] {
        [
            ("material", &self.material),
            ("learned", &self.learned),
            ("learned_on_training_games", &self.learned_on_training_games),
        ]
    }
}

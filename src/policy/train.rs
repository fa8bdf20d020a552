//! Fitting a linear softmax policy to game moves: multinomial logistic
//! regression over each position's legal moves, by AdaGrad stochastic
//! gradient descent with an L2 penalty.
//!
//! Why our own solver: the classes of a position are its legal moves, a
//! different set each time, with a sparse feature vector each; linfa's
//! logistic regression wants one dense matrix and fixed classes. The loss
//! is `−log p(game move)`; its gradient for a feature is
//! `Σ_moves (p(move) − [move is the game move]) · [move has the feature]`,
//! taken one position at a time in a seeded random order.
//!
//! Training is resumable: after every epoch the state (weights, AdaGrad
//! sums, epoch) goes to `MODEL.state` and the best model on the validation
//! games so far to `MODEL` and `MODEL.json`, each atomically. Each epoch's
//! order depends only on the seed and the epoch, so an interrupted run
//! resumed gives the same model as one that was never stopped.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::features::{self, Feature, PER_MOVE};
use super::model::{EpochStats, PolicyMeta, PolicyModel};
use crate::progress::{Progress, Unit};
use crate::records::Game;

/// The solver's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicySettings {
    pub epochs: u32,
    /// AdaGrad's step size.
    pub eta: f64,
    /// L2 penalty per feature occurrence.
    pub lambda: f64,
    /// Seed of the epochs' orders.
    pub seed: u64,
}

impl PolicySettings {
    /// Checks the values once, before any work.
    pub fn check(&self) -> Result<()> {
        ensure!(self.epochs >= 1, "--epochs must be at least 1");
        ensure!(
            self.eta > 0.0 && self.eta.is_finite(),
            "--eta must be positive"
        );
        ensure!(
            self.lambda >= 0.0 && self.lambda.is_finite(),
            "--lambda must be 0 or more"
        );
        Ok(())
    }
}

impl Default for PolicySettings {
    fn default() -> Self {
        PolicySettings {
            epochs: 6,
            eta: 0.05,
            lambda: 1e-6,
            seed: 1,
        }
    }
}

/// Every position of some games with its legal moves' features.
#[derive(Clone, Debug, Default)]
pub struct PolicyData {
    /// `PER_MOVE` features per move, the moves of position `i` at
    /// `starts[i]..starts[i + 1]`.
    features: Vec<Feature>,
    starts: Vec<u32>,
    /// Index of the game move among the position's moves.
    played: Vec<u32>,
    /// 1-based ply of the game move.
    move_number: Vec<u32>,
}

impl PolicyData {
    /// The positions of `games` (those whose game move is legal there).
    pub fn from_games(games: &[Game], progress: &Progress) -> PolicyData {
        let parts: Vec<PolicyData> = games
            .par_iter()
            .map(|game| {
                let mut part = PolicyData::default();
                super::for_each_position(game, |pos, legal, played, move_number| {
                    part.starts.push((part.features.len() / PER_MOVE) as u32);
                    part.features.extend(features::move_features(pos, legal));
                    part.played.push(played as u32);
                    part.move_number.push(move_number);
                });
                progress.inc(1, part.played.len() as u64);
                part
            })
            .collect();
        let mut all = PolicyData::default();
        for part in parts {
            let base = (all.features.len() / PER_MOVE) as u32;
            all.starts.extend(part.starts.iter().map(|s| s + base));
            all.features.extend(part.features);
            all.played.extend(part.played);
            all.move_number.extend(part.move_number);
        }
        all.starts.push((all.features.len() / PER_MOVE) as u32);
        all
    }

    pub fn positions(&self) -> usize {
        self.played.len()
    }

    /// Position `i`'s moves' features, `PER_MOVE` each.
    pub fn moves(&self, i: usize) -> &[Feature] {
        &self.features[PER_MOVE * self.starts[i] as usize..PER_MOVE * self.starts[i + 1] as usize]
    }

    pub fn played(&self, i: usize) -> usize {
        self.played[i] as usize
    }

    pub fn move_number(&self, i: usize) -> u32 {
        self.move_number[i]
    }

    /// Mean top-1 credit of `model` (ties shared, as `report` counts them).
    pub fn top1(&self, model: &PolicyModel) -> f64 {
        let total: f64 = (0..self.positions())
            .into_par_iter()
            .map(|i| {
                let scores: Vec<f64> = self
                    .moves(i)
                    .chunks_exact(PER_MOVE)
                    .map(|m| f64::from(model.score(m)))
                    .collect();
                crate::report::credit(&scores, self.played(i), 1)
            })
            .sum();
        total / self.positions().max(1) as f64
    }
}

/// Where training stands: what `MODEL.state` holds.
struct State {
    epoch: u32,
    model: PolicyModel,
    /// AdaGrad's sums of squared gradients.
    squares: Vec<f32>,
}

const STATE_MAGIC: &[u8; 8] = b"NWPOLST1";

fn state_path(model: &Path) -> PathBuf {
    let mut s = model.as_os_str().to_owned();
    s.push(".state");
    PathBuf::from(s)
}

impl State {
    fn to_bytes(&self) -> Vec<u8> {
        let mut b = STATE_MAGIC.to_vec();
        b.extend(self.epoch.to_le_bytes());
        b.extend((self.model.weights.len() as u32).to_le_bytes());
        for v in self.model.weights.iter().chain(&self.squares) {
            b.extend(v.to_le_bytes());
        }
        b
    }

    fn from_bytes(path: &Path, b: &[u8]) -> Result<State> {
        let n = features::COUNT;
        if b.len() != 16 + 8 * n
            || &b[..8] != STATE_MAGIC
            || u32::from_le_bytes(b[12..16].try_into()?) as usize != n
        {
            bail!(
                "{}: not a policy training state of this build (delete it to start afresh)",
                path.display()
            );
        }
        let floats: Vec<f32> = b[16..]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        Ok(State {
            epoch: u32::from_le_bytes(b[8..12].try_into()?),
            model: PolicyModel {
                weights: floats[..n].to_vec(),
            },
            squares: floats[n..].to_vec(),
        })
    }
}

/// One pass over `data` in a seeded order; returns the mean loss.
fn epoch(state: &mut State, data: &PolicyData, settings: &PolicySettings) -> f64 {
    let n = data.positions();
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = crate::random::Rng::new(settings.seed ^ (u64::from(state.epoch) << 32));
    for i in (1..n).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let (eta, lambda) = (settings.eta as f32, settings.lambda as f32);
    let mut gradient = vec![0f32; features::COUNT];
    let mut touched: Vec<Feature> = Vec::new();
    let mut probabilities = Vec::new();
    let mut loss = 0.0;
    let State { model, squares, .. } = state;
    for &i in &order {
        let moves = data.moves(i);
        probabilities.clear();
        probabilities.extend(moves.chunks_exact(PER_MOVE).map(|m| model.score(m)));
        let top = probabilities
            .iter()
            .copied()
            .fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0;
        for p in probabilities.iter_mut() {
            *p = (*p - top).exp();
            sum += *p;
        }
        let played = data.played(i);
        loss += -f64::from((probabilities[played] / sum).ln());
        for (j, m) in moves.chunks_exact(PER_MOVE).enumerate() {
            let g = probabilities[j] / sum - f32::from(u8::from(j == played));
            for &f in m {
                if gradient[f as usize] == 0.0 {
                    touched.push(f);
                }
                gradient[f as usize] += g;
            }
        }
        for &f in &touched {
            let f = f as usize;
            let g = gradient[f] + lambda * model.weights[f];
            gradient[f] = 0.0;
            squares[f] += g * g;
            if squares[f] > 0.0 {
                model.weights[f] -= eta * g / squares[f].sqrt();
            }
        }
        touched.clear();
    }
    loss / n.max(1) as f64
}

/// Trains on `train`, keeping the epoch best on `validation`, writing
/// `out` (+ `.json`, `.state`) after each epoch; resumes from
/// `out.state` if it is there and was made with the same settings and data.
pub fn train(
    train: &PolicyData,
    validation: &PolicyData,
    mut meta: PolicyMeta,
    out: &Path,
    quiet: bool,
) -> Result<PolicyModel> {
    meta.settings.check()?;
    let settings = meta.settings.clone();
    let state_file = state_path(out);
    let (mut state, mut best) = if state_file.exists() {
        let bytes = std::fs::read(&state_file)
            .with_context(|| format!("reading {}", state_file.display()))?;
        let state = State::from_bytes(&state_file, &bytes)?;
        let (best, before) = PolicyModel::load(out)?;
        let same = |a: &PolicyMeta, b: &PolicyMeta| {
            (
                a.settings.eta,
                a.settings.lambda,
                a.settings.seed,
                &a.kifu,
                &a.extra,
                a.train_positions,
                a.validation_positions,
            ) == (
                b.settings.eta,
                b.settings.lambda,
                b.settings.seed,
                &b.kifu,
                &b.extra,
                b.train_positions,
                b.validation_positions,
            )
        };
        ensure!(
            same(&before, &meta) && before.history.len() == state.epoch as usize,
            "{} was made with other settings or data; delete it (and {}) to start afresh",
            state_file.display(),
            out.display()
        );
        eprintln!("policy: resuming after epoch {}", state.epoch);
        meta.history = before.history;
        meta.best_epoch = before.best_epoch;
        (state, best)
    } else {
        let zero = PolicyModel::zeros();
        (
            State {
                epoch: 0,
                model: zero.clone(),
                squares: vec![0.0; features::COUNT],
            },
            zero,
        )
    };
    let progress = Progress::start(
        "policy",
        u64::from(settings.epochs),
        Unit::Items("epochs"),
        None,
        !quiet,
    );
    progress.inc(u64::from(state.epoch.min(settings.epochs)), 0);
    while state.epoch < settings.epochs {
        let start = Instant::now();
        let loss = epoch(&mut state, train, &settings);
        state.epoch += 1;
        let top1 = validation.top1(&state.model);
        let best_so_far = meta
            .history
            .iter()
            .map(|h| h.validation_top1)
            .fold(f64::NEG_INFINITY, f64::max);
        meta.history.push(EpochStats {
            epoch: state.epoch,
            train_loss: loss,
            validation_top1: top1,
            seconds: start.elapsed().as_secs_f64(),
        });
        if top1 > best_so_far {
            best = state.model.clone();
            meta.best_epoch = state.epoch;
        }
        progress.println(&format!(
            "policy: epoch {}: train loss {loss:.4}, validation top-1 {:.2} %",
            state.epoch,
            100.0 * top1
        ));
        best.save(out, &meta)?;
        crate::atomic::write_atomic(&state_file, state.to_bytes())
            .with_context(|| format!("writing {}", state_file.display()))?;
        progress.inc(1, 0);
    }
    progress.finish();
    Ok(best)
}

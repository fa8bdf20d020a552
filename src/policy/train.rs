//! Fitting a softmax policy to game moves: multinomial logistic regression
//! over each position's legal moves (with `hidden` units, through one
//! hidden relu layer by backpropagation), by AdaGrad stochastic gradient
//! descent with an L2 penalty.
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
use super::model::{EpochStats, MAX_HIDDEN, PolicyMeta, PolicyModel, parameter_count};
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
    /// Seed of the epochs' orders (and of the hidden layer's start).
    pub seed: u64,
    /// Hidden relu units (0: a linear policy).
    #[serde(default)]
    pub hidden: usize,
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
        ensure!(
            self.hidden <= MAX_HIDDEN,
            "--hidden must be at most {MAX_HIDDEN}"
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
            hidden: 0,
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

const STATE_MAGIC: &[u8; 8] = b"NWPOLST2";

fn state_path(model: &Path) -> PathBuf {
    let mut s = model.as_os_str().to_owned();
    s.push(".state");
    PathBuf::from(s)
}

impl State {
    fn to_bytes(&self) -> Vec<u8> {
        let mut b = STATE_MAGIC.to_vec();
        b.extend(self.epoch.to_le_bytes());
        b.extend((features::COUNT as u32).to_le_bytes());
        b.extend((self.model.hidden() as u32).to_le_bytes());
        for v in self.model.params().iter().chain(&self.squares) {
            b.extend(v.to_le_bytes());
        }
        b
    }

    fn from_bytes(path: &Path, b: &[u8], hidden: usize) -> Result<State> {
        let n = parameter_count(hidden);
        if b.len() != 20 + 8 * n
            || &b[..8] != STATE_MAGIC
            || u32::from_le_bytes(b[12..16].try_into()?) as usize != features::COUNT
            || u32::from_le_bytes(b[16..20].try_into()?) as usize != hidden
        {
            bail!(
                "{}: not a policy training state of this build and --hidden (delete it to start afresh)",
                path.display()
            );
        }
        let floats: Vec<f32> = b[20..]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        Ok(State {
            epoch: u32::from_le_bytes(b[8..12].try_into()?),
            model: PolicyModel::from_params(hidden, floats[..n].to_vec()),
            squares: floats[n..].to_vec(),
        })
    }
}

/// Scratch space of [`Gradient::add`], reused from position to position.
struct Gradient {
    /// One entry a parameter; only the touched features' rows, the biases
    /// and the output weights are ever non-zero.
    values: Vec<f32>,
    marked: Vec<bool>,
    /// Features of the position, each once.
    touched: Vec<Feature>,
    scores: Vec<f32>,
    units: Vec<f32>,
    delta: Vec<f32>,
}

impl Gradient {
    fn new(hidden: usize) -> Gradient {
        Gradient {
            values: vec![0.0; parameter_count(hidden)],
            marked: vec![false; features::COUNT],
            touched: Vec::new(),
            scores: Vec::new(),
            units: Vec::new(),
            delta: vec![0.0; hidden],
        }
    }

    /// Adds the gradient of `−log p(moves[played])` to `values` and
    /// returns that loss.
    fn add(&mut self, model: &PolicyModel, moves: &[Feature], played: usize) -> f64 {
        let h = model.hidden();
        let n = features::COUNT;
        // where the biases and the output weights start among the parameters
        let (biases, outputs) = (n * (1 + h), n * (1 + h) + h);
        self.units.resize(moves.len() / PER_MOVE * h, 0.0);
        self.scores.clear();
        for (j, m) in moves.chunks_exact(PER_MOVE).enumerate() {
            let score = model.forward(m, &mut self.units[j * h..(j + 1) * h]);
            self.scores.push(score);
        }
        let top = self
            .scores
            .iter()
            .copied()
            .fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0;
        for p in self.scores.iter_mut() {
            *p = (*p - top).exp();
            sum += *p;
        }
        let params = model.params();
        for (j, m) in moves.chunks_exact(PER_MOVE).enumerate() {
            let g = self.scores[j] / sum - f32::from(u8::from(j == played));
            for &f in m {
                if !self.marked[f as usize] {
                    self.marked[f as usize] = true;
                    self.touched.push(f);
                }
                self.values[f as usize] += g;
            }
            if h == 0 {
                continue;
            }
            // back through the relu: only the units that were on
            let u = &self.units[j * h..(j + 1) * h];
            for k in 0..h {
                self.delta[k] = if u[k] > 0.0 {
                    self.values[outputs + k] += g * u[k];
                    g * params[outputs + k]
                } else {
                    0.0
                };
                self.values[biases + k] += self.delta[k];
            }
            for &f in m {
                let f = f as usize;
                let row = &mut self.values[n + f * h..n + (f + 1) * h];
                for (r, d) in row.iter_mut().zip(&self.delta) {
                    *r += d;
                }
            }
        }
        -f64::from((self.scores[played] / sum).ln())
    }

    /// One AdaGrad step on every parameter `add` touched (with the L2
    /// penalty, biases excepted), leaving `values` all zero again.
    fn step(&mut self, model: &mut PolicyModel, squares: &mut [f32], eta: f32, lambda: f32) {
        let h = model.hidden();
        let n = features::COUNT;
        let (biases, outputs) = (n * (1 + h), n * (1 + h) + h);
        let params = model.params_mut();
        let values = &mut self.values;
        let mut step = |p: usize, penalty: f32| {
            let g = values[p] + penalty * params[p];
            values[p] = 0.0;
            squares[p] += g * g;
            if squares[p] > 0.0 {
                params[p] -= eta * g / squares[p].sqrt();
            }
        };
        for &f in &self.touched {
            let f = f as usize;
            self.marked[f] = false;
            step(f, lambda);
            for p in n + f * h..n + (f + 1) * h {
                step(p, lambda);
            }
        }
        for p in biases..outputs + h {
            step(p, if p < outputs { 0.0 } else { lambda });
        }
        self.touched.clear();
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
    let State { model, squares, .. } = state;
    let mut gradient = Gradient::new(model.hidden());
    let mut loss = 0.0;
    for &i in &order {
        loss += gradient.add(model, data.moves(i), data.played(i));
        gradient.step(model, squares, eta, lambda);
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
        let state = State::from_bytes(&state_file, &bytes, settings.hidden)?;
        let (best, before) = PolicyModel::load(out)?;
        let same = |a: &PolicyMeta, b: &PolicyMeta| {
            (
                a.settings.eta,
                a.settings.lambda,
                a.settings.seed,
                a.settings.hidden,
                &a.kifu,
                &a.extra,
                a.train_positions,
                a.validation_positions,
            ) == (
                b.settings.eta,
                b.settings.lambda,
                b.settings.seed,
                b.settings.hidden,
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
        let start = PolicyModel::initial(settings.hidden, settings.seed);
        (
            State {
                epoch: 0,
                model: start.clone(),
                squares: vec![0.0; parameter_count(settings.hidden)],
            },
            start,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Three moves of made-up features (each block's first few indices).
    fn position() -> Vec<Feature> {
        (0..3 * PER_MOVE)
            .map(|i| ((i % PER_MOVE) * 1000 + (i / PER_MOVE) * 7 + i % 3) as Feature)
            .collect()
    }

    fn loss(model: &PolicyModel, moves: &[Feature], played: usize) -> f64 {
        let scores: Vec<f64> = moves
            .chunks_exact(PER_MOVE)
            .map(|m| f64::from(model.score(m)))
            .collect();
        let sum: f64 = scores.iter().map(|s| s.exp()).sum();
        sum.ln() - scores[played]
    }

    #[test]
    fn the_backpropagated_gradient_matches_finite_differences() {
        let moves = position();
        for hidden in [0, 5] {
            let mut model = PolicyModel::initial(hidden, 3);
            // non-zero linear weights and biases, so every kind of parameter is tried
            for (i, p) in model.params_mut().iter_mut().enumerate() {
                if i < features::COUNT || *p == 0.0 {
                    *p = ((i % 17) as f32 - 8.0) / 40.0;
                }
            }
            let mut gradient = Gradient::new(hidden);
            let l = gradient.add(&model, &moves, 1);
            assert!((l - loss(&model, &moves, 1)).abs() < 1e-5);
            let n = features::COUNT;
            let mut checked = 0;
            let mut candidates: Vec<usize> = moves.iter().map(|&f| f as usize).collect();
            for &f in &moves[..4] {
                candidates.extend((0..hidden).map(|k| n + f as usize * hidden + k));
            }
            candidates.extend(n * (1 + hidden)..parameter_count(hidden));
            for p in candidates {
                let eps = 1e-3;
                let mut plus = model.clone();
                plus.params_mut()[p] += eps;
                let mut minus = model.clone();
                minus.params_mut()[p] -= eps;
                let numeric =
                    (loss(&plus, &moves, 1) - loss(&minus, &moves, 1)) / (2.0 * f64::from(eps));
                let analytic = f64::from(gradient.values[p]);
                assert!(
                    (numeric - analytic).abs() < 2e-3,
                    "hidden {hidden}, parameter {p}: backprop {analytic}, finite differences {numeric}"
                );
                checked += 1;
            }
            assert!(checked >= 3 * PER_MOVE);
            // the step leaves the scratch clean for the next position
            let mut squares = vec![0.0; parameter_count(hidden)];
            gradient.step(&mut model, &mut squares, 0.1, 0.0);
            assert!(gradient.values.iter().all(|&v| v == 0.0));
            assert!(gradient.marked.iter().all(|&m| !m));
            assert!(loss(&model, &moves, 1) < l, "a step lowers the loss");
        }
    }
}

//! A softmax policy's weights and their file: the probability of a move is
//! `exp(score) / Σ exp(score')` over the position's legal moves. Its score
//! is the sum of the linear weights of its [`features`](super::features),
//! plus, with `hidden` > 0 units, `v · relu(b + Σ E[f])`: each feature's
//! embedding row `E[f]` summed, so that the policy can weigh features in
//! combination (a piece kind's move next to the enemy king *and* safe),
//! which a linear model cannot.
//!
//! The model file is text, one header line (`niwatori-policy VERSION COUNT
//! [HIDDEN]`) and one parameter per line (each printed so that it reads
//! back to the same `f32`): the COUNT linear weights, then COUNT × HIDDEN
//! embeddings (feature-major), HIDDEN biases and HIDDEN output weights.
//! `MODEL.json` beside it says how it was trained ([`PolicyMeta`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use rsshogi::board::Position;
use rsshogi::types::Move32;
use serde::{Deserialize, Serialize};

use super::features::{self, Feature, PER_MOVE};
use crate::rows::model::sidecar_path;

/// The first word of a policy model file.
pub const MAGIC: &str = "niwatori-policy";

/// The most hidden units a model may have.
pub const MAX_HIDDEN: usize = 256;

/// Parameters of a softmax policy: linear weights, then (with hidden
/// units) embeddings, biases and output weights, in one flat vector so
/// that the solver treats every parameter alike.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyModel {
    hidden: usize,
    params: Vec<f32>,
}

/// One epoch of training, as the sidecar records it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpochStats {
    pub epoch: u32,
    /// Mean −log p(game move) over the training positions, as they passed.
    pub train_loss: f64,
    /// Top-1 agreement on the validation positions after the epoch.
    pub validation_top1: f64,
    pub seconds: f64,
}

/// How a policy was trained (`MODEL.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicyMeta {
    pub features_version: u32,
    pub features: usize,
    pub settings: super::train::PolicySettings,
    pub kifu: PathBuf,
    #[serde(default)]
    pub extra: Vec<PathBuf>,
    #[serde(default)]
    pub split_opening: Option<u32>,
    pub train_games: usize,
    pub train_positions: usize,
    pub validation_games: usize,
    pub validation_positions: usize,
    /// The epoch whose weights the model file holds (best on validation).
    pub best_epoch: u32,
    pub history: Vec<EpochStats>,
}

/// Number of parameters of a model with `hidden` units.
pub fn parameter_count(hidden: usize) -> usize {
    features::COUNT * (1 + hidden) + 2 * hidden
}

impl PolicyModel {
    /// A linear model with every weight 0.
    pub fn zeros() -> PolicyModel {
        PolicyModel::from_params(0, vec![0.0; parameter_count(0)])
    }

    /// A model of `hidden` units from its flat parameters (see the module).
    pub fn from_params(hidden: usize, params: Vec<f32>) -> PolicyModel {
        assert!(hidden <= MAX_HIDDEN && params.len() == parameter_count(hidden));
        PolicyModel { hidden, params }
    }

    /// A model to start training from: linear weights 0 and, with hidden
    /// units, small seeded random embeddings and output weights (zeros
    /// would keep every unit alike).
    pub fn initial(hidden: usize, seed: u64) -> PolicyModel {
        let mut params = vec![0.0; parameter_count(hidden)];
        let mut rng = crate::random::Rng::new(seed ^ 0x0005_eed0_fe3b);
        let embedding = (3.0 / PER_MOVE as f64).sqrt();
        let n = features::COUNT;
        for (i, p) in params[n..].iter_mut().enumerate() {
            let scale = if i < n * hidden {
                embedding
            } else if i < n * hidden + hidden {
                continue; // biases start at 0
            } else {
                0.1
            };
            let unit = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            *p = ((unit * 2.0 - 1.0) * scale) as f32;
        }
        PolicyModel { hidden, params }
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }

    pub fn params(&self) -> &[f32] {
        &self.params
    }

    pub fn params_mut(&mut self) -> &mut [f32] {
        &mut self.params
    }

    /// Score of one move from its [`PER_MOVE`] features.
    #[inline]
    pub fn score(&self, move_features: &[Feature]) -> f32 {
        let mut units = [0f32; MAX_HIDDEN];
        self.forward(move_features, &mut units[..self.hidden])
    }

    /// The score, leaving the hidden units' inputs (before relu) in `units`.
    #[inline]
    pub fn forward(&self, move_features: &[Feature], units: &mut [f32]) -> f32 {
        let linear: f32 = move_features.iter().map(|&f| self.params[f as usize]).sum();
        let h = self.hidden;
        if h == 0 {
            return linear;
        }
        let n = features::COUNT;
        units.copy_from_slice(&self.params[n * (1 + h)..n * (1 + h) + h]);
        for &f in move_features {
            let row = &self.params[n + f as usize * h..n + (f as usize + 1) * h];
            for (u, e) in units.iter_mut().zip(row) {
                *u += e;
            }
        }
        let output = &self.params[n * (1 + h) + h..];
        linear
            + units
                .iter()
                .zip(output)
                .map(|(u, v)| u.max(0.0) * v)
                .sum::<f32>()
    }

    /// Scores of `moves`, legal moves of `pos`, in order.
    pub fn scores(&self, pos: &Position, moves: &[Move32]) -> Vec<f32> {
        features::move_features(pos, moves)
            .chunks_exact(PER_MOVE)
            .map(|m| self.score(m))
            .collect()
    }

    /// The model file's text.
    pub fn to_text(&self) -> String {
        let mut s = format!("{MAGIC} {} {}", features::VERSION, features::COUNT);
        if self.hidden > 0 {
            s.push_str(&format!(" {}", self.hidden));
        }
        s.push('\n');
        for w in &self.params {
            s.push_str(&format!("{w}\n"));
        }
        s
    }

    /// Reads a model file's text; errors name `path` and the line.
    pub fn from_text(path: &Path, text: &str) -> Result<PolicyModel> {
        let mut lines = text.lines();
        let header = lines.next().unwrap_or("");
        let fields: Vec<&str> = header.split_whitespace().collect();
        let (magic, version, count, hidden) = match fields[..] {
            [m, v, c] => (m, v, c, "0"),
            [m, v, c, h] => (m, v, c, h),
            _ => bail!(
                "{}:1: not a niwatori policy model (header {header:?})",
                path.display()
            ),
        };
        let Some(hidden) = hidden
            .parse::<usize>()
            .ok()
            .filter(|&h| (1..=MAX_HIDDEN).contains(&h) || fields.len() == 3)
        else {
            bail!(
                "{}:1: not a niwatori policy model (header {header:?})",
                path.display()
            );
        };
        if magic != MAGIC {
            bail!(
                "{}:1: not a niwatori policy model (header {header:?})",
                path.display()
            );
        }
        if version != features::VERSION.to_string() || count != features::COUNT.to_string() {
            bail!(
                "{}:1: features version {version} with {count} weights; this build has version {} with {}",
                path.display(),
                features::VERSION,
                features::COUNT
            );
        }
        let weights = lines
            .enumerate()
            .map(|(i, l)| {
                l.trim()
                    .parse::<f32>()
                    .ok()
                    .filter(|w| w.is_finite())
                    .with_context(|| format!("{}:{}: {l:?} is not a weight", path.display(), i + 2))
            })
            .collect::<Result<Vec<f32>>>()?;
        if weights.len() != parameter_count(hidden) {
            bail!(
                "{}: {} parameters, the header says {} ({count} features, {hidden} hidden units)",
                path.display(),
                weights.len(),
                parameter_count(hidden)
            );
        }
        Ok(PolicyModel {
            hidden,
            params: weights,
        })
    }

    /// Writes the model and its sidecar, each atomically.
    pub fn save(&self, path: &Path, meta: &PolicyMeta) -> Result<()> {
        crate::atomic::write_atomic(path, self.to_text())
            .with_context(|| format!("writing {}", path.display()))?;
        let json = serde_json::to_string_pretty(meta)?;
        crate::atomic::write_atomic(&sidecar_path(path), json)
            .with_context(|| format!("writing {}", sidecar_path(path).display()))
    }

    /// Reads a model and its sidecar.
    pub fn load(path: &Path) -> Result<(PolicyModel, PolicyMeta)> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let model = Self::from_text(path, &text)?;
        let side = sidecar_path(path);
        let meta = std::fs::read(&side).with_context(|| format!("reading {}", side.display()))?;
        let meta = serde_json::from_slice(&meta)
            .with_context(|| format!("{}: not a policy sidecar", side.display()))?;
        Ok((model, meta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_file_round_trips_and_bad_lines_are_named() {
        let mut m = PolicyModel::zeros();
        for (i, w) in m.params.iter_mut().enumerate() {
            *w = (i as f32 * 0.37).sin() / 3.0;
        }
        let path = Path::new("p.policy");
        assert_eq!(PolicyModel::from_text(path, &m.to_text()).unwrap(), m);
        let deep = PolicyModel::initial(4, 7);
        let text = deep.to_text();
        assert!(text.starts_with(&format!(
            "niwatori-policy {} {} 4\n",
            features::VERSION,
            features::COUNT
        )));
        assert_eq!(PolicyModel::from_text(path, &text).unwrap(), deep);
        let short = text
            .rsplit_once('\n')
            .unwrap()
            .0
            .rsplit_once('\n')
            .unwrap()
            .0;
        let e = PolicyModel::from_text(path, short).unwrap_err().to_string();
        assert!(e.contains("hidden units"), "{e}");
        let bad = m.to_text().replacen("\n0\n", "\nx\n", 1);
        let e = PolicyModel::from_text(path, &bad).unwrap_err().to_string();
        assert_eq!(e, "p.policy:2: \"x\" is not a weight");
        let e = PolicyModel::from_text(path, "niwatori-policy 0 5\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("p.policy:1: features version 0 with 5 weights"),
            "{e}"
        );
    }
}

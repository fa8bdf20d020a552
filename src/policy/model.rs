//! A linear softmax policy's weights and their file: the probability of a
//! move is `exp(score) / Σ exp(score')` over the position's legal moves, its
//! score the sum of the weights of its [`features`](super::features).
//!
//! The model file is text, one header line and one weight per line (each
//! printed so that it reads back to the same `f32`); `MODEL.json` beside it
//! says how it was trained ([`PolicyMeta`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use rsshogi::board::Position;
use rsshogi::types::Move32;
use serde::{Deserialize, Serialize};

use super::features::{self, Feature, PER_MOVE};
use crate::rows::model::sidecar_path;

/// The first word of a policy model file.
pub const MAGIC: &str = "niwatori-policy";

/// Weights of a linear softmax policy.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyModel {
    pub weights: Vec<f32>,
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

impl PolicyModel {
    pub fn zeros() -> PolicyModel {
        PolicyModel {
            weights: vec![0.0; features::COUNT],
        }
    }

    /// Score of one move from its [`PER_MOVE`] features.
    #[inline]
    pub fn score(&self, move_features: &[Feature]) -> f32 {
        move_features
            .iter()
            .map(|&f| self.weights[f as usize])
            .sum()
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
        let mut s = format!("{MAGIC} {} {}\n", features::VERSION, self.weights.len());
        for w in &self.weights {
            s.push_str(&format!("{w}\n"));
        }
        s
    }

    /// Reads a model file's text; errors name `path` and the line.
    pub fn from_text(path: &Path, text: &str) -> Result<PolicyModel> {
        let mut lines = text.lines();
        let header = lines.next().unwrap_or("");
        let fields: Vec<&str> = header.split_whitespace().collect();
        let [magic, version, count] = fields[..] else {
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
        if weights.len() != features::COUNT {
            bail!(
                "{}: {} weights, the header says {count}",
                path.display(),
                weights.len()
            );
        }
        Ok(PolicyModel { weights })
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
        for (i, w) in m.weights.iter_mut().enumerate() {
            *w = (i as f32 * 0.37).sin() / 3.0;
        }
        let path = Path::new("p.policy");
        assert_eq!(PolicyModel::from_text(path, &m.to_text()).unwrap(), m);
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

//! The feature scheme a set of rows was written with: what `extract`
//! records in `extract.json` and in every game's sidecar, and what `train`
//! and the learned evaluation check a model against.

use serde::{Deserialize, Serialize};

/// Scores clamp to this many centipawns and are divided by it when
/// written: a row's target is in [-1, 1].
pub const LABEL_SCALE: i32 = 10_000;

/// Which position a sibling's row describes.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum FeaturesAt {
    /// The sibling itself (the position just after the candidate move).
    #[default]
    Sibling,
    /// The leaf of the sibling search's principal variation: the quiet
    /// position the score was read from, after the opponent's reply and the
    /// captures quiescence chose, seen like any position from its side to
    /// move. The target stays the value for the player *not* to move there:
    /// the mover's score, negated when the mover is to move at the leaf (an
    /// odd number of plies below the sibling). The model then learns the
    /// value of quiet positions, which is what the engine's search asks of
    /// an evaluation (captures are the search's own job); Bonanza's learning
    /// compares principal-variation leaves too.
    Leaf,
}

impl FeaturesAt {
    /// The name used on the command line and in metadata.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Sibling => "sibling",
            Self::Leaf => "leaf",
        }
    }
}

/// What every feature file and model must agree on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scheme {
    /// Feature scheme name (`attack2`).
    pub scheme: String,
    /// Feature scheme version.
    pub scheme_version: u32,
    /// Feature-space size: the largest possible 1-based index.
    pub num_features: usize,
    /// `value` or `onehot`.
    pub relation_encoding: String,
    /// Targets were divided by this (10000.0).
    pub label_scale: f64,
    /// Margin in centipawns.
    pub margin: i32,
    /// The evaluation behind the scores.
    pub evaluator: String,
    /// How siblings were scored.
    pub scorer: String,
    /// Which position a row describes (absent in older files: the sibling).
    #[serde(default)]
    pub features_at: FeaturesAt,
    /// Fraction of each game's positions expanded (`extract --sample`);
    /// absent (1) in older files.
    #[serde(default = "every_position")]
    pub sample: f64,
}

fn every_position() -> f64 {
    1.0
}

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

/// Which rows a position gives, and their targets.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Labels {
    /// Every sibling, scored by the depth-1 search; the game move's target
    /// raised by the margin over better-scored siblings (the seed's scheme).
    #[default]
    Siblings,
    /// One row a position: the game move's sibling, its target the score
    /// the record gives with that move (`'**` comments: the player's own,
    /// deeper search), so a stronger engine's games teach its judgement.
    /// Positions without a recorded score give no row.
    Record,
    /// Every sibling as with `siblings`, but `g`, the game move's score
    /// the margin is measured from, is the record's score: the teacher's
    /// value of the move played, the other siblings' material scores as
    /// they are (pushed below it when above). Positions without a recorded
    /// score give no rows.
    #[value(name = "record-siblings")]
    #[serde(rename = "record-siblings")]
    RecordSiblings,
}

impl Labels {
    /// The name used on the command line and in metadata.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Siblings => "siblings",
            Self::Record => "record",
            Self::RecordSiblings => "record-siblings",
        }
    }
}

/// What a row's target is measured from, and so what a model trained on
/// the rows adds itself to.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Base {
    /// The score itself (the seed's scheme): the model is the whole
    /// evaluation, material included.
    #[default]
    None,
    /// The score less the material of the row's position (for the same
    /// player): the model learns only what material misses, and the
    /// evaluation is material plus the model. Regularisation then shrinks
    /// an evaluation towards material rather than towards zero, and the
    /// exact piece values need no pair weights to hold them. Rows at the
    /// clamp (mates) keep their clamped target, so that `train
    /// --drop-clamped` still knows them.
    Material,
}

impl Base {
    /// The name used on the command line and in metadata.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Material => "material",
        }
    }

    /// The default, left out of metadata so that older files are unchanged.
    pub fn is_none(&self) -> bool {
        *self == Self::None
    }

    /// The written target (centipawns, for the player not to move at the
    /// row's position) of a row whose score is `target`, when that
    /// position's material is `material` for its side to move.
    ///
    /// ```
    /// use niwatori::rows::Base;
    /// assert_eq!(Base::None.target(300, -500), 300);
    /// // the player not to move is 500 up: a score of 300 is 200 below material
    /// assert_eq!(Base::Material.target(300, -500), -200);
    /// assert_eq!(Base::Material.target(-10_000, 800), -10_000); // a mate stays at the clamp
    /// ```
    pub fn target(self, target: i32, material: i32) -> i32 {
        match self {
            Self::None => target,
            _ if target.abs() >= LABEL_SCALE => target,
            Self::Material => (target + material).clamp(1 - LABEL_SCALE, LABEL_SCALE - 1),
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
    /// The king-piece block after the others (absent: none).
    #[serde(default, skip_serializing_if = "is_false")]
    pub king_piece: bool,
    /// The attack-relation pair and kind blocks (absent: there).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub attacks: bool,
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
    /// Which rows a position gives (absent in older files: every sibling).
    #[serde(default)]
    pub labels: Labels,
    /// What targets are measured from (absent: the score itself).
    #[serde(default, skip_serializing_if = "Base::is_none")]
    pub base: Base,
}

fn is_false(b: &bool) -> bool {
    !b
}

/// Serde's default of a block that older files did not name: there.
pub(crate) fn yes() -> bool {
    true
}

pub(crate) fn is_true(b: &bool) -> bool {
    *b
}

fn every_position() -> f64 {
    1.0
}

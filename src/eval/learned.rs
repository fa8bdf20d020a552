//! The learned evaluation: a linear model over the two-piece
//! attack-relation features of [`crate::features`].
//!
//! Training rows are sibling positions: the features are seen from the side
//! to move in the sibling, the label is the score of the player who has
//! just moved there (the game move stands out for *that* player). So the
//! model's output `wᵀx` (labels were scaled by 1/`label_scale`) is the value
//! of a position for the player who is *not* to move, and the evaluation
//! from the side to move is
//!
//! ```text
//! evaluate(pos) = −clamp(wᵀx(pos), −1, 1) × label_scale
//! ```
//!
//! Features are summed straight into the dot product, never built as a
//! vector, by the same visitor that `extract` writes rows with.

use std::path::{Path, PathBuf};

use rsshogi::board::Position;

use super::Evaluator;
use crate::features::{self, RelationEncoding};
use crate::train::model::LinearModel;

/// Why a model cannot serve as an evaluation.
#[derive(Debug, thiserror::Error)]
pub enum LearnedError {
    #[error(transparent)]
    Model(#[from] crate::train::model::ModelError),
    #[error("{path}: {message}")]
    Scheme { path: PathBuf, message: String },
    #[error("{0}")]
    Spec(String),
}

/// A linear evaluation loaded from a model file.
pub struct Learned {
    weights: Vec<f32>,
    bias: f64,
    encoding: RelationEncoding,
    label_scale: f64,
    /// Trained on rows at search leaves (`extract --features-at leaf`).
    leaf_rows: bool,
    /// FNV-1a hash of the weights, bias and label scale.
    fingerprint: u64,
    name: String,
}

impl Learned {
    /// Loads a model (ours or LIBLINEAR's, with our JSON sidecar beside it
    /// for the feature scheme and label scale) and checks that it was
    /// trained on this build's feature scheme.
    pub fn load(path: &Path) -> Result<Self, LearnedError> {
        let model = LinearModel::load(path)?;
        Self::from_model(&model).map_err(|message| LearnedError::Scheme {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Wraps a trained model; the error says why it does not fit.
    pub fn from_model(model: &LinearModel) -> Result<Self, String> {
        model.check_scheme(features::SCHEME, u64::from(features::SCHEME_VERSION))?;
        let scheme = model
            .metadata()
            .and_then(|m| m.features.as_ref())
            .ok_or("the model has no feature scheme")?;
        let encoding = [RelationEncoding::Value, RelationEncoding::OneHot]
            .into_iter()
            .find(|e| e.num_features() == scheme.num_features)
            .ok_or_else(|| {
                format!(
                    "{} features match no relation encoding of {} v{}",
                    scheme.num_features,
                    features::SCHEME,
                    features::SCHEME_VERSION
                )
            })?;
        if scheme.label_scale.is_nan() || scheme.label_scale <= 0.0 {
            return Err(format!(
                "label scale {} is not positive",
                scheme.label_scale
            ));
        }
        let mut weights: Vec<f32> = model.weights().iter().map(|&w| w as f32).collect();
        weights.resize(encoding.num_features(), 0.0);
        let bias = model.bias_weight().unwrap_or(0.0) * model.bias().max(0.0);
        let mut fingerprint = 0xcbf2_9ce4_8422_2325u64;
        let bits = weights.iter().map(|w| u64::from(w.to_bits()));
        for x in bits.chain([bias.to_bits(), scheme.label_scale.to_bits()]) {
            fingerprint = (fingerprint ^ x).wrapping_mul(0x0100_0000_01b3);
        }
        Ok(Self {
            weights,
            bias,
            fingerprint,
            encoding,
            label_scale: scheme.label_scale,
            leaf_rows: scheme.features_at == "leaf",
            name: "learned".into(),
        })
    }

    /// The model's output `wᵀx` for `pos`: the value, in scaled label units,
    /// for the player who has just moved.
    pub fn raw(&self, pos: &Position) -> f64 {
        let mut sum = 0.0f32;
        let w = &self.weights;
        features::for_each_term(pos, self.encoding, |i, x| {
            if let Some(wi) = w.get(i as usize) {
                sum += wi * x;
            }
        });
        f64::from(sum) + self.bias
    }

    /// The weights, widened for the training code's matrix products.
    pub fn weights_f64(&self) -> Vec<f64> {
        self.weights.iter().map(|&w| f64::from(w)).collect()
    }

    pub fn label_scale(&self) -> f64 {
        self.label_scale
    }

    /// Trained on rows at search leaves (`extract --features-at leaf`): a
    /// model of quiet positions rather than of siblings.
    pub fn leaf_rows(&self) -> bool {
        self.leaf_rows
    }
}

impl Evaluator for Learned {
    fn evaluate(&self, pos: &Position) -> i32 {
        (-self.raw(pos).clamp(-1.0, 1.0) * self.label_scale).round() as i32
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn identity(&self) -> String {
        format!("{}:{:016x}", self.name, self.fingerprint)
    }
}

//! A trained linear model in LIBLINEAR's text format, plus a JSON sidecar.
//!
//! `MODEL` is exactly what `liblinear-train -s 11` writes (header, then one
//! weight a line printed with C's `%.17g` and a trailing space), so
//! `liblinear-predict` reads our models and we read its models. `MODEL.json`
//! holds what LIBLINEAR's format has no room for: the feature scheme the
//! weights belong to, the label scale, the hyper-parameters and how training
//! went. Both are written atomically (`FILE.tmp`, then rename).
//!
//! ```
//! use niwatori::rows::model::LinearModel;
//! let m = LinearModel::new(vec![0.5, -2.0, 0.0], -1.0, None);
//! // row {1: 2, 2: 1}: 0.5·2 − 2·1
//! assert_eq!(m.predict_row(&[1, 2], &[2.0, 1.0]), -1.0);
//! assert!(m.to_liblinear_text().starts_with("solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 3\nbias -1\nw\n0.5 \n"));
//! ```

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Base, FeaturesAt};
use thiserror::Error;

/// An error reading or writing a model.
#[derive(Debug, Error)]
pub enum ModelError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Format {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: bad JSON sidecar: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: {message}")]
    Mismatch { path: PathBuf, message: String },
}

/// The feature scheme the weights belong to (copied from `extract.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureScheme {
    pub scheme: String,
    pub scheme_version: u64,
    pub num_features: usize,
    pub label_scale: f64,
    /// Which position a row described (absent before `--features-at`
    /// existed: the sibling).
    #[serde(default)]
    pub features_at: FeaturesAt,
    /// What targets were measured from (absent: the score itself).
    #[serde(default, skip_serializing_if = "Base::is_none")]
    pub base: Base,
    /// The king-piece block (absent: none).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub king_piece: bool,
    /// The attack-relation pair and kind blocks (absent: there).
    #[serde(
        default = "crate::rows::yes",
        skip_serializing_if = "crate::rows::is_true"
    )]
    pub attacks: bool,
}

/// What the training data looked like.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataSummary {
    pub files: usize,
    pub rows: usize,
    pub nonzeros: usize,
    /// Largest feature index seen in the data.
    pub max_index: usize,
    /// Bytes of the in-memory matrix and labels.
    pub bytes: usize,
}

/// The JSON sidecar `MODEL.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelMetadata {
    /// `extract.json`'s scheme, or `null` for plain libsvm data.
    pub features: Option<FeatureScheme>,
    pub solver: String,
    pub c: f64,
    pub p: f64,
    pub e: f64,
    pub bias: f64,
    pub nr_feature: usize,
    pub objective: f64,
    pub gradient_norm: f64,
    pub iterations: usize,
    pub converged: bool,
    pub data: DataSummary,
    pub load_seconds: f64,
    pub train_seconds: f64,
}

/// A linear SVR model: `f(x) = wᵀx (+ B·w_bias)`.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearModel {
    /// `nr_feature` weights, then the bias weight if `bias >= 0`.
    w: Vec<f64>,
    nr_feature: usize,
    bias: f64,
    metadata: Option<ModelMetadata>,
}

/// C's `printf("%.17g", x)`, so files match LIBLINEAR's byte for byte.
pub fn format_g17(x: f64) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let sci = format!("{x:.16e}");
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is an integer");
    fn strip(s: &str) -> &str {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.')
        } else {
            s
        }
    }
    if !(-4..17).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mantissa), exp.abs())
    } else {
        let fixed = format!("{:.*}", (16 - exp) as usize, x);
        strip(&fixed).to_string()
    }
}

/// Write `bytes` to `path` atomically (via `path.tmp` and a rename).
/// Reads a JSON file (a sidecar, a checkpoint's state) as `T`.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ModelError> {
    let json = fs::read_to_string(path).map_err(|source| ModelError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&json).map_err(|source| ModelError::Json {
        path: path.to_path_buf(),
        source,
    })
}

pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ModelError> {
    crate::atomic::write_atomic(path, bytes).map_err(|source| ModelError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// `PATH.json` for a model at `PATH`.
pub fn sidecar_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".json");
    PathBuf::from(s)
}

impl LinearModel {
    /// A model from weights: `w` holds `nr_feature` weights, plus the bias
    /// weight last when `bias >= 0`.
    pub fn new(w: Vec<f64>, bias: f64, metadata: Option<ModelMetadata>) -> Self {
        let nr_feature = w.len() - usize::from(bias >= 0.0);
        LinearModel {
            w,
            nr_feature,
            bias,
            metadata,
        }
    }

    /// Feature weights; index `i` is feature `i + 1`.
    pub fn weights(&self) -> &[f64] {
        &self.w[..self.nr_feature]
    }

    /// All weights as the solver sees them (bias weight last if any).
    pub fn raw_weights(&self) -> &[f64] {
        &self.w
    }

    /// The bias value `B` (negative: no bias term).
    pub fn bias(&self) -> f64 {
        self.bias
    }

    /// The bias weight, if the model has a bias term.
    pub fn bias_weight(&self) -> Option<f64> {
        (self.bias >= 0.0).then(|| self.w[self.nr_feature])
    }

    pub fn nr_feature(&self) -> usize {
        self.nr_feature
    }

    pub fn metadata(&self) -> Option<&ModelMetadata> {
        self.metadata.as_ref()
    }

    /// Predict one row given 1-based feature indices; indices beyond
    /// `nr_feature` are ignored, as LIBLINEAR does.
    pub fn predict_row(&self, indices: &[u32], values: &[f32]) -> f64 {
        let mut s: f64 = indices
            .iter()
            .zip(values)
            .filter(|(i, _)| **i >= 1 && (**i as usize) <= self.nr_feature)
            .map(|(i, v)| self.w[*i as usize - 1] * f64::from(*v))
            .sum();
        if let Some(wb) = self.bias_weight() {
            s += self.bias * wb;
        }
        s
    }

    /// The LIBLINEAR model text.
    pub fn to_liblinear_text(&self) -> String {
        let mut s = String::with_capacity(64 + self.w.len() * 24);
        s.push_str("solver_type L2R_L2LOSS_SVR\nnr_class 2\n");
        s.push_str(&format!("nr_feature {}\n", self.nr_feature));
        s.push_str(&format!("bias {}\nw\n", format_g17(self.bias)));
        for w in &self.w {
            s.push_str(&format_g17(*w));
            s.push_str(" \n");
        }
        s
    }

    /// Write `path` (LIBLINEAR format) and, with metadata, `path.json`.
    pub fn save(&self, path: &Path) -> Result<(), ModelError> {
        write_atomic(path, self.to_liblinear_text().as_bytes())?;
        if let Some(meta) = &self.metadata {
            let json = serde_json::to_string_pretty(meta).expect("metadata serialises");
            write_atomic(&sidecar_path(path), json.as_bytes())?;
        }
        Ok(())
    }

    /// Read a LIBLINEAR L2R_L2LOSS_SVR model and, if present, `path.json`,
    /// checking that the two agree on the feature count.
    pub fn load(path: &Path) -> Result<LinearModel, ModelError> {
        let text = fs::read_to_string(path).map_err(|source| ModelError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut model = Self::parse_text(path, &text)?;
        let side = sidecar_path(path);
        if side.exists() {
            let meta: ModelMetadata = read_json(&side)?;
            if meta.nr_feature != model.nr_feature {
                return Err(ModelError::Mismatch {
                    path: side,
                    message: format!(
                        "sidecar says nr_feature {} but the model has {}",
                        meta.nr_feature, model.nr_feature
                    ),
                });
            }
            if let Some(f) = &meta.features
                && f.num_features > model.nr_feature
            {
                return Err(ModelError::Mismatch {
                    path: side,
                    message: format!(
                        "feature scheme has {} features but the model only {}",
                        f.num_features, model.nr_feature
                    ),
                });
            }
            model.metadata = Some(meta);
        }
        Ok(model)
    }

    /// Check that this model was trained on `scheme` version `version`.
    pub fn check_scheme(&self, scheme: &str, version: u64) -> Result<(), String> {
        match self.metadata.as_ref().and_then(|m| m.features.as_ref()) {
            None => Err("the model has no feature scheme (trained on plain libsvm data)".into()),
            Some(f) if f.scheme != scheme || f.scheme_version != version => Err(format!(
                "the model is for features {} v{}, not {scheme} v{version}",
                f.scheme, f.scheme_version
            )),
            Some(_) => Ok(()),
        }
    }

    /// Parses a LIBLINEAR model's text (`path` names it in errors); the
    /// sizes it states are checked against the text before anything is
    /// allocated by them.
    pub fn parse_text(path: &Path, text: &str) -> Result<LinearModel, ModelError> {
        let err = |line: usize, message: String| ModelError::Format {
            path: path.to_path_buf(),
            line,
            message,
        };
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        let (mut nr_feature, mut bias, mut solver, mut nr_class) = (None, None, None, None);
        let mut last = 0;
        for (no, line) in lines.by_ref() {
            last = no;
            let (key, val) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "solver_type" => solver = Some(val.to_string()),
                "nr_class" => {
                    nr_class = Some(
                        val.parse::<usize>()
                            .map_err(|_| err(no, format!("bad nr_class {val:?}")))?,
                    )
                }
                "nr_feature" => {
                    nr_feature = Some(
                        val.parse::<usize>()
                            .map_err(|_| err(no, format!("bad nr_feature {val:?}")))?,
                    )
                }
                "bias" => {
                    bias = Some(
                        val.parse::<f64>()
                            .map_err(|_| err(no, format!("bad bias {val:?}")))?,
                    )
                }
                "label" => {
                    return Err(err(
                        no,
                        "a classification model (has labels), not SVR".into(),
                    ));
                }
                "w" => break,
                _ => return Err(err(no, format!("unknown header line {line:?}"))),
            }
        }
        if solver.as_deref() != Some("L2R_L2LOSS_SVR") {
            return Err(err(
                1,
                format!("solver_type {solver:?} is not L2R_L2LOSS_SVR"),
            ));
        }
        if nr_class != Some(2) {
            return Err(err(last, format!("nr_class {nr_class:?}, expected 2")));
        }
        let nr_feature = nr_feature.ok_or_else(|| err(last, "no nr_feature line".into()))?;
        let bias = bias.ok_or_else(|| err(last, "no bias line".into()))?;
        let n = nr_feature.saturating_add(usize::from(bias >= 0.0));
        // Each weight takes at least two bytes ("0\n"): a header asking for
        // more than the file can hold is refused before anything is sized
        // by it.
        if n > text.len() / 2 {
            return Err(err(
                last,
                format!(
                    "nr_feature {nr_feature}, but the file's {} bytes hold at most {} weights",
                    text.len(),
                    text.len() / 2
                ),
            ));
        }
        let mut w = Vec::with_capacity(n);
        for (no, line) in lines {
            let tok = line.trim_end();
            if tok.is_empty() && w.len() == n {
                continue;
            }
            if w.len() == n {
                return Err(err(no, format!("more than {n} weights")));
            }
            w.push(
                tok.parse::<f64>()
                    .map_err(|_| err(no, format!("bad weight {tok:?}")))?,
            );
        }
        if w.len() != n {
            return Err(err(last, format!("{} weights, expected {n}", w.len())));
        }
        Ok(LinearModel {
            w,
            nr_feature,
            bias,
            metadata: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::format_g17;

    #[test]
    fn g17_matches_c_printf() {
        // Reference strings from glibc printf("%.17g").
        assert_eq!(format_g17(0.07130124777183601), "0.07130124777183601");
        assert_eq!(format_g17(-0.18377896613190728), "-0.18377896613190728");
        assert_eq!(format_g17(1.0), "1");
        assert_eq!(format_g17(-1.0), "-1");
        assert_eq!(format_g17(0.1), "0.10000000000000001");
        assert_eq!(format_g17(1e-5), "1.0000000000000001e-05");
        assert_eq!(format_g17(123456789012345678.0), "1.2345678901234568e+17");
        assert_eq!(format_g17(0.0001), "0.0001");
        assert_eq!(format_g17(2.5e300), "2.5000000000000001e+300");
        assert_eq!(format_g17(0.0), "0");
    }
}

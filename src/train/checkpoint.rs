//! Resumable training: after every Newton iteration the weights go to
//! `MODEL.ckpt` (a model file, full-space as models are) and what run they
//! belong to to `MODEL.ckpt-state.json`; a run with the same data and
//! parameters resumes after the saved iteration, any other is refused.

use std::fs;
use std::path::{Path, PathBuf};

use super::TrainError;
use super::dataset::ColumnMap;
use crate::rows::model::{LinearModel, read_json, write_atomic};

/// What a checkpoint was saved from; a run resumes it only when all but the
/// iteration agree.
#[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug, Clone, Copy)]
pub struct CheckpointInfo {
    pub iteration: usize,
    pub c: f64,
    pub p: f64,
    pub bias: f64,
    pub rows: usize,
    pub nonzeros: usize,
    /// Full-space weights, bias included.
    pub dim: usize,
}

/// The checkpoint files of one model.
pub struct Checkpoint {
    weights: PathBuf,
    // Not `MODEL.ckpt.json`: that name is the sidecar `LinearModel::load` reads.
    state: PathBuf,
}

impl Checkpoint {
    pub fn for_model(out: &Path) -> Checkpoint {
        let with = |suffix: &str| {
            let mut s = out.as_os_str().to_owned();
            s.push(suffix);
            PathBuf::from(s)
        };
        Checkpoint {
            weights: with(".ckpt"),
            state: with(".ckpt-state.json"),
        }
    }

    /// The saved compact weights and the iteration they are from, if a
    /// checkpoint exists; an error if it is from another run. `this_run`
    /// is this run's info at a given iteration.
    pub fn resume(
        &self,
        columns: &ColumnMap,
        has_bias: bool,
        this_run: impl Fn(usize) -> CheckpointInfo,
    ) -> Result<Option<(Vec<f64>, usize)>, TrainError> {
        if !self.weights.exists() {
            return Ok(None);
        }
        let model = LinearModel::load(&self.weights)?;
        let saved: CheckpointInfo = read_json(&self.state)?;
        let want = this_run(saved.iteration);
        if saved != want || model.raw_weights().len() != want.dim {
            return Err(TrainError::Checkpoint {
                path: self.weights.clone(),
                message: format!("saved {saved:?}, this run {want:?}"),
            });
        }
        let w = columns
            .compress(model.raw_weights(), has_bias)
            .map_err(|j| TrainError::Checkpoint {
                path: self.weights.clone(),
                message: format!(
                    "feature {} has a non-zero weight but does not occur in the data",
                    j + 1
                ),
            })?;
        Ok(Some((w, saved.iteration)))
    }

    /// Saves full-space weights after `info.iteration`.
    pub fn save(
        &self,
        weights: Vec<f64>,
        bias: f64,
        info: &CheckpointInfo,
    ) -> Result<(), TrainError> {
        LinearModel::new(weights, bias, None).save(&self.weights)?;
        let json = serde_json::to_string(info).expect("serialises");
        write_atomic(&self.state, json.as_bytes())?;
        Ok(())
    }

    /// Removes both files (the finished model supersedes them).
    pub fn remove(&self) {
        let _ = fs::remove_file(&self.weights);
        let _ = fs::remove_file(&self.state);
    }

    pub fn path(&self) -> &Path {
        &self.weights
    }
}

//! Resumable training: after every Newton iteration the weights go to
//! `MODEL.ckpt` (a model file, full-space as models are), the objective's
//! cache at them (`X·w`, as little-endian f64) to `MODEL.ckpt-cache`, and
//! what run they belong to with the objective's value to
//! `MODEL.ckpt-state.json`. A run with the same data and parameters resumes
//! after the saved iteration and goes on exactly as the saving run would
//! have (the model is byte-identical); any other run is refused.

use std::fs;
use std::path::{Path, PathBuf};

use super::TrainError;
use super::dataset::ColumnMap;
use super::newton::Resume;
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

/// `MODEL.ckpt-state.json`.
#[derive(serde::Serialize, serde::Deserialize)]
struct SavedState {
    run: CheckpointInfo,
    /// The objective at the saved weights, as the solver had it.
    objective: f64,
    /// Values in `MODEL.ckpt-cache`.
    cache_len: usize,
}

/// A checkpoint read back: compact weights and where the solver was.
pub struct Resumed {
    pub weights: Vec<f64>,
    pub iteration: usize,
    pub state: Resume,
}

/// The checkpoint files of one model.
pub struct Checkpoint {
    weights: PathBuf,
    // Not `MODEL.ckpt.json`: that name is the sidecar `LinearModel::load` reads.
    state: PathBuf,
    cache: PathBuf,
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
            cache: with(".ckpt-cache"),
        }
    }

    /// The saved checkpoint, if one exists; an error if it is from another
    /// run or damaged. `this_run` is this run's info at a given iteration.
    pub fn resume(
        &self,
        columns: &ColumnMap,
        has_bias: bool,
        this_run: impl Fn(usize) -> CheckpointInfo,
    ) -> Result<Option<Resumed>, TrainError> {
        // The state file is written last and removed first: without it any
        // other checkpoint file is from a save that did not finish.
        if !self.state.exists() {
            return Ok(None);
        }
        let bad = |path: &Path, message: String| TrainError::Checkpoint {
            path: path.to_path_buf(),
            message,
        };
        let model = LinearModel::load(&self.weights)?;
        let saved: SavedState = read_json(&self.state)?;
        let want = this_run(saved.run.iteration);
        if saved.run != want || model.raw_weights().len() != want.dim {
            return Err(bad(
                &self.weights,
                format!("saved {:?}, this run {want:?}", saved.run),
            ));
        }
        let weights = columns
            .compress(model.raw_weights(), has_bias)
            .map_err(|j| {
                bad(
                    &self.weights,
                    format!(
                        "feature {} has a non-zero weight but does not occur in the data",
                        j + 1
                    ),
                )
            })?;
        // The SVR's cache: wᵀw, then w·x of every row.
        if saved.cache_len != 0 && saved.cache_len != want.rows + 1 {
            return Err(bad(
                &self.state,
                format!(
                    "cache_len {} for {} rows (0 or rows + 1)",
                    saved.cache_len, want.rows
                ),
            ));
        }
        let bytes = fs::read(&self.cache).map_err(|e| bad(&self.cache, e.to_string()))?;
        if Some(bytes.len()) != saved.cache_len.checked_mul(8) {
            return Err(bad(
                &self.cache,
                format!(
                    "{} bytes where the state says {} values",
                    bytes.len(),
                    saved.cache_len
                ),
            ));
        }
        let cache = bytes
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        Ok(Some(Resumed {
            weights,
            iteration: saved.run.iteration,
            state: Resume {
                f: saved.objective,
                cache,
            },
        }))
    }

    /// Saves full-space weights and the solver's state after `info.iteration`.
    /// The state file goes last: it names what the other two hold.
    pub fn save(
        &self,
        weights: Vec<f64>,
        bias: f64,
        info: &CheckpointInfo,
        state: &Resume,
    ) -> Result<(), TrainError> {
        let _ = fs::remove_file(&self.state);
        LinearModel::new(weights, bias, None).save(&self.weights)?;
        let bytes: Vec<u8> = state.cache.iter().flat_map(|v| v.to_le_bytes()).collect();
        write_atomic(&self.cache, &bytes)?;
        let saved = SavedState {
            run: *info,
            objective: state.f,
            cache_len: state.cache.len(),
        };
        let json = serde_json::to_string(&saved).expect("serialises");
        write_atomic(&self.state, json.as_bytes())?;
        Ok(())
    }

    /// Removes the files (the finished model supersedes them).
    pub fn remove(&self) {
        let _ = fs::remove_file(&self.state);
        let _ = fs::remove_file(&self.weights);
        let _ = fs::remove_file(&self.cache);
    }

    pub fn path(&self) -> &Path {
        &self.weights
    }
}

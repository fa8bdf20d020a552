//! Output layout, metadata files and atomic writes.
//!
//! `DIR/extract.json` holds the run metadata ([`RunMeta`]); each game's rows
//! are in `DIR/<input name>/<relative path>.<game index>.svm` (or `.bin`)
//! with a sidecar `... .svm.json` ([`GameMeta`]) written after the rows, so
//! a sidecar whose byte count matches its rows marks a complete game for
//! `--resume`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::siblings::PositionRows;
use crate::rows::{RowFormat, Scheme};

/// `DIR/extract.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunMeta {
    /// The scheme and labelling.
    #[serde(flatten)]
    pub scheme: Scheme,
    /// How rows are laid out.
    pub layout: String,
    /// Input paths as given.
    pub inputs: Vec<String>,
    /// Totals of the run (absent while it runs).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub summary: Option<serde_json::Value>,
}

/// The sidecar `X.svm.json` of one game file `X.svm`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameMeta {
    /// The scheme and labelling.
    #[serde(flatten)]
    pub scheme: Scheme,
    /// The record file.
    pub source: String,
    /// 0-based game index within the record file.
    pub game_index: usize,
    /// True when the record had an error and only the moves before it are here.
    pub truncated: bool,
    /// Rows in the `.svm` file.
    pub rows: usize,
    /// Size of the `.svm` file in bytes.
    pub bytes: u64,
    /// Non-zero features in the file.
    pub nnz: usize,
    /// Each position's rows, in game order.
    pub positions: Vec<PositionRows>,
}

/// The sidecar path of a `.svm` file.
pub fn sidecar_path(svm: &Path) -> PathBuf {
    let mut s = svm.as_os_str().to_owned();
    s.push(".json");
    PathBuf::from(s)
}

/// The sidecar of `svm` when both exist, the sidecar was written for the
/// same `scheme`, and the `.svm` has the recorded size.
pub fn completed(svm: &Path, scheme: &Scheme) -> Option<GameMeta> {
    let text = std::fs::read_to_string(sidecar_path(svm)).ok()?;
    let meta = serde_json::from_str::<GameMeta>(&text).ok()?;
    (meta.scheme == *scheme && std::fs::metadata(svm).is_ok_and(|m| m.len() == meta.bytes))
        .then_some(meta)
}

/// The name under the output directory for records found under `input`:
/// the input's own name, then the path below it.
pub fn relative_name(input: &Path, file: &Path) -> PathBuf {
    let base = input
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("input"));
    match file.strip_prefix(input) {
        Ok(rest) if !rest.as_os_str().is_empty() => base.join(rest),
        _ => base,
    }
}

/// [`RunMeta::layout`] of rows in `format`.
pub fn layout(format: RowFormat) -> String {
    format!(
        "one DIR/<input>/<record path>.<game index>.{ext} per game, sidecar .{ext}.json",
        ext = format.extension()
    )
}

/// The rows file of game `index` of a record named `rel`.
pub fn rows_path(out: &Path, rel: &Path, index: usize, format: RowFormat) -> PathBuf {
    let mut name = rel.as_os_str().to_owned();
    name.push(format!(".{index}.{}", format.extension()));
    out.join(name)
}

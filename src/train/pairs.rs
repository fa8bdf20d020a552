//! Pairwise ranking rows (`train --loss rank`): Bonanza's comparison of a
//! position's game move with each of its siblings, as a convex loss.
//!
//! A position's siblings have rows `xᵢ` (each seen from the side to move
//! at its own position), bases `bᵢ` for the mover (material with `--base
//! material`, else 0) and signs `σᵢ` (−1 where the row's position has the
//! mover to move): the evaluation puts sibling `i` at `bᵢ + σᵢ·wᵀxᵢ·S`
//! for the mover (`S` the label scale). The game move `g` should come at
//! least `margin` above every other sibling `s`:
//!
//! ```text
//! wᵀ(σ_g·x_g − σ_s·x_s) ≥ (margin − b_g + b_s) / S
//! ```
//!
//! one row of difference features a pair, its label that bound, for the
//! one-sided squared loss ([`crate::train::svr::Loss::Rank`]). Features
//! the two rows share with the same sign cancel, so a pair row holds what
//! tells the two leaves apart. A pair is left out when either row's label
//! is at the clamp (a mate: the bound is not a value), or when the two
//! rows are the same (nothing to learn).
//!
//! ```
//! use niwatori::train::pairs::difference;
//! let mut out = Vec::new();
//! // σ_g = +1, σ_s = +1: shared feature 2 cancels
//! difference((&[1, 2], &[1.0, 1.0]), 1.0, (&[2, 5], &[1.0, 1.0]), 1.0, &mut out);
//! assert_eq!(out, vec![(1, 1.0), (5, -1.0)]);
//! ```

use std::path::PathBuf;

use rayon::prelude::*;

use super::dataset::{Dataset, DatasetError, blocks_from_groups};
use crate::extract::output::{GameMeta, sidecar_path};
use crate::rows::LABEL_SCALE;
use crate::rows::libsvm::{Rows, Values};

/// An error building pairs.
#[derive(Debug, thiserror::Error)]
pub enum PairsError {
    #[error("{path}: {message}")]
    Sidecar { path: PathBuf, message: String },
    #[error("the sidecars list {sidecars} rows, the row files hold {rows}")]
    RowCount { sidecars: usize, rows: usize },
    #[error(transparent)]
    Dataset(#[from] DatasetError),
}

/// What a run of [`pair_rows`] made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairCounts {
    /// Positions with a game move and at least one other sibling.
    pub positions: usize,
    /// Pair rows made.
    pub pairs: usize,
    /// Pairs left out because a row's label is at the clamp.
    pub clamped: usize,
    /// Pairs left out because the two rows are the same.
    pub identical: usize,
}

impl std::ops::AddAssign for PairCounts {
    fn add_assign(&mut self, o: Self) {
        self.positions += o.positions;
        self.pairs += o.pairs;
        self.clamped += o.clamped;
        self.identical += o.identical;
    }
}

/// `out = σ_g·g − σ_s·s` of two sparse rows sorted by index, zeros left out.
pub fn difference(
    g: (&[u32], &[f64]),
    sigma_g: f64,
    s: (&[u32], &[f64]),
    sigma_s: f64,
    out: &mut Vec<(u32, f64)>,
) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while i < g.0.len() || j < s.0.len() {
        let gi = g.0.get(i).copied().unwrap_or(u32::MAX);
        let sj = s.0.get(j).copied().unwrap_or(u32::MAX);
        let (index, v) = if gi < sj {
            i += 1;
            (gi, sigma_g * g.1[i - 1])
        } else if sj < gi {
            j += 1;
            (sj, -sigma_s * s.1[j - 1])
        } else {
            i += 1;
            j += 1;
            (gi, sigma_g * g.1[i - 1] - sigma_s * s.1[j - 1])
        };
        if v != 0.0 {
            out.push((index, v));
        }
    }
}

/// The sidecar of each row file, in order.
fn read_sidecars(files: &[PathBuf]) -> Result<Vec<GameMeta>, PairsError> {
    files
        .par_iter()
        .map(|f| {
            let path = sidecar_path(f);
            let bad = |message: String| PairsError::Sidecar {
                path: path.clone(),
                message,
            };
            let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
            let meta: GameMeta = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
            for p in &meta.positions {
                if p.bases.len() != p.num_rows || p.flipped.len() != p.num_rows {
                    return Err(bad(format!(
                        "position at ply {} lists {} bases and {} flips for {} rows; \
                         ranking needs rows extracted by this build (extract again)",
                        p.ply,
                        p.bases.len(),
                        p.flipped.len(),
                        p.num_rows
                    )));
                }
                if p.game_row < p.first_row || p.game_row >= p.first_row + p.num_rows {
                    return Err(bad(format!(
                        "position at ply {}: game row outside its rows",
                        p.ply
                    )));
                }
            }
            Ok(meta)
        })
        .collect()
}

/// The pair rows of `data`, whose rows are those of `files` in order (all
/// of them: loaded without `--drop-clamped`), each file's positions read
/// from its sidecar with the margin it was extracted with. `groups` (of
/// `files`, in order) start the blocks of the sums over pairs as they
/// start the rows' (see [`crate::train::load::Loaded::groups`]), so that
/// shards of files on several ranks sum as one process does.
pub fn pair_rows(
    data: &Dataset,
    files: &[PathBuf],
    groups: &[std::ops::Range<usize>],
) -> Result<(Dataset, PairCounts), PairsError> {
    let sidecars = read_sidecars(files)?;
    let listed: usize = sidecars.iter().map(|m| m.rows).sum();
    if listed != data.n_rows() {
        return Err(PairsError::RowCount {
            sidecars: listed,
            rows: data.n_rows(),
        });
    }
    let mut first = Vec::with_capacity(sidecars.len());
    let mut at = 0;
    for m in &sidecars {
        first.push(at);
        at += m.rows;
    }
    let scale = f64::from(LABEL_SCALE);
    let y = data.labels();
    let mut rows = Rows {
        values: Values::F32(Vec::new()),
        ..Rows::default()
    };
    let mut counts = PairCounts::default();
    let mut file_starts = Vec::with_capacity(files.len());
    // A few files at a time, appended as they come: the pairs of all the
    // files at once, then copied into one, would need twice the memory.
    for (metas, firsts) in sidecars.chunks(64).zip(first.chunks(64)) {
        let parts: Vec<(Rows, PairCounts)> = metas
            .par_iter()
            .zip(firsts)
            .map(|(meta, &offset)| file_pairs(data, y, meta, offset, scale))
            .collect();
        for (r, c) in parts {
            file_starts.push(rows.labels.len());
            rows.append(r);
            counts += c;
        }
    }
    let n = rows.labels.len();
    let mut group_starts: Vec<usize> = groups
        .iter()
        .map(|g| file_starts.get(g.start).copied().unwrap_or(n))
        .collect();
    group_starts.dedup();
    group_starts.retain(|&s| s < n);
    if group_starts.first() != Some(&0) {
        group_starts.insert(0, 0);
    }
    let mut pairs = Dataset::from_rows(rows, data.n_features(), data.bias())?;
    pairs.set_block_starts(blocks_from_groups(&group_starts, n));
    Ok((pairs, counts))
}

/// The pairs of one file's positions, its first row at `offset` in `data`.
fn file_pairs(
    data: &Dataset,
    y: &[f64],
    meta: &GameMeta,
    offset: usize,
    scale: f64,
) -> (Rows, PairCounts) {
    let mut rows = Rows {
        values: Values::F32(Vec::new()),
        ..Rows::default()
    };
    let mut counts = PairCounts::default();
    let mut diff = Vec::new();
    let margin = meta.scheme.margin;
    for p in &meta.positions {
        if p.num_rows < 2 {
            continue;
        }
        counts.positions += 1;
        let k = p.game_row - p.first_row;
        let gi = offset + p.game_row;
        let (g_idx, g_val) = data.row(gi);
        let sigma = |flipped: bool| if flipped { -1.0 } else { 1.0 };
        for s in (0..p.num_rows).filter(|&s| s != k) {
            let si = offset + p.first_row + s;
            if y[gi].abs() >= 1.0 || y[si].abs() >= 1.0 {
                counts.clamped += 1;
                continue;
            }
            let (s_idx, s_val) = data.row(si);
            difference(
                (&g_idx, &g_val),
                sigma(p.flipped[k]),
                (&s_idx, &s_val),
                sigma(p.flipped[s]),
                &mut diff,
            );
            if diff.is_empty() {
                counts.identical += 1;
                continue;
            }
            let bound = f64::from(margin - p.bases[k] + p.bases[s]) / scale;
            push_row(&mut rows, bound, &diff);
            counts.pairs += 1;
        }
    }
    (rows, counts)
}

/// Appends one row (0-based indices, stored 1-based as parsed rows are).
fn push_row(rows: &mut Rows, label: f64, features: &[(u32, f64)]) {
    rows.labels.push(label);
    rows.row_lengths.push(features.len() as u32);
    let Values::F32(values) = &mut rows.values else {
        unreachable!("pair rows are built as f32")
    };
    for &(j, v) in features {
        rows.indices.push(j + 1);
        values.push(v as f32);
        rows.max_index = rows.max_index.max(j + 1);
    }
}

//! Sibling expansion: every legal move of every game position, scored, with
//! the training target of each sibling.

use std::sync::Arc;

use rsshogi::board::{Move32List, Position, generate_legal_all_move32};
use rsshogi::types::{Move, Move32};

use crate::eval::{Evaluator, Material};
use crate::features::for_each_feature;
use crate::random::{FNV_OFFSET, fnv1a};
use crate::records::Game;
use crate::rows::{Base, FeaturesAt, LABEL_SCALE, Labels, libsvm};

use super::ExtractOptions;

/// Scores a sibling: the position just after the mover's move, the opponent
/// to move. Returns centipawns from the MOVER's point of view; `pos` must be
/// unchanged on return. One per worker thread.
pub trait SiblingScore {
    /// The sibling's score for the mover.
    fn score(&mut self, pos: &mut Position) -> i32;

    /// The score of the sibling the legal move `mv` of `pos` leads to, as
    /// `score` gives; `pos` is left at the sibling.
    fn score_move(&mut self, pos: &mut Position, mv: Move32) -> i32 {
        pos.apply_move32(mv);
        self.score(pos)
    }

    /// The moves from the sibling to the position the last score came from
    /// (empty: the sibling itself).
    fn leaf_moves(&self) -> &[Move32] {
        &[]
    }

    /// Called before the siblings of each position, so that what a scorer
    /// learns while scoring (move ordering) stays within one position and
    /// rows do not depend on which thread scored which games before.
    fn start_position(&mut self) {}
}

impl SiblingScore for crate::search::SiblingScorer {
    fn score(&mut self, pos: &mut Position) -> i32 {
        crate::search::SiblingScorer::score(self, pos)
    }

    fn score_move(&mut self, pos: &mut Position, mv: Move32) -> i32 {
        crate::search::SiblingScorer::score_move(self, pos, mv)
    }

    fn leaf_moves(&self) -> &[Move32] {
        self.pv()
    }

    fn start_position(&mut self) {
        crate::search::SiblingScorer::start_position(self);
    }
}

/// Minus the static evaluation of the sibling (the opponent to move): a
/// depth-0 score, no search: for tests of the labelling and as the
/// benchmark's lower bound on scoring cost.
#[derive(Clone)]
pub struct StaticScorer {
    eval: Arc<dyn Evaluator>,
}

impl StaticScorer {
    /// A scorer using `eval`.
    pub fn new(eval: Arc<dyn Evaluator>) -> Self {
        Self { eval }
    }
}

impl SiblingScore for StaticScorer {
    fn score(&mut self, pos: &mut Position) -> i32 {
        -self.eval.evaluate(pos)
    }
}

/// Training targets (centipawns, clamped to ±[`LABEL_SCALE`]) of the siblings
/// of one position, given their scores and which one the game played:
/// the game move gets `g + margin`, a sibling scoring above `g` gets
/// `g - margin`, any other its own score. Scores are clamped before use.
///
/// ```
/// use niwatori::extract::targets;
/// // the game played the 0-score move; the 50 and 120 moves drop below it
/// assert_eq!(targets(&[50, 0, 120, -30], 1, 100), vec![-100, 100, -100, -30]);
/// ```
pub fn targets(scores: &[i32], game: usize, margin: i32) -> Vec<i32> {
    let clamp = |v: i32| v.clamp(-LABEL_SCALE, LABEL_SCALE);
    let g = clamp(scores[game]);
    scores
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let v = clamp(v);
            if i == game {
                clamp(g.saturating_add(margin))
            } else if v > g {
                clamp(g.saturating_sub(margin))
            } else {
                v
            }
        })
        .collect()
}

/// Where [`expand_game`] puts the rows it makes: libsvm text in a
/// `Vec<u8>` for extraction, or a sink that keeps less (the extract bench
/// measures scoring alone by asking for no features).
pub trait RowSink {
    /// Whether rows need their features; a sink that says no gets empty
    /// feature lists, and the features are never computed.
    const FEATURES: bool = true;

    /// One row: its training target (centipawns) and its features, sorted
    /// by index.
    fn row(&mut self, target: i32, features: &[(u32, u8)]);

    /// After a position's rows: the position (the game move not yet
    /// played), the game move, and the siblings' scores from the mover's
    /// view.
    fn position(&mut self, _pos: &Position, _game_move: Move, _scores: &[i32]) {}
}

/// Position records ([`crate::positions`]): one a position, its score the
/// best sibling's, its result from the game's ending.
pub struct PositionSink<R> {
    pub bytes: Vec<u8>,
    pub winner: Option<rsshogi::types::Color>,
    /// Positions the format cannot hold (left out).
    pub unpackable: usize,
    pub format: std::marker::PhantomData<R>,
}

impl<R: crate::positions::PositionRecord> RowSink for PositionSink<R> {
    const FEATURES: bool = false;

    fn row(&mut self, _target: i32, _features: &[(u32, u8)]) {}

    fn position(&mut self, pos: &Position, game_move: Move, scores: &[i32]) {
        let best = scores.iter().copied().max().unwrap_or(0);
        let ply = pos.game_ply() as usize;
        match R::new(pos, best, game_move, ply, self.winner) {
            Some(record) => record.write(&mut self.bytes),
            None => self.unpackable += 1,
        }
    }
}

/// libsvm text, one line per row ([`libsvm::write_row`]).
impl RowSink for Vec<u8> {
    fn row(&mut self, target: i32, features: &[(u32, u8)]) {
        libsvm::write_row(self, target, features);
    }
}

/// Compact binary rows ([`crate::rows::binary`]), in memory.
impl RowSink for crate::rows::binary::Writer<Vec<u8>> {
    fn row(&mut self, target: i32, features: &[(u32, u8)]) {
        self.push(target, features).expect("writing to memory");
    }
}

/// Where a game position's rows are in its rows file.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PositionRows {
    /// 1-based ply of the game move played from this position.
    pub ply: usize,
    /// The position (SFEN, the game move not yet played).
    pub sfen: String,
    /// The game move (USI).
    pub game_move: String,
    /// 0-based row of the position's first sibling in the file.
    pub first_row: usize,
    /// Number of siblings (= legal moves) and so of rows.
    pub num_rows: usize,
    /// 0-based row of the game move's sibling in the file.
    pub game_row: usize,
    /// What pairwise ranking (`train --loss rank`) needs of each row, in
    /// row order: the base of the row's position for the mover
    /// (centipawns: its material with `--base material`, else 0).
    /// Written as one line of numbers; absent in files of older builds.
    #[serde(default, with = "spaced", skip_serializing_if = "Vec::is_empty")]
    pub bases: Vec<i32>,
    /// Per row: whether its position has the mover to move (a leaf an odd
    /// number of plies below the sibling), so that the row's target and its
    /// model part are the mover's opponent's. Written as `0`/`1` digits.
    #[serde(default, with = "digits", skip_serializing_if = "Vec::is_empty")]
    pub flipped: Vec<bool>,
}

/// `Vec<i32>` as one string of space-separated numbers: a sidecar holds
/// one per position, and pretty JSON would spend a line on each number.
mod spaced {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(v: &[i32], s: S) -> Result<S::Ok, S::Error> {
        let text: Vec<String> = v.iter().map(i32::to_string).collect();
        s.serialize_str(&text.join(" "))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<i32>, D::Error> {
        let text = String::deserialize(d)?;
        text.split_ascii_whitespace()
            .map(|t| {
                t.parse()
                    .map_err(|_| D::Error::custom(format!("{t:?} is not a number")))
            })
            .collect()
    }
}

/// `Vec<bool>` as a string of `0`/`1` digits.
mod digits {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(v: &[bool], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(
            &v.iter()
                .map(|&b| if b { '1' } else { '0' })
                .collect::<String>(),
        )
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<bool>, D::Error> {
        let text = String::deserialize(d)?;
        text.chars()
            .map(|c| match c {
                '0' => Ok(false),
                '1' => Ok(true),
                _ => Err(D::Error::custom(format!("{c:?} is not 0 or 1"))),
            })
            .collect()
    }
}

/// The rows of one game.
#[derive(Clone, Debug, Default)]
pub struct GameRows {
    /// One entry per position, in game order.
    pub positions: Vec<PositionRows>,
    /// Total rows.
    pub rows: usize,
    /// Total non-zero features over all rows (0 for a sink that takes no
    /// features).
    pub nnz: usize,
}

/// Errors expanding a game.
#[derive(Debug, thiserror::Error)]
pub enum ExpandError {
    /// A move of the record is not among the legal moves (cannot happen for
    /// games from [`crate::records`], which checks legality).
    #[error("{}: game {}: move {ply} ({usi}) is not legal", .source_file.display(), .game + 1)]
    IllegalGameMove {
        /// The record file.
        source_file: std::path::PathBuf,
        /// 0-based game index.
        game: usize,
        /// 1-based ply.
        ply: usize,
        /// The move.
        usi: String,
    },
}

/// Reusable buffers for [`expand_game`], one per worker.
#[derive(Default)]
pub struct Scratch {
    feats: Vec<(u32, u8)>,
    ranges: Vec<(usize, usize)>,
    scores: Vec<i32>,
    /// Rows whose position has the mover to move (a leaf an odd number of
    /// plies below the sibling): their target is negated.
    negated: Vec<bool>,
    /// Each row position's material for its side to move (with
    /// [`Base::Material`]).
    materials: Vec<i32>,
}

/// Which positions of a game `extract --sample` expands: a hash of the
/// record's file name (not its folder, so a copied tree samples alike), the
/// game's index in it and the ply, below `fraction`. Deterministic, and
/// spread across the game rather than a run of plies.
pub struct PositionSample {
    /// Hash of the file name and game index.
    game: u64,
    /// `fraction` × 2⁵³, compared with 53 bits of each ply's hash.
    threshold: u64,
    every: bool,
}

impl PositionSample {
    pub fn new(game: &Game, fraction: f64) -> Self {
        let name = game.source.file_name().unwrap_or_default();
        let mut h = fnv1a(FNV_OFFSET, name.as_encoded_bytes());
        h = fnv1a(h, &(game.index as u64).to_le_bytes());
        Self {
            game: h,
            threshold: (fraction.clamp(0.0, 1.0) * (1u64 << 53) as f64) as u64,
            every: fraction >= 1.0,
        }
    }

    /// Whether the position before move `ply` (1-based) is in the sample.
    pub fn takes(&self, ply: usize) -> bool {
        self.every || {
            // FNV alone mixes the last bytes poorly; finish with a
            // multiply-xorshift so that nearby plies look unrelated
            let mut h = fnv1a(self.game, &(ply as u64).to_le_bytes());
            h ^= h >> 33;
            h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
            h ^= h >> 33;
            (h >> 11) < self.threshold
        }
    }
}

/// Expands every position of `game` into sibling rows given to `out`.
///
/// Every position before a game move gives one row per legal move, the game
/// move's among them; the final position (no game move) gives none.
/// `options` supplies the margin, the relation encoding and which position
/// (sibling or principal-variation leaf) each row describes, and with
/// `options.sample` < 1 only a sample of the positions is expanded. With
/// [`Labels::Record`] a position gives the game move's row alone, its
/// target the record's score (positions without one give none).
pub fn expand_game<S: SiblingScore + ?Sized, O: RowSink>(
    game: &Game,
    scorer: &mut S,
    options: &ExtractOptions,
    scratch: &mut Scratch,
    out: &mut O,
) -> Result<GameRows, ExpandError> {
    let (set, margin) = (options.features, options.margin);
    let mut pos = game.start_position();
    let mut result = GameRows::default();
    let mut moves = Move32List::new();
    let sample = PositionSample::new(game, options.sample);
    for (i, &game_move) in game.moves.iter().enumerate() {
        moves.clear();
        generate_legal_all_move32(&pos, &mut moves);
        let Some(game_idx) = moves.iter().position(|m| m.to_move() == game_move) else {
            return Err(ExpandError::IllegalGameMove {
                source_file: game.source.clone(),
                game: game.index,
                ply: i + 1,
                usi: game_move.to_usi(),
            });
        };
        // with record labels, the game move's sibling alone, if scored
        let recorded = match options.labels {
            Labels::Siblings => None,
            Labels::Record | Labels::RecordSiblings => game
                .mover_score(i)
                .map(|s| s.clamp(-LABEL_SCALE, LABEL_SCALE)),
        };
        if !sample.takes(i + 1) || (options.labels != Labels::Siblings && recorded.is_none()) {
            pos.apply_move32(moves[game_idx]);
            continue;
        }
        let alone = options.labels == Labels::Record;
        let (candidates, game_idx_in) = match alone {
            true => (std::slice::from_ref(&moves[game_idx]), 0),
            false => (moves.as_slice(), game_idx),
        };
        scratch.feats.clear();
        scratch.ranges.clear();
        scratch.scores.clear();
        scratch.negated.clear();
        scratch.materials.clear();
        // The same position without its history: a depth-1 score never asks
        // about repetitions, and every move played on `pos` would otherwise
        // look for them in the whole game. (A game's positions come from a
        // parsed SFEN and legal moves, so reading one back cannot fail; if it
        // did, the copy with its history gives the same scores, slower.)
        let mut work =
            Position::from_sfen(&pos.to_sfen(None)).unwrap_or_else(|_| pos.clone_for_search());
        scorer.start_position();
        for &mv in candidates {
            scratch.scores.push(scorer.score_move(&mut work, mv));
            if O::FEATURES {
                let start = scratch.feats.len();
                let leaf: &[Move32] = match options.features_at {
                    FeaturesAt::Sibling => &[],
                    FeaturesAt::Leaf => scorer.leaf_moves(),
                };
                for &m in leaf {
                    work.apply_move32(m);
                }
                let feats = &mut scratch.feats;
                for_each_feature(&work, set, |idx, v| {
                    feats.push((idx, u8::try_from(v).unwrap_or(u8::MAX)));
                });
                if options.base == Base::Material {
                    scratch.materials.push(Material.evaluate(&work));
                }
                for &m in leaf.iter().rev() {
                    work.undo_move32(m)
                        .expect("undo of a move just applied cannot fail");
                }
                debug_assert!(scratch.feats[start..].is_sorted_by_key(|&(idx, _)| idx));
                scratch.ranges.push((start, scratch.feats.len()));
                scratch.negated.push(leaf.len() % 2 == 1);
            }
            work.undo_move32(mv)
                .expect("undo of a move just applied cannot fail");
        }
        let labels = match (recorded, alone) {
            (Some(score), true) => vec![score],
            (Some(score), false) => {
                let searched = std::mem::replace(&mut scratch.scores[game_idx], score);
                let labels = targets(&scratch.scores, game_idx, margin);
                scratch.scores[game_idx] = searched;
                labels
            }
            (None, _) => targets(&scratch.scores, game_idx, margin),
        };
        let mut bases = Vec::new();
        if O::FEATURES {
            let rows = labels.iter().zip(&scratch.ranges).zip(&scratch.negated);
            bases.reserve(labels.len());
            for (k, ((&t, &(a, b)), &negated)) in rows.enumerate() {
                let t = if negated { -t } else { t };
                let material = scratch.materials.get(k).copied().unwrap_or(0);
                out.row(options.base.target(t, material), &scratch.feats[a..b]);
                // `material` is the side to move's: the mover's when flipped
                bases.push(if negated { material } else { -material });
            }
        } else {
            for &t in &labels {
                out.row(t, &[]);
            }
        }
        let scores = if alone { &labels } else { &scratch.scores };
        out.position(&pos, game_move, scores);
        result.nnz += scratch.feats.len();
        result.positions.push(PositionRows {
            ply: i + 1,
            sfen: pos.to_sfen(None),
            game_move: game_move.to_usi(),
            first_row: result.rows,
            num_rows: candidates.len(),
            game_row: result.rows + game_idx_in,
            flipped: match O::FEATURES {
                true => scratch.negated.clone(),
                false => Vec::new(),
            },
            bases,
        });
        result.rows += candidates.len();
        pos.apply_move32(moves[game_idx]);
    }
    Ok(result)
}

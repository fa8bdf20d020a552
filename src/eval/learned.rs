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
//!
//! Weights are held as integers (`w ≈ q / quant_scale`, the largest at
//! 2²⁴), so that a sum is exact whatever its order: an [`Accumulator`]
//! updated by the terms a move changes gives bit for bit the full
//! evaluation. Without the attack relations (`--blocks king-piece`, the
//! default) a move changes a handful of terms
//! ([`crate::features::for_each_piece_term_change`]), known before it is
//! played: the search carries an accumulator per ply and scores a move's
//! child without playing it. The attack relations need both boards
//! ([`crate::features::changed_pairs`]) and are summed in full by the
//! search.

use std::path::{Path, PathBuf};

use rsshogi::board::Position;
use rsshogi::types::{Bitboard, Color, Move32, Square};

use super::{Evaluator, Material};
use crate::features::{self, Board, FeatureSet, PieceChange, changed_pairs};
use crate::rows::model::LinearModel;
use crate::rows::{Base, FeaturesAt};

/// Why a model cannot serve as an evaluation.
#[derive(Debug, thiserror::Error)]
pub enum LearnedError {
    #[error(transparent)]
    Model(#[from] crate::rows::model::ModelError),
    #[error("{path}: {message}")]
    Scheme { path: PathBuf, message: String },
    #[error("{0}")]
    Spec(String),
}

/// Bits of the largest quantized weight: sums of a few hundred terms of
/// value ≤ 10 stay far inside `i64`, and the rounding (2⁻²⁴ of the largest
/// weight) far below what moves an evaluation by a centipawn.
const QUANT_BITS: u32 = 24;

/// With [`Base::Material`], the model's part of an evaluation is clamped to
/// ± this many centipawns, so that the evaluation stays within it of
/// material ([`Evaluator::material_spread`]) and quiescence can stand pat on
/// material alone far outside the window.
pub const RESIDUAL_LIMIT: i32 = 1000;

/// The learned sums of one position from both sides' view (index: the
/// colour seen as the side to move): pair terms, and the hand and
/// king-piece terms ([`KingSums`]), in quantized weight units; and the
/// material balance for Black, for a model with the material base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accumulator {
    pairs: [i64; 2],
    pieces: [KingSums; 2],
    material: i32,
}

/// One view's hand and king-piece sum, split by the king each term is
/// relative to (0: the view's own, 1: the other): a king move recounts
/// its own part and carries the other.
pub type KingSums = [i64; 2];

/// A linear evaluation loaded from a model file.
pub struct Learned {
    /// Quantized weights: weight = q / `quant_scale`.
    weights: Vec<i32>,
    /// The largest weight of each king-piece group of 81
    /// ([`FeatureSet::king_piece_groups`]): a bound on a quiet move's
    /// sum whatever its destination ([`Learned::quiet_ceiling_bound`]).
    group_max: Vec<i32>,
    quant_scale: f64,
    bias: f64,
    /// `label_scale / quant_scale` and `bias × label_scale`: a sum's value
    /// in centipawns before clamping and sign ([`Learned::value_of_sum`]).
    sum_to_value: f64,
    bias_value: f64,
    set: FeatureSet,
    label_scale: f64,
    /// Trained on rows at search leaves (`extract --features-at leaf`).
    leaf_rows: bool,
    /// What the model adds itself to: nothing, or material.
    base: Base,
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
        let set = FeatureSet::of_size(scheme.num_features, scheme.attacks, scheme.king_piece);
        let set = set.ok_or_else(|| {
            format!(
                "{} features match no relation encoding of {} v{}{}",
                scheme.num_features,
                features::SCHEME,
                features::SCHEME_VERSION,
                if scheme.king_piece {
                    " with the king-piece block"
                } else {
                    ""
                }
            )
        })?;
        if scheme.label_scale.is_nan() || scheme.label_scale <= 0.0 {
            return Err(format!(
                "label scale {} is not positive",
                scheme.label_scale
            ));
        }
        let largest = model.weights().iter().fold(0.0f64, |m, w| m.max(w.abs()));
        if !largest.is_finite() {
            return Err("the model has a weight that is not finite".into());
        }
        let quant_scale = if largest > 0.0 {
            f64::from(1 << QUANT_BITS) / largest
        } else {
            1.0
        };
        let mut weights: Vec<i32> = model
            .weights()
            .iter()
            .map(|&w| (w * quant_scale).round() as i32)
            .collect();
        weights.resize(set.num_features(), 0);
        let group_max = match set.king_piece_groups() {
            Some(block) => weights[block]
                .chunks(81)
                .map(|g| g.iter().copied().max().unwrap_or(0))
                .collect(),
            None => Vec::new(),
        };
        let bias = model.bias_weight().unwrap_or(0.0) * model.bias().max(0.0);
        let mut fingerprint = 0xcbf2_9ce4_8422_2325u64;
        let bits = weights.iter().map(|&w| u64::from(w as u32));
        let bits = bits.chain([quant_scale.to_bits()]);
        let bits = bits.chain([bias.to_bits(), scheme.label_scale.to_bits()]);
        // a base changes the values; none keeps older fingerprints
        let bits = bits.chain((scheme.base != Base::None).then_some(1));
        for x in bits {
            fingerprint = (fingerprint ^ x).wrapping_mul(0x0100_0000_01b3);
        }
        Ok(Self {
            weights,
            group_max,
            quant_scale,
            bias,
            sum_to_value: scheme.label_scale / quant_scale,
            bias_value: bias * scheme.label_scale,
            fingerprint,
            set,
            label_scale: scheme.label_scale,
            leaf_rows: scheme.features_at == FeaturesAt::Leaf,
            base: scheme.base,
            name: "learned".into(),
        })
    }

    /// The model's output `wᵀx` for `pos`: the value, in scaled label units,
    /// for the player who has just moved.
    pub fn raw(&self, pos: &Position) -> f64 {
        self.raw_of_sum(self.sum(pos))
    }

    /// The quantized sum `wᵀx` of `pos`'s terms, seen from its side to move.
    fn sum(&self, pos: &Position) -> i64 {
        let mut sum = 0i64;
        let w = &self.weights;
        features::for_each_term(pos, self.set, |i, x| {
            if let Some(&wi) = w.get(i as usize) {
                sum += i64::from(wi) * x as i64;
            }
        });
        sum
    }

    fn raw_of_sum(&self, sum: i64) -> f64 {
        sum as f64 / self.quant_scale + self.bias
    }

    /// The model's value of a sum for the side to move, in centipawns:
    /// `−clamp(raw, −1, 1) × label_scale`, rounded, with the division by
    /// the quantization folded into one product (the search asks this of
    /// every move it scores).
    #[inline]
    fn value_of_sum(&self, sum: i64) -> i32 {
        let scaled = sum as f64 * self.sum_to_value + self.bias_value;
        (-scaled.clamp(-self.label_scale, self.label_scale)).round() as i32
    }

    /// The sum of the pair terms `board` visits with these square sets.
    fn pair_sum(&self, board: &Board, view: Color, from: Bitboard, to: Bitboard) -> i64 {
        if !self.set.attacks {
            return 0;
        }
        let w = &self.weights;
        let mut sum = 0i64;
        board.for_each_term(view, self.set.encoding, from, to, |i, x| {
            sum += i64::from(w[i as usize]) * i64::from(x);
        });
        sum
    }

    /// The hand and king-piece sums, counted in full.
    fn piece_sums(&self, pos: &Position) -> [KingSums; 2] {
        [Color::BLACK, Color::WHITE].map(|view| {
            let mut sums = [0i64; 2];
            let mut add = |king: usize, i: u32| sums[king] += i64::from(self.weights[i as usize]);
            features::for_each_hand_term(pos, view, self.set.encoding, &mut add);
            features::for_each_king_piece_term(pos, view, self.set, &mut add);
            sums
        })
    }

    /// Black's material balance, if the model adds itself to material.
    fn black_material(&self, pos: &Position) -> i32 {
        match self.base {
            Base::None => 0,
            Base::Material => Material.evaluate(pos) * sign(pos.turn()),
        }
    }

    /// The sums of `pos` (whose [`Board`] is `board`) from both sides' view.
    pub fn accumulate(&self, board: &Board, pos: &Position) -> Accumulator {
        let all = !Bitboard::EMPTY;
        Accumulator {
            pairs: [Color::BLACK, Color::WHITE].map(|view| self.pair_sum(board, view, all, all)),
            pieces: self.piece_sums(pos),
            material: self.black_material(pos),
        }
    }

    /// Whether the model's accumulator follows a move without the boards
    /// (it has no attack-relation blocks): [`Learned::accumulate_position`]
    /// and [`Learned::accumulate_before_move`] serve it.
    pub fn is_incremental(&self) -> bool {
        !self.set.attacks
    }

    /// The sums of `pos`, for a model without attack relations (`None` for
    /// one with them: see [`Learned::accumulate`]).
    pub fn accumulate_position(&self, pos: &Position) -> Option<Accumulator> {
        self.is_incremental().then(|| Accumulator {
            pairs: [0; 2],
            pieces: self.piece_sums(pos),
            material: self.black_material(pos),
        })
    }

    /// The sums after the legal move `mv` of `pos` (not yet played), from
    /// those of `pos`: a few weights added and taken away (a few dozen for a
    /// king move). `None` for a model with attack relations.
    pub fn accumulate_before_move(
        &self,
        acc: &Accumulator,
        pos: &Position,
        mv: Move32,
    ) -> Option<Accumulator> {
        self.is_incremental().then(|| {
            let pieces =
                [Color::BLACK, Color::WHITE].map(|v| self.sum_after_move(acc, pos, mv, v, None));
            self.after_move(acc, pos, mv, pieces)
        })
    }

    /// As [`Learned::accumulate_before_move`], with the sum of `view` after
    /// the move already known (from [`Learned::evaluate_after_move`]), and
    /// for a king move, the other view's sum of that king from its new
    /// square if known ([`Learned::sum_near`]).
    pub fn accumulate_before_move_knowing(
        &self,
        acc: &Accumulator,
        pos: &Position,
        mv: Move32,
        (view, known): (Color, KingSums),
        restart: Option<i64>,
    ) -> Option<Accumulator> {
        self.is_incremental().then(|| {
            let pieces = [Color::BLACK, Color::WHITE].map(|v| {
                if v == view {
                    known
                } else {
                    self.sum_after_move(acc, pos, mv, v, restart)
                }
            });
            self.after_move(acc, pos, mv, pieces)
        })
    }

    /// The hand and king-piece sums of `view` after `mv`, from `acc`; for a
    /// king move, `restart` is that king's sum from its new square if known.
    #[inline]
    fn sum_after_move(
        &self,
        acc: &Accumulator,
        pos: &Position,
        mv: Move32,
        view: Color,
        restart: Option<i64>,
    ) -> KingSums {
        let before = acc.pieces[view.to_index()];
        let mut sums = before;
        let w = &self.weights;
        let add = |king: usize, i: u32, sign: i32| sums[king] += i64::from(w[i as usize] * sign);
        let recount = restart.is_none();
        if let Some(king) =
            features::for_each_piece_term_change(pos, view, self.set, mv, recount, add)
        {
            sums[king] += restart.unwrap_or(0) - before[king];
        }
        sums
    }

    /// The hand and king-piece sum of `view` relative to the king of
    /// `king_owner` (0: `view`'s) were it on `ksq`, of every piece but the
    /// one on `without` (that king): the sum it starts from after a move
    /// there ([`features::for_each_term_near`]).
    pub fn sum_near(
        &self,
        pos: &Position,
        view: Color,
        king_owner: usize,
        ksq: Square,
        without: Square,
    ) -> i64 {
        let mut sum = 0i64;
        let w = &self.weights;
        features::for_each_term_near(pos, view, self.set, king_owner, ksq, without, |i| {
            sum += i64::from(w[i as usize]);
        });
        sum
    }

    /// How `change` moves [`Learned::sum_near`] of a king that stays
    /// ([`features::for_each_change_term_near`]).
    pub fn change_near(
        &self,
        change: &PieceChange,
        view: Color,
        king_owner: usize,
        ksq: Square,
    ) -> i64 {
        let mut sum = 0i64;
        let w = &self.weights;
        features::for_each_change_term_near(change, view, self.set, king_owner, ksq, |i, sign| {
            sum += i64::from(w[i as usize] * sign);
        });
        sum
    }

    /// The accumulator after `mv` with these hand and king-piece sums.
    #[inline]
    fn after_move(
        &self,
        acc: &Accumulator,
        pos: &Position,
        mv: Move32,
        pieces: [KingSums; 2],
    ) -> Accumulator {
        let material = match self.base {
            Base::None => 0,
            Base::Material => {
                let gain = Material
                    .move_delta(pos, mv)
                    .expect("material is incremental");
                acc.material + gain * sign(pos.turn())
            }
        };
        Accumulator {
            pairs: acc.pairs,
            pieces,
            material,
        }
    }

    /// The sums after `mv`, from those before it: `before` is the board
    /// before the move, `after` and `pos` the board and position after it.
    pub fn accumulate_move(
        &self,
        acc: &Accumulator,
        before: &Board,
        after: &Board,
        pos: &Position,
        mv: Move32,
    ) -> Accumulator {
        let (from, to) = changed_pairs(before, after, mv);
        let mut pairs = acc.pairs;
        for (view, sum) in [Color::BLACK, Color::WHITE].into_iter().zip(&mut pairs) {
            *sum += self.pair_sum(after, view, from, to) - self.pair_sum(before, view, from, to);
        }
        Accumulator {
            pairs,
            pieces: self.piece_sums(pos),
            material: self.black_material(pos),
        }
    }

    /// The evaluation after the legal move `mv` of `pos` (not yet played),
    /// for the side to move then, from `acc` (the sums of `pos`) without
    /// playing it, and that side's sum: [`Learned::accumulate_before_move`]
    /// for its view alone. `None` as there.
    /// For a king move, `restart` is the moving king's sum in the other
    /// side's view from its new square, if known ([`Learned::sum_near`]).
    #[inline]
    pub fn evaluate_after_move(
        &self,
        acc: &Accumulator,
        pos: &Position,
        mv: Move32,
        restart: Option<i64>,
    ) -> Option<(i32, KingSums)> {
        if !self.is_incremental() {
            return None;
        }
        let them = pos.turn().flip();
        let sum = self.sum_after_move(acc, pos, mv, them, restart);
        let after = self.after_move(acc, pos, mv, [sum; 2]);
        Some((self.evaluate_accumulated(&after, them), sum))
    }

    /// The change the legal move `mv` of `pos` (not a king move) makes to
    /// the sums of `view`: [`Learned::accumulate_before_move`]'s less the
    /// sums before, which it does not depend on.
    pub fn move_change(&self, pos: &Position, mv: Move32, view: Color) -> KingSums {
        let mut change = [0i64; 2];
        let w = &self.weights;
        let add = |king: usize, i: u32, sign: i32| change[king] += i64::from(w[i as usize] * sign);
        let restarted = features::for_each_piece_term_change(pos, view, self.set, mv, true, add);
        debug_assert!(restarted.is_none(), "a king move");
        change
    }

    /// [`Learned::evaluate_after_move`] of a move that is not a king move,
    /// from the change it makes to the opponent's sums
    /// ([`Learned::move_change`]).
    #[inline]
    pub fn evaluate_after_change(
        &self,
        acc: &Accumulator,
        pos: &Position,
        mv: Move32,
        change: KingSums,
    ) -> (i32, KingSums) {
        let them = pos.turn().flip();
        let [own, other] = acc.pieces[them.to_index()];
        let sum = [own + change[0], other + change[1]];
        let after = self.after_move(acc, pos, mv, [sum; 2]);
        (self.evaluate_accumulated(&after, them), sum)
    }

    /// An upper bound on [`Learned::evaluate_after_move`]'s value negated
    /// (the move's ceiling before clamping), the same for every
    /// destination of the piece `mv` moves or drops: `mv` must neither
    /// capture, promote nor move a king. Each king-piece term the piece
    /// turns on is bounded by the largest weight of its group. `None` for
    /// a model with attack relations (never for an incremental one).
    pub fn quiet_ceiling_bound(
        &self,
        acc: &Accumulator,
        pos: &Position,
        mv: Move32,
    ) -> Option<i32> {
        let change = self.quiet_bound_change(pos, mv)?;
        Some(self.quiet_bound_of(acc, pos.turn(), change))
    }

    /// [`Learned::quiet_ceiling_bound`]'s part that depends on the moved
    /// piece and its square (or the dropped kind and the hand) and the
    /// kings alone, not on the rest of the board: a bound on what the move
    /// adds to the opponent's sum. The larger, the larger the bound.
    pub fn quiet_bound_change(&self, pos: &Position, mv: Move32) -> Option<i64> {
        // without the king-piece block (the hand alone) the bound is exact
        let groups = self.set.king_piece_groups().unwrap_or(0..0);
        if !self.is_incremental() {
            return None;
        }
        let them = pos.turn().flip();
        let mut change = 0i64;
        let w = &self.weights;
        let add = |_, i: u32, sign: i32| {
            let i = i as usize;
            change += i64::from(if sign > 0 && groups.contains(&i) {
                self.group_max[(i - groups.start) / 81]
            } else {
                w[i] * sign
            });
        };
        let restarted = features::for_each_piece_term_change(pos, them, self.set, mv, true, add);
        debug_assert!(restarted.is_none(), "a king move");
        Some(change)
    }

    /// [`Learned::quiet_ceiling_bound`] from its change
    /// ([`Learned::quiet_bound_change`]) at a position with `acc`'s sums
    /// and `side_to_move` to move.
    pub fn quiet_bound_of(&self, acc: &Accumulator, side_to_move: Color, change: i64) -> i32 {
        let them = side_to_move.flip();
        let [own, other] = acc.pieces[them.to_index()];
        let after = Accumulator {
            pairs: acc.pairs,
            pieces: [[own + other + change, 0]; 2],
            material: acc.material,
        };
        -self.evaluate_accumulated(&after, them)
    }

    /// The evaluation of the position `acc` sums with `side_to_move` to
    /// move: [`Evaluator::evaluate`] of it, exactly.
    #[inline]
    pub fn evaluate_accumulated(&self, acc: &Accumulator, side_to_move: Color) -> i32 {
        let i = side_to_move.to_index();
        let [own, other] = acc.pieces[i];
        let residual = self.value_of_sum(acc.pairs[i] + own + other);
        match self.base {
            Base::None => residual,
            Base::Material => {
                acc.material * sign(side_to_move) + residual.clamp(-RESIDUAL_LIMIT, RESIDUAL_LIMIT)
            }
        }
    }

    /// The weights (as quantized), widened for the training code's matrix
    /// products.
    pub fn weights_f64(&self) -> Vec<f64> {
        self.weights
            .iter()
            .map(|&w| f64::from(w) / self.quant_scale)
            .collect()
    }

    /// FNV-1a hash of the weights, bias and label scale: equal for equal
    /// evaluations.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    pub fn label_scale(&self) -> f64 {
        self.label_scale
    }

    /// Trained on rows at search leaves (`extract --features-at leaf`): a
    /// model of quiet positions rather than of siblings.
    pub fn leaf_rows(&self) -> bool {
        self.leaf_rows
    }

    /// What the model's values add to: nothing, or material.
    pub fn base(&self) -> Base {
        self.base
    }
}

/// +1 for Black, −1 for White: a balance for Black seen from `color`.
fn sign(color: Color) -> i32 {
    if color == Color::BLACK { 1 } else { -1 }
}

impl Evaluator for Learned {
    fn evaluate(&self, pos: &Position) -> i32 {
        match self.base {
            Base::None => self.value_of_sum(self.sum(pos)),
            Base::Material => {
                let residual = self.value_of_sum(self.sum(pos));
                Material.evaluate(pos) + residual.clamp(-RESIDUAL_LIMIT, RESIDUAL_LIMIT)
            }
        }
    }

    fn material_spread(&self) -> Option<i32> {
        (self.base == Base::Material).then_some(RESIDUAL_LIMIT)
    }

    fn learned(&self) -> Option<&Learned> {
        Some(self)
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn identity(&self) -> String {
        format!("{}:{:016x}", self.name, self.fingerprint)
    }
}

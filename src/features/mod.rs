//! Two-piece attack-relation features of a position ("attack2", version 3).
//!
//! A feature is an ordered pair of pieces (A, B) where A attacks B's square,
//! directly or, for a slider (lance, bishop, rook, horse, dragon), through
//! exactly one piece (an x-ray). Its index says where and what A and B are;
//! its value says how they relate ([`Relation`], ten kinds). Every piece on
//! the board is also paired with itself (A, A), value 1: a piece that attacks
//! nothing and is attacked by nothing still counts, so the model can learn
//! material and piece-square values (version 1 had no such feature and could
//! not represent material). Pieces in hand attack nothing, so each piece in
//! hand is paired with each king instead.
//!
//! A pair feature names both squares, so what it teaches about one square
//! pair says nothing about the next. Each pair is therefore also counted
//! without its squares, in a small *kind block*: how many times a piece of
//! kind A relates to a piece of kind B in this way (an own rook hanging to an
//! enemy pawn, wherever they stand). The self-pairs make that block count
//! the pieces of each kind, which is material.
//!
//! Everything is seen from the side to move in `pos`: when White is to move
//! the board is turned round (square `s` becomes `80 - s`) and "own" means
//! White's, so a position and its colour-flipped twin have the same features
//! and one weight vector serves both colours.
//!
//! # Index formula (0-based; libsvm files add 1)
//!
//! ```text
//! sq(s)    = s            if Black is to move, else 80 - s
//!            (s = rsshogi square index = 9 * (file - 1) + (rank - 1))
//! pc(p)    = 14 * owner + (piece_type - 1)
//!            owner 0 = side to move, 1 = opponent;
//!            piece_type 1..=14 = P L N S B R G K +P +L +N +S +B +R
//! code(x)  = 28 * sq(square of x) + pc(x)             0 .. 2268
//! pair     = 2268 * code(A) + code(B)                 0 .. 5_143_824
//!
//! value encoding:   index = pair,                 value = relation (1..=10)
//! one-hot encoding: index = 10 * pair + rel - 1,  value = 1
//! the piece itself: pair = 2268 * code(A) + code(A), value 1 (one-hot: rel 1)
//!
//! hand block, after the pair block (offset BOARD = 5_143_824 or 51_438_240):
//! slot(o, k, n) = 38 * o + base(k) + (n - 1)        n-th piece of kind k in
//!                 base: P 0, L 18, N 22, S 26, B 30, R 32, G 34   owner o's hand
//! index = BOARD + 162 * slot + 81 * king_owner + sq(king square),  value = 1
//!         for every n = 1..=count and both kings
//!
//!
//! kind block, after the hand block (offset KINDS = BOARD + 12_312):
//! index = KINDS + 11 * (28 * pc(A) + pc(B)) + rel - 1,  rel 11 = the piece itself
//! value = how many pairs of the position have that (pc(A), pc(B), rel)
//!
//! king-piece block (optional, `FeatureSet::king_piece`), after the kind
//! block (offset KP = the encoding's num_features):
//! index = KP + ((81 * king_owner + sq(king)) * 28 + pc(X)) * 81 + sq(X),
//!         value 1, for both kings and every other piece X on the board
//! ```
//!
//! So owning `c` pawns in hand turns on slots 1..=c: the model learns the
//! value of the n-th pawn (near each king position) rather than a one-hot
//! count. A pair (A, B) is visited at most once, and no index repeats within
//! a position.
//!
//! ```
//! use niwatori::features::{features, RelationEncoding};
//! // Black: king 5i, gold 5h. White: king 5a. Black to move.
//! let pos = rsshogi::board::position_from_sfen("4k4/9/9/9/9/9/9/4G4/4K4 b - 1").unwrap();
//! let f = features(&pos, RelationEncoding::Value);
//! // gold on 5h (square 43) defends the king on 5i (square 44), and the
//! // king defends the gold: two "defend" relations, value 1; and each of the
//! // three pieces paired with itself (the enemy king on 5a has owner 1).
//! let code = |sq: u32, pc: u32| 28 * sq + pc;
//! let (gold, king, enemy_king) = (code(43, 6), code(44, 7), code(36, 14 + 7));
//! // the kind block counts the same pairs without their squares
//! let kinds = 5_143_824 + 12_312;
//! let kind = |a: u32, b: u32, rel: u32| kinds + 11 * (28 * a + b) + rel - 1;
//! assert_eq!(f, vec![
//!     (2268 * enemy_king + enemy_king, 1.0),
//!     (2268 * gold + gold, 1.0),
//!     (2268 * gold + king, 1.0),
//!     (2268 * king + gold, 1.0),
//!     (2268 * king + king, 1.0),
//!     (kind(6, 6, 11), 1.0),
//!     (kind(6, 7, 1), 1.0),
//!     (kind(7, 6, 1), 1.0),
//!     (kind(7, 7, 11), 1.0),
//!     (kind(21, 21, 11), 1.0),
//! ]);
//! ```

mod board;
mod relation;

pub use board::{Board, changed_pairs};
pub use relation::Relation;

use rsshogi::board::attack_tables::{bishop_attacks, lance_attacks, rook_attacks};
use rsshogi::board::{
    Bitboard, GOLD_ATTACKS, KING_ATTACKS, KNIGHT_ATTACKS, PAWN_ATTACKS, Position, SILVER_ATTACKS,
};
use rsshogi::types::{Color, HandPiece, Move32, Piece, PieceType, Square};

/// Name of the feature scheme, recorded in every feature file and model.
pub const SCHEME: &str = "attack2";
/// Version of the scheme; bump it whenever an index or value changes.
pub const SCHEME_VERSION: u32 = 3;

const PIECE_CODES: usize = 28;
const CODES: usize = 81 * PIECE_CODES;
/// Number of (A, B) pair indices.
const PAIRS: usize = CODES * CODES;
/// Hand slots per owner: 18 pawns, 4 lances, 4 knights, 4 silvers,
/// 2 bishops, 2 rooks, 4 golds.
const HAND_SLOTS: usize = 38;
/// Slot base of each hand kind, in rsshogi's `HandPiece` order P L N S B R G.
const HAND_BASE: [usize; 7] = [0, 18, 22, 26, 30, 32, 34];
const HAND_CAP: [u32; 7] = [18, 4, 4, 4, 2, 2, 4];
/// Hand features: 2 owners x 38 slots x 2 kings x 81 squares.
const HAND_FEATURES: usize = 2 * HAND_SLOTS * 2 * 81;
/// Relation slots of the kind block: the ten relations and "the piece itself".
const KIND_RELATIONS: usize = Relation::COUNT + 1;
/// Kind-block features: 28 x 28 piece codes x 11 relations.
const KIND_FEATURES: usize = PIECE_CODES * PIECE_CODES * KIND_RELATIONS;
/// The kind-block slot of "the piece itself".
const SELF: usize = KIND_RELATIONS;

/// Feature-space size (the largest 1-based index) of the default
/// [`RelationEncoding::Value`]; see [`RelationEncoding::num_features`].
pub const NUM_FEATURES: usize = PAIRS + HAND_FEATURES + KIND_FEATURES;

/// How the relation kind of a pair is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum RelationEncoding {
    /// One index per pair; the value is the relation kind, 1..=10 (the
    /// original design).
    #[default]
    Value,
    /// One index per (pair, kind); the value is 1.
    #[value(name = "onehot")]
    OneHot,
}

impl RelationEncoding {
    /// Feature-space size (largest 1-based index) under this encoding.
    pub const fn num_features(self) -> usize {
        match self {
            Self::Value => NUM_FEATURES,
            Self::OneHot => PAIRS * Relation::COUNT + HAND_FEATURES + KIND_FEATURES,
        }
    }

    /// The name used on the command line and in metadata.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Value => "value",
            Self::OneHot => "onehot",
        }
    }

    /// Parses [`as_str`](Self::as_str)'s names.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "value" => Some(Self::Value),
            "onehot" => Some(Self::OneHot),
            _ => None,
        }
    }

    const fn hand_offset(self) -> usize {
        match self {
            Self::Value => PAIRS,
            Self::OneHot => PAIRS * Relation::COUNT,
        }
    }
}

/// King-piece features: 2 kings x 81 squares x 28 piece codes x 81 squares.
const KING_PIECE_FEATURES: usize = 2 * 81 * PIECE_CODES * 81;

/// Which features a row holds: the hand block, the attack-relation pair and
/// kind blocks (their relation kinds written as `encoding` says) unless
/// left out, and optionally the king-piece block after them. The index
/// layout is the same whatever is left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FeatureSet {
    pub encoding: RelationEncoding,
    /// The pair and kind blocks (attack relations; `extract --blocks
    /// king-piece` leaves them out): most of a row and of an evaluation's cost.
    pub attacks: bool,
    /// The king-piece block (`extract --king-piece`): every piece's square
    /// and kind against each king's square, Bonanza's KP.
    pub king_piece: bool,
}

/// The blocks a row holds beside the hand block, as `extract --blocks`
/// and `learn --blocks` name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Blocks {
    /// The attack-relation pair and kind blocks (`attack2` v3 as it was).
    Attacks,
    /// Those and the king-piece block.
    AttacksKingPiece,
    /// The king-piece block alone: far cheaper to evaluate.
    KingPiece,
}

impl Blocks {
    /// The feature set of these blocks with the relation kinds written as
    /// `encoding` says.
    pub const fn with(self, encoding: RelationEncoding) -> FeatureSet {
        FeatureSet {
            encoding,
            attacks: !matches!(self, Self::KingPiece),
            king_piece: !matches!(self, Self::Attacks),
        }
    }

    /// The name used on the command line.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Attacks => "attacks",
            Self::AttacksKingPiece => "attacks-king-piece",
            Self::KingPiece => "king-piece",
        }
    }
}

impl FeatureSet {
    /// The `--blocks` value that gives this set (`None`: the hand block
    /// alone, which no option gives).
    pub const fn blocks(self) -> Option<Blocks> {
        match (self.attacks, self.king_piece) {
            (true, false) => Some(Blocks::Attacks),
            (true, true) => Some(Blocks::AttacksKingPiece),
            (false, true) => Some(Blocks::KingPiece),
            (false, false) => None,
        }
    }
}

impl Default for FeatureSet {
    fn default() -> Self {
        RelationEncoding::default().into()
    }
}

impl From<RelationEncoding> for FeatureSet {
    fn from(encoding: RelationEncoding) -> Self {
        Self {
            encoding,
            attacks: true,
            king_piece: false,
        }
    }
}

impl FeatureSet {
    /// Feature-space size (largest 1-based index).
    pub const fn num_features(self) -> usize {
        self.encoding.num_features()
            + if self.king_piece {
                KING_PIECE_FEATURES
            } else {
                0
            }
    }

    /// The king-piece block's features, in groups of 81 (one per square)
    /// that share a king, its square and a piece kind: a piece moving
    /// without changing kind stays in its group with each king.
    pub const fn king_piece_groups(self) -> Option<std::ops::Range<usize>> {
        if self.king_piece {
            let offset = self.encoding.num_features();
            Some(offset..offset + KING_PIECE_FEATURES)
        } else {
            None
        }
    }

    /// The set of `num_features` features with these blocks, if one is.
    pub fn of_size(num_features: usize, attacks: bool, king_piece: bool) -> Option<Self> {
        [RelationEncoding::Value, RelationEncoding::OneHot]
            .into_iter()
            .map(|encoding| Self {
                encoding,
                attacks,
                king_piece,
            })
            .find(|s| s.num_features() == num_features)
    }
}

/// A piece on the board with what it attacks.
#[derive(Clone, Copy)]
struct Placed {
    sq: Square,
    piece: Piece,
    direct: Bitboard,
    xray: Bitboard,
}

/// Direct attacks of a slider and the squares it reaches through exactly
/// one piece.
#[inline]
fn slide(occ: Bitboard, attacks: impl Fn(Bitboard) -> Bitboard) -> (Bitboard, Bitboard) {
    let direct = attacks(occ);
    let blockers = direct & occ;
    let beyond = attacks(occ & !blockers);
    (direct, beyond & !direct & occ)
}

/// What `piece` on `sq` attacks directly, and through one piece (sliders).
#[inline]
pub(crate) fn piece_attacks(piece: Piece, sq: Square, occ: Bitboard) -> (Bitboard, Bitboard) {
    let c = piece.color().to_index();
    let i = sq.to_index();
    match piece.piece_type().raw() {
        1 => (PAWN_ATTACKS[i][c], Bitboard::EMPTY),
        2 => slide(occ, |o| lance_attacks(sq, o, piece.color())),
        3 => (KNIGHT_ATTACKS[i][c], Bitboard::EMPTY),
        4 => (SILVER_ATTACKS[i][c], Bitboard::EMPTY),
        5 => slide(occ, |o| bishop_attacks(sq, o)),
        6 => slide(occ, |o| rook_attacks(sq, o)),
        8 => (KING_ATTACKS[i], Bitboard::EMPTY),
        13 => {
            let (d, x) = slide(occ, |o| bishop_attacks(sq, o));
            (d | KING_ATTACKS[i], x)
        }
        14 => {
            let (d, x) = slide(occ, |o| rook_attacks(sq, o));
            (d | KING_ATTACKS[i], x)
        }
        // gold and the promoted minor pieces move like a gold
        _ => (GOLD_ATTACKS[i][c], Bitboard::EMPTY),
    }
}

#[inline]
fn in_zone(color: Color, sq: Square) -> bool {
    let rank = sq.rank().raw();
    if color == Color::BLACK {
        rank <= 2
    } else {
        rank >= 6
    }
}

/// Calls `f(index, value)` once for every feature of `pos`, from the point of
/// view of the side to move, in ascending index order (0-based; no index
/// repeats), so a row needs no sorting.
pub fn for_each_feature(pos: &Position, set: impl Into<FeatureSet>, mut f: impl FnMut(u32, u16)) {
    let set = set.into();
    if set.attacks {
        KIND_COUNTS.with_borrow_mut(|kinds| visit::<true>(pos, set.encoding, &mut f, Some(kinds)));
    } else {
        for_each_hand_term(pos, pos.turn(), set.encoding, |_, i| f(i, 1));
    }
    if set.king_piece {
        let mut terms = [0u32; 2 * 81];
        let mut n = 0;
        for_each_king_piece_term(pos, pos.turn(), set, |_, i| {
            terms[n] = i;
            n += 1;
        });
        terms[..n].sort_unstable();
        for &i in &terms[..n] {
            f(i, 1);
        }
    }
}

/// Like [`for_each_feature`], but each pair's kind-block feature comes as
/// its own call with value 1 rather than once with the count, and not in
/// index order: the same sum for a dot product, without counting (the
/// evaluator's fast path).
pub fn for_each_term(pos: &Position, set: impl Into<FeatureSet>, mut f: impl FnMut(u32, f32)) {
    let set = set.into();
    if set.attacks {
        visit::<false>(pos, set.encoding, &mut |i, v| f(i, f32::from(v)), None);
    } else {
        for_each_hand_term(pos, pos.turn(), set.encoding, |_, i| f(i, 1.0));
    }
    for_each_king_piece_term(pos, pos.turn(), set, |_, i| f(i, 1.0));
}

/// Calls `f(king_owner, index)` for every king-piece feature of `pos` (value 1) seen
/// from `view` as the side to move, if `set` has the block: for each king
/// and every other piece on the board,
/// `offset + ((81 × king_owner + sq(king)) × 28 + pc(piece)) × 81 + sq(piece)`.
pub fn for_each_king_piece_term(
    pos: &Position,
    view: Color,
    set: FeatureSet,
    mut f: impl FnMut(usize, u32),
) {
    if !set.king_piece {
        return;
    }
    let v = View { side: view };
    let occ = pos.bitboards().occupied();
    for (king_owner, king_color) in [view, view.flip()].into_iter().enumerate() {
        let Some(ksq) = king_square(pos, king_color) else {
            continue;
        };
        let king = king_piece_base(set, v, king_owner, ksq);
        let mut rest = occ;
        while let Some(sq) = rest.pop_lsb() {
            if sq != ksq {
                f(
                    king_owner,
                    king + (v.kind(pos.piece_on(sq)) * 81 + v.sq(sq)) as u32,
                );
            }
        }
    }
}

/// The square of `color`'s king, if it has one (a problem position may not).
#[inline]
fn king_square(pos: &Position, color: Color) -> Option<Square> {
    let ksq = pos.king_square(color);
    (!ksq.is_none()).then_some(ksq)
}

/// The first king-piece index of the king of `king_owner` (0: `v`'s side)
/// on `ksq`: a piece's feature is this plus `pc × 81 + sq`.
#[inline]
fn king_piece_base(set: FeatureSet, v: View, king_owner: usize, ksq: Square) -> u32 {
    (set.encoding.num_features() + (king_owner * 81 + v.sq(ksq)) * PIECE_CODES * 81) as u32
}

/// Calls `f(king_owner, index, ±1)` for each hand and king-piece feature,
/// seen from `view`, that the legal move `mv` of `pos` (not yet played)
/// turns on (+1) or off (−1), with the king (0: `view`'s, 1: the other)
/// whose square the feature is relative to: the moved piece leaves its
/// square for its new one, a captured piece leaves the board for the
/// mover's hand, a dropped piece leaves the hand.
///
/// A king that moves takes all its own features (every other piece, every
/// piece in hand) to its new square: those are given in full, each +1, and
/// the king's owner is returned, meaning *its* sum starts again from zero
/// rather than from the sum before the move (half the weights a removal
/// and re-addition would read).
///
/// The incremental evaluation's update: the features of the position
/// after `mv` are those of `pos` with these changes (the attack-relation
/// blocks aside), as `tests/eval_incremental.rs` checks move by move.
pub fn for_each_piece_term_change(
    pos: &Position,
    view: Color,
    set: FeatureSet,
    mv: Move32,
    recount: bool,
    mut f: impl FnMut(usize, u32, i32),
) -> Option<usize> {
    let us = pos.turn();
    let to = mv.to_sq();
    let v = View { side: view };
    let mut kings = [view, view.flip()].map(|c| king_square(pos, c));
    // each king's first king-piece feature, if the set has the block
    let bases = [0, 1].map(|owner| {
        kings[owner]
            .filter(|_| set.king_piece)
            .map(|ksq| king_piece_base(set, v, owner, ksq))
    });
    // a piece's king-piece features with each king of `bases`
    #[inline(always)]
    fn board(
        f: &mut impl FnMut(usize, u32, i32),
        v: View,
        bases: &[Option<u32>; 2],
        piece: Piece,
        sq: Square,
        sign: i32,
    ) {
        let code = (v.kind(piece) * 81 + v.sq(sq)) as u32;
        for (king_owner, base) in bases.iter().enumerate() {
            if let Some(base) = *base {
                f(king_owner, base + code, sign);
            }
        }
    }
    let hand_offset = set.encoding.hand_offset();
    let mover = usize::from(us != view);
    let mut restarted = None;
    // (kind, 0-based slot) of the mover's hand slot that turns on or off
    let mut hand_change = None;
    if let Some(pt) = mv.dropped_piece() {
        let hp = HandPiece::from_piece_type(pt).expect("a dropped piece is a hand piece");
        // the count falls from n to n - 1: the n-th slot turns off
        let n = pos.hand(us).count(hp) as usize;
        hand_change = Some((hp, n - 1, -1));
        board(&mut f, v, &bases, Piece::from_parts(us, pt), to, 1);
    } else {
        let from = mv.from_sq();
        let moved = pos.piece_on(from);
        let captured = pos.piece_on(to);
        if moved.piece_type() == PieceType::KING {
            // the other king sees this one move; this one sees everything
            // from its new square, the captured piece no longer
            let mut other = bases;
            other[mover] = None;
            board(&mut f, v, &other, moved, from, -1);
            board(&mut f, v, &other, moved, to, 1);
            if !captured.is_empty() {
                board(&mut f, v, &other, captured, to, -1);
            }
            // everything from the new square, the hand as it stands (a
            // capture's new slot follows below), the captured piece aside
            if recount {
                for_each_term_near(pos, view, set, mover, to, from, |i| f(mover, i, 1));
            }
            if set.king_piece && !captured.is_empty() {
                let after = king_piece_base(set, v, mover, to);
                f(mover, after + (v.kind(captured) * 81 + v.sq(to)) as u32, -1);
            }
            kings[mover] = Some(to);
            restarted = Some(mover);
        } else {
            board(&mut f, v, &bases, moved, from, -1);
            if !captured.is_empty() {
                board(&mut f, v, &bases, captured, to, -1);
            }
            board(
                &mut f,
                v,
                &bases,
                if mv.is_promotion() {
                    moved.promote()
                } else {
                    moved
                },
                to,
                1,
            );
        }
        if !captured.is_empty() {
            let hp = HandPiece::from_piece_type(captured.piece_type().demote())
                .expect("a captured piece that is not a king goes to hand");
            // the count rises from n to n + 1: the (n + 1)-th slot turns on
            let n = pos.hand(us).count(hp) as usize;
            hand_change = Some((hp, n, 1));
        }
    }
    // with the kings where they stand after the move
    if let Some((hp, nth, sign)) = hand_change
        && nth < HAND_CAP[hp.to_index()] as usize
    {
        let slot = mover * HAND_SLOTS + HAND_BASE[hp.to_index()] + nth;
        for (king_owner, ksq) in kings.iter().enumerate() {
            if let Some(ksq) = *ksq {
                f(
                    king_owner,
                    hand_index(hand_offset, slot, king_owner, v, ksq),
                    sign,
                );
            }
        }
    }
    restarted
}

/// Calls `f(index)` for each king-piece and hand feature of `view` relative
/// to the king of `king_owner` (0: `view`'s) were it on `ksq`: every piece
/// on the board but the one on `without` (that king, where it stands), and
/// every piece in hand. A king's own sum from a square it moves to.
pub fn for_each_term_near(
    pos: &Position,
    view: Color,
    set: FeatureSet,
    king_owner: usize,
    ksq: Square,
    without: Square,
    mut f: impl FnMut(u32),
) {
    let v = View { side: view };
    if set.king_piece {
        let base = king_piece_base(set, v, king_owner, ksq);
        let mut rest = pos.bitboards().occupied();
        rest.clear(without);
        while let Some(sq) = rest.pop_lsb() {
            f(base + (v.kind(pos.piece_on(sq)) * 81 + v.sq(sq)) as u32);
        }
    }
    let hand_offset = set.encoding.hand_offset();
    for (owner, color) in [view, view.flip()].into_iter().enumerate() {
        let hand = pos.hand(color);
        for hp in HandPiece::iter() {
            let k = hp.to_index();
            for nth in 0..hand.count(hp).min(HAND_CAP[k]) as usize {
                let slot = owner * HAND_SLOTS + HAND_BASE[k] + nth;
                f(hand_index(hand_offset, slot, king_owner, v, ksq));
            }
        }
    }
}

/// What a move does to the pieces on the board and in hand, read before it
/// is played: enough to follow the sum of a king that does not move
/// through it, wherever that king stands ([`for_each_change_term_near`]).
#[derive(Clone, Copy, Debug)]
pub struct PieceChange {
    mover: Color,
    /// The moved piece and the square it leaves; `None` for a drop.
    from: Option<(Piece, Square)>,
    to: Square,
    /// The piece on `to` after the move, and the one it took (or none).
    placed: Piece,
    captured: Piece,
    /// The mover's hand slot (its kind's base plus the count) that turns
    /// on (+1, a capture) or off (−1, a drop), if under the cap.
    hand: Option<(usize, i32)>,
}

impl PieceChange {
    /// The change of the legal move `mv` of `pos` (not yet played).
    pub fn of(pos: &Position, mv: Move32) -> Self {
        let us = pos.turn();
        let to = mv.to_sq();
        let slot = |pt: PieceType, nth: usize, sign: i32| {
            let hp = HandPiece::from_piece_type(pt).expect("a hand piece");
            (nth < HAND_CAP[hp.to_index()] as usize)
                .then_some((HAND_BASE[hp.to_index()] + nth, sign))
        };
        if let Some(pt) = mv.dropped_piece() {
            let hp = HandPiece::from_piece_type(pt).expect("a dropped piece is a hand piece");
            let n = pos.hand(us).count(hp) as usize;
            return Self {
                mover: us,
                from: None,
                to,
                placed: Piece::from_parts(us, pt),
                captured: Piece::NONE,
                hand: slot(pt, n - 1, -1),
            };
        }
        let from = mv.from_sq();
        let moved = pos.piece_on(from);
        let captured = pos.piece_on(to);
        let hand = if captured.is_empty() {
            None
        } else {
            let pt = captured.piece_type().demote();
            let hp = HandPiece::from_piece_type(pt).expect("a captured piece goes to hand");
            slot(pt, pos.hand(us).count(hp) as usize, 1)
        };
        Self {
            mover: us,
            from: Some((moved, from)),
            to,
            placed: if mv.is_promotion() {
                moved.promote()
            } else {
                moved
            },
            captured,
            hand,
        }
    }

    /// Whether the move is a king move of `color`'s.
    pub fn moves_king_of(&self, color: Color) -> bool {
        self.mover == color
            && self
                .from
                .is_some_and(|(p, _)| p.piece_type() == PieceType::KING)
    }
}

/// Calls `f(index, ±1)` for each king-piece and hand feature of `view`
/// relative to the king of `king_owner` (0: `view`'s) standing on `ksq`
/// that `change` turns on or off. That king must not be the one moved.
pub fn for_each_change_term_near(
    change: &PieceChange,
    view: Color,
    set: FeatureSet,
    king_owner: usize,
    ksq: Square,
    mut f: impl FnMut(u32, i32),
) {
    let v = View { side: view };
    if set.king_piece {
        let base = king_piece_base(set, v, king_owner, ksq);
        let code = |p: Piece, sq: Square| base + (v.kind(p) * 81 + v.sq(sq)) as u32;
        if let Some((moved, from)) = change.from {
            f(code(moved, from), -1);
        }
        if !change.captured.is_empty() {
            f(code(change.captured, change.to), -1);
        }
        f(code(change.placed, change.to), 1);
    }
    if let Some((nth_slot, sign)) = change.hand {
        let slot = usize::from(change.mover != view) * HAND_SLOTS + nth_slot;
        f(
            hand_index(set.encoding.hand_offset(), slot, king_owner, v, ksq),
            sign,
        );
    }
}

/// The hand feature of hand slot `slot` near the king of `king_owner`
/// (0: `v`'s side) on `ksq`.
#[inline]
fn hand_index(hand_offset: usize, slot: usize, king_owner: usize, v: View, ksq: Square) -> u32 {
    (hand_offset + slot * 162 + king_owner * 81 + v.sq(ksq)) as u32
}

/// The next square of `bb` in the side to move's view: ascending squares
/// for Black, descending for White (whose squares are turned round), so
/// that [`visit`]'s codes come out ascending.
#[inline]
fn pop_in_view(bb: &mut Bitboard, flip: bool) -> Option<Square> {
    if flip {
        let sq = bb.msb()?;
        bb.clear(sq);
        Some(sq)
    } else {
        bb.pop_lsb()
    }
}

/// Kind-block counts of one position, kept per thread and left zeroed
/// after each use: clearing 8,624 counters per row, or sorting the slots,
/// cost more than counting. (So a feature callback must not itself ask for
/// features: the counts are borrowed meanwhile.)
struct KindCounts {
    counts: Box<[u16; KIND_FEATURES]>,
    used: [u64; KIND_FEATURES.div_ceil(64)],
}

thread_local! {
    static KIND_COUNTS: std::cell::RefCell<KindCounts> = std::cell::RefCell::new(KindCounts {
        counts: Box::new([0; KIND_FEATURES]),
        used: [0; KIND_FEATURES.div_ceil(64)],
    });
}

/// Squares and piece codes as seen from `side` to move: the board turned
/// round for White, "own" meaning `side`'s.
#[derive(Clone, Copy)]
struct View {
    side: Color,
}

impl View {
    #[inline]
    fn sq(self, sq: Square) -> usize {
        let i = sq.to_index();
        if self.side == Color::WHITE { 80 - i } else { i }
    }

    /// A piece's code within a square: its owner (0 the side to move) and type.
    #[inline]
    fn kind(self, piece: Piece) -> usize {
        usize::from(piece.color() != self.side) * 14 + piece.piece_type().raw() as usize - 1
    }
}

/// The pair-block feature of `pair` with relation `rel` (or [`SELF`]).
#[inline]
fn pair_feature(encoding: RelationEncoding, pair: usize, rel: usize) -> (u32, u16) {
    let fine = if rel == SELF { 1 } else { rel };
    match encoding {
        RelationEncoding::Value => (pair as u32, fine as u16),
        RelationEncoding::OneHot => ((pair * Relation::COUNT + fine - 1) as u32, 1),
    }
}

/// The kind-block slot of a pair of kinds `a`, `b` with relation `rel`.
#[inline]
fn kind_slot(a: usize, b: usize, rel: usize) -> usize {
    (a * PIECE_CODES + b) * KIND_RELATIONS + rel - 1
}

/// Every feature of `pos`. `ORDERED` (with `kinds`): in ascending index
/// order, the kind block counted in `kinds` and written last. Otherwise in
/// any order, each pair's kind feature passed on at once.
fn visit<const ORDERED: bool>(
    pos: &Position,
    encoding: RelationEncoding,
    f: &mut impl FnMut(u32, u16),
    mut kinds: Option<&mut KindCounts>,
) {
    let us = pos.turn();
    let flip = us == Color::WHITE;
    let view = View { side: us };
    let norm = |sq: Square| view.sq(sq);
    let kind = |piece: Piece| view.kind(piece);

    let occ = pos.bitboards().occupied();
    let empty = Placed {
        sq: Square::NONE,
        piece: Piece::NONE,
        direct: Bitboard::EMPTY,
        xray: Bitboard::EMPTY,
    };
    // 81, not 40: a record's start position may hold any number of pieces.
    // Filled in the side to move's square order, so pair indices ascend.
    let mut placed = [empty; 81];
    let mut n = 0;
    let mut attacked = [Bitboard::EMPTY; 2];
    let mut rest = occ;
    while let Some(sq) = pop_in_view(&mut rest, ORDERED && flip) {
        let piece = pos.piece_on(sq);
        let (direct, xray) = piece_attacks(piece, sq, occ);
        attacked[piece.color().to_index()] |= direct;
        placed[n] = Placed {
            sq,
            piece,
            direct,
            xray,
        };
        n += 1;
    }

    let kind_offset = encoding.hand_offset() + HAND_FEATURES;
    // `rel` is a relation kind 1..=10, or SELF: the piece itself, written
    // like kind 1 (value 1) in the pair block and as slot 11 in the kind block
    // `pair` is the pair index, `a` and `b` the two pieces' kinds
    let mut emit = |pair: usize, a: usize, b: usize, rel: usize| {
        let (index, value) = pair_feature(encoding, pair, rel);
        f(index, value);
        let slot = kind_slot(a, b, rel);
        if !ORDERED {
            f((kind_offset + slot) as u32, 1);
        } else if let Some(k) = kinds.as_deref_mut() {
            k.counts[slot] += 1;
            k.used[slot / 64] |= 1 << (slot % 64);
        }
    };

    for a in &placed[..n] {
        let ca = a.piece.color();
        let kind_a = kind(a.piece);
        let code_a = (norm(a.sq) * PIECE_CODES + kind_a) * CODES;
        let pt = a.piece.piece_type().raw();
        let promotable = (1..=6).contains(&pt);
        let a_in_zone = in_zone(ca, a.sq);
        // the piece itself (material and piece-square value), the pieces it
        // attacks and those it reaches through one piece
        if ORDERED {
            // all by square, so that the codes of B ascend
            let mut targets = (a.direct & occ) | a.xray | Bitboard::from_square(a.sq);
            while let Some(sq_b) = pop_in_view(&mut targets, flip) {
                let b = pos.piece_on(sq_b);
                let rel = if sq_b == a.sq {
                    SELF
                } else if a.direct.test(sq_b) {
                    direct_relation(ca, sq_b, b, promotable, a_in_zone, &attacked)
                } else {
                    xray_relation(pos, a, sq_b, b, occ)
                };
                let kind_b = kind(b);
                emit(
                    code_a + norm(sq_b) * PIECE_CODES + kind_b,
                    kind_a,
                    kind_b,
                    rel,
                );
            }
        } else {
            let self_code = norm(a.sq) * PIECE_CODES + kind_a;
            emit(code_a + self_code, kind_a, kind_a, SELF);
            let mut targets = a.direct & occ;
            while let Some(sq_b) = targets.pop_lsb() {
                let b = pos.piece_on(sq_b);
                let rel = direct_relation(ca, sq_b, b, promotable, a_in_zone, &attacked);
                let kind_b = kind(b);
                emit(
                    code_a + norm(sq_b) * PIECE_CODES + kind_b,
                    kind_a,
                    kind_b,
                    rel,
                );
            }
            let mut xrays = a.xray;
            while let Some(sq_b) = xrays.pop_lsb() {
                let b = pos.piece_on(sq_b);
                let kind_b = kind(b);
                let rel = xray_relation(pos, a, sq_b, b, occ);
                emit(
                    code_a + norm(sq_b) * PIECE_CODES + kind_b,
                    kind_a,
                    kind_b,
                    rel,
                );
            }
        }
    }

    for_each_hand_term(pos, us, encoding, |_, i| f(i, 1));

    if let Some(k) = kinds {
        for (w, word) in k.used.iter_mut().enumerate() {
            while *word != 0 {
                let slot = w * 64 + word.trailing_zeros() as usize;
                *word &= *word - 1;
                f((kind_offset + slot) as u32, k.counts[slot]);
                k.counts[slot] = 0;
            }
        }
    }
}

/// Calls `f(king_owner, index)` for every hand feature of `pos` (value 1)
/// seen from `view` as the side to move (each is tied to a king's square).
pub fn for_each_hand_term(
    pos: &Position,
    view: Color,
    encoding: RelationEncoding,
    mut f: impl FnMut(usize, u32),
) {
    let us = view;
    let v = View { side: view };
    let hand_offset = encoding.hand_offset();
    for (owner, color) in [us, us.flip()].into_iter().enumerate() {
        let hand = pos.hand(color);
        for hp in HandPiece::iter() {
            let k = hp.to_index();
            let count = hand.count(hp).min(HAND_CAP[k]) as usize;
            for nth in 0..count {
                let slot = owner * HAND_SLOTS + HAND_BASE[k] + nth;
                for (king_owner, king_color) in [us, us.flip()].into_iter().enumerate() {
                    if let Some(ksq) = king_square(pos, king_color) {
                        f(
                            king_owner,
                            hand_index(hand_offset, slot, king_owner, v, ksq),
                        );
                    }
                }
            }
        }
    }
}

/// The relation of a piece of colour `ca` to the piece `b` on `sq_b`, a
/// square it attacks directly; `promotable` and `a_in_zone` describe the
/// attacker, `attacked` the squares each colour attacks.
#[inline]
fn direct_relation(
    ca: Color,
    sq_b: Square,
    b: Piece,
    promotable: bool,
    a_in_zone: bool,
    attacked: &[Bitboard; 2],
) -> usize {
    let rel = if b.color() == ca {
        if attacked[ca.flip().to_index()].test(sq_b) {
            Relation::DefendAttacked
        } else {
            Relation::Defend
        }
    } else if b.piece_type().raw() == 8 {
        Relation::Check
    } else if promotable && (a_in_zone || in_zone(ca, sq_b)) {
        Relation::AttackPromote
    } else if attacked[b.color().to_index()].test(sq_b) {
        Relation::Attack
    } else {
        Relation::AttackHanging
    };
    rel.value() as usize
}

/// The relation of slider `a` to the piece `b` it reaches through one piece.
#[inline]
fn xray_relation(pos: &Position, a: &Placed, sq_b: Square, b: Piece, occ: Bitboard) -> usize {
    let mid = (Bitboard::between(a.sq, sq_b) & occ).lsb();
    relation_of_xray(a.piece.color(), b, mid.map(|m| pos.piece_on(m).color()))
}

/// The relation of a slider of colour `ca` to the piece `b` it reaches
/// through one piece, of colour `mid`.
#[inline]
fn relation_of_xray(ca: Color, b: Piece, mid: Option<Color>) -> usize {
    let rel = if b.color() == ca {
        Relation::XrayOwn
    } else if b.piece_type().raw() == 8 {
        Relation::XrayKing
    } else {
        match mid {
            Some(m) if m == ca => Relation::XrayThroughOwn,
            _ => Relation::XrayThroughEnemy,
        }
    };
    rel.value() as usize
}

/// The features of `pos` as a vector sorted by index (a convenience over
/// [`for_each_feature`] for tests and tools; the row writer reuses a buffer).
pub fn features(pos: &Position, set: impl Into<FeatureSet>) -> Vec<(u32, f32)> {
    let mut v = Vec::with_capacity(256);
    for_each_feature(pos, set, |i, x| v.push((i, f32::from(x))));
    v
}

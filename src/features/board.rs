//! The pairs of a position by square, for summing features incrementally.
//!
//! A [`Board`] holds what every piece attacks, directly and through one
//! piece. A move changes only some pairs: those of the pieces on the from-
//! and to-squares, those of the sliders whose lines run through those
//! squares, and those aimed at a piece whose square gained or lost an
//! attacker (its relation, defended or hanging, may have changed). Every
//! other pair is the same piece on the same square relating to the same
//! piece in the same way, so its term carries over. [`changed_pairs`] names
//! the squares; [`Board::for_each_term`] visits the terms of the pairs they
//! select, in either colour's view, and the change of the sum is what it
//! visits after the move minus what it visited before.

use rsshogi::board::Position;
use rsshogi::types::{Bitboard, Color, Move32, Piece, Square};

use super::{
    CODES, PIECE_CODES, RelationEncoding, SELF, View, direct_relation, kind_slot, pair_feature,
    piece_attacks, relation_of_xray,
};

/// Every piece's attacks in one position.
#[derive(Clone)]
pub struct Board {
    pieces: [Piece; 81],
    occupied: Bitboard,
    direct: [Bitboard; 81],
    xray: [Bitboard; 81],
    /// For a slider, the squares up to and including the second piece on
    /// each line: where a change of occupancy changes what it attacks.
    reach: [Bitboard; 81],
    sliders: Bitboard,
    attacked: [Bitboard; 2],
}

impl Default for Board {
    fn default() -> Self {
        Self {
            pieces: [Piece::NONE; 81],
            occupied: Bitboard::EMPTY,
            direct: [Bitboard::EMPTY; 81],
            xray: [Bitboard::EMPTY; 81],
            reach: [Bitboard::EMPTY; 81],
            sliders: Bitboard::EMPTY,
            attacked: [Bitboard::EMPTY; 2],
        }
    }
}

fn is_slider(piece: Piece) -> bool {
    matches!(piece.piece_type().raw(), 2 | 5 | 6 | 13 | 14)
}

impl Board {
    /// Fills the board from `pos`.
    pub fn set(&mut self, pos: &Position) {
        let occupied = pos.bitboards().occupied();
        let mut previous = self.occupied;
        // Clear only what the last position held.
        while let Some(sq) = previous.pop_lsb() {
            let i = sq.to_index();
            self.pieces[i] = Piece::NONE;
            self.direct[i] = Bitboard::EMPTY;
            self.xray[i] = Bitboard::EMPTY;
            self.reach[i] = Bitboard::EMPTY;
        }
        self.occupied = occupied;
        self.sliders = Bitboard::EMPTY;
        self.attacked = [Bitboard::EMPTY; 2];
        let mut rest = occupied;
        while let Some(sq) = rest.pop_lsb() {
            let i = sq.to_index();
            let piece = pos.piece_on(sq);
            let (direct, xray) = piece_attacks(piece, sq, occupied);
            self.pieces[i] = piece;
            self.direct[i] = direct;
            self.xray[i] = xray;
            if is_slider(piece) {
                self.sliders.set(sq);
                self.reach[i] = slider_reach(piece, sq, occupied, direct);
            }
            self.attacked[piece.color().to_index()] |= direct;
        }
    }

    pub fn new(pos: &Position) -> Self {
        let mut board = Self::default();
        board.set(pos);
        board
    }

    /// Calls `f(index, value)` for every feature term of the pairs (A, B)
    /// with A on `from` or B on `to` (a piece paired with itself counts
    /// when its square is in either), seen from `view` as the side to move;
    /// both sets full: every pair term of the position. Hand features are
    /// not pairs and not visited. Each pair's kind-block term comes as its
    /// own call with value 1, as in [`super::for_each_term`].
    pub fn for_each_term(
        &self,
        view: Color,
        encoding: RelationEncoding,
        from: Bitboard,
        to: Bitboard,
        mut f: impl FnMut(u32, u16),
    ) {
        let view = View { side: view };
        let kind_offset = encoding.hand_offset() + super::HAND_FEATURES;
        let mut emit = |pair: usize, a: usize, b: usize, rel: usize| {
            let (index, value) = pair_feature(encoding, pair, rel);
            f(index, value);
            f((kind_offset + kind_slot(a, b, rel)) as u32, 1);
        };
        let mut attackers = self.occupied;
        while let Some(sq_a) = attackers.pop_lsb() {
            let i = sq_a.to_index();
            let a = self.pieces[i];
            let all = from.test(sq_a);
            let kind_a = view.kind(a);
            let code_a = (view.sq(sq_a) * PIECE_CODES + kind_a) * CODES;
            if all || to.test(sq_a) {
                emit(
                    code_a + view.sq(sq_a) * PIECE_CODES + kind_a,
                    kind_a,
                    kind_a,
                    SELF,
                );
            }
            let mut targets = (self.direct[i] & self.occupied) | self.xray[i];
            if !all {
                targets &= to;
            }
            if targets.is_empty() {
                continue;
            }
            let ca = a.color();
            let promotable = (1..=6).contains(&a.piece_type().raw());
            let a_in_zone = super::in_zone(ca, sq_a);
            while let Some(sq_b) = targets.pop_lsb() {
                let b = self.pieces[sq_b.to_index()];
                let rel = if self.direct[i].test(sq_b) {
                    direct_relation(ca, sq_b, b, promotable, a_in_zone, &self.attacked)
                } else {
                    let mid = (Bitboard::between(sq_a, sq_b) & self.occupied).lsb();
                    relation_of_xray(ca, b, mid.map(|m| self.pieces[m.to_index()].color()))
                };
                let kind_b = view.kind(b);
                emit(
                    code_a + view.sq(sq_b) * PIECE_CODES + kind_b,
                    kind_a,
                    kind_b,
                    rel,
                );
            }
        }
    }
}

/// The squares up to and including the second piece on each of a slider's
/// lines (its attacks with the first pieces on them removed).
fn slider_reach(piece: Piece, sq: Square, occupied: Bitboard, direct: Bitboard) -> Bitboard {
    let blockers = direct & occupied;
    let (beyond, _) = piece_attacks(piece, sq, occupied & !blockers);
    beyond | direct
}

/// Which pairs `mv` may change, from the boards before and after it: the
/// pairs whose attacker stands on a square of the first set, and those
/// whose target stands on a square of the second. The pairs of all other
/// squares are the same in both positions, term for term.
pub fn changed_pairs(before: &Board, after: &Board, mv: Move32) -> (Bitboard, Bitboard) {
    let mut moved = Bitboard::from_square(mv.to_sq());
    if !mv.is_drop() {
        moved.set(mv.from_sq());
    }
    let mut attackers = moved;
    for board in [before, after] {
        let mut sliders = board.sliders & !moved;
        while let Some(sq) = sliders.pop_lsb() {
            if !(board.reach[sq.to_index()] & moved).is_empty() {
                attackers.set(sq);
            }
        }
    }
    let attack_changed =
        (before.attacked[0] ^ after.attacked[0]) | (before.attacked[1] ^ after.attacked[1]);
    (attackers, moved | attack_changed)
}

//! Anti-Inaniwa: recognising the Inaniwa formation and attacking it.
//!
//! Inaniwa (稲庭) keeps every pawn at home and waits; material-only engines
//! wait too, and lose on the clock or to a late counter-attack. As in
//! Bonanza 6, once the formation is recognised the non-Inaniwa side gets
//! bonuses that make it build an attack: pawns in hand (to open files),
//! advanced pawns and silvers, knights that have jumped.

use rsshogi::board::Position;
use rsshogi::types::{Color, HandPiece, PieceType, Square};

use super::Evaluator;

/// The formation needs this many plies to be more than an opening.
const MIN_PLY: i32 = 20;

/// Rank of a square counted from `side`'s own back rank (1..=9).
fn relative_rank(side: Color, sq: Square) -> i32 {
    let rank = sq.rank().raw() as i32 + 1; // 1 = rank a (White's back rank)
    if side == Color::BLACK {
        10 - rank
    } else {
        rank
    }
}

/// Whether `side` stands in the Inaniwa formation: after move 20, at least
/// seven pawns on the board, all on their starting rank, except that the
/// edge-file pawns may have taken one step forward.
pub fn is_inaniwa(pos: &Position, side: Color) -> bool {
    if i32::from(pos.game_ply()) <= MIN_PLY {
        return false;
    }
    let mut pawns = pos.bitboards().pieces_for(PieceType::PAWN, side);
    let mut count = 0;
    while let Some(sq) = pawns.pop_lsb() {
        let rank = relative_rank(side, sq);
        let edge = matches!(sq.file().raw(), 0 | 8);
        if !(rank == 3 || (edge && rank == 4)) {
            return false;
        }
        count += 1;
    }
    count >= 7
}

/// The attacking bonuses for `us`, in centipawns.
pub fn attack_bonus(pos: &Position, us: Color) -> i32 {
    let bb = pos.bitboards();
    let mut bonus = 20 * pos.hand(us).count(HandPiece::PAWN).min(8) as i32;
    let mut pawns = bb.pieces_for(PieceType::PAWN, us);
    while let Some(sq) = pawns.pop_lsb() {
        if relative_rank(us, sq) >= 5 {
            bonus += 15;
        }
    }
    let mut silvers = bb.pieces_for(PieceType::SILVER, us);
    while let Some(sq) = silvers.pop_lsb() {
        if relative_rank(us, sq) >= 4 {
            bonus += 30;
        }
    }
    let mut knights = bb.pieces_for(PieceType::KNIGHT, us);
    while let Some(sq) = knights.pop_lsb() {
        if relative_rank(us, sq) >= 3 {
            bonus += 20;
        }
    }
    bonus
}

/// An evaluation plus the attacking bonuses for `us`, the side that faces
/// an Inaniwa opponent.
pub struct AntiInaniwa<E> {
    pub inner: E,
    pub us: Color,
}

impl<E: Evaluator> Evaluator for AntiInaniwa<E> {
    fn evaluate(&self, pos: &Position) -> i32 {
        let bonus = attack_bonus(pos, self.us);
        let inner = self.inner.evaluate(pos);
        if pos.turn() == self.us {
            inner + bonus
        } else {
            inner - bonus
        }
    }

    fn name(&self) -> &str {
        self.inner.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Material;
    use rsshogi::board::position_from_sfen;

    /// White in Inaniwa after 35 plies: pawns all on rank c (edge pawns on
    /// d), the king in the centre, silvers and golds spread on rank b.
    const INANIWA: &str =
        "ln5nl/1r1sgkgs1/1ppppppp1/p5b1p/9/2P1P1P2/PP1P1P1PP/1BS1G1SR1/LN1GK2NL b - 36";

    #[test]
    fn recognises_the_formation() {
        let pos = position_from_sfen(INANIWA).unwrap();
        assert!(is_inaniwa(&pos, Color::WHITE));
        assert!(!is_inaniwa(&pos, Color::BLACK));
    }

    #[test]
    fn not_in_the_opening() {
        let early = INANIWA.replace(" 36", " 12");
        let pos = position_from_sfen(&early).unwrap();
        assert!(!is_inaniwa(&pos, Color::WHITE));
    }

    #[test]
    fn a_pushed_pawn_breaks_it() {
        let pos = position_from_sfen(
            "ln5nl/1r1sgkgs1/1pppp1pp1/p4pb1p/9/2P1P1P2/PP1P1P1PP/1BS1G1SR1/LN1GK2NL b - 36",
        )
        .unwrap();
        assert!(!is_inaniwa(&pos, Color::WHITE));
    }

    #[test]
    fn bonus_rewards_advancing_against_it() {
        let eval = AntiInaniwa {
            inner: Material,
            us: Color::BLACK,
        };
        let home = position_from_sfen(INANIWA).unwrap();
        // The same with Black's 7g pawn on 7e and a silver up on 6f.
        let advanced = position_from_sfen(
            "ln5nl/1r1sgkgs1/1ppppppp1/p5b1p/2P6/3SP1P2/PP1P1P1PP/1B2G1SR1/LN1GK2NL b - 36",
        )
        .unwrap();
        assert!(eval.evaluate(&advanced) > eval.evaluate(&home));
        assert_eq!(Material.evaluate(&advanced), Material.evaluate(&home));
    }
}

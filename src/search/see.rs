//! Static exchange evaluation: the material balance of the capture sequence
//! on one square, each side recapturing with its least valuable piece and
//! free to stop when going on would lose.

use rsshogi::board::Position;
use rsshogi::types::{Bitboard, Move32, PieceType};

use crate::eval::piece_value;

/// Least valuable first; the king last (it may only take an undefended piece).
const ORDER: [PieceType; 14] = [
    PieceType::PAWN,
    PieceType::LANCE,
    PieceType::KNIGHT,
    PieceType::PRO_PAWN,
    PieceType::PRO_LANCE,
    PieceType::PRO_KNIGHT,
    PieceType::SILVER,
    PieceType::PRO_SILVER,
    PieceType::GOLD,
    PieceType::BISHOP,
    PieceType::ROOK,
    PieceType::HORSE,
    PieceType::DRAGON,
    PieceType::KING,
];

const KING_VALUE: i32 = 20000;

fn value(pt: PieceType) -> i32 {
    if pt == PieceType::KING {
        KING_VALUE
    } else {
        piece_value(pt)
    }
}

/// Material won (positive) or lost by `mv` and the exchanges that follow on
/// its destination. Drops capture nothing: their SEE is what the opponent can
/// win by taking the dropped piece.
pub fn see(pos: &Position, mv: Move32) -> i32 {
    let to = mv.to_sq();
    let us = pos.turn();
    let mut occupied = pos.pieces();
    let mut gain = [0i32; 40];
    let mut on_square; // value of the piece that now stands on `to`
    if let Some(pt) = mv.dropped_piece() {
        gain[0] = 0;
        on_square = value(pt);
    } else {
        let from = mv.from_sq();
        let moved = pos.piece_on(from).piece_type();
        gain[0] = value(pos.piece_on(to).piece_type());
        on_square = value(moved);
        if mv.is_promotion() {
            let promoted = value(moved.promote());
            gain[0] += promoted - on_square;
            on_square = promoted;
        }
        occupied.clear(from);
    }
    occupied.set(to);
    let bitboards = pos.bitboards();
    let mut side = us.flip();
    let mut depth = 0;
    loop {
        let attackers: Bitboard =
            pos.attackers_to(to, occupied) & occupied & bitboards.color_pieces(side);
        if attackers.is_empty() {
            break;
        }
        let Some((sq, pt)) = ORDER
            .iter()
            .find_map(|&pt| (attackers & bitboards.pieces(pt)).lsb().map(|sq| (sq, pt)))
        else {
            break;
        };
        depth += 1;
        gain[depth] = on_square - gain[depth - 1];
        if depth + 1 >= gain.len() || gain[depth].max(-gain[depth - 1]) < 0 {
            break;
        }
        on_square = value(pt);
        occupied.clear(sq);
        side = side.flip();
    }
    while depth > 0 {
        gain[depth - 1] = -(-gain[depth - 1]).max(gain[depth]);
        depth -= 1;
    }
    gain[0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsshogi::board::position_from_sfen;

    fn see_of(sfen: &str, usi: &str) -> i32 {
        let pos = position_from_sfen(sfen).unwrap();
        let mv = pos.move32_from_usi(usi).unwrap();
        see(&pos, mv)
    }

    #[test]
    fn undefended_piece_is_won() {
        // Black rook takes an undefended gold on 5c.
        assert_eq!(see_of("4k4/9/4g4/9/9/9/9/9/4RK3 b - 1", "5i5c"), 600);
    }

    #[test]
    fn defended_pawn_costs_the_rook() {
        // Rook takes a pawn defended by a gold: +100 - 1000.
        assert_eq!(see_of("4k4/4g4/4p4/9/9/9/9/9/4RK3 b - 1", "5i5c"), -900);
    }

    #[test]
    fn exchange_stops_when_recapture_loses() {
        // Pawn takes pawn defended by a gold, which the lance behind recaptures:
        // P x p (+100), G x P (-100), L x G (+600) ... the gold will not recapture.
        assert_eq!(see_of("4k4/4g4/4p4/4P4/4L4/9/9/9/5K3 b - 1", "5d5c"), 100);
    }
}

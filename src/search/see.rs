//! Static exchange evaluation: the material balance of the capture sequence
//! on one square, each side recapturing with its least valuable piece and
//! free to stop when going on would lose.

use rsshogi::board::Position;
use rsshogi::board::attack_tables::{bishop_attacks, lance_step_attacks, rook_attacks};
use rsshogi::types::{Bitboard, Color, Move32, PieceType, Square};

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
    // Every piece attacking `to`, found once; a capture can only uncover a
    // slider behind the piece it removes, so only sliders are looked for
    // again (a slider's rays grow as pieces leave, so nothing is lost).
    let theirs = pos.attackers_to_color(us.flip(), to, occupied);
    if theirs.is_empty() {
        return gain[0];
    }
    let mut attackers = theirs | pos.attackers_to_color(us, to, occupied);
    let mut side = us.flip();
    let mut depth = 0;
    loop {
        let ours = attackers & occupied & bitboards.color_pieces(side);
        if ours.is_empty() {
            break;
        }
        let Some((sq, pt)) = ORDER
            .iter()
            .find_map(|&pt| (ours & bitboards.pieces(pt)).lsb().map(|sq| (sq, pt)))
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
        attackers |= slider_attackers(pos, to, occupied);
        side = side.flip();
    }
    while depth > 0 {
        gain[depth - 1] = -(-gain[depth - 1]).max(gain[depth]);
        depth -= 1;
    }
    gain[0]
}

/// The sliders of both colours (bishops, rooks, their promotions and
/// lances) that attack `to` through `occupied`.
#[inline]
fn slider_attackers(pos: &Position, to: Square, occupied: Bitboard) -> Bitboard {
    let bitboards = pos.bitboards();
    let lances = bitboards.pieces(PieceType::LANCE);
    // a lance attacks along its file, forwards: from the side of `to` its
    // colour's opponent moves towards
    let lances = (lance_step_attacks(to, Color::WHITE)
        & lances
        & bitboards.color_pieces(Color::BLACK))
        | (lance_step_attacks(to, Color::BLACK) & lances & bitboards.color_pieces(Color::WHITE));
    (bishop_attacks(to, occupied) & bitboards.bishop_horse())
        | (rook_attacks(to, occupied) & (bitboards.rook_dragon() | lances))
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

    /// The first implementation: every attacker looked for again after each
    /// capture.
    fn see_reference(pos: &Position, mv: Move32) -> i32 {
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

    /// Every move (captures, quiet moves, drops) of the bench positions and
    /// of positions met on random walks from them: the same SEE as looking
    /// for every attacker again after each capture.
    #[test]
    fn same_as_looking_again_for_every_attacker() {
        use rsshogi::board::{Move32List, generate_legal_all_move32};
        let mut moves = Move32List::new();
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        let (mut compared, mut exchanges) = (0, 0);
        for sfen in crate::bench::POSITIONS {
            for _ in 0..30 {
                let mut pos = position_from_sfen(sfen).unwrap();
                for _ in 0..80 {
                    generate_legal_all_move32(&pos, &mut moves);
                    if moves.is_empty() {
                        break;
                    }
                    for &mv in moves.iter() {
                        let want = see_reference(&pos, mv);
                        assert_eq!(see(&pos, mv), want, "{} {}", pos.to_sfen(None), mv.to_usi());
                        compared += 1;
                        exchanges += usize::from(want != 0);
                    }
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    let mv = moves[(seed >> 33) as usize % moves.len()];
                    pos.apply_move32(mv);
                }
            }
        }
        assert!(
            compared > 100_000 && exchanges > 10_000,
            "{compared} moves, {exchanges} exchanges"
        );
    }
}

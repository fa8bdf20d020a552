//! Random opening moves (`RandomOpeningPly`): varied games for matches and
//! self-play, without throwing the game away.

use std::sync::Arc;

use rsshogi::board::{Legal, Move32List, Position, generate_moves_move32};
use rsshogi::types::{Color, Move32, PieceType};

use crate::eval::{Evaluator, Material};
use crate::random::Rng;
use crate::search::SiblingScorer;

/// The pawn in front of the bishop (8g for Black, 2c for White): pushing it
/// opens the bishop diagonal to an exchange that random play handles badly.
fn is_bishop_file_pawn_push(pos: &Position, mv: Move32) -> bool {
    if mv.is_drop() || pos.piece_on(mv.from_sq()).piece_type() != PieceType::PAWN {
        return false;
    }
    let file = mv.from_sq().file().raw() + 1; // 1..=9
    (pos.turn() == Color::BLACK && file == 8) || (pos.turn() == Color::WHITE && file == 2)
}

/// The moves random opening play may choose from: legal, not the
/// bishop-file pawn push, and not losing material at once (the depth-1
/// material score after the move is no worse than before it).
pub fn candidates(pos: &mut Position) -> Vec<Move32> {
    let mut legal = Move32List::new();
    generate_moves_move32::<Legal>(pos, &mut legal);
    let before = Material.evaluate(pos);
    let mut scorer = SiblingScorer::new(Arc::new(Material));
    let allowed: Vec<Move32> = legal
        .iter()
        .copied()
        .filter(|&mv| !is_bishop_file_pawn_push(pos, mv))
        .collect();
    allowed
        .into_iter()
        .filter(|&mv| {
            pos.apply_move32(mv);
            let after = scorer.score(pos);
            pos.undo_move32(mv).expect("undo of a move just applied");
            after >= before
        })
        .collect()
}

/// A uniformly random candidate move, or `None` when there is none.
pub fn random_move(pos: &mut Position, rng: &mut Rng) -> Option<Move32> {
    let moves = candidates(pos);
    (!moves.is_empty()).then(|| moves[rng.below(moves.len())])
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsshogi::board::{hirate_position, position_from_sfen};

    #[test]
    fn start_position_excludes_the_bishop_pawn() {
        let mut pos = hirate_position();
        let moves = candidates(&mut pos);
        assert!(!moves.is_empty());
        assert!(moves.iter().all(|m| m.to_usi() != "8g8f"));
        assert!(moves.iter().any(|m| m.to_usi() == "7g7f"));
    }

    #[test]
    fn never_hangs_a_piece() {
        // Black's rook on 5e is attacked by a pawn: moving the rook away is
        // fine; leaving it (e.g. 1g1f) loses it.
        let mut pos = position_from_sfen("4k4/9/9/4p4/4R4/9/8P/9/4K4 b - 1").unwrap();
        let moves = candidates(&mut pos);
        assert!(!moves.iter().any(|m| m.to_usi() == "1g1f"));
        assert!(moves.iter().any(|m| m.to_usi() == "5e5d"));
    }
}

//! Perft: the number of legal move sequences of a given length.
//!
//! Perft counts check the move generator (rsshogi's) and our use of it
//! (apply/undo, drops, promotions, pawn-drop mate) against published figures.
//!
//! ```
//! let mut pos = rsshogi::board::hirate_position();
//! assert_eq!(niwatori::perft::perft(&mut pos, 2), 900);
//! ```

use rsshogi::board::{Move32List, Position, generate_legal_all_move32};

/// Counts the leaf nodes of the legal move tree of `depth` plies.
pub fn perft(pos: &mut Position, depth: u32) -> u64 {
    pos.init_stack();
    perft_from(pos, depth)
}

fn perft_from(pos: &mut Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut moves = Move32List::new();
    generate_legal_all_move32(pos, &mut moves);
    if depth == 1 {
        return moves.len() as u64;
    }
    let mut nodes = 0;
    for &mv in moves.iter() {
        pos.apply_move32(mv);
        nodes += perft_from(pos, depth - 1);
        pos.undo_move32(mv)
            .expect("undo of a move just applied cannot fail");
    }
    nodes
}

//! Move policy: which move a strong player picks in a position.
//!
//! [`labels`] names each move of a position as one class of a fixed set;
//! [`features`] describes a move in its position; [`model`] holds a linear
//! softmax policy over those features and its file; [`train`] fits it to
//! game moves; [`cli`] is `niwatori policy train`.
pub mod cli;
pub mod features;
pub mod labels;
pub mod model;
pub mod train;

pub use model::PolicyModel;

use rsshogi::board::{Move32List, Position, generate_legal_all_move32};
use rsshogi::types::Move32;

use crate::records::Game;

/// Calls `f(position, legal moves, index of the game move among them,
/// 1-based ply)` for each position of `game` whose game move is legal there:
/// the positions a policy learns from and is measured on.
pub fn for_each_position(game: &Game, mut f: impl FnMut(&Position, &[Move32], usize, u32)) {
    let mut pos = game.start_position();
    let mut legal = Move32List::new();
    for (ply, played) in game.moves32().into_iter().enumerate() {
        legal.clear();
        generate_legal_all_move32(&pos, &mut legal);
        if let Some(i) = features::index_of(legal.as_slice(), played.to_move()) {
            f(&pos, legal.as_slice(), i, ply as u32 + 1);
        }
        pos.apply_move32(played);
    }
}

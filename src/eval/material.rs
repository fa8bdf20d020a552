//! Material-only evaluations: the baseline a learned evaluation must beat.

use rsshogi::board::Position;
use rsshogi::types::{Color, HandPiece, PieceType};

use super::Evaluator;

/// Value of a piece type on the board, in centipawns (pawn = 100).
///
/// Kings are worth nothing: the game ends when one is mated.
pub const fn piece_value(pt: PieceType) -> i32 {
    match pt.raw() {
        1 => 100,   // pawn
        2 => 350,   // lance
        3 => 400,   // knight
        4 => 550,   // silver
        5 => 850,   // bishop
        6 => 1000,  // rook
        7 => 600,   // gold
        9 => 600,   // promoted pawn (tokin)
        10 => 600,  // promoted lance
        11 => 600,  // promoted knight
        12 => 600,  // promoted silver
        13 => 1100, // horse
        14 => 1300, // dragon
        _ => 0,
    }
}

/// Sum of board and hand material, a piece in hand worth
/// `hand_percent` % of its board value.
fn material_balance(pos: &Position, hand_percent: i32) -> i32 {
    let us = pos.turn();
    let mut score = 0;
    for (_, piece) in pos.board_array().iter() {
        let v = piece_value(piece.piece_type());
        score += if piece.color() == us { v } else { -v };
    }
    for color in [Color::BLACK, Color::WHITE] {
        let hand = pos.hand(color);
        let mut h = 0;
        for hp in HandPiece::iter() {
            h += hand.count(hp) as i32 * piece_value(hp.to_piece_type()) * hand_percent / 100;
        }
        score += if color == us { h } else { -h };
    }
    score
}

/// Piece values, the same in hand and on the board, as in a simple engine.
#[derive(Clone, Copy, Debug, Default)]
pub struct Material;

impl Evaluator for Material {
    fn evaluate(&self, pos: &Position) -> i32 {
        material_balance(pos, 100)
    }
    fn name(&self) -> &str {
        "material"
    }
    fn quiet_gain_bound(&self) -> Option<i32> {
        Some(0)
    }
}

/// Pieces in hand worth 10 % more than on the board: a piece in hand can be
/// dropped anywhere, which is usually worth a little.
#[derive(Clone, Copy, Debug, Default)]
pub struct MaterialHand;

impl Evaluator for MaterialHand {
    fn evaluate(&self, pos: &Position) -> i32 {
        material_balance(pos, 110)
    }
    fn name(&self) -> &str {
        "material-hand"
    }
    fn quiet_gain_bound(&self) -> Option<i32> {
        // A drop turns a hand piece into a board piece: a small loss.
        Some(0)
    }
}

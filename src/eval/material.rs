//! Material-only evaluations: the baseline a learned evaluation must beat.

use rsshogi::board::Position;
use rsshogi::types::{HandPiece, PieceType};

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

/// Board piece types that carry material (all but the king).
const VALUED: [PieceType; 13] = [
    PieceType::PAWN,
    PieceType::LANCE,
    PieceType::KNIGHT,
    PieceType::SILVER,
    PieceType::BISHOP,
    PieceType::ROOK,
    PieceType::GOLD,
    PieceType::PRO_PAWN,
    PieceType::PRO_LANCE,
    PieceType::PRO_KNIGHT,
    PieceType::PRO_SILVER,
    PieceType::HORSE,
    PieceType::DRAGON,
];

/// Sum of board and hand material, a piece in hand worth
/// `hand_percent` % of its board value.
fn material_balance(pos: &Position, hand_percent: i32) -> i32 {
    let us = pos.turn();
    let bb = pos.bitboards();
    let ours = bb.color_pieces(us);
    let mut score = 0;
    for pt in VALUED {
        let all = bb.pieces(pt);
        let mine = (all & ours).count() as i32;
        let theirs = all.count() as i32 - mine;
        score += (mine - theirs) * piece_value(pt);
    }
    let (our_hand, their_hand) = (pos.hand(us), pos.hand(us.flip()));
    let mut hand = 0;
    for hp in HandPiece::iter() {
        let diff = our_hand.count(hp) as i32 - their_hand.count(hp) as i32;
        hand += diff * piece_value(hp.to_piece_type());
    }
    score + hand * hand_percent / 100
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

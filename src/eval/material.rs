//! Material-only evaluations: the baseline a learned evaluation must beat.

use rsshogi::board::Position;
use rsshogi::types::{HandPiece, Move32, PieceType};

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

/// What `mv` gains the mover under [`material_balance`] with `hand_percent`:
/// a capture wins the piece on the board and its unpromoted kind in hand, a
/// promotion the difference of the two kinds, a drop trades the hand value
/// for the board value. Exact, as every hand value (a multiple of 50 times
/// `hand_percent` / 100) is a whole number for the percentages used here.
fn material_delta(pos: &Position, mv: Move32, hand_percent: i32) -> i32 {
    let in_hand = |pt: PieceType| piece_value(pt) * hand_percent / 100;
    if let Some(pt) = mv.dropped_piece() {
        return piece_value(pt) - in_hand(pt);
    }
    let mut delta = 0;
    let captured = pos.piece_on(mv.to_sq());
    if !captured.is_empty() {
        let pt = captured.piece_type();
        delta += piece_value(pt) + in_hand(pt.demote());
    }
    if mv.is_promotion() {
        delta += promotion_gain(pos.piece_on(mv.from_sq()).piece_type());
    }
    delta
}

/// What promoting a `pt` on the board gains (hand values play no part).
fn promotion_gain(pt: PieceType) -> i32 {
    piece_value(pt.promote()) - piece_value(pt)
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
    fn move_delta(&self, pos: &Position, mv: Move32) -> Option<i32> {
        Some(material_delta(pos, mv, 100))
    }
    fn promotion_gain(&self, pt: PieceType) -> Option<i32> {
        Some(promotion_gain(pt))
    }
    fn null_move_negates(&self) -> bool {
        true
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
    fn move_delta(&self, pos: &Position, mv: Move32) -> Option<i32> {
        Some(material_delta(pos, mv, 110))
    }
    fn promotion_gain(&self, pt: PieceType) -> Option<i32> {
        Some(promotion_gain(pt))
    }
    fn null_move_negates(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsshogi::board::{Move32List, generate_legal_all_move32, position_from_sfen};

    /// Every legal move (promotions, non-promotions, drops, captures of
    /// promoted pieces) of a tree of positions: the incremental score must
    /// equal the full evaluation after the move.
    fn check_tree(
        eval: &dyn Evaluator,
        pos: &mut Position,
        depth: u32,
        checked: &mut usize,
        promotions: &mut usize,
    ) {
        let mut moves = Move32List::new();
        generate_legal_all_move32(pos, &mut moves);
        let before = eval.evaluate(pos);
        for &mv in moves.iter() {
            let delta = eval.move_delta(pos, mv).unwrap();
            if mv.is_promotion() && pos.piece_on(mv.to_sq()).is_empty() {
                let moved = pos.piece_on(mv.from_sq()).piece_type();
                assert_eq!(eval.promotion_gain(moved), Some(delta), "{}", mv.to_usi());
                *promotions += 1;
            }
            pos.apply_move32(mv);
            assert_eq!(
                eval.evaluate(pos),
                -(before + delta),
                "{} after {}",
                eval.name(),
                mv.to_usi()
            );
            *checked += 1;
            if depth > 1 {
                check_tree(eval, pos, depth - 1, checked, promotions);
            }
            pos.undo_move32(mv).unwrap();
        }
    }

    #[test]
    fn move_delta_matches_full_evaluation() {
        let sfens = [
            "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1",
            "8l/1l+R2P3/p2pBG1pp/kps1p4/Nn1P2G2/P1P1P2PP/1PS6/1KSG3+r1/LN2+p3L w Sbgn2p 124",
            "3g4l/+R1sg2S2/p1npk1s+Rp/2pb2p2/4g2N1/1p7/P1PP1PP1P/1P1S5/LNK2G2L w BNL4P 88",
        ];
        for eval in [&Material as &dyn Evaluator, &MaterialHand] {
            let (mut checked, mut promotions) = (0, 0);
            for sfen in sfens {
                let mut pos = position_from_sfen(sfen).unwrap();
                check_tree(eval, &mut pos, 2, &mut checked, &mut promotions);
            }
            assert!(checked > 10_000, "only {checked} moves checked");
            assert!(promotions > 100, "only {promotions} quiet promotions");
        }
    }
}

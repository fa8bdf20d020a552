//! Move labels are a bijection with the legal moves of real positions, and
//! the direction labels are rsshogi's (dlshogi's) class for class.

mod common;

use niwatori::policy::labels::{DirectionLabel, Motion, PieceLabel};
use rsshogi::board::{Move32List, generate_legal_all_move32};
use rsshogi::labels::policy::{CompactMoveLabel, MoveLabel};
use std::collections::HashSet;

#[test]
fn labels_name_every_legal_move_of_real_positions_once() {
    let dirs = ["kifu/wcsc28", "kifu/pro", "kifu/gps", "kifu/fsf-floodgate"].map(common::shared);
    let files = niwatori::records::find_record_files(&dirs)
        .unwrap_or_else(|e| panic!("{e} (see ../shared/README.md)"));
    let games = niwatori::corpus::read_all_games(&files);
    let (mut positions, mut moves, mut drops, mut promotions) = (0usize, 0usize, 0usize, 0usize);
    let mut direction_classes = HashSet::new();
    let mut piece_classes = HashSet::new();
    for game in &games {
        let mut pos = game.start_position();
        for played in game.moves32() {
            let mut legal = Move32List::new();
            generate_legal_all_move32(&pos, &mut legal);
            let mut seen_direction = HashSet::new();
            let mut seen_piece = HashSet::new();
            for mv in legal.iter().map(|m| m.to_move()) {
                let direction = DirectionLabel::of(&pos, mv).expect("a legal move has a label");
                let piece = PieceLabel::of(&pos, mv).expect("a legal move has a label");
                let usi = || format!("{} in {}", mv.to_usi(), pos.to_sfen(None));
                assert_eq!(
                    direction.raw(),
                    MoveLabel::from_move(mv, pos.turn()).unwrap().raw(),
                    "rsshogi's label of {}",
                    usi()
                );
                assert_eq!(
                    direction.to_move(&pos),
                    Some(mv),
                    "direction label back to {}",
                    usi()
                );
                assert_eq!(
                    piece.to_move(&pos),
                    Some(mv),
                    "piece label {piece} back to {}",
                    usi()
                );
                assert_eq!(piece.direction(), direction, "{}", usi());
                assert!(
                    seen_direction.insert(direction),
                    "two moves share {direction:?}: {}",
                    usi()
                );
                assert!(
                    seen_piece.insert(piece),
                    "two moves share {piece}: {}",
                    usi()
                );
                match piece.piece_motion().motion {
                    Motion::Drop(_) => drops += 1,
                    Motion::Move { promote: true, .. } => promotions += 1,
                    Motion::Move { .. } => {}
                }
                direction_classes.insert(direction);
                piece_classes.insert(piece);
                moves += 1;
            }
            positions += 1;
            pos.apply_move32(played);
        }
    }
    eprintln!(
        "{} games, {positions} positions, {moves} legal moves ({drops} drops, {promotions} promotions), \
         {} of {} direction classes and {} of {} piece classes seen",
        games.len(),
        direction_classes.len(),
        DirectionLabel::COUNT,
        piece_classes.len(),
        PieceLabel::COUNT
    );
    assert!(positions >= 10_000, "only {positions} positions");
    assert!(
        drops > 10_000 && promotions > 10_000,
        "{drops} drops, {promotions} promotions"
    );
    // every class the board's geometry allows (rsshogi's compact set) is met
    assert!(
        direction_classes
            .iter()
            .all(|l| l.to_rsshogi().is_structurally_valid())
    );
    assert_eq!(direction_classes.len(), CompactMoveLabel::COUNT);
}

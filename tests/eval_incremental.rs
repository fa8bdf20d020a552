//! The learned evaluation's incremental sums equal the full ones, exactly,
//! along real games and their sibling moves (captures, drops, promotions,
//! king moves, moves that open or close a slider's line, null moves).

mod common;

use niwatori::eval::{Evaluator, Learned};
use niwatori::features::{Board, FeatureSet, PieceChange};
use niwatori::rows::Base;
use rsshogi::board::{Legal, Move32List, Position, generate_moves_move32};
use rsshogi::types::{Color, Square};

/// [`Learned::sum_near`] of each king the move leaves where it stands, in
/// each view, near its own square and near 5e, less the change's share
/// ([`Learned::change_near`]) once `played`: the same before and after.
fn near_kings(model: &Learned, pos: &Position, change: &PieceChange, played: bool) -> Vec<i64> {
    let mut sums = Vec::new();
    for king in [Color::BLACK, Color::WHITE] {
        let ksq = pos.king_square(king);
        if ksq.is_none() || change.moves_king_of(king) {
            continue;
        }
        for view in [Color::BLACK, Color::WHITE] {
            let owner = usize::from(view != king);
            for near in [ksq, Square::from_index(40)] {
                let sum = model.sum_near(pos, view, owner, near, ksq);
                let change = model.change_near(change, view, owner, near);
                sums.push(if played { sum - change } else { sum });
            }
        }
    }
    sums
}

/// A model whose every weight is a distinct pseudo-random number: any term
/// missed, counted twice or counted with the wrong relation shows.
fn random_model(set: FeatureSet, base: Base) -> Learned {
    common::random_model(
        0x9e37_79b9_7f4a_7c15,
        1e-3,
        1000.0,
        niwatori::rows::FeaturesAt::Sibling,
        base,
        set,
    )
}

fn real_games() -> Vec<niwatori::records::Game> {
    let mut files = Vec::new();
    for dir in ["kifu/wcsc28", "kifu/pro"] {
        let dir = common::shared(dir);
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e} (see ../shared/README.md)", dir.display()));
        files.extend(entries.map(|e| e.unwrap().path()));
    }
    files.sort();
    niwatori::corpus::read_all_games(&files)
}

/// Every block: attack relations, hand and king-piece.
#[test]
fn incremental_sums_equal_the_full_sums_over_real_games() {
    let set = FeatureSet {
        king_piece: true,
        ..FeatureSet::default()
    };
    incremental_sums_equal_the_full_sums(set, Base::None);
}

/// The king-piece and hand blocks alone (the model the search carries
/// down, its updates known before the move is played), with each base.
#[test]
fn incremental_king_piece_sums_equal_the_full_sums() {
    let set = FeatureSet {
        attacks: false,
        king_piece: true,
        ..FeatureSet::default()
    };
    incremental_sums_equal_the_full_sums(set, Base::None);
    incremental_sums_equal_the_full_sums(set, Base::Material);
}

fn incremental_sums_equal_the_full_sums(set: FeatureSet, base: Base) {
    let model = random_model(set, base);
    assert_eq!(model.is_incremental(), !set.attacks);
    let games = real_games();
    assert!(games.len() >= 100, "only {} games", games.len());
    let (mut moves, mut captures, mut drops, mut promotions, mut king_moves, mut nulls) =
        (0, 0, 0, 0, 0, 0);
    let mut bounded = 0;
    let mut before = Board::default();
    let mut after = Board::default();
    for game in &games {
        let mut pos: Position = game.start_position();
        for (ply, &game_move) in game.moves.iter().enumerate() {
            before.set(&pos);
            let acc = model.accumulate(&before, &pos);
            // The full sums, and the evaluation, through the extraction path.
            assert_eq!(
                model.evaluate_accumulated(&acc, pos.turn()),
                model.evaluate(&pos),
                "{}",
                pos.to_sfen(None)
            );
            // Every legal move of every 3rd position, the game move always.
            let mut list = Move32List::new();
            generate_moves_move32::<Legal>(&pos, &mut list);
            let game_move = pos.move32_from_move(game_move);
            for &mv in list.iter().filter(|&&m| ply % 3 == 0 || m == game_move) {
                let capture = !mv.is_drop() && !pos.piece_on(mv.to_sq()).is_empty();
                let king = !mv.is_drop() && pos.piece_on(mv.from_sq()).piece_type().raw() == 8;
                // without the boards, before the move is played
                let ahead = model.accumulate_before_move(&acc, &pos, mv);
                let ahead_value = model.evaluate_after_move(&acc, &pos, mv, None);
                // a king's sums from its new square, counted apart, as the
                // sibling search caches them
                let us = pos.turn();
                let near = |view: Color| {
                    let owner = usize::from(view != us);
                    king.then(|| model.sum_near(&pos, view, owner, mv.to_sq(), mv.from_sq()))
                };
                let (near_them, near_us) = (near(us.flip()), near(us));
                if king {
                    let value = model.evaluate_after_move(&acc, &pos, mv, near_them);
                    assert_eq!(value, ahead_value, "{} {}", pos.to_sfen(None), mv.to_usi());
                }
                // the sums of a king that stays, near any square, follow the
                // move's change
                let change = PieceChange::of(&pos, mv);
                let near_before: Vec<i64> = near_kings(&model, &pos, &change, false);
                let bound = model.quiet_ceiling_bound(&acc, &pos, mv);
                if let (Some(bound), Some((value, _))) = (bound, ahead_value)
                    && !capture
                    && !king
                    && !mv.is_promotion()
                {
                    // the bound holds for the move, whatever its destination
                    assert!(bound >= -value, "{} {}", pos.to_sfen(None), mv.to_usi());
                    bounded += 1;
                }
                pos.apply_move32(mv);
                assert_eq!(
                    near_kings(&model, &pos, &change, true),
                    near_before,
                    "{} after {}",
                    pos.to_sfen(None),
                    mv.to_usi()
                );
                after.set(&pos);
                let carried = model.accumulate_move(&acc, &before, &after, &pos, mv);
                let full = model.accumulate(&after, &pos);
                assert_eq!(carried, full, "{} after {}", pos.to_sfen(None), mv.to_usi());
                if model.is_incremental() {
                    let at = format!("{} after {}", pos.to_sfen(None), mv.to_usi());
                    let at = || at.as_str();
                    assert_eq!(ahead, Some(full), "{}", at());
                    assert_eq!(model.accumulate_position(&pos), Some(full), "{}", at());
                    let (value, sum) = ahead_value.unwrap();
                    assert_eq!(value, model.evaluate(&pos), "{}", at());
                    pos.undo_move32(mv).unwrap();
                    let knowing = (pos.turn().flip(), sum);
                    let ahead = model.accumulate_before_move_knowing(&acc, &pos, mv, knowing, None);
                    let with_near =
                        model.accumulate_before_move_knowing(&acc, &pos, mv, knowing, near_us);
                    pos.apply_move32(mv);
                    assert_eq!(ahead, Some(full), "{}", at());
                    assert_eq!(with_near, Some(full), "{}", at());
                } else {
                    assert_eq!((ahead, ahead_value), (None, None));
                }
                assert_eq!(
                    model.evaluate_accumulated(&carried, pos.turn()),
                    model.evaluate(&pos)
                );
                if !pos.is_in_check() && pos.apply_null_move().is_ok() {
                    // Passing keeps the sums; the other side's view applies.
                    assert_eq!(
                        model.evaluate_accumulated(&carried, pos.turn()),
                        model.evaluate(&pos)
                    );
                    pos.undo_null_move().unwrap();
                    nulls += 1;
                }
                pos.undo_move32(mv).unwrap();
                moves += 1;
                captures += usize::from(capture);
                drops += usize::from(mv.is_drop());
                promotions += usize::from(mv.is_promotion());
                king_moves += usize::from(king);
            }
            pos.apply_move32(game_move);
        }
    }
    assert!(moves >= 100_000, "only {moves} moves");
    if model.is_incremental() {
        assert!(bounded >= 10_000, "only {bounded} quiet moves bounded");
    } else {
        assert_eq!(bounded, 0, "a bound from a model with attack relations");
    }
    for (what, n) in [
        ("captures", captures),
        ("drops", drops),
        ("promotions", promotions),
        ("king moves", king_moves),
        ("null moves", nulls),
    ] {
        assert!(n >= 1000, "only {n} {what}");
    }
}

//! The learned evaluation's incremental sums equal the full ones, exactly,
//! along real games and their sibling moves (captures, drops, promotions,
//! king moves, moves that open or close a slider's line, null moves).

mod common;

use niwatori::eval::{Evaluator, Learned};
use niwatori::features::{self, Board, RelationEncoding};
use niwatori::rows::model::{DataSummary, FeatureScheme, LinearModel, ModelMetadata};
use rsshogi::board::{Legal, Move32List, Position, generate_moves_move32};

/// A model whose every weight is a distinct pseudo-random number: any term
/// missed, counted twice or counted with the wrong relation shows.
fn random_model() -> Learned {
    let n = RelationEncoding::Value.num_features();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let w: Vec<f64> = (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64 * 2e-3 - 1e-3
        })
        .collect();
    let meta = ModelMetadata {
        features: Some(FeatureScheme {
            base: Default::default(),
            scheme: features::SCHEME.into(),
            scheme_version: u64::from(features::SCHEME_VERSION),
            num_features: n,
            label_scale: 1000.0,
            features_at: niwatori::rows::FeaturesAt::Sibling,
        }),
        solver: "test".into(),
        c: 1.0,
        p: 0.0,
        e: 0.0,
        bias: -1.0,
        nr_feature: n,
        objective: 0.0,
        gradient_norm: 0.0,
        iterations: 0,
        converged: true,
        data: DataSummary {
            files: 0,
            rows: 0,
            nonzeros: 0,
            max_index: n,
            bytes: 0,
        },
        load_seconds: 0.0,
        train_seconds: 0.0,
    };
    Learned::from_model(&LinearModel::new(w, 0.0, Some(meta))).expect("a valid model")
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

#[test]
fn incremental_sums_equal_the_full_sums_over_real_games() {
    let model = random_model();
    let games = real_games();
    assert!(games.len() >= 100, "only {} games", games.len());
    let (mut moves, mut captures, mut drops, mut promotions, mut king_moves, mut nulls) =
        (0, 0, 0, 0, 0, 0);
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
                pos.apply_move32(mv);
                after.set(&pos);
                let carried = model.accumulate_move(&acc, &before, &after, &pos, mv);
                let full = model.accumulate(&after, &pos);
                assert_eq!(carried, full, "{} after {}", pos.to_sfen(None), mv.to_usi());
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

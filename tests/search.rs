//! Search claims: mates are found, principal variations are legal.

mod common;

use niwatori::eval::Material;
use niwatori::search::mate::{MateAnswer, solve};
use niwatori::search::score::{MATE, mate_in};
use niwatori::search::{Control, Limits, think};
use niwatori::tt::TranspositionTable;
use rsshogi::board::{Position, position_from_sfen};

fn search(pos: &Position, limits: Limits) -> niwatori::search::SearchResult {
    let tt = TranspositionTable::new(16);
    think(
        pos,
        &Material,
        &tt,
        &limits,
        1,
        &Control::new(),
        &mut |_| {},
    )
}

/// After the move, the defender has no legal move.
fn mates(pos: &Position, usi: &str) -> bool {
    let mut p = pos.clone();
    let mv = p.move32_from_usi(usi).expect("legal move");
    p.apply_move32(mv);
    p.is_mated()
}

#[test]
fn finds_every_mate_in_one() {
    let problems = common::mate_problems(1);
    assert!(problems.len() > 400);
    for (sfen, _, _) in &problems {
        let pos = position_from_sfen(sfen).unwrap();
        let result = search(&pos, Limits::depth(1));
        let best = result.best_move.expect("a move").to_usi();
        assert!(mates(&pos, &best), "{sfen}: {best} does not mate");
        assert_eq!(result.score, mate_in(1), "{sfen}");
    }
}

#[test]
fn depth_5_finds_mates_in_three() {
    for (sfen, answer, _) in common::mate_problems(3).iter().take(100) {
        let pos = position_from_sfen(sfen).unwrap();
        let result = search(&pos, Limits::depth(5));
        assert_eq!(result.score, mate_in(3), "{sfen} (answer {answer:?})");
        // The PV is the mate: three legal moves ending in a mated defender.
        assert_eq!(result.pv.len(), 3, "{sfen}: pv {:?}", result.pv);
        common::assert_pv_mates(sfen, &pos, &result.pv);
    }
}

#[test]
fn mate_search_finds_mates_of_the_stated_length() {
    for plies in [3u32, 5, 7] {
        for (sfen, _, _) in common::mate_problems(plies).iter().take(20) {
            let pos = position_from_sfen(sfen).unwrap();
            match solve(&pos, Some(20_000), plies, &Control::new()) {
                MateAnswer::Mate(pv) => {
                    assert_eq!(pv.len() as u32, plies, "{sfen}");
                    let mut p = pos.clone();
                    for mv in &pv {
                        assert!(p.is_legal_move32(*mv));
                        p.apply_move32(*mv);
                    }
                    assert!(p.is_mated(), "{sfen}");
                }
                other => panic!("{sfen}: expected a mate in {plies}, got {other:?}"),
            }
        }
    }
}

/// Positions from real games, every 7th ply.
fn game_positions(limit: usize) -> Vec<Position> {
    let dir = common::shared("kifu/wcsc28");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files.iter().take(12) {
        let text = std::fs::read_to_string(file).unwrap();
        let mut pos = rsshogi::board::hirate_position();
        let mut ply = 0;
        for line in text.lines() {
            let line = line.trim_start_matches('\u{feff}');
            if (line.starts_with('+') || line.starts_with('-')) && line.len() == 7 {
                let mv = pos.move_from_csa(line);
                if !pos.is_legal_move32(mv) {
                    break;
                }
                pos.apply_move32(mv);
                ply += 1;
                if ply % 7 == 0 {
                    out.push(position_from_sfen(&pos.to_sfen(None)).unwrap());
                }
            }
        }
    }
    out.truncate(limit);
    out
}

#[test]
fn principal_variations_are_legal() {
    let positions = game_positions(120);
    assert!(positions.len() >= 100);
    for pos in positions {
        let result = search(&pos, Limits::depth(5));
        let mut p = pos.clone();
        assert!(!result.pv.is_empty());
        assert_eq!(result.pv.first().copied(), result.best_move);
        for mv in &result.pv {
            assert!(
                p.is_legal_move32(*mv),
                "{}: pv {:?} has illegal {}",
                pos.to_sfen(None),
                result.pv.iter().map(|m| m.to_usi()).collect::<Vec<_>>(),
                mv.to_usi()
            );
            p.apply_move32(*mv);
        }
    }
}

#[test]
fn node_limit_is_exact_with_one_thread() {
    let pos = rsshogi::board::hirate_position();
    let a = search(&pos, Limits::nodes(20_000));
    let b = search(&pos, Limits::nodes(20_000));
    assert!(a.nodes >= 20_000 && a.nodes < 20_100, "{}", a.nodes);
    assert_eq!(a.nodes, b.nodes);
    assert_eq!(a.best_move, b.best_move);
}

#[test]
fn mated_side_has_no_move() {
    // White is checkmated: no best move, a mated score.
    let pos = position_from_sfen("4k4/4G4/4P4/9/9/9/9/9/4K4 w - 1").unwrap();
    let result = search(&pos, Limits::depth(3));
    assert_eq!(result.best_move, None);
    assert_eq!(result.score, -MATE);
}

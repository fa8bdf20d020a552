//! Adjudication of single games, with scripted engines, and the CSA records they
//! produce read back by rsshogi's CSA reader.

mod play_support;

use niwatori::play::clock::{Limit, TimeControl};
use niwatori::play::csa_record::to_csa;
use niwatori::play::game::{EndReason, GameConfig, GameRecord, Opening, play_game};
use niwatori::play::usi_engine::UsiEngine;
use play_support::{OnGo, niwatori_exe, script_engine};
use rsshogi::records::formats::csa::parse_csa_str;
use rsshogi::types::GameResult;

fn cfg(limit: Limit, max_plies: u32) -> GameConfig {
    GameConfig {
        limit,
        max_plies,
        tolerance_ms: 100,
        hang_ms: 20_000,
    }
}

fn opening(sfen: &str) -> Opening {
    Opening {
        start_sfen: sfen.to_string(),
        moves: Vec::new(),
        source: "test".into(),
    }
}

/// Plays black vs white from `sfen` and returns the record and the CSA read back.
fn play(
    black: OnGo,
    white: OnGo,
    sfen: &str,
    limit: Limit,
    max_plies: u32,
) -> (GameRecord, [bool; 2], rsshogi::records::Record) {
    let dir = tempfile::tempdir().unwrap();
    let b = script_engine(dir.path(), "black", black);
    let w = script_engine(dir.path(), "white", white);
    let mut eb = UsiEngine::start(&b, &niwatori_exe()).unwrap();
    let mut ew = UsiEngine::start(&w, &niwatori_exe()).unwrap();
    let played = play_game([&mut eb, &mut ew], &opening(sfen), &cfg(limit, max_plies)).unwrap();
    let text = to_csa(&played.record).unwrap();
    let back = parse_csa_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    // The moves read back are the moves played.
    let moves: Vec<String> = back.main_moves().map(|m| m.mv().to_usi()).collect();
    let played_moves: Vec<String> = played.record.moves.iter().map(|m| m.usi.clone()).collect();
    assert_eq!(moves, played_moves, "{text}");
    (played.record, played.broken, back)
}

const NODES: Limit = Limit::Nodes(1000);
const STARTPOS: &str = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";
const KINGS: &str = "4k4/9/9/9/9/9/9/9/4K4 b - 1";

#[test]
fn mate_is_adjudicated_and_recorded_as_tsumi() {
    let (rec, _, back) = play(
        OnGo::Script(&["G*1b"]),
        OnGo::Script(&[]),
        "8k/9/8P/9/9/9/9/9/K8 b G 1",
        NODES,
        256,
    );
    assert_eq!(rec.reason, EndReason::Mated);
    assert_eq!(rec.winner, Some(0));
    assert_eq!(back.result(), GameResult::BlackWin);
}

#[test]
fn repetition_is_a_draw() {
    let shuffle = ["5i5h", "5a5b", "5h5i", "5b5a"].repeat(4);
    let (rec, _, back) = play(
        OnGo::Script(&shuffle),
        OnGo::Script(&shuffle),
        KINGS,
        NODES,
        256,
    );
    assert_eq!(rec.reason, EndReason::Repetition);
    assert_eq!(rec.winner, None);
    assert_eq!(
        rec.moves.len(),
        12,
        "the start position occurs for the 4th time after 12 plies"
    );
    assert_eq!(back.result(), GameResult::DrawByRepetition);
}

#[test]
fn perpetual_check_loses() {
    // Black's rook checks on every move; the 4th repetition comes after ply 13.
    let mut line = vec!["3c1c"];
    line.extend(["1a2a", "1c2c", "2a1a", "2c1c"].repeat(4));
    let (rec, _, back) = play(
        OnGo::Script(&line),
        OnGo::Script(&line),
        "8k/9/6R2/9/9/9/9/9/K8 b - 1",
        NODES,
        256,
    );
    assert_eq!(rec.reason, EndReason::PerpetualCheck);
    assert_eq!(rec.winner, Some(1));
    assert_eq!(rec.moves.len(), 13);
    assert_eq!(back.result(), GameResult::WhiteWinByIllegalMove);
}

#[test]
fn move_limit_is_a_draw() {
    let shuffle = ["5i5h", "5a5b", "5h5g", "5b5c", "5g5f", "5c5d"];
    let (rec, _, back) = play(
        OnGo::Script(&shuffle),
        OnGo::Script(&shuffle),
        KINGS,
        NODES,
        5,
    );
    assert_eq!(rec.reason, EndReason::MaxMoves);
    assert_eq!(rec.moves.len(), 5);
    assert_eq!(back.result(), GameResult::DrawByImpasse);
}

#[test]
fn illegal_move_loses_with_the_move_recorded() {
    let (rec, _, back) = play(
        OnGo::Script(&["7g7f", "1a1c"]),
        OnGo::Script(&["7g7f", "1a1c"]),
        STARTPOS,
        NODES,
        256,
    );
    // 1a1c moves White's lance onto its own pawn: illegal.
    assert_eq!(rec.reason, EndReason::IllegalMove("1a1c".into()));
    assert_eq!(rec.winner, Some(0));
    assert_eq!(rec.faulty_side(), Some(1));
    assert_eq!(back.result(), GameResult::BlackWinByIllegalMove);
    let text = to_csa(&rec).unwrap();
    assert!(text.contains("%ILLEGAL_MOVE\n'illegal move 1a1c"), "{text}");
}

#[test]
fn resignation_and_invalid_declaration_lose() {
    let (rec, _, back) = play(OnGo::Resign, OnGo::Resign, STARTPOS, NODES, 256);
    assert_eq!((rec.reason, rec.winner), (EndReason::Resign, Some(1)));
    assert_eq!(back.result(), GameResult::WhiteWin);
    let (rec, _, back) = play(OnGo::Script(&["2g2f"]), OnGo::Win, STARTPOS, NODES, 256);
    assert_eq!(
        (rec.reason, rec.winner),
        (EndReason::IllegalDeclaration, Some(0))
    );
    assert_eq!(back.result(), GameResult::BlackWinByIllegalMove);
}

#[test]
fn valid_declaration_wins() {
    // Black's king in the enemy camp with 10 pieces there and 30 points (27-point rule).
    let sfen = "GGGG1SSSS/4K4/NN7/9/9/9/9/9/8k b 2R2B2n4l18p 1";
    let (rec, _, back) = play(OnGo::Win, OnGo::Resign, sfen, NODES, 256);
    assert_eq!((rec.reason, rec.winner), (EndReason::Declaration, Some(0)));
    assert_eq!(back.result(), GameResult::BlackWinByDeclaration);
}

#[test]
fn crash_and_time_loss_are_losses_with_reasons() {
    let (rec, broken, back) = play(OnGo::Script(&["7g7f"]), OnGo::Crash, STARTPOS, NODES, 256);
    assert!(
        matches!(&rec.reason, EndReason::Crash(why) if why.contains("engine bug")),
        "{:?}",
        rec.reason
    );
    assert_eq!(rec.winner, Some(0));
    assert_eq!(broken, [false, true]);
    assert_eq!(back.result(), GameResult::BlackWinByIllegalMove);

    let tc = Limit::Time(TimeControl {
        total_ms: 0,
        byoyomi_ms: 200,
        increment_ms: 0,
    });
    let (rec, _, back) = play(
        OnGo::Sleep(2, &["7g7f"]),
        OnGo::Script(&[]),
        STARTPOS,
        tc,
        256,
    );
    assert!(
        matches!(rec.reason, EndReason::TimeLoss(_)),
        "{:?}",
        rec.reason
    );
    assert_eq!(rec.winner, Some(1));
    assert_eq!(back.result(), GameResult::WhiteWinByTimeout);
}

#[test]
fn scores_and_pvs_are_comments_from_blacks_view() {
    let line = ["7g7f", "3c3d", "2g2f"];
    let (rec, _, back) = play(
        OnGo::Script(&line),
        OnGo::Script(&line),
        STARTPOS,
        NODES,
        256,
    );
    assert_eq!(rec.moves.len(), 3);
    // The scripted engine says "score cp 10+n" for the side to move at ply n.
    let evals: Vec<i16> = back
        .main_line_ids()
        .iter()
        .filter_map(|&id| back.node(id).eval())
        .map(|e| e.raw())
        .collect();
    assert_eq!(evals, vec![10, -11, 12]);
    let nodes: Vec<u64> = back
        .main_line_ids()
        .iter()
        .filter_map(|&id| back.node(id).nodes())
        .collect();
    assert_eq!(nodes, vec![7, 7, 7]);
}

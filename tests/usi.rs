//! USI conversations with the niwatori binary, as a GUI would have them.

mod common;

use std::time::{Duration, Instant};

use common::UsiProcess;
use rsshogi::board::position_from_sfen;

const T: Duration = Duration::from_secs(20);

fn bestmove(lines: &[String]) -> String {
    let last = lines.last().unwrap();
    last.split_whitespace().nth(1).unwrap().to_string()
}

/// `mv` is legal after `moves` from the start position.
fn assert_legal_after(moves: &[&str], mv: &str) {
    let mut pos = rsshogi::board::hirate_position();
    for m in moves {
        pos.apply_move32(pos.move32_from_usi(m).unwrap());
    }
    assert!(
        pos.move32_from_usi(mv)
            .is_some_and(|m| pos.is_legal_move32(m)),
        "{mv} is not legal after {moves:?}"
    );
}

#[test]
fn handshake_lists_options() {
    let mut e = UsiProcess::start();
    e.send("usi");
    let lines = e.until("usiok", T);
    assert!(lines[0].starts_with("id name niwatori"));
    for option in [
        "USI_Hash",
        "Threads",
        "Eval",
        "EvalFile",
        "RandomOpeningPly",
        "AntiInaniwa",
    ] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("option name {option} "))),
            "{option} missing from {lines:?}"
        );
    }
    e.send("isready");
    e.until("readyok", T);
    e.quit();
}

#[test]
fn plays_a_legal_move_with_info_lines() {
    let mut e = UsiProcess::start();
    e.send("usi");
    e.until("usiok", T);
    e.send("setoption name USI_Hash value 16");
    e.send("isready");
    e.until("readyok", T);
    e.send("usinewgame");
    e.send("position startpos moves 7g7f 3c3d 2g2f");
    e.send("go depth 6");
    let lines = e.until("bestmove", T);
    let info = lines
        .iter()
        .rfind(|l| l.starts_with("info depth"))
        .expect("an info line");
    for field in [
        " depth ",
        " seldepth ",
        " time ",
        " nodes ",
        " nps ",
        " hashfull ",
        " score cp ",
        " pv ",
    ] {
        assert!(info.contains(field), "{field} missing in {info}");
    }
    assert_legal_after(&["7g7f", "3c3d", "2g2f"], &bestmove(&lines));
    e.quit();
}

#[test]
fn the_last_info_line_counts_the_nodes_of_an_unfinished_iteration() {
    // `go nodes` stops inside an iteration; the nodes it searched there
    // are searched all the same (comparisons of nodes per move read them).
    let mut e = UsiProcess::start();
    e.send("position startpos moves 7g7f 3c3d 2g2f");
    e.send("go nodes 200000");
    let lines = e.until("bestmove", T);
    let nodes: Vec<u64> = lines
        .iter()
        .filter(|l| l.starts_with("info depth"))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let at = w.iter().position(|&x| x == "nodes").expect("nodes field");
            w[at + 1].parse().expect("a node count")
        })
        .collect();
    let last = *nodes.last().expect("info lines");
    assert!(
        (200_000..201_000).contains(&last),
        "the last info line reports {last} nodes of 200000: {nodes:?}"
    );
    e.quit();
}

#[test]
fn mates_in_one_are_played() {
    let mut e = UsiProcess::start();
    e.send("isready");
    e.until("readyok", T);
    for (sfen, _, _) in common::mate_problems(1).iter().take(30) {
        e.send(&format!("position sfen {sfen}"));
        e.send("go depth 3");
        let lines = e.until("bestmove", T);
        let best = bestmove(&lines);
        let mut pos = position_from_sfen(sfen).unwrap();
        let mv = pos.move32_from_usi(&best).expect("legal");
        pos.apply_move32(mv);
        assert!(pos.is_mated(), "{sfen}: {best} is not mate");
        assert!(
            lines.iter().any(|l| l.contains("score mate 1")),
            "{lines:?}"
        );
    }
    e.quit();
}

#[test]
fn go_mate_answers_checkmate_nomate_and_timeout() {
    let mut e = UsiProcess::start();
    // Each answer's line is replayed: legal moves that end in mate.
    for (sfen, _, _) in common::mate_problems(5).iter().take(5) {
        e.send(&format!("position sfen {sfen}"));
        e.send("go mate 10000");
        let line = e.until("checkmate", T).pop().unwrap();
        let moves: Vec<&str> = line.split_whitespace().skip(1).collect();
        assert_eq!(moves.len(), 5, "{sfen}: {line}");
        let mut pos = rsshogi::board::position_from_sfen(sfen).unwrap();
        for usi in &moves {
            let mv = niwatori::play::game::legal_move(&pos, usi)
                .unwrap_or_else(|| panic!("{sfen}: {usi} of {line} is not legal"));
            pos.apply_move32(mv);
        }
        assert!(pos.is_mated(), "{sfen}: {line} does not mate");
    }
    // No check at all; then checks, but none that mates (a dropped pawn is
    // taken and Black has nothing left): both proven, not timed out.
    for sfen in ["4k4/9/9/9/9/9/9/9/4K4 b - 1", "4k4/9/9/9/9/9/9/9/4K4 b P 1"] {
        e.send(&format!("position sfen {sfen}"));
        e.send("go mate 1000");
        assert_eq!(
            e.until("checkmate", T).pop().unwrap(),
            "checkmate nomate",
            "{sfen}"
        );
    }
    // A lone rook checks for ever and never mates: the search runs out of time.
    e.send("position sfen 4k4/9/9/9/9/9/9/9/4K4 b R 1");
    e.send("go mate 300");
    assert_eq!(e.until("checkmate", T).pop().unwrap(), "checkmate timeout");
    e.quit();
}

#[test]
fn malformed_input_is_reported_and_survived() {
    let mut e = UsiProcess::start();
    for bad in [
        "flibbertigibbet",
        "position",
        "position sfen not a position",
        "position startpos moves 7g7f 7g7f",
        "position startpos moves zz99",
        // Found by scripts/fuzz.sh, each a panic: two black kings; the side
        // not to move in check, then the king taken.
        "position sfen pppppl11p/1r5+p1/ppppKK+lPp/9/9/9/PPPPLPPPP/1B5R1/SNSgRGSNL b - 1 moves 7g7f 3c4c",
        "position sfen ngsgngnsl/1r5b1/ppppppppp/9/9/9/PPPPPPPGP/1B5k1/6NS+L b - 1 moves 2g2h",
        "go depth",
        "go wtime lots",
        "setoption name Threads value many",
        "setoption name NoSuchOption value 1",
        "setoption name Eval value telepathy",
        "setoption",
    ] {
        e.send(bad);
        let line = e.until("info string error", T).pop().unwrap();
        assert!(line.len() > "info string error: ".len(), "{bad}: {line}");
    }
    e.send("position startpos");
    e.send("go depth 3");
    e.until("bestmove", T);
    assert!(e.is_running());
    e.quit();
}

/// After a refused `position`, `go` must not search the position before
/// it (its move may be illegal in the game the GUI meant): it reports the
/// error and resigns, `go mate` answers nomate; the next accepted
/// `position` plays again.
#[test]
fn go_after_a_refused_position_does_not_search_the_stale_one() {
    let mut e = UsiProcess::start();
    e.send("position startpos moves 7g7f");
    e.send("position startpos moves 7g7f 7g7f");
    e.until("info string error", T);
    e.send("go depth 3");
    let lines = e.until("bestmove", T);
    assert!(
        lines.iter().any(|l| l.contains("no position to search")),
        "{lines:?}"
    );
    assert_eq!(bestmove(&lines), "resign");
    e.send("go mate 1000");
    assert_eq!(e.until("checkmate", T).pop().unwrap(), "checkmate nomate");
    e.send("position startpos moves 7g7f");
    e.send("go depth 3");
    assert_legal_after(&["7g7f"], &bestmove(&e.until("bestmove", T)));
    e.quit();
}

/// A model file whose header asks for more weights than it holds is an
/// error at `isready`, naming the file; the engine goes on with material.
#[test]
fn an_oversized_model_header_is_an_error_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("huge.model");
    std::fs::write(
        &model,
        "solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 99999999999\nbias -1\nw\n0.5 \n",
    )
    .unwrap();
    let mut e = UsiProcess::start();
    e.send("setoption name Eval value learned");
    e.send(&format!(
        "setoption name EvalFile value {}",
        model.display()
    ));
    e.send("isready");
    let lines = e.until("readyok", T);
    let error = lines
        .iter()
        .find(|l| l.starts_with("info string error"))
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert!(
        error.contains("huge.model") && error.contains("nr_feature 99999999999"),
        "{error}"
    );
    e.send("setoption name Eval value material");
    e.send("isready");
    e.until("readyok", T);
    e.send("position startpos");
    e.send("go depth 3");
    e.until("bestmove", T);
    assert!(e.is_running());
    e.quit();
}

/// Memory and swap of this machine, in MiB (`/proc/meminfo`).
fn memory_mib() -> u64 {
    let info = std::fs::read_to_string("/proc/meminfo").expect("/proc/meminfo (Linux)");
    let kib = |key: &str| -> u64 {
        info.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("/proc/meminfo has no {key}"))
    };
    (kib("MemTotal:") + kib("SwapTotal:")) >> 10
}

/// A `USI_Hash` the machine cannot hold is an error at `isready` and the
/// old table is kept: the engine plays on instead of aborting.
#[test]
fn a_hash_beyond_the_machines_memory_is_an_error_not_an_abort() {
    let wanted = 65536;
    let mut e = UsiProcess::start();
    e.send(&format!("setoption name USI_Hash value {wanted}"));
    e.send("isready");
    let lines = e.until("readyok", T);
    let error = lines.iter().find(|l| l.starts_with("info string error"));
    if memory_mib() < wanted {
        let error = error.unwrap_or_else(|| panic!("no error for {wanted} MB: {lines:?}"));
        assert!(
            error.contains("USI_Hash 65536 MB") && error.contains("stays at 64 MB"),
            "{error}"
        );
    } else {
        assert_eq!(error, None, "this machine holds {wanted} MB");
    }
    e.send("position startpos");
    e.send("go depth 3");
    e.until("bestmove", T);
    assert!(e.is_running());
    e.quit();
}

#[test]
fn stop_ends_infinite_search_and_ponder_waits_for_ponderhit() {
    let mut e = UsiProcess::start();
    e.send("position startpos");
    e.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    e.send("stop");
    e.until("bestmove", T);

    e.send("position startpos moves 7g7f 3c3d");
    e.send("go ponder btime 0 wtime 0 byoyomi 200");
    // Pondering runs on the opponent's time: five byoyomis pass without a
    // bestmove; after ponderhit it comes within the byoyomi.
    let pondering = e.lines_for(Duration::from_millis(1000));
    assert!(
        pondering.iter().any(|l| l.starts_with("info depth")),
        "{pondering:?}"
    );
    assert!(
        !pondering.iter().any(|l| l.starts_with("bestmove")),
        "bestmove before ponderhit: {pondering:?}"
    );
    e.send("ponderhit");
    let start = Instant::now();
    let lines = e.until("bestmove", T);
    assert!(start.elapsed() < Duration::from_millis(1000), "{lines:?}");

    // A ponder miss: `stop` ends the ponder search with a bestmove at once.
    e.send("go ponder btime 0 wtime 0 byoyomi 200");
    let pondering = e.lines_for(Duration::from_millis(500));
    assert!(
        !pondering.iter().any(|l| l.starts_with("bestmove")),
        "{pondering:?}"
    );
    e.send("stop");
    let start = Instant::now();
    e.until("bestmove", T);
    assert!(start.elapsed() < Duration::from_millis(500));
    e.quit();
}

#[test]
fn random_opening_plays_varied_safe_moves() {
    let mut e = UsiProcess::start();
    e.send("setoption name RandomOpeningPly value 4");
    e.send("isready");
    e.until("readyok", T);
    let mut firsts = std::collections::HashSet::new();
    for _ in 0..12 {
        e.send("position startpos");
        e.send("go btime 0 wtime 0 byoyomi 100");
        let best = bestmove(&e.until("bestmove", T));
        assert_ne!(best, "8g8f");
        firsts.insert(best);
    }
    assert!(firsts.len() >= 3, "{firsts:?}");
    e.quit();
}

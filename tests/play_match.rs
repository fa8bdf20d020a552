//! The match runner end to end: niwatori's own evaluations (and external engines
//! when installed), CSA records read back, results resumed, JSON and CLI errors.

mod play_support;

use std::path::Path;
use std::process::Command;

use niwatori::play::clock::Limit;
use niwatori::play::game::legal_move;
use niwatori::play::matches::{MatchOptions, OpeningChoice, run_match};
use niwatori::play::openings::{openings_from_dir, openings_from_file};
use niwatori::play::spec::EngineSpec;
use play_support::{installed, niwatori_exe};
use rsshogi::records::formats::csa::parse_csa_bytes;
use rsshogi::types::GameResult;

fn options(a: &str, b: &str, games: usize, out: &Path) -> MatchOptions {
    MatchOptions {
        a: EngineSpec::parse(a).unwrap(),
        b: EngineSpec::parse(b).unwrap(),
        games,
        limit: Limit::Nodes(2000),
        openings: OpeningChoice::Random { plies: 10 },
        one_game_per_opening: false,
        seed: 5,
        concurrency: 2,
        max_plies: 256,
        csa_out: Some(out.to_path_buf()),
        sprt: None,
        tolerance_ms: 100,
        hang_ms: 30_000,
        niwatori_exe: niwatori_exe(),
        progress: false,
    }
}

/// Reads every game-*.csa back, replays it legally, and counts (black, white, draw) wins.
fn read_back(dir: &Path) -> (usize, [u64; 3]) {
    let mut n = 0;
    let mut counts = [0u64; 3];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "csa") {
            continue;
        }
        n += 1;
        let record = parse_csa_bytes(&std::fs::read(&path).unwrap()).unwrap();
        let mut pos = rsshogi::board::position_from_sfen(record.init_position_sfen()).unwrap();
        for m in record.main_moves() {
            let mv = legal_move(&pos, &m.mv().to_usi())
                .unwrap_or_else(|| panic!("{}: illegal {}", path.display(), m.mv().to_usi()));
            pos.apply_move32(mv);
        }
        match record.result() {
            GameResult::BlackWin
            | GameResult::BlackWinByIllegalMove
            | GameResult::BlackWinByDeclaration
            | GameResult::BlackWinByTimeout => counts[0] += 1,
            GameResult::WhiteWin
            | GameResult::WhiteWinByIllegalMove
            | GameResult::WhiteWinByDeclaration
            | GameResult::WhiteWinByTimeout => counts[1] += 1,
            _ => counts[2] += 1,
        }
    }
    (n, counts)
}

#[test]
fn own_evaluations_play_record_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("games");
    let s = run_match(&options("material-hand", "material", 2, &out)).unwrap();
    assert_eq!(s.games, 2);
    assert_eq!(s.a_wins + s.b_wins + s.draws, 2);
    assert_eq!(
        s.a.wins_as_black + s.a.draws_as_black + s.a.losses_as_black,
        1,
        "A had Black once"
    );
    for side in [&s.a, &s.b] {
        assert_eq!(
            (side.illegal_moves, side.time_losses, side.crashes),
            (0, 0, 0)
        );
    }
    let (n, counts) = read_back(&out);
    assert_eq!(n, 2);
    assert_eq!(counts.iter().sum::<u64>(), 2);
    assert_eq!(counts[2], s.draws);

    // The same command again finds both games done; a longer match plays only the rest.
    let again = run_match(&options("material-hand", "material", 2, &out)).unwrap();
    assert_eq!(again.resumed_games, 2);
    assert_eq!(
        (again.a_wins, again.b_wins, again.draws),
        (s.a_wins, s.b_wins, s.draws)
    );
    let more = run_match(&options("material-hand", "material", 4, &out)).unwrap();
    assert_eq!((more.resumed_games, more.games), (2, 4));
    assert_eq!(read_back(&out).0, 4);

    // Another match in the same folder is refused, not mixed in.
    let err = run_match(&options("material", "material", 2, &out)).unwrap_err();
    assert!(format!("{err:#}").contains("different match"), "{err:#}");
}

#[test]
fn depth_limited_games_search_to_that_depth() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("games");
    let mut o = options("material", "material-hand", 2, &out);
    o.limit = Limit::Depth(2);
    let s = run_match(&o).unwrap();
    assert_eq!(s.a_wins + s.b_wins + s.draws, 2);
    assert_eq!((s.a.crashes, s.b.crashes), (0, 0));
    assert_eq!(read_back(&out).0, 2);
    for entry in std::fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "csa") {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(text.contains("'limit: go depth 2"), "{}", path.display());
        }
    }
}

#[test]
fn cli_writes_json_and_reports_bad_specs() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("m.json");
    let st = Command::new(niwatori_exe())
        .args([
            "match",
            "--a",
            "material",
            "--b",
            "material-hand",
            "--games",
            "2",
            "--nodes",
            "1000",
            "--sprt",
            "0,50",
        ])
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let stdout = String::from_utf8_lossy(&st.stdout);
    assert!(
        stdout.contains("Elo") && stdout.contains("SPRT"),
        "{stdout}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for key in [
        "games", "a_wins", "b_wins", "draws", "elo", "elo_ci95", "sprt",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    for side in ["a", "b"] {
        for key in [
            "illegal_moves",
            "time_losses",
            "crashes",
            "wins_as_black",
            "losses_as_white",
        ] {
            assert!(v[side].get(key).is_some(), "missing {side}.{key}");
        }
    }
    assert_eq!(v["games"], 2);

    let bad = Command::new(niwatori_exe())
        .args([
            "match",
            "--a",
            "stockfish",
            "--b",
            "material",
            "--nodes",
            "10",
        ])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("--a") && err.contains("stockfish"), "{err}");

    // A learned model file that does not exist is an error, not a silent fallback.
    let model = Command::new(niwatori_exe())
        .args([
            "match",
            "--a",
            "learned:/nonexistent/model.bin",
            "--b",
            "material",
            "--nodes",
            "10",
        ])
        .output()
        .unwrap();
    assert!(!model.status.success());
    assert!(
        String::from_utf8_lossy(&model.stderr).contains("rejected its options"),
        "{}",
        String::from_utf8_lossy(&model.stderr)
    );

    let missing = Command::new(niwatori_exe())
        .args([
            "match",
            "--a",
            "usi:/nonexistent/engine",
            "--b",
            "material",
            "--nodes",
            "10",
        ])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/engine"));
}

#[test]
fn openings_come_from_real_records_and_bad_files_are_reported() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/kifu/pro");
    let (openings, bad) = openings_from_dir(&shared, 16, 30, 3).unwrap();
    assert!(bad.is_empty(), "{bad:?}");
    assert_eq!(openings.len(), 10);
    for o in &openings {
        assert!((16..=30).contains(&o.moves.len()), "{}", o.source);
        o.position().unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        shared.read_dir().unwrap().next().unwrap().unwrap().path(),
        dir.path().join("good.csa"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("bad.csa"),
        "V2.2\nPI\n+\n+7776FU\n-7776FU\n",
    )
    .unwrap();
    // A game that ended right after the opening plies gives no opening.
    std::fs::write(
        dir.path().join("short.csa"),
        "V2.2\nPI\n+\n+7776FU\n-3334FU\n+2726FU\n%TORYO\n",
    )
    .unwrap();
    let (openings, bad) = openings_from_dir(dir.path(), 1, 30, 3).unwrap();
    assert_eq!(openings.len(), 1);
    assert!(openings[0].source.starts_with("good.csa"));
    assert_eq!(bad.len(), 1);
    assert!(bad[0].path.ends_with("bad.csa"));
}

/// The real floodgate openings: every line of the file is a legal
/// position, and a match starts its games from them, each opening twice
/// with colours swapped.
#[test]
fn openings_come_from_a_file_of_usi_lines() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/openings");
    for (name, count, plies) in [
        ("floodgate2016-24ply.sfen", 10_831, 24),
        ("taya36.sfen", 1_957, 36),
    ] {
        let path = shared.join(name);
        let openings = openings_from_file(&path, 1)
            .unwrap_or_else(|e| panic!("{e} (the shared data sits beside the repository)"));
        assert_eq!(openings.len(), count, "{name}");
        assert!(openings.iter().all(|o| o.moves.len() == plies), "{name}");
        let again = openings_from_file(&path, 1).unwrap();
        assert_eq!(openings[0].source, again[0].source, "seeded shuffle");
    }

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("openings.sfen");
    std::fs::write(
        &file,
        "# two openings\nstartpos moves 7g7f 3c3d 2g2f\n\nsfen lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2 moves 8c8d\n",
    )
    .unwrap();
    let out = dir.path().join("games");
    let mut o = options("material", "material-hand", 4, &out);
    o.openings = OpeningChoice::File { path: file.clone() };
    o.limit = Limit::Depth(1);
    let s = run_match(&o).unwrap();
    assert_eq!(s.games, 4);
    let mut starts = Vec::new();
    for entry in std::fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "csa") {
            let record = parse_csa_bytes(&std::fs::read(&path).unwrap()).unwrap();
            let first: Vec<String> = record
                .main_moves()
                .take(3)
                .map(|m| m.mv().to_usi())
                .collect();
            starts.push((record.init_position_sfen().to_string(), first));
        }
    }
    starts.sort();
    let hirate = starts
        .iter()
        .filter(|(_, m)| m[..] == ["7g7f", "3c3d", "2g2f"])
        .count();
    let sfen = starts
        .iter()
        .filter(|(s, m)| s.contains("/2P6/") && m[0] == "8c8d")
        .count();
    assert_eq!((hirate, sfen), (2, 2), "{starts:?}");

    std::fs::write(&file, "startpos moves 7g7f\nstartpos moves 7g7f 7g7f\n").unwrap();
    let err = openings_from_file(&file, 1).unwrap_err().to_string();
    assert!(
        err.contains("openings.sfen:2: ") && err.contains("7g7f"),
        "{err}"
    );
    std::fs::write(&file, "startpos moves 7g7f\nmoves 3c3d\n").unwrap();
    let err = openings_from_file(&file, 1).unwrap_err().to_string();
    assert!(
        err.contains("openings.sfen:2: expected startpos or sfen"),
        "{err}"
    );
}

/// One deterministic engine against itself plays the colour-swapped game
/// of an opening move for move: generating games takes each opening once.
#[test]
fn generated_games_take_each_opening_once() {
    let dir = tempfile::tempdir().unwrap();
    let lines = "startpos moves 7g7f 3c3d\nstartpos moves 2g2f 8c8d\nstartpos moves 5g5f 5c5d\nstartpos moves 1g1f 1c1d\n";
    let file = dir.path().join("openings.sfen");
    std::fs::write(&file, lines).unwrap();
    let repeats = |once: bool| {
        let out = dir.path().join(format!("once-{once}"));
        let mut o = options("material", "material", 4, &out);
        o.openings = OpeningChoice::File { path: file.clone() };
        o.one_game_per_opening = once;
        o.concurrency = 1;
        o.max_plies = 40;
        run_match(&o).unwrap();
        let mut seen = niwatori::records::Duplicates::default();
        let mut repeats = 0;
        for f in niwatori::records::find_record_files(&[out]).unwrap() {
            for g in niwatori::records::read_games(&f).unwrap().games {
                repeats += usize::from(seen.first_seen(&g).is_some());
            }
        }
        repeats
    };
    assert_eq!(repeats(false), 2, "two openings, each played twice alike");
    assert_eq!(repeats(true), 0);
}

#[test]
fn fairy_stockfish_plays_against_niwatori() {
    let Some(fsf) = installed("/usr/games/fairy-stockfish") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let spec = format!("usi:{} --option Threads=1", fsf.display());
    let s = run_match(&options(&spec, "material", 2, dir.path())).unwrap();
    assert_eq!(s.games, 2);
    assert_eq!((s.b.illegal_moves, s.b.time_losses, s.b.crashes), (0, 0, 0));
    assert_eq!((s.a.illegal_moves, s.a.time_losses, s.a.crashes), (0, 0, 0));
    assert_eq!(read_back(dir.path()).0, 2);
}

#[test]
#[ignore = "gpsusi needs ~20 s per game"]
fn gpsusi_plays_with_its_nodes_quirk() {
    let Some(gps) = installed("/usr/games/gpsusi") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let spec = format!(
        "usi:{} --option Thread=1 --nodes-fallback-byoyomi 100",
        gps.display()
    );
    let s = run_match(&options(&spec, "material", 2, dir.path())).unwrap();
    assert_eq!(s.games, 2);
    assert_eq!((s.a.illegal_moves, s.a.time_losses, s.a.crashes), (0, 0, 0));
    assert_eq!((s.b.illegal_moves, s.b.time_losses, s.b.crashes), (0, 0, 0));
}

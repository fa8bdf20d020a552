//! Reading records: every input form of the issue, and malformed input
//! giving the documented error (file, line, what) without stopping.

use std::path::{Path, PathBuf};

use niwatori::records::{Format, ProblemKind, find_record_files, parse_games, read_games};

fn csa(text: &str) -> niwatori::records::FileGames {
    parse_games(Path::new("t.csa"), Format::Csa, text.as_bytes())
}

#[test]
fn csa_with_pi_p1_hands_comments_times_and_endings() {
    let text = "\u{feff}'a comment\nV2.2\nN+black\nN-white\n$EVENT:test\nPI82HI22KA\nP+00HI\nP-00KA\n+\n+7776FU\nT3\n'** 120 -3334FU\n-3334FU,T5\n%KACHI\n";
    let r = csa(text);
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let g = &r.games[0];
    assert_eq!(
        g.start_sfen,
        "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b Rb 1"
    );
    assert_eq!(g.usi_moves(), vec!["7g7f", "3c3d"]);
    assert_eq!(g.ending.as_deref(), Some("%KACHI"));

    let board = "V2\nP1-KY-KE-GI-KI-OU-KI-GI-KE * \nP2 * -HI *  *  *  *  * -KA * \nP3-FU-FU-FU-FU-FU-FU-FU-FU-FU\nP4 *  *  *  *  *  *  *  *  * \nP5 *  *  *  *  *  *  *  *  * \nP6 *  *  *  *  *  *  *  *  * \nP7+FU+FU+FU+FU+FU+FU+FU+FU+FU\nP8 * +KA *  *  *  *  * +HI * \nP9+KY+KE+GI+KI+OU+KI+GI+KE+KY\n-\n-3334FU\n%TORYO\n";
    let r = csa(board);
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    assert!(r.games[0].start_sfen.starts_with("lnsgkgsn1/"));
    assert!(r.games[0].start_sfen.contains(" w "));
}

#[test]
fn every_csa_ending_is_read() {
    for end in [
        "%TORYO",
        "%CHUDAN",
        "%SENNICHITE",
        "%TIME_UP",
        "%ILLEGAL_MOVE",
        "%+ILLEGAL_ACTION",
        "%-ILLEGAL_ACTION",
        "%JISHOGI",
        "%KACHI",
        "%HIKIWAKE",
        "%MATTA",
        "%TSUMI",
        "%FUZUMI",
        "%ERROR",
    ] {
        let r = csa(&format!("PI\n+\n+7776FU\n{end}\n"));
        assert!(r.problems.is_empty(), "{end}: {:?}", r.problems);
        assert_eq!(r.games[0].moves.len(), 1, "{end}");
    }
}

/// Records saved from a CSA client's log end with the server's words
/// (`#RESIGN`, `#TIME_UP`, …) after the `%` ending, as the GPSShogi games do.
#[test]
fn server_result_lines_after_the_ending_are_read() {
    for tail in [
        "#RESIGN",
        "#TIME_UP",
        "#WIN",
        "#LOSE",
        "#DRAW",
        "#SENNICHITE",
        "#JISHOGI",
        "#MAX_MOVES",
    ] {
        let r = csa(&format!(
            "PI\n+\n+7776FU,T1\n-3334FU,T2\n%TORYO,T1\n{tail}\n"
        ));
        assert!(r.problems.is_empty(), "{tail}: {:?}", r.problems);
        assert_eq!(r.games[0].usi_moves(), vec!["7g7f", "3c3d"], "{tail}");
    }
    // Any other line starting with '#' is still reported, at its line.
    let r = csa("PI\n+\n+7776FU\n#HELLO\n-3334FU\n%TORYO\n");
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].line, 4);
    assert_eq!(r.problems[0].kind, ProblemKind::UnknownLine);
}

#[test]
fn multi_game_file_keeps_going_after_a_bad_game() {
    let text = [
        "PI", "+", "+7776FU", "%TORYO", "/", // game 1, lines 1-5
        "PI", "+", "+7776FU", "-3334FU", "+7775FU", "%TORYO",
        "/", // game 2: illegal at line 10
        "PI", "+", "+2726FU", "%CHUDAN", // game 3
    ]
    .join("\n");
    let r = csa(&text);
    assert_eq!(r.games.len(), 3);
    assert_eq!(r.games[0].moves.len(), 1);
    assert!(r.games[1].truncated);
    assert_eq!(r.games[1].usi_moves(), vec!["7g7f", "3c3d"]);
    assert_eq!(r.games[2].index, 2);
    assert_eq!(r.games[2].line, 13);
    assert_eq!(r.problems.len(), 1);
    let p = &r.problems[0];
    assert_eq!(
        (p.line, p.game_index, p.kind),
        (10, 1, ProblemKind::IllegalMove)
    );
    assert_eq!(
        p.to_string(),
        "t.csa:10: game 2: illegal move \"+7775FU\" (move 3); its first 2 moves are used"
    );
}

#[test]
fn malformed_csa_gives_file_line_and_reason() {
    // (text, line, kind, message)
    let cases: [(&str, usize, ProblemKind, &str); 5] = [
        (
            "PI\n+\n+7776FU\n-3334FU\n+7776FU\n%TORYO\n",
            5,
            ProblemKind::IllegalMove,
            "t.csa:5: game 1: illegal move \"+7776FU\" (move 3); its first 2 moves are used",
        ),
        (
            "PI\n+\n+7776FU\n+3334FU\n",
            4,
            ProblemKind::WrongSide,
            "t.csa:4: game 1: move sign does not match the side to move: +3334FU; its first 1 moves are used",
        ),
        (
            "V2.2\nhello world\nPI\n+\n+7776FU\n",
            2,
            ProblemKind::UnknownLine,
            "t.csa:2: game 1: unknown line \"hello world\"; the game is skipped",
        ),
        (
            "V2\nP1-KY-XX\n+\n+7776FU\n",
            2,
            ProblemKind::Syntax,
            "t.csa:2: game 1: invalid CSA board line: unknown piece code: XX; the game is skipped",
        ),
        (
            "PI\n+\n+77\n",
            3,
            ProblemKind::Syntax,
            "t.csa:3: game 1: invalid CSA move \"+77\"; the game is skipped",
        ),
    ];
    for (text, line, kind, message) in cases {
        let r = csa(text);
        assert_eq!(r.problems.len(), 1, "{text:?}");
        let p = &r.problems[0];
        assert_eq!((p.line, p.kind), (line, kind), "{text:?}");
        assert_eq!(p.to_string(), message);
    }
}

#[test]
fn garbage_never_panics() {
    let inputs: [&[u8]; 6] = [
        b"",
        b"\xff\xfe\x00garbage\x81",
        b"/\n/\n/\n",
        b"PI\n+\n+0055KA\n",
        b"P1+OU+OU\n+\n",
        b"PI\n-\n%TORYO\n/\n'only a comment\n",
    ];
    for data in inputs {
        let r = parse_games(Path::new("g.csa"), Format::Csa, data);
        for p in &r.problems {
            assert!(p.to_string().starts_with("g.csa:"), "{p}");
        }
        let r = parse_games(Path::new("g.kif"), Format::Kif, data);
        for p in &r.problems {
            assert!(p.to_string().starts_with("g.kif:"), "{p}");
        }
    }
    let r = parse_games(Path::new("e.csa"), Format::Csa, b"");
    assert_eq!(r.problems[0].to_string(), "e.csa:1: game 1: no game found");
}

#[test]
fn kif_in_shift_jis_and_utf8() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/kifu/kif");
    let sjis = read_games(&Path::new(dir).join("kifu17409.kif")).unwrap();
    assert!(sjis.problems.is_empty(), "{:?}", sjis.problems);
    // the KIF is a conversion of the shared CSA record: same moves
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/kifu/pro/kifu17409.csa");
    let twin = read_games(&shared).unwrap();
    assert_eq!(sjis.games[0].moves, twin.games[0].moves);
    assert!(sjis.games[0].moves.len() > 50);

    let utf8 = read_games(&Path::new(dir).join("selfplay_0015.kifu")).unwrap();
    assert!(utf8.problems.is_empty());
    assert!(!utf8.games[0].moves.is_empty());
}

#[test]
fn kif_illegal_move_names_its_line() {
    let text = "手合割：平手\n手数----指手---------消費時間--\n   1 ７六歩(77)\n   2 ３四歩(33)\n   3 ７六歩(77)\nまで3手で中断\n";
    let r = parse_games(Path::new("k.kif"), Format::Kif, text.as_bytes());
    assert_eq!(r.problems.len(), 1);
    let p = &r.problems[0];
    assert_eq!(
        (p.line, p.kind, p.kept_moves),
        (5, ProblemKind::IllegalMove, 2)
    );
    assert_eq!(r.games[0].usi_moves(), vec!["7g7f", "3c3d"]);
}

/// A move line longer than any KIF writes ends the game there (rsshogi's
/// move parser is quadratic in a line's length: fuzzing found a 22 kB line
/// that took seconds); the moves before it are kept.
#[test]
fn an_overlong_kif_move_line_ends_the_game() {
    let long = format!("   3 {}", "(".repeat(600));
    let text = format!(
        "手合割：平手\n手数----指手---------消費時間--\n   1 ７六歩(77)\n   2 ３四歩(33)\n{long}\nまで3手で中断\n"
    );
    let r = parse_games(Path::new("k.kif"), Format::Kif, text.as_bytes());
    assert_eq!(r.problems.len(), 1);
    let p = &r.problems[0];
    assert_eq!((p.line, p.kind, p.kept_moves), (5, ProblemKind::Syntax, 2));
    assert!(
        p.message
            .contains("a move line of 605 bytes (KIF move lines are at most 512)"),
        "{}",
        p.message
    );
    assert_eq!(r.games[0].usi_moves(), vec!["7g7f", "3c3d"]);

    // The input the fuzzer found (its first byte picked KIF).
    let found = include_bytes!("fuzz_regressions/kif_long_move_line.bin");
    let r = parse_games(Path::new("f.kif"), Format::Kif, &found[1..]);
    assert!(r.games.is_empty());
    assert!(
        r.problems[0].message.contains("a move line of 22476 bytes"),
        "{:?}",
        r.problems
    );
}

#[test]
fn directories_are_scanned_recursively_for_record_files_only() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("kifu");
    let files = find_record_files(std::slice::from_ref(&root)).unwrap();
    assert_eq!(files.len(), 35);
    assert!(files.windows(2).all(|w| w[0] < w[1]));
    assert!(files.iter().all(|f| Format::of(f).is_some()));
    let err = find_record_files(&[root.join("README.md")]).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("README.md: not a record file (expected .csa, .kif, .kifu, .psv or .hcpe)")
    );
    let err = find_record_files(&[root.join("missing")]).unwrap_err();
    assert!(err.to_string().contains("kifu/missing: "));
}

#[test]
fn all_shared_records_read_without_problems() {
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/kifu");
    let files = find_record_files(std::slice::from_ref(&shared)).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the shared data sits beside the repository)",
            shared.display()
        )
    });
    // wcsc28 207, pro 10, misc 5, selfplay 328, gps 94, fsf-floodgate 2,095
    assert_eq!(files.len(), 2739);
    let mut games = 0;
    for f in &files {
        let r = read_games(f).unwrap();
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        games += r.games.len();
    }
    assert_eq!(games, 2739);
    // Three of them replay another game move for move (two self-play
    // records of a short WCSC28 game, two self-play twins).
    let mut seen = niwatori::records::Duplicates::default();
    let repeats: Vec<String> = files
        .iter()
        .flat_map(|f| read_games(f).unwrap().games)
        .filter_map(|g| {
            seen.first_seen(&g)
                .map(|first| format!("{} = {first}", g.source.display()))
        })
        .collect();
    assert_eq!(repeats.len(), 3, "{repeats:#?}");
}

#[test]
fn floodgate_ratings_are_read_and_min_rating_keeps_the_rated_games() {
    // Real floodgate records carry both players' ratings.
    let misc = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/kifu/misc");
    let rated: Vec<[Option<f64>; 2]> = find_record_files(&[misc])
        .unwrap()
        .iter()
        .flat_map(|f| read_games(f).unwrap().games)
        .map(|g| g.ratings)
        .filter(|r| r[0].is_some())
        .collect();
    assert!(rated.contains(&[Some(3382.0), Some(3613.0)]), "{rated:?}");

    let dir = tempfile::tempdir().unwrap();
    let game = |rates: &str| format!("V2\n{rates}PI\n+\n+7776FU\n-3334FU\n%TORYO\n");
    let files = [
        ("a.csa", "'black_rate:x+1:3100.0\n'white_rate:y+2:2950.0\n"),
        ("b.csa", "'black_rate:x+1:3200\n'white_rate:y+2:3300.5\n"),
        ("c.csa", ""),
        ("d.csa", "'black_rate:x+1:3900\n"),
    ];
    for (name, rates) in files {
        std::fs::write(dir.path().join(name), game(rates)).unwrap();
    }
    let options = niwatori::extract::ExtractOptions {
        min_rating: Some(3000.0),
        ..Default::default()
    };
    let out = dir.path().join("rows");
    let s = niwatori::extract::extract(
        &[dir.path().to_path_buf()],
        &out,
        &options,
        std::sync::Arc::new(niwatori::eval::Material),
    )
    .unwrap();
    assert_eq!((s.games_written, s.games_below_rating), (1, 3));
    let name = dir.path().file_name().unwrap();
    assert!(out.join(name).join("b.csa.0.svm").is_file());
}

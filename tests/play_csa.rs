//! The CSA client against a small CSA server written here, which follows the
//! protocol as shogi-server does: LOGIN with `GAMENAME,PASSWORD`, Game_Summary,
//! AGREE/START, moves echoed with `,T<seconds>` (time counted by the server, rounded
//! down, and checked), `%TORYO` → `#RESIGN` → `#WIN`/`#LOSE`, LOGOUT.

mod play_support;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::Instant;

use niwatori::play::csa_client::{CsaOptions, run_csa};
use niwatori::play::spec::EngineSpec;
use play_support::{OnGo, niwatori_exe, script_engine};
use rsshogi::board::Position;
use rsshogi::records::formats::csa::parse_csa_bytes;
use rsshogi::types::GameResult;

/// One scripted game on the server side.
struct Game {
    your_turn: char,
    /// Lines between BEGIN Position and END Position.
    position: Vec<&'static str>,
    total: u64,
    byoyomi: u64,
    /// The opponent's moves (CSA); when they run out, the opponent resigns.
    opponent: Vec<&'static str>,
    /// How long the opponent thinks before each move.
    opponent_ms: u64,
    /// After the scripted moves, this many moves chosen by the server (first legal).
    auto_moves: usize,
    /// The summary's `Max_Moves`: once that many plies are on the board the
    /// server ends the game with `#MAX_MOVES` `#CENSORED`, as shogi-server does.
    max_moves: usize,
}

/// What the server saw.
#[derive(Debug, Default)]
struct Seen {
    login: String,
    client_moves: Vec<(String, u64)>,
    endings: Vec<String>,
    logout: bool,
    time_up: bool,
    /// Empty lines received from the client.
    keepalives: u32,
}

fn send(s: &mut TcpStream, line: &str) {
    s.write_all(format!("{line}\n").as_bytes()).unwrap();
}

fn serve(listener: TcpListener, game: Game) -> Seen {
    let (mut stream, _) = listener.accept().unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut seen = Seen::default();
    let mut read = |seen_keepalive: &mut u32| -> Option<String> {
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).ok()? == 0 {
                return None;
            }
            let line = line.trim_end().to_string();
            if line.is_empty() {
                *seen_keepalive += 1;
                continue;
            }
            return Some(line);
        }
    };
    let mut keepalives = 0;
    seen.login = read(&mut keepalives).unwrap();
    if seen.login != "LOGIN tester testgame,secret" {
        send(&mut stream, "LOGIN:incorrect");
        return seen;
    }
    send(&mut stream, "LOGIN:tester OK");
    send(&mut stream, ""); // a keep-alive from the server must be ignored
    let mut summary: Vec<String> = vec![
        "BEGIN Game_Summary",
        "Protocol_Version:1.2",
        "Protocol_Mode:Server",
        "Format:Shogi 1.0",
        "Declaration:Jishogi 1.1",
        "Game_ID:test-game-1",
        "Name+:tester_black",
        "Name-:tester_white",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    summary.push(format!("Your_Turn:{}", game.your_turn));
    summary.extend([
        "Rematch_On_Draw:NO".into(),
        format!("Max_Moves:{}", game.max_moves),
        "BEGIN Time".into(),
        "Time_Unit:1sec".into(),
    ]);
    summary.push(format!("Total_Time:{}", game.total));
    summary.push(format!("Byoyomi:{}", game.byoyomi));
    summary.extend([
        "Least_Time_Per_Move:0".into(),
        "END Time".into(),
        "BEGIN Position".into(),
    ]);
    summary.extend(game.position.iter().map(|s| s.to_string()));
    summary.extend(["END Position".into(), "END Game_Summary".into()]);
    for l in &summary {
        send(&mut stream, l);
    }
    assert_eq!(read(&mut keepalives).unwrap(), "AGREE test-game-1");
    send(&mut stream, "START:test-game-1");

    // The server's own referee, replaying the summary position.
    let record = parse_csa_bytes(
        format!(
            "V2.2\n{}\n",
            game.position
                .iter()
                .map(|l| l.split(',').next().unwrap())
                .collect::<Vec<_>>()
                .join("\n")
        )
        .as_bytes(),
    )
    .unwrap();
    let mut pos: Position =
        rsshogi::board::position_from_sfen(record.init_position_sfen()).unwrap();
    for m in record.main_moves() {
        let mv = niwatori::play::game::legal_move(&pos, &m.mv().to_usi()).unwrap();
        pos.apply_move32(mv);
    }
    let client = if game.your_turn == '+' {
        rsshogi::types::Color::BLACK
    } else {
        rsshogi::types::Color::WHITE
    };
    let mut remaining = game.total;
    let mut opponent = game.opponent.into_iter();
    let mut auto_left = game.auto_moves;
    let mut turn_start = Instant::now();
    let mut plies = record.main_moves().count();
    let finish = |stream: &mut TcpStream, lines: &[&str], seen: &mut Seen| {
        for l in lines {
            send(stream, l);
            seen.endings.push(l.to_string());
        }
    };
    loop {
        if plies >= game.max_moves {
            // Time for a client that ignores the limit to send a move, which
            // the check after the game then catches.
            std::thread::sleep(std::time::Duration::from_millis(500));
            finish(&mut stream, &["#MAX_MOVES", "#CENSORED"], &mut seen);
            break;
        }
        if pos.turn() == client {
            let Some(line) = read(&mut keepalives) else {
                return seen;
            };
            let secs = turn_start.elapsed().as_secs();
            if secs > remaining + game.byoyomi {
                seen.time_up = true;
                finish(&mut stream, &["#TIME_UP", "#LOSE"], &mut seen);
                break;
            }
            remaining = remaining.saturating_sub(secs);
            if line == "%TORYO" {
                finish(
                    &mut stream,
                    &[&format!("%TORYO,T{secs}"), "#RESIGN", "#LOSE"],
                    &mut seen,
                );
                break;
            }
            let mv = line.split(',').next().unwrap().to_string();
            let m32 = pos.move_from_csa(&mv);
            let legal = niwatori::play::game::legal_move(&pos, &m32.to_usi());
            let Some(legal) = legal else {
                finish(&mut stream, &["#ILLEGAL_MOVE", "#LOSE"], &mut seen);
                break;
            };
            pos.apply_move32(legal);
            plies += 1;
            seen.client_moves.push((line.clone(), secs));
            send(&mut stream, &format!("{mv},T{secs}"));
        } else {
            std::thread::sleep(std::time::Duration::from_millis(game.opponent_ms));
            let auto = || {
                let mut list = rsshogi::board::Move32List::new();
                rsshogi::board::generate_legal_all_move32(&pos, &mut list);
                list.iter().next().and_then(|m| m.to_csa())
            };
            let next = match opponent.next() {
                Some(mv) => Some(mv.to_string()),
                None if auto_left > 0 => {
                    auto_left -= 1;
                    auto()
                }
                None => None,
            };
            match next.as_deref() {
                Some(mv) => {
                    let m32 = pos.move_from_csa(mv);
                    let legal = niwatori::play::game::legal_move(&pos, &m32.to_usi())
                        .expect("scripted opponent move is legal");
                    pos.apply_move32(legal);
                    plies += 1;
                    send(&mut stream, &format!("{mv},T1"));
                    turn_start = Instant::now();
                }
                None => {
                    finish(&mut stream, &["%TORYO,T1", "#RESIGN", "#WIN"], &mut seen);
                    break;
                }
            }
        }
    }
    while let Some(line) = read(&mut keepalives) {
        assert!(
            !line.starts_with('%') && !line.starts_with('+') && !line.starts_with('-'),
            "client sent {line:?} after the game ended"
        );
        if line == "LOGOUT" {
            seen.logout = true;
            send(&mut stream, "LOGOUT:completed");
            break;
        }
    }
    seen.keepalives = keepalives;
    seen
}

fn client_options(port: u16, engine: EngineSpec, out: &Path) -> CsaOptions {
    CsaOptions {
        host: "127.0.0.1".into(),
        port,
        user: "tester".into(),
        password: "secret".into(),
        game: Some("testgame".into()),
        games: 1,
        engine,
        niwatori_exe: niwatori_exe(),
        out_dir: out.to_path_buf(),
        margin_ms: 1000,
        keepalive_secs: 1,
        send_pv: true,
        connect_retries: 0,
    }
}

fn run(
    game: Game,
    engine: OnGo,
) -> (
    Seen,
    Vec<niwatori::play::csa_client::CsaGameOutcome>,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    let spec = script_engine(dir.path(), "eng", engine);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || serve(listener, game));
    let out = dir.path().join("out");
    let outcomes = run_csa(&client_options(port, spec, &out)).unwrap();
    (server.join().unwrap(), outcomes, dir)
}

#[test]
fn plays_a_game_from_a_summary_with_moves_and_wins_on_resignation() {
    let engine_moves = ["2g2f", "8c8d", "7g7f", "3c3d", "6i7h"];
    let game = Game {
        your_turn: '+',
        position: vec!["PI", "+", "+2726FU,T3", "-8384FU,T2"],
        total: 60,
        byoyomi: 0,
        opponent: vec!["-3334FU"],
        opponent_ms: 2500,
        auto_moves: 0,
        max_moves: 256,
    };
    let (seen, outcomes, dir) = run(game, OnGo::Script(&engine_moves));
    assert!(
        seen.keepalives >= 1,
        "an idle client sends empty keep-alive lines"
    );
    assert!(!seen.time_up);
    assert!(seen.logout, "client logged out");
    // Moves carry the engine's score and PV after a comma, floodgate style.
    let sent: Vec<&str> = seen
        .client_moves
        .iter()
        .map(|(l, _)| l.split(',').next().unwrap())
        .collect();
    assert_eq!(sent, ["+7776FU", "+6978KI"]);
    assert!(
        seen.client_moves[0].0.starts_with("+7776FU,'* 12"),
        "{:?}",
        seen.client_moves
    );
    let o = &outcomes[0];
    assert_eq!(
        (o.result.as_str(), o.reasons.clone(), o.our_side, o.plies),
        ("#WIN", vec!["#RESIGN".to_string()], 0, 5)
    );
    assert_eq!(o.fallback_moves, 0);

    // The clock follows the summary's times and the server's echoes.
    let log = std::fs::read_to_string(dir.path().join("eng.sh.in")).unwrap();
    let gos: Vec<&str> = log.lines().filter(|l| l.starts_with("go ")).collect();
    assert_eq!(gos.len(), 2, "{log}");
    let field = |go: &str, k: &str| -> u64 {
        let w: Vec<&str> = go.split_whitespace().collect();
        w[w.iter().position(|x| *x == k).unwrap() + 1]
            .parse()
            .unwrap()
    };
    assert_eq!(field(gos[0], "wtime"), 58_000);
    assert!(
        (55_000..=56_000).contains(&field(gos[0], "btime")),
        "{}",
        gos[0]
    );
    assert_eq!(
        field(gos[1], "wtime"),
        57_000,
        "the opponent's T1 was charged"
    );
    assert!(log.contains("position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1 moves 2g2f 8c8d"), "{log}");

    // The record reads back with all moves and the right result; the transcript hides the password.
    let record = parse_csa_bytes(&std::fs::read(&o.record).unwrap()).unwrap();
    let moves: Vec<String> = record.main_moves().map(|m| m.mv().to_usi()).collect();
    assert_eq!(moves, ["2g2f", "8c8d", "7g7f", "3c3d", "6i7h"]);
    assert_eq!(record.result(), GameResult::BlackWin);
    let transcript = std::fs::read_to_string(&o.transcript).unwrap();
    assert!(
        transcript.contains("> LOGIN tester testgame,*****"),
        "{transcript}"
    );
    assert!(!transcript.contains("secret"));
    for l in [
        "< START:test-game-1",
        "> AGREE test-game-1",
        "< #RESIGN",
        "< #WIN",
        "> LOGOUT",
        "< LOGOUT:completed",
    ] {
        assert!(transcript.contains(l), "missing {l:?} in\n{transcript}");
    }
}

#[test]
fn resigns_when_mated_and_reads_the_ending_sequence() {
    // Black dropped a gold for mate in the moves already played; White (us) is mated.
    let game = Game {
        your_turn: '-',
        position: vec![
            "P1 *  *  *  *  *  *  *  * -OU",
            "P2 *  *  *  *  *  *  *  *  * ",
            "P3 *  *  *  *  *  *  *  * +FU",
            "P4 *  *  *  *  *  *  *  *  * ",
            "P5 *  *  *  *  *  *  *  *  * ",
            "P6 *  *  *  *  *  *  *  *  * ",
            "P7 *  *  *  *  *  *  *  *  * ",
            "P8 *  *  *  *  *  *  *  *  * ",
            "P9+OU *  *  *  *  *  *  *  * ",
            "P+00KI",
            "P-",
            "+",
            "+0012KI,T5",
        ],
        total: 60,
        byoyomi: 10,
        opponent: vec![],
        opponent_ms: 0,
        auto_moves: 0,
        max_moves: 256,
    };
    let (seen, outcomes, _dir) = run(game, OnGo::Script(&[]));
    assert_eq!(seen.endings, ["%TORYO,T0", "#RESIGN", "#LOSE"]);
    let o = &outcomes[0];
    assert_eq!((o.result.as_str(), o.our_side), ("#LOSE", 1));
    let record = parse_csa_bytes(&std::fs::read(&o.record).unwrap()).unwrap();
    assert_eq!(record.result(), GameResult::BlackWin);
    assert_eq!(record.main_moves().count(), 1);
}

#[test]
fn stops_at_the_servers_move_limit_and_records_a_draw() {
    // Max_Moves 4 with two moves in the summary: we play the third, the
    // opponent the fourth, and then it is our turn but no move may follow.
    let game = Game {
        your_turn: '+',
        position: vec!["PI", "+", "+2726FU,T3", "-8384FU,T2"],
        total: 60,
        byoyomi: 0,
        opponent: vec!["-3334FU", "-8485FU"],
        opponent_ms: 0,
        auto_moves: 0,
        max_moves: 4,
    };
    let (seen, outcomes, dir) = run(
        game,
        OnGo::Script(&["2g2f", "8c8d", "7g7f", "3c3d", "6i7h"]),
    );
    assert_eq!(seen.client_moves.len(), 1, "{seen:?}");
    assert_eq!(seen.endings, ["#MAX_MOVES", "#CENSORED"]);
    let o = &outcomes[0];
    assert_eq!(
        (o.result.as_str(), o.reasons.clone(), o.plies),
        ("#CENSORED", vec!["#MAX_MOVES".to_string()], 4)
    );
    let log = std::fs::read_to_string(dir.path().join("eng.sh.in")).unwrap();
    assert!(log.contains("gameover draw"), "{log}");
    let record = parse_csa_bytes(&std::fs::read(&o.record).unwrap()).unwrap();
    assert_eq!(record.main_moves().count(), 4);
    // The record says %HIKIWAKE, which rsshogi reads as its generic draw.
    assert_eq!(record.result(), GameResult::DrawByImpasse);
}

#[test]
fn a_hung_engine_does_not_lose_on_time() {
    // Byoyomi 2 s; the engine sleeps 5 s and ignores `stop`. The client stops
    // waiting before the byoyomi runs out and sends a legal move itself.
    let game = Game {
        your_turn: '+',
        position: vec!["PI", "+"],
        total: 0,
        byoyomi: 2,
        opponent: vec![],
        opponent_ms: 0,
        auto_moves: 0,
        max_moves: 256,
    };
    let (seen, outcomes, _dir) = run(game, OnGo::Sleep(5, &["7g7f"]));
    assert!(!seen.time_up, "{seen:?}");
    assert_eq!(seen.client_moves.len(), 1);
    assert!(seen.client_moves[0].1 <= 2);
    assert_eq!(outcomes[0].fallback_moves, 1);
    assert_eq!(outcomes[0].result, "#WIN");
}

#[test]
fn wrong_password_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let spec = script_engine(dir.path(), "eng", OnGo::Resign);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let game = Game {
        your_turn: '+',
        position: vec!["PI", "+"],
        total: 10,
        byoyomi: 0,
        opponent: vec![],
        opponent_ms: 0,
        auto_moves: 0,
        max_moves: 256,
    };
    let server = std::thread::spawn(move || serve(listener, game));
    let mut opts = client_options(port, spec, &dir.path().join("out"));
    opts.password = "wrong".into();
    let err = run_csa(&opts).unwrap_err();
    assert_eq!(err.to_string(), "login refused: LOGIN:incorrect");
    server.join().unwrap();
}

#[test]
fn niwatori_itself_plays_through_the_bridge() {
    // The default engine (niwatori `material`) against the server's first-legal-move
    // opponent for a few moves, at 1 s byoyomi.
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let game = Game {
        your_turn: '-',
        position: vec!["PI", "+"],
        total: 0,
        byoyomi: 1,
        opponent: vec![],
        opponent_ms: 0,
        auto_moves: 4,
        max_moves: 256,
    };
    let server = std::thread::spawn(move || serve(listener, game));
    let mut opts = client_options(
        port,
        EngineSpec::parse("material").unwrap(),
        &dir.path().join("out"),
    );
    opts.margin_ms = 300;
    let outcomes = run_csa(&opts).unwrap();
    let seen = server.join().unwrap();
    assert!(!seen.time_up, "{seen:?}");
    assert_eq!(seen.client_moves.len(), 4);
    assert!(
        seen.client_moves
            .iter()
            .all(|(l, t)| l.starts_with('-') && *t <= 1),
        "{seen:?}"
    );
    assert_eq!(outcomes[0].fallback_moves, 0);
    assert_eq!(outcomes[0].result, "#WIN");
    let record = parse_csa_bytes(&std::fs::read(&outcomes[0].record).unwrap()).unwrap();
    assert_eq!(record.main_moves().count(), 8);
    assert_eq!(record.result(), GameResult::WhiteWin);
}

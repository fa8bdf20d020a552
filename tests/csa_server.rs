//! `niwatori csa` against the real CSA shogi-server, the Ruby server that
//! floodgate runs (`../shared/tools/shogi-server`, GPL, run as a separate
//! process): two clients are paired on it and play until the server ends
//! the game; their records must agree with the server's own.

mod common;
mod required;

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rsshogi::records::formats::csa::parse_csa_bytes;

/// A shogi-server running in its own copy of the server's folder.
struct Server {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

impl Server {
    /// Starts the server with floodgate's current rule (no least time per
    /// move) and a move limit; `None` only when the skip is asked for.
    fn start(max_moves: u32) -> Option<Server> {
        let ruby = required::tool("ruby")?;
        let source = common::shared("tools/shogi-server");
        assert!(
            source.join("shogi-server").is_file(),
            "{} is missing: the CSA shogi-server comes with ../shared",
            source.display()
        );
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("shogi-server");
        copy_dir(&source, &root);
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = std::fs::File::create(dir.path().join("server.log")).unwrap();
        let child = Command::new(ruby)
            .current_dir(&root)
            .args(["shogi-server", "--least-time-per-move", "0", "--max-moves"])
            .arg(max_moves.to_string())
            .args(["test", &port.to_string()])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let server = Server { child, port, dir };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "shogi-server did not listen on port {port} within 30 s (it needs Debian's ruby \
                 and ruby-webrick: `bash scripts/setup.sh`); its log:\n{}",
                server.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(server)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// The game records the server wrote (under YYYY/MM/DD/).
    fn records(&self) -> Vec<PathBuf> {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|e| e == "csa") {
                    out.push(path);
                }
            }
        }
        let mut out = Vec::new();
        for entry in std::fs::read_dir(self.dir.path().join("shogi-server")).unwrap() {
            let path = entry.unwrap().path();
            // Year folders only: the server's sources hold sample records.
            if path.is_dir()
                && path
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("20")
            {
                walk(&path, &mut out);
            }
        }
        out
    }
}

/// Starts `niwatori csa` for `user` on `game`, writing into `out`.
fn client(server: &Server, user: &str, game: &str, out: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_niwatori"))
        .args(["csa", "--host", "127.0.0.1", "--port"])
        .arg(server.port.to_string())
        .args(["--user", user, "--password", "pw", "--game", game, "--out"])
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Plays one game between two niwatori clients writing under `dir`;
/// returns the server's record text and both clients' records.
fn play(server: &Server, game: &str, dir: &Path) -> (String, [PathBuf; 2]) {
    let outs = [dir.join("alice"), dir.join("bob")];
    let children = [
        client(server, "alice", game, &outs[0]),
        client(server, "bob", game, &outs[1]),
    ];
    for (child, name) in children.into_iter().zip(["alice", "bob"]) {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{name}'s client failed: {}\n{}\nserver log:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            server.log()
        );
    }
    let records = server.records();
    assert_eq!(records.len(), 1, "{records:?}\n{}", server.log());
    let ours = outs.map(|o| {
        let found: Vec<PathBuf> = std::fs::read_dir(&o)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "csa"))
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        found[0].clone()
    });
    (std::fs::read_to_string(&records[0]).unwrap(), ours)
}

fn moves_of(text: &str) -> Vec<String> {
    let record = parse_csa_bytes(text.as_bytes()).unwrap();
    record.main_moves().map(|m| m.mv().to_usi()).collect()
}

/// The server's `T` line after each move: the seconds it charged.
fn charged_seconds(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| l.strip_prefix('T'))
        .map(|t| t.trim().parse().unwrap())
        .collect()
}

#[test]
fn two_clients_play_a_game_to_the_servers_move_limit_and_keep_its_record() {
    let Some(server) = Server::start(24) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (server_record, ours) = play(&server, "test-30-1", dir.path());
    let server_moves = moves_of(&server_record);
    assert_eq!(server_moves.len(), 24, "{server_record}");
    // The server ends the game as a draw by the move limit.
    assert!(
        server_record.contains("'summary:max_moves:alice draw:bob draw")
            || server_record.contains("'summary:max_moves:bob draw:alice draw"),
        "{server_record}"
    );
    for path in &ours {
        let text = std::fs::read_to_string(path).unwrap();
        assert_eq!(moves_of(&text), server_moves, "{}", path.display());
        let transcript = std::fs::read_to_string(path.with_extension("log")).unwrap();
        assert!(transcript.contains("< #MAX_MOVES"), "{transcript}");
        assert!(transcript.contains("< #CENSORED"), "{transcript}");
        // Nothing was sent after the limit but the logout.
        let after = transcript.split("< #CENSORED").nth(1).unwrap();
        assert!(
            after
                .lines()
                .all(|l| !l.contains("> +") && !l.contains("> -")),
            "{transcript}"
        );
    }
}

#[test]
fn at_floodgates_600_plus_10_no_move_spends_over_3_percent_of_the_main_time() {
    let Some(server) = Server::start(6) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (server_record, _) = play(&server, "test-600-10", dir.path());
    let charged = charged_seconds(&server_record);
    assert_eq!(charged.len(), 6, "{server_record}");
    // 3 % of 600 s is 18 s; the engine aims at 10 s (a 60th of the main
    // time, and not under the byoyomi), so no move is hurried either.
    for (i, &t) in charged.iter().enumerate() {
        assert!(
            (5..=18).contains(&t),
            "move {} took {t} s: {charged:?}",
            i + 1
        );
    }
}

//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// `../shared` beside the repository.
pub fn shared(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(path)
}

/// Rows of `positions/mate.tsv`: (sfen, answer pv, plies).
pub fn mate_problems(plies: u32) -> Vec<(String, Vec<String>, u32)> {
    let text = std::fs::read_to_string(shared("positions/mate.tsv")).expect("shared mate.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let n: u32 = f.get(2)?.parse().ok()?;
            (n == plies).then(|| {
                (
                    f[0].to_string(),
                    f[1].split_whitespace().map(String::from).collect(),
                    n,
                )
            })
        })
        .collect()
}

/// Asserts that `pv` is a line of legal moves from `pos` that ends with the
/// defender mated.
pub fn assert_pv_mates(sfen: &str, pos: &rsshogi::board::Position, pv: &[rsshogi::types::Move32]) {
    let mut p = pos.clone();
    for mv in pv {
        assert!(
            p.is_legal_move32(*mv),
            "{sfen}: illegal pv move {}",
            mv.to_usi()
        );
        p.apply_move32(*mv);
    }
    assert!(p.is_mated(), "{sfen}: pv does not end in mate");
}

/// The niwatori binary speaking USI, read line by line on a thread.
pub struct UsiProcess {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl UsiProcess {
    pub fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_niwatori"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("niwatori starts");
        let stdin = child.stdin.take().unwrap();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
        }
    }

    pub fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Lines up to and including the first that starts with `prefix`.
    pub fn until(&mut self, prefix: &str, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let done = line.starts_with(prefix);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                Err(_) => {
                    panic!("no line starting with {prefix:?} within {timeout:?}; got {seen:?}")
                }
            }
        }
    }

    /// Every line that arrives within `wait`.
    pub fn lines_for(&mut self, wait: Duration) -> Vec<String> {
        let deadline = Instant::now() + wait;
        let mut seen = Vec::new();
        while let Ok(line) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            seen.push(line);
        }
        seen
    }

    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    pub fn quit(mut self) {
        self.send("quit");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        panic!("niwatori did not quit");
    }
}

/// Runs a command that must succeed (a reference tool such as
/// `liblinear-train`), showing its stderr if it does not.
pub fn run(cmd: &mut Command) {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The numbers of a `liblinear-predict` output file, one per line.
pub fn predictions(path: &Path) -> Vec<f64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

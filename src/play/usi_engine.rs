//! A USI engine run as a child process.
//!
//! [`UsiEngine::start`] performs the `usi`/`usiok` handshake, sends the SPEC's
//! `setoption`s and waits for `readyok`. [`UsiEngine::search`] sends a `position`
//! and a `go` line and collects `info` lines until `bestmove`, sending `stop` when a
//! deadline passes. A reader thread owns the engine's stdout, so every wait has a
//! timeout and a dead or hung engine is reported as an error, never a hang.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use thiserror::Error;

use super::spec::{EngineSpec, Program};

/// How long an engine may take to answer `usi` and `isready`.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// Errors from talking to a USI engine.
#[derive(Debug, Error)]
pub enum UsiError {
    #[error("cannot start engine {label} ({program}): {source}")]
    Spawn {
        label: String,
        program: String,
        source: std::io::Error,
    },
    #[error("engine {label} exited (while {doing}){stderr}")]
    Exited {
        label: String,
        doing: String,
        stderr: String,
    },
    #[error("engine {label} did not answer {waiting_for} within {secs:.1} s")]
    Timeout {
        label: String,
        waiting_for: String,
        secs: f64,
    },
    #[error("engine {label} rejected its options: {message}")]
    OptionRejected { label: String, message: String },
    #[error("engine {label} has no option {name:?} (it offers: {offered})")]
    NoSuchOption {
        label: String,
        name: String,
        offered: String,
    },
}

/// A score as the engine reported it, from the side to move's view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// Mate in N plies; negative when the side to move is mated.
    Mate(i32),
}

impl Score {
    /// Centipawns, with mates mapped to ±(32000 − plies) for records.
    pub fn to_cp(self) -> i32 {
        match self {
            Score::Cp(v) => v,
            Score::Mate(n) if n >= 0 => 32000 - n,
            Score::Mate(n) => -32000 - n,
        }
    }
}

/// The last search information seen before `bestmove`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchInfo {
    pub score: Option<Score>,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    /// Principal variation in USI notation.
    pub pv: Vec<String>,
}

impl SearchInfo {
    /// Folds one `info` line into the running information.
    pub fn update(&mut self, line: &str) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let mut i = 1;
        while i < words.len() {
            match words[i] {
                "depth" => self.depth = words.get(i + 1).and_then(|w| w.parse().ok()),
                "nodes" => self.nodes = words.get(i + 1).and_then(|w| w.parse().ok()),
                "score" => {
                    let kind = words.get(i + 1).copied();
                    let value = words.get(i + 2).copied().unwrap_or("");
                    self.score = match kind {
                        Some("cp") => value.parse().ok().map(Score::Cp),
                        Some("mate") => match value {
                            "+" => Some(Score::Mate(1)),
                            "-" => Some(Score::Mate(-1)),
                            v => v.trim_start_matches('+').parse().ok().map(Score::Mate),
                        },
                        _ => self.score,
                    };
                    i += 2;
                }
                "pv" => {
                    self.pv = words[i + 1..].iter().map(|w| w.to_string()).collect();
                    return;
                }
                "string" => return,
                _ => {}
            }
            i += 1;
        }
    }
}

/// What the engine answered with `bestmove`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BestMove {
    /// A move in USI notation (not yet checked for legality).
    Move(String),
    /// `bestmove resign`
    Resign,
    /// `bestmove win` (entering-king declaration)
    Win,
}

/// The result of one `go`.
#[derive(Debug, Clone)]
pub struct SearchResult {
    pub bestmove: BestMove,
    pub info: SearchInfo,
    /// From sending `go` to reading `bestmove`.
    pub elapsed: Duration,
    /// True when the referee had to send `stop`.
    pub stopped: bool,
}

/// A running USI engine.
pub struct UsiEngine {
    label: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    /// The engine's `id name`.
    pub id_name: String,
    /// Names of the options the engine declared.
    pub option_names: Vec<String>,
    /// Quirk from the SPEC: byoyomi to use instead of `go nodes`.
    pub nodes_fallback_byoyomi_ms: Option<u64>,
    /// Quirk from the SPEC: time hidden from the engine on every move.
    pub time_margin_ms: u64,
}

impl UsiEngine {
    /// Starts the engine, handshakes, sets the SPEC's options and waits for `readyok`.
    /// `niwatori_exe` is the binary run for niwatori's own evaluations.
    pub fn start(spec: &EngineSpec, niwatori_exe: &Path) -> Result<UsiEngine, UsiError> {
        let (program, args): (&Path, Vec<&str>) = match &spec.program {
            Program::Niwatori => (niwatori_exe, vec!["usi"]),
            Program::External(p) => (p.as_path(), spec.args.iter().map(|s| s.as_str()).collect()),
        };
        let spawn = || {
            Command::new(program)
                .args(&args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
        };
        // A program written just now can be briefly "busy" while another
        // thread's fork still holds it open for writing: retry a moment.
        let mut result = spawn();
        for _ in 0..20 {
            match &result {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    result = spawn();
                }
                _ => break,
            }
        }
        let mut child = result.map_err(|source| UsiError::Spawn {
            label: spec.label.clone(),
            program: program.display().to_string(),
            source,
        })?;
        let stdin = child.stdin.take().expect("stdin was piped");
        let stdout = child.stdout.take().expect("stdout was piped");
        let stderr = child.stderr.take().expect("stderr was piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&stderr_tail);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                if t.len() == 8 {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        let mut engine = UsiEngine {
            label: spec.label.clone(),
            child,
            stdin,
            lines,
            stderr_tail,
            id_name: String::new(),
            option_names: Vec::new(),
            nodes_fallback_byoyomi_ms: spec.nodes_fallback_byoyomi_ms,
            time_margin_ms: spec.time_margin_ms,
        };
        engine.send("usi")?;
        let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
        loop {
            let line = engine.recv_until(deadline, "usiok")?;
            if line == "usiok" {
                break;
            }
            if let Some(name) = line.strip_prefix("id name ") {
                engine.id_name = name.trim().to_string();
            } else if let Some(rest) = line.strip_prefix("option name ") {
                let name = rest.split(" type ").next().unwrap_or(rest).trim();
                engine.option_names.push(name.to_string());
            }
        }
        for (name, value) in &spec.options {
            let known = name.starts_with("USI_") || engine.option_names.iter().any(|o| o == name);
            if !known {
                return Err(UsiError::NoSuchOption {
                    label: engine.label.clone(),
                    name: name.clone(),
                    offered: engine.option_names.join(", "),
                });
            }
            engine.send(&format!("setoption name {name} value {value}"))?;
        }
        // An engine that reports an error about its options would otherwise play
        // with defaults (e.g. a wrong Eval), silently measuring the wrong thing.
        engine.send("isready")?;
        let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
        loop {
            let line = engine.recv_until(deadline, "readyok")?;
            if line == "readyok" {
                break;
            }
            let lower = line.to_ascii_lowercase();
            if lower.starts_with("info string") && lower.contains("error")
                || lower.starts_with("no such option")
            {
                return Err(UsiError::OptionRejected {
                    label: engine.label.clone(),
                    message: line,
                });
            }
        }
        Ok(engine)
    }

    /// The SPEC label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Sends one line.
    pub fn send(&mut self, line: &str) -> Result<(), UsiError> {
        let ok = writeln!(self.stdin, "{line}")
            .and_then(|_| self.stdin.flush())
            .is_ok();
        if ok {
            Ok(())
        } else {
            Err(self.exited(&format!("writing {line:?}")))
        }
    }

    fn exited(&mut self, doing: &str) -> UsiError {
        // Give the stderr thread a moment to collect the engine's last words.
        std::thread::sleep(Duration::from_millis(50));
        let tail = self.stderr_tail.lock().unwrap_or_else(|e| e.into_inner());
        let stderr = if tail.is_empty() {
            String::new()
        } else {
            format!(
                "; its stderr ended with: {}",
                tail.iter().cloned().collect::<Vec<_>>().join(" | ")
            )
        };
        UsiError::Exited {
            label: self.label.clone(),
            doing: doing.to_string(),
            stderr,
        }
    }

    /// Next line, or `Ok(None)` at the deadline.
    fn try_recv_until(
        &mut self,
        deadline: Instant,
        doing: &str,
    ) -> Result<Option<String>, UsiError> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(line) => Ok(Some(line.trim_end().to_string())),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => {
                Err(self.exited(&format!("waiting for {doing}")))
            }
        }
    }

    fn recv_until(&mut self, deadline: Instant, waiting_for: &str) -> Result<String, UsiError> {
        match self.try_recv_until(deadline, waiting_for)? {
            Some(line) => Ok(line),
            None => Err(UsiError::Timeout {
                label: self.label.clone(),
                waiting_for: waiting_for.to_string(),
                secs: HANDSHAKE_TIMEOUT.as_secs_f64(),
            }),
        }
    }

    /// `isready` … `readyok`.
    pub fn wait_ready(&mut self) -> Result<(), UsiError> {
        self.send("isready")?;
        let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
        while self.recv_until(deadline, "readyok")? != "readyok" {}
        Ok(())
    }

    /// Prepares for a new game: `isready`, then `usinewgame`.
    pub fn new_game(&mut self) -> Result<(), UsiError> {
        self.wait_ready()?;
        self.send("usinewgame")
    }

    /// Sends `position` and `go` and waits for `bestmove`.
    ///
    /// At `stop_after` (if any) the engine is sent `stop`; if it still has not
    /// answered `grace` later, the result is [`UsiError::Timeout`] and the engine
    /// should be discarded.
    pub fn search(
        &mut self,
        position: &str,
        go: &str,
        stop_after: Option<Duration>,
        grace: Duration,
    ) -> Result<SearchResult, UsiError> {
        self.send(position)?;
        self.send(go)?;
        let start = Instant::now();
        let mut info = SearchInfo::default();
        let mut stopped = false;
        let mut deadline = stop_after.map(|d| start + d);
        loop {
            let line = match deadline {
                Some(d) => match self.try_recv_until(d, "bestmove")? {
                    Some(line) => line,
                    None if !stopped => {
                        self.send("stop")?;
                        stopped = true;
                        deadline = Some(Instant::now() + grace);
                        continue;
                    }
                    None => {
                        return Err(UsiError::Timeout {
                            label: self.label.clone(),
                            waiting_for: "bestmove after stop".into(),
                            secs: start.elapsed().as_secs_f64(),
                        });
                    }
                },
                None => match self.lines.recv() {
                    Ok(line) => line.trim_end().to_string(),
                    Err(_) => return Err(self.exited("searching")),
                },
            };
            if line.starts_with("info ") {
                info.update(&line);
            } else if let Some(rest) = line.strip_prefix("bestmove") {
                let elapsed = start.elapsed();
                let mv = rest.split_whitespace().next().unwrap_or("");
                let bestmove = match mv {
                    "resign" => BestMove::Resign,
                    "win" => BestMove::Win,
                    m => BestMove::Move(m.to_string()),
                };
                return Ok(SearchResult {
                    bestmove,
                    info,
                    elapsed,
                    stopped,
                });
            }
        }
    }

    /// Tells the engine the game ended: `gameover win|lose|draw`.
    pub fn game_over(&mut self, result: &str) -> Result<(), UsiError> {
        self.send(&format!("gameover {result}"))
    }

    /// Sends `quit` and waits briefly for the process to end, then kills it.
    pub fn quit(mut self) {
        let _ = self.send("quit");
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for UsiEngine {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lines_are_folded() {
        let mut i = SearchInfo::default();
        i.update("info depth 6 seldepth 6 multipv 1 score cp -277 upperbound nodes 1000 nps 1 time 7 pv 7i7h 1c1d");
        assert_eq!(i.score, Some(Score::Cp(-277)));
        assert_eq!(i.depth, Some(6));
        assert_eq!(i.nodes, Some(1000));
        assert_eq!(i.pv, vec!["7i7h", "1c1d"]);
        i.update("info string hello depth 99");
        assert_eq!(i.depth, Some(6));
        i.update("info depth 7 score mate -3 pv 5a4a");
        assert_eq!(i.score, Some(Score::Mate(-3)));
        assert_eq!(Score::Mate(-3).to_cp(), -31997);
        i.update("info score mate + pv 5a4a");
        assert_eq!(i.score, Some(Score::Mate(1)));
    }
}

//! The USI protocol front-end: what a shogi GUI or tournament runner talks to.
//!
//! Commands are read line by line from stdin; the search runs on its own
//! thread so that `stop` and `ponderhit` are heard at once. Malformed input
//! is answered with `info string error: …` and the engine keeps running.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::thread::JoinHandle;

use rsshogi::board::{Position, STARTPOS_SFEN, position_from_sfen};
use rsshogi::types::{EnteringKingRule, Move32};

use crate::eval::{AntiInaniwa, EvalSpec, Evaluator, Learned, Material, Noisy, inaniwa};
use crate::opening::random_move;
use crate::policy::PolicyModel;
use crate::random::Rng;
use crate::search::mate::{self, MateAnswer};
use crate::search::{Control, Info, Limits, SearchMemory, SearchOptions, score, think_with};
use crate::tt::TranspositionTable;

/// Writes one protocol line to stdout and flushes it.
pub fn send(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn error(message: &str) {
    send(&format!("info string error: {message}"));
}

/// The engine's USI options.
#[derive(Clone, Debug)]
pub struct Options {
    pub hash_mb: usize,
    pub threads: usize,
    pub eval: String,
    pub eval_file: String,
    /// A move policy ordering quiet moves (`niwatori policy train`); empty: none.
    pub policy_file: String,
    pub eval_noise: i32,
    pub random_opening_ply: u32,
    pub anti_inaniwa: bool,
    pub move_overhead_ms: u64,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            hash_mb: 64,
            threads: 1,
            eval: "material".into(),
            eval_file: String::new(),
            policy_file: String::new(),
            eval_noise: 0,
            random_opening_ply: 0,
            anti_inaniwa: true,
            move_overhead_ms: 50,
        }
    }
}

/// The evaluations `Eval` accepts.
pub const EVALS: &[&str] = crate::eval::EVAL_NAMES;

impl Options {
    fn usi_lines() -> Vec<String> {
        let d = Self::default();
        let evals: String = EVALS.iter().map(|e| format!(" var {e}")).collect();
        vec![
            format!(
                "option name USI_Hash type spin default {} min 1 max 65536",
                d.hash_mb
            ),
            "option name USI_Ponder type check default false".into(),
            format!(
                "option name Threads type spin default {} min 1 max {}",
                d.threads,
                crate::search::MAX_THREADS
            ),
            format!("option name Eval type combo default {}{evals}", d.eval),
            "option name EvalFile type string default <empty>".into(),
            "option name PolicyFile type string default <empty>".into(),
            "option name EvalNoise type spin default 0 min 0 max 1000".into(),
            "option name RandomOpeningPly type spin default 0 min 0 max 100".into(),
            "option name AntiInaniwa type check default true".into(),
            format!(
                "option name MoveOverhead type spin default {} min 0 max 10000",
                d.move_overhead_ms
            ),
        ]
    }

    /// Applies `setoption name NAME value VALUE`.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        fn number<T>(name: &str, value: &str, min: T, max: T) -> Result<T, String>
        where
            T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
        {
            let v: T = value
                .parse()
                .map_err(|_| format!("option {name}: {value:?} is not a number"))?;
            if v < min || v > max {
                return Err(format!("option {name}: {value} is outside {min}..={max}"));
            }
            Ok(v)
        }
        fn boolean(name: &str, value: &str) -> Result<bool, String> {
            match value {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(format!("option {name}: {value:?} is not true or false")),
            }
        }
        match name {
            "USI_Hash" | "Hash" => self.hash_mb = number(name, value, 1, 65536)?,
            "USI_Ponder" => {
                boolean(name, value)?;
            }
            "Threads" => self.threads = number(name, value, 1, crate::search::MAX_THREADS)?,
            "Eval" => {
                if !EVALS.contains(&value) {
                    return Err(format!(
                        "option Eval: unknown evaluation {value:?} (one of {})",
                        EVALS.join(", ")
                    ));
                }
                self.eval = value.to_string();
            }
            "EvalFile" => {
                self.eval_file = if value == "<empty>" {
                    String::new()
                } else {
                    value.to_string()
                }
            }
            "PolicyFile" => {
                self.policy_file = if value == "<empty>" {
                    String::new()
                } else {
                    value.to_string()
                }
            }
            "EvalNoise" => self.eval_noise = number(name, value, 0, 1000)?,
            "RandomOpeningPly" => self.random_opening_ply = number(name, value, 0, 100)?,
            "AntiInaniwa" => self.anti_inaniwa = boolean(name, value)?,
            "MoveOverhead" => self.move_overhead_ms = number(name, value, 0, 10000)?,
            _ => return Err(format!("unknown option {name:?}")),
        }
        Ok(())
    }
}

/// Builds the evaluation `Eval` names (loading `EvalFile` for `learned`,
/// or reusing `loaded` when it is that file), wrapped in noise when asked.
pub fn base_evaluator(
    options: &Options,
    loaded: &mut Option<(String, Arc<Learned>)>,
) -> Result<Arc<dyn Evaluator>, String> {
    let base: Arc<dyn Evaluator> = match EvalSpec::from_usi(&options.eval, &options.eval_file)? {
        EvalSpec::Learned(path) => match loaded {
            Some((loaded_path, model)) if *loaded_path == options.eval_file => model.clone(),
            _ => {
                let model = Arc::new(Learned::load(&path).map_err(|e| e.to_string())?);
                *loaded = Some((options.eval_file.clone(), model.clone()));
                model
            }
        },
        spec => spec.load().map_err(|e| e.to_string())?,
    };
    Ok(if options.eval_noise > 0 {
        Arc::new(Noisy {
            inner: base,
            amplitude: options.eval_noise,
            seed: Rng::from_entropy().next_u64(),
        })
    } else {
        base
    })
}

/// Parses `position startpos|sfen SFEN [moves M…]` (the words after `position`).
/// Returns the position with its history and whether the game began at the
/// standard start position, plus the number of moves played.
pub fn parse_position(words: &[&str]) -> Result<(Position, bool, usize), String> {
    let (sfen, rest) = match words.first() {
        Some(&"startpos") => (STARTPOS_SFEN.to_string(), &words[1..]),
        Some(&"sfen") => {
            let end = words
                .iter()
                .position(|&w| w == "moves")
                .unwrap_or(words.len());
            if end < 5 {
                return Err("position sfen needs board, side, hands and move number".into());
            }
            (words[1..end].join(" "), &words[end..])
        }
        _ => return Err("position needs startpos or sfen".into()),
    };
    let mut pos = position_from_sfen(&sfen).map_err(|e| format!("bad sfen {sfen:?}: {e}"))?;
    crate::records::check_playable(&pos)
        .map_err(|e| format!("sfen {sfen:?} is not a playable position: {e}"))?;
    pos.set_entering_king_rule(EnteringKingRule::Point27);
    let from_start = sfen
        .split_whitespace()
        .take(3)
        .eq(STARTPOS_SFEN.split_whitespace().take(3));
    let moves = match rest.first() {
        None => &[][..],
        Some(&"moves") => &rest[1..],
        Some(other) => return Err(format!("position: expected 'moves', found {other:?}")),
    };
    for (i, usi) in moves.iter().enumerate() {
        let mv = rsshogi::board::move_from_usi(&pos, usi)
            .filter(|&mv| pos.is_legal_move32(mv))
            .ok_or_else(|| {
                format!(
                    "illegal move {usi:?} at move {} of the position command",
                    i + 1
                )
            })?;
        pos.apply_move32(mv);
    }
    Ok((pos, from_start, moves.len()))
}

/// Parses the words after `go`.
pub fn parse_go(words: &[&str]) -> Result<(Limits, Option<Option<u64>>), String> {
    let mut limits = Limits::default();
    let mut mate = None;
    let mut i = 0;
    let value = |i: usize| -> Result<u64, String> {
        let w = words
            .get(i + 1)
            .ok_or_else(|| format!("go {}: missing value", words[i]))?;
        w.parse::<u64>()
            .map_err(|_| format!("go {}: {w:?} is not a number", words[i]))
    };
    while i < words.len() {
        match words[i] {
            "btime" => limits.time[0] = Some(value(i)?),
            "wtime" => limits.time[1] = Some(value(i)?),
            "binc" => limits.inc[0] = value(i)?,
            "winc" => limits.inc[1] = value(i)?,
            "byoyomi" => limits.byoyomi = value(i)?,
            "movetime" => limits.movetime = Some(value(i)?),
            "nodes" => limits.nodes = Some(value(i)?),
            "depth" => limits.depth = Some(value(i)?.clamp(1, 100) as u32),
            "mate" => {
                mate = Some(match words.get(i + 1) {
                    Some(&"infinite") | None => None,
                    Some(_) => Some(value(i)?),
                });
            }
            "infinite" => {
                limits.infinite = true;
                i += 1;
                continue;
            }
            "ponder" => {
                limits.ponder = true;
                i += 1;
                continue;
            }
            other => return Err(format!("go: unknown parameter {other:?}")),
        }
        i += 2;
    }
    Ok((limits, mate))
}

/// The USI engine: options, the current position and the running search.
pub struct Engine {
    options: Options,
    tt: Arc<TranspositionTable>,
    /// Move-ordering history kept between the moves of a game.
    memory: Arc<SearchMemory>,
    tt_mb: usize,
    eval: Arc<dyn Evaluator>,
    loaded_model: Option<(String, Arc<Learned>)>,
    /// The `PolicyFile` loaded, and from which path.
    policy: Option<(String, Arc<PolicyModel>)>,
    position: Position,
    /// False after a refused `position` command until one is accepted:
    /// `go` then answers without searching the stale position.
    position_accepted: bool,
    from_start: bool,
    moves_played: usize,
    control: Arc<Control>,
    search: Option<JoinHandle<()>>,
    rng: Rng,
}

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

impl Engine {
    pub fn new() -> Self {
        let options = Options::default();
        let mut position = rsshogi::board::hirate_position();
        position.set_entering_king_rule(EnteringKingRule::Point27);
        Self {
            tt: Arc::new(TranspositionTable::new(options.hash_mb)),
            memory: Arc::new(SearchMemory::new()),
            tt_mb: options.hash_mb,
            eval: Arc::new(Material),
            loaded_model: None,
            policy: None,
            options,
            position,
            position_accepted: true,
            from_start: true,
            moves_played: 0,
            control: Arc::new(Control::new()),
            search: None,
            rng: Rng::from_entropy(),
        }
    }

    fn wait_search(&mut self) {
        if let Some(handle) = self.search.take() {
            let _ = handle.join();
        }
    }

    fn stop_search(&mut self) {
        self.control.stop();
        self.wait_search();
    }

    /// Handles one command line; returns false on `quit`.
    pub fn command(&mut self, line: &str) -> bool {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(&cmd) = words.first() else {
            return true;
        };
        let args = &words[1..];
        match cmd {
            "usi" => {
                send(&format!("id name niwatori {}", env!("CARGO_PKG_VERSION")));
                send("id author the niwatori developers");
                for l in Options::usi_lines() {
                    send(&l);
                }
                send("usiok");
            }
            "isready" => {
                self.wait_search_if_finished();
                if let Err(e) = self.prepare() {
                    error(&e);
                }
                send("readyok");
            }
            "setoption" => {
                let name_at = args.iter().position(|&w| w == "name");
                let value_at = args.iter().position(|&w| w == "value");
                match name_at {
                    Some(n) => {
                        let name = args[n + 1..value_at.unwrap_or(args.len())].join(" ");
                        let value = value_at.map_or(String::new(), |v| args[v + 1..].join(" "));
                        if let Err(e) = self.options.set(&name, &value) {
                            error(&e);
                        }
                    }
                    None => error("setoption needs 'name NAME [value VALUE]'"),
                }
            }
            "usinewgame" => {
                self.stop_search();
                if let Err(e) = self.prepare() {
                    error(&e);
                }
                self.tt.clear();
                self.memory.clear();
            }
            "position" => {
                self.stop_search();
                match parse_position(args) {
                    Ok((pos, from_start, moves)) => {
                        self.position = pos;
                        self.position_accepted = true;
                        self.from_start = from_start;
                        self.moves_played = moves;
                    }
                    Err(e) => {
                        self.position_accepted = false;
                        error(&e);
                    }
                }
            }
            "go" => {
                self.stop_search();
                let refused = "go: no position to search (the last position command was refused)";
                match parse_go(args) {
                    Ok((_, mate)) if !self.position_accepted => {
                        error(refused);
                        send(if mate.is_some() {
                            "checkmate nomate"
                        } else {
                            "bestmove resign"
                        });
                    }
                    Ok((limits, None)) => self.go(limits),
                    Ok((_, Some(ms))) => self.go_mate(ms),
                    Err(e) => error(&e),
                }
            }
            "stop" => self.stop_search(),
            "ponderhit" => self.control.ponderhit(),
            "gameover" => self.stop_search(),
            "quit" => {
                self.stop_search();
                return false;
            }
            _ => error(&format!("unknown command {line:?}")),
        }
        true
    }

    fn wait_search_if_finished(&mut self) {
        if self.search.as_ref().is_some_and(|h| h.is_finished()) {
            self.wait_search();
        }
    }

    /// Applies options that need work: the table size and the evaluation.
    fn prepare(&mut self) -> Result<(), String> {
        let mut errors = Vec::new();
        if self.tt_mb != self.options.hash_mb {
            match TranspositionTable::try_new(self.options.hash_mb) {
                Some(tt) => {
                    self.tt = Arc::new(tt);
                    self.tt_mb = self.options.hash_mb;
                }
                None => {
                    let wanted = std::mem::replace(&mut self.options.hash_mb, self.tt_mb);
                    errors.push(format!(
                        "USI_Hash {wanted} MB cannot be allocated on this machine; the table stays at {} MB",
                        self.tt_mb
                    ));
                }
            }
        }
        match self.options.policy_file.as_str() {
            "" => self.policy = None,
            path if self.policy.as_ref().is_some_and(|(p, _)| p == path) => {}
            path => match PolicyModel::load(std::path::Path::new(path)) {
                Ok((model, _)) => self.policy = Some((path.to_string(), Arc::new(model))),
                Err(e) => {
                    self.policy = None;
                    errors.push(format!("PolicyFile: {e:#}; searching without a policy"));
                }
            },
        }
        match base_evaluator(&self.options, &mut self.loaded_model) {
            Ok(eval) => self.eval = eval,
            Err(e) => {
                self.eval = Arc::new(Material);
                errors.push(format!("{e}; playing with Eval material"));
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }

    fn evaluator_for_this_move(&self) -> Arc<dyn Evaluator> {
        let us = self.position.turn();
        if self.options.anti_inaniwa && inaniwa::is_inaniwa(&self.position, us.flip()) {
            send("info string the opponent plays Inaniwa: attacking bonuses on");
            Arc::new(AntiInaniwa {
                inner: self.eval.clone(),
                us,
            })
        } else {
            self.eval.clone()
        }
    }

    fn go(&mut self, limits: Limits) {
        if self.position.declaration_win_move() == Move32::MOVE_WIN {
            send("bestmove win");
            return;
        }
        if self.from_start
            && (self.moves_played as u32) < self.options.random_opening_ply
            && !limits.ponder
            && let Some(mv) = random_move(&mut self.position, &mut self.rng)
        {
            send(&format!(
                "info string random opening move {}",
                self.moves_played + 1
            ));
            send(&format!("bestmove {}", mv.to_usi()));
            return;
        }
        self.control = Arc::new(Control::new());
        let control = self.control.clone();
        let tt = self.tt.clone();
        let eval = self.evaluator_for_this_move();
        let pos = self.position.clone();
        let options = SearchOptions {
            threads: self.options.threads,
            move_overhead_ms: self.options.move_overhead_ms,
            memory: Some(self.memory.clone()),
            policy: self.policy.as_ref().map(|(_, p)| p.clone()),
        };
        let handle = std::thread::Builder::new()
            .name("search".into())
            .stack_size(64 << 20)
            .spawn(move || {
                let result = think_with(
                    &pos,
                    eval.as_ref(),
                    &tt,
                    &limits,
                    &options,
                    &control,
                    &mut |info| {
                        send(&info_line(info));
                    },
                );
                match result.best_move {
                    None => send("bestmove resign"),
                    Some(best) => match result.ponder_move {
                        Some(p) => {
                            send(&format!("bestmove {} ponder {}", best.to_usi(), p.to_usi()))
                        }
                        None => send(&format!("bestmove {}", best.to_usi())),
                    },
                }
            })
            .expect("spawning the search thread");
        self.search = Some(handle);
    }

    fn go_mate(&mut self, limit_ms: Option<u64>) {
        self.control = Arc::new(Control::new());
        let control = self.control.clone();
        let pos = self.position.clone();
        let handle = std::thread::Builder::new()
            .name("mate".into())
            .stack_size(64 << 20)
            .spawn(move || {
                let answer = mate::solve(&pos, limit_ms, 127, &control);
                match answer {
                    MateAnswer::Mate(pv) => {
                        let moves: Vec<String> = pv.iter().map(|m| m.to_usi()).collect();
                        send(&format!("checkmate {}", moves.join(" ")));
                    }
                    MateAnswer::NoMate => send("checkmate nomate"),
                    MateAnswer::Timeout => send("checkmate timeout"),
                }
            })
            .expect("spawning the mate search thread");
        self.search = Some(handle);
    }
}

/// The `info` line of a completed iteration.
pub fn info_line(info: &Info) -> String {
    let pv: Vec<String> = info.pv.iter().map(|m| m.to_usi()).collect();
    format!(
        "info depth {} seldepth {} time {} nodes {} nps {} hashfull {} score {} pv {}",
        info.depth,
        info.seldepth.max(info.depth),
        info.time_ms,
        info.nodes,
        info.nps,
        info.hashfull,
        score::to_usi(info.score),
        pv.join(" ")
    )
}

/// Runs the USI loop on stdin until `quit` or end of input.
pub fn run() {
    let mut engine = Engine::new();
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if !engine.command(line.trim()) {
            return;
        }
    }
    engine.stop_search();
}

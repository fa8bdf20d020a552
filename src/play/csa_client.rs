//! The CSA network protocol (shogi-server / floodgate), played through a USI engine.
//!
//! One game: connect, `LOGIN` (the password field is `GAMENAME,PASSWORD` when a
//! game name is given), read `Game_Summary` (position, moves already played, time
//! rules), `AGREE`, wait for `START`, then exchange moves. The server echoes every
//! move with its time (`+7776FU,T12`); the client keeps both clocks from those
//! echoes and stops its engine early enough never to lose on time while the rules
//! allow a move (if the engine still does not answer, a legal move is sent anyway).
//! Endings: `%TORYO` (engine resigns or is mated), `%KACHI` (engine declares), and
//! every `#` line from the server, then `#WIN`/`#LOSE`/`#DRAW`/`#CENSORED`/`#CHUDAN`.
//! While idle the client sends an empty line as keep-alive. After the game it sends
//! `LOGOUT` and waits briefly for `LOGOUT:completed`, tolerating a closed socket.
//! Each game leaves a transcript (`*.log`, password masked) and a CSA record.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use rsshogi::board::Position;
use thiserror::Error;

use super::clock::{Clock, Limit, TimeControl};
use super::csa_record::to_csa;
use super::game::{EndReason, GameRecord, Opening, PlayedMove, legal_move, side_index};
use super::spec::EngineSpec;
use super::usi_engine::{BestMove, UsiEngine, UsiError};
use crate::atomic::write_atomic;

/// Errors of a CSA session.
#[derive(Debug, Error)]
pub enum CsaError {
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        addr: String,
        source: std::io::Error,
    },
    #[error("connection to the server lost while {0}")]
    Disconnected(String),
    #[error("login refused: {0}")]
    Login(String),
    #[error("game rejected: {0}")]
    Rejected(String),
    #[error("bad Game_Summary line {line:?}: {what}")]
    Summary { line: String, what: String },
    #[error("server sent {line:?} which does not fit the game: {what}")]
    Protocol { line: String, what: String },
    #[error("engine: {0}")]
    Engine(#[from] UsiError),
    #[error("writing {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Settings of a CSA session.
#[derive(Debug, Clone)]
pub struct CsaOptions {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    /// Game name (e.g. `floodgate-300-10F`), put before the password.
    pub game: Option<String>,
    pub games: usize,
    pub engine: EngineSpec,
    pub niwatori_exe: PathBuf,
    /// Where transcripts and records go.
    pub out_dir: PathBuf,
    /// Time kept in reserve for network latency, per move.
    pub margin_ms: u64,
    /// Seconds of silence after which an empty keep-alive line is sent.
    pub keepalive_secs: u64,
    /// Send the engine's score and PV with each move (`,'* score pv`), as floodgate allows.
    pub send_pv: bool,
    /// How often to retry connecting before giving up.
    pub connect_retries: u32,
}

/// How one game ended, from our side.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CsaGameOutcome {
    pub game_id: String,
    /// 0 when we played Black (sente).
    pub our_side: usize,
    /// `#WIN`, `#LOSE`, `#DRAW`, `#CENSORED` or `#CHUDAN`.
    pub result: String,
    /// The `#` lines before the result, e.g. `#RESIGN`.
    pub reasons: Vec<String>,
    pub plies: usize,
    pub record: PathBuf,
    pub transcript: PathBuf,
    /// Moves sent without the engine's answer (the engine hung or died).
    pub fallback_moves: usize,
}

/// The parts of a Game_Summary the client uses.
#[derive(Debug, Clone, Default)]
pub struct GameSummary {
    pub game_id: String,
    pub names: [String; 2],
    pub our_side: usize,
    pub unit_ms: u64,
    pub tc: TimeControl,
    pub least_time_ms: u64,
    pub max_moves: Option<u32>,
    /// The CSA position block (P lines, side, and moves already played with times).
    pub position_lines: Vec<String>,
}

fn unit_ms(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
    let n: u64 = if digits.is_empty() {
        1
    } else {
        digits.parse().ok()?
    };
    let mult = match &s[digits.len()..] {
        "sec" => 1000,
        "min" => 60_000,
        "msec" => 1,
        _ => return None,
    };
    n.checked_mul(mult)
}

impl GameSummary {
    /// Parses the lines between `BEGIN Game_Summary` and `END Game_Summary`.
    pub fn parse(lines: &[String]) -> Result<GameSummary, CsaError> {
        let mut s = GameSummary {
            unit_ms: 1000,
            ..Default::default()
        };
        let (mut total, mut byo, mut inc, mut least) = (0u64, 0u64, 0u64, 0u64);
        let mut in_position = false;
        let mut your_turn = None;
        for line in lines {
            let bad = |what: &str| CsaError::Summary {
                line: line.clone(),
                what: what.into(),
            };
            if line == "BEGIN Position" {
                in_position = true;
                continue;
            }
            if line == "END Position" {
                in_position = false;
                continue;
            }
            if in_position {
                s.position_lines.push(line.clone());
                continue;
            }
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let num = || value.trim().parse::<u64>().map_err(|_| bad("not a number"));
            match key {
                "Game_ID" => s.game_id = value.to_string(),
                "Name+" => s.names[0] = value.to_string(),
                "Name-" => s.names[1] = value.to_string(),
                "Your_Turn" => your_turn = Some(value.trim().to_string()),
                "Time_Unit" => {
                    s.unit_ms = unit_ms(value).ok_or_else(|| bad("unknown time unit"))?
                }
                "Total_Time" => total = num()?,
                "Byoyomi" => byo = num()?,
                "Increment" => inc = num()?,
                "Least_Time_Per_Move" => least = num()?,
                "Max_Moves" => {
                    s.max_moves = Some(u32::try_from(num()?).map_err(|_| bad("too large"))?)
                }
                _ => {}
            }
        }
        s.our_side = match your_turn.as_deref() {
            Some("+") => 0,
            Some("-") => 1,
            other => {
                return Err(CsaError::Summary {
                    line: format!("Your_Turn:{}", other.unwrap_or("")),
                    what: "expected + or -".into(),
                });
            }
        };
        let ms = |n: u64, key: &str| {
            n.checked_mul(s.unit_ms).ok_or_else(|| CsaError::Summary {
                line: format!("{key}:{n}"),
                what: "more milliseconds than a clock holds".into(),
            })
        };
        s.tc = TimeControl {
            total_ms: ms(total, "Total_Time")?,
            byoyomi_ms: ms(byo, "Byoyomi")?,
            increment_ms: ms(inc, "Increment")?,
        };
        s.least_time_ms = ms(least, "Least_Time_Per_Move")?;
        Ok(s)
    }
}

/// Text connection with a reader thread, a transcript and keep-alive bookkeeping.
struct Connection {
    stream: TcpStream,
    lines: Receiver<(Instant, String)>,
    transcript: std::fs::File,
    transcript_path: PathBuf,
    started: Instant,
    last_sent: Instant,
    mask: Option<String>,
}

impl Connection {
    fn open(opts: &CsaOptions, transcript_path: PathBuf) -> Result<Connection, CsaError> {
        let addr = format!("{}:{}", opts.host, opts.port);
        let mut attempt = 0;
        let stream = loop {
            match TcpStream::connect(&addr) {
                Ok(s) => break s,
                Err(e) if attempt >= opts.connect_retries => {
                    return Err(CsaError::Connect { addr, source: e });
                }
                Err(e) => {
                    attempt += 1;
                    let wait = Duration::from_secs(1u64 << attempt.min(5));
                    eprintln!(
                        "cannot connect to {addr} ({e}); retry {attempt} in {} s",
                        wait.as_secs()
                    );
                    std::thread::sleep(wait);
                }
            }
        };
        let _ = stream.set_nodelay(true);
        let reader = stream.try_clone().map_err(|e| CsaError::Connect {
            addr: addr.clone(),
            source: e,
        })?;
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(reader).lines() {
                let Ok(line) = line else { break };
                if tx
                    .send((Instant::now(), line.trim_end_matches('\r').to_string()))
                    .is_err()
                {
                    break;
                }
            }
        });
        let transcript =
            std::fs::File::create(&transcript_path).map_err(|source| CsaError::Io {
                path: transcript_path.clone(),
                source,
            })?;
        let now = Instant::now();
        Ok(Connection {
            stream,
            lines,
            transcript,
            transcript_path,
            started: now,
            last_sent: now,
            mask: None,
        })
    }

    fn log(&mut self, dir: &str, line: &str) {
        let mut shown = line.to_string();
        if let Some(m) = &self.mask
            && !m.is_empty()
        {
            shown = shown.replace(m.as_str(), "*****");
        }
        let _ = writeln!(
            self.transcript,
            "{:10.3} {dir} {shown}",
            self.started.elapsed().as_secs_f64()
        );
    }

    fn send(&mut self, line: &str) -> Result<(), CsaError> {
        self.log(">", line);
        self.last_sent = Instant::now();
        let ok = self
            .stream
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|_| self.stream.flush());
        ok.map_err(|_| {
            CsaError::Disconnected(format!(
                "sending {:?}",
                if self.mask.is_some() && line.starts_with("LOGIN") {
                    "LOGIN"
                } else {
                    line
                }
            ))
        })
    }

    /// Renames the transcript to `path`; where it stays if that fails.
    fn keep_transcript(self, path: &std::path::Path) -> PathBuf {
        if std::fs::rename(&self.transcript_path, path).is_ok() {
            path.to_path_buf()
        } else {
            self.transcript_path
        }
    }

    /// The next non-empty line; keep-alive lines are sent while waiting. `None` at `deadline`.
    fn recv(
        &mut self,
        keepalive: Duration,
        deadline: Option<Instant>,
        doing: &str,
    ) -> Result<Option<(Instant, String)>, CsaError> {
        loop {
            let mut wait = keepalive
                .saturating_sub(self.last_sent.elapsed())
                .max(Duration::from_millis(1));
            if let Some(d) = deadline {
                wait = wait.min(d.saturating_duration_since(Instant::now()));
            }
            match self.lines.recv_timeout(wait) {
                Ok((t, line)) => {
                    if line.is_empty() {
                        continue; // the server's keep-alive
                    }
                    self.log("<", &line);
                    return Ok(Some((t, line)));
                }
                Err(RecvTimeoutError::Timeout) => {
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Ok(None);
                    }
                    if self.last_sent.elapsed() >= keepalive {
                        self.send("")?;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.log("!", "connection closed");
                    return Err(CsaError::Disconnected(doing.to_string()));
                }
            }
        }
    }
}

/// Parses `+7776FU,T12` into the move text and the time in units.
fn split_echo(line: &str) -> (&str, Option<u64>) {
    let mut parts = line.split(',');
    let mv = parts.next().unwrap_or("");
    let t = parts
        .find_map(|p| p.strip_prefix('T'))
        .and_then(|t| t.trim().parse().ok());
    (mv, t)
}

/// Replays the Game_Summary position block: the opening and the times already used.
pub fn summary_position(s: &GameSummary) -> Result<(Opening, Position, [u64; 2]), CsaError> {
    let mut text = String::from("V2.2\n");
    let mut used = [0u64; 2];
    let mut moves_text = Vec::new();
    for line in &s.position_lines {
        let (mv, t) = split_echo(line);
        if (mv.starts_with('+') || mv.starts_with('-')) && mv.len() >= 7 {
            moves_text.push(mv.to_string());
            // A server's time is trusted only as far as a clock holds it.
            let side = &mut used[usize::from(mv.starts_with('-'))];
            *side = side.saturating_add(t.unwrap_or(0).saturating_mul(s.unit_ms));
        }
        text.push_str(mv);
        text.push('\n');
    }
    let bad = |what: String| CsaError::Summary {
        line: "BEGIN Position … END Position".into(),
        what,
    };
    let record =
        rsshogi::records::formats::csa::parse_csa_str(&text).map_err(|e| bad(e.to_string()))?;
    let start_sfen = record.init_position_sfen().to_string();
    let moves: Vec<String> = record.main_moves().map(|m| m.mv().to_usi()).collect();
    if moves.len() != moves_text.len() {
        return Err(bad(format!(
            "{} moves listed but {} could be replayed",
            moves_text.len(),
            moves.len()
        )));
    }
    let opening = Opening {
        start_sfen,
        moves,
        source: format!("Game_Summary of {}", s.game_id),
    };
    let mut pos = opening.position().map_err(|e| bad(e.to_string()))?;
    pos.set_entering_king_rule(rsshogi::types::EnteringKingRule::Point27);
    Ok((opening, pos, used))
}

/// A legal move to send when the engine gave none in time.
fn fallback_move(pos: &Position) -> Option<String> {
    let mut list = rsshogi::board::Move32List::new();
    rsshogi::board::generate_legal_all_move32(pos, &mut list);
    list.iter().next().and_then(|m| m.to_csa())
}

/// Plays `opts.games` games, one connection each.
pub fn run_csa(opts: &CsaOptions) -> Result<Vec<CsaGameOutcome>, CsaError> {
    std::fs::create_dir_all(&opts.out_dir).map_err(|source| CsaError::Io {
        path: opts.out_dir.clone(),
        source,
    })?;
    let mut engine: Option<UsiEngine> = None;
    let mut outcomes = Vec::new();
    for n in 0..opts.games {
        let outcome = play_one(opts, n, &mut engine)?;
        eprintln!(
            "game {} as {}: {} {} ({} plies) -> {}",
            outcome.game_id,
            if outcome.our_side == 0 {
                "Black"
            } else {
                "White"
            },
            outcome.reasons.join(" "),
            outcome.result,
            outcome.plies,
            outcome.record.display()
        );
        outcomes.push(outcome);
    }
    if let Some(e) = engine {
        e.quit();
    }
    Ok(outcomes)
}

/// One game on its own connection: log in, agree to the summary's game, play
/// it out, save the record and transcript, log out.
fn play_one(
    opts: &CsaOptions,
    n: usize,
    engine: &mut Option<UsiEngine>,
) -> Result<CsaGameOutcome, CsaError> {
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let session_path = opts.out_dir.join(format!("session-{unix}-{n}.log"));
    let mut conn = Connection::open(opts, session_path)?;
    let keepalive = Duration::from_secs(opts.keepalive_secs.max(1));
    login(&mut conn, opts, keepalive)?;
    let summary = read_summary(&mut conn, keepalive)?;
    let mut game = Game::new(&summary, unix)?;
    if engine.is_none() {
        *engine = Some(UsiEngine::start(&opts.engine, &opts.niwatori_exe)?);
    }
    agree(&mut conn, &summary, keepalive)?;
    let ending = game.play(opts, &mut conn, engine, keepalive)?;
    game.record_ending(&ending);
    if let Some(e) = engine.as_mut()
        && e.game_over(game.result_word()).is_err()
    {
        *engine = None;
    }
    let stem = file_stem(&summary.game_id);
    let record_path = opts.out_dir.join(format!(
        "{}.csa",
        stem.clone().unwrap_or_else(|| format!("game-{unix}-{n}"))
    ));
    game.save(&record_path, &summary.game_id)?;
    logout(&mut conn, keepalive);
    let transcript = conn.keep_transcript(&opts.out_dir.join(format!(
        "{}.log",
        stem.unwrap_or_else(|| format!("session-{unix}-{n}"))
    )));
    Ok(CsaGameOutcome {
        game_id: summary.game_id,
        our_side: game.us,
        result: ending.result,
        reasons: ending.reasons,
        plies: game.plies(),
        record: record_path,
        transcript,
        fallback_moves: game.fallback_moves,
    })
}

/// `LOGIN user [game,]password`; the password is masked in the transcript.
fn login(conn: &mut Connection, opts: &CsaOptions, keepalive: Duration) -> Result<(), CsaError> {
    let password = match &opts.game {
        Some(g) => format!("{g},{}", opts.password),
        None => opts.password.clone(),
    };
    conn.mask = Some(opts.password.clone());
    conn.send(&format!("LOGIN {} {password}", opts.user))?;
    let reply = conn
        .recv(keepalive, None, "waiting for LOGIN reply")?
        .map(|x| x.1)
        .unwrap_or_default();
    if reply != format!("LOGIN:{} OK", opts.user) {
        return Err(CsaError::Login(reply));
    }
    Ok(())
}

/// The lines between `BEGIN Game_Summary` and `END Game_Summary`, parsed.
fn read_summary(conn: &mut Connection, keepalive: Duration) -> Result<GameSummary, CsaError> {
    let mut lines = Vec::new();
    loop {
        let (_, line) = conn
            .recv(keepalive, None, "waiting for Game_Summary")?
            .expect("no deadline");
        match line.as_str() {
            "BEGIN Game_Summary" => continue,
            "END Game_Summary" => break,
            _ => lines.push(line),
        }
    }
    GameSummary::parse(&lines)
}

/// `AGREE`, then `START` (anything else is the server rejecting the game).
fn agree(
    conn: &mut Connection,
    summary: &GameSummary,
    keepalive: Duration,
) -> Result<(), CsaError> {
    conn.send(&format!("AGREE {}", summary.game_id))?;
    let (_, start) = conn
        .recv(keepalive, None, "waiting for START")?
        .expect("no deadline");
    if !start.starts_with("START") {
        let _ = conn.send("LOGOUT");
        return Err(CsaError::Rejected(start));
    }
    Ok(())
}

/// `LOGOUT`; a server that already closed the connection is fine.
fn logout(conn: &mut Connection, keepalive: Duration) {
    if conn.send("LOGOUT").is_ok() {
        let deadline = Instant::now() + Duration::from_secs(5);
        while let Ok(Some((_, line))) = conn.recv(keepalive, Some(deadline), "logging out") {
            if line.starts_with("LOGOUT:") {
                break;
            }
        }
    }
    let _ = conn.stream.shutdown(std::net::Shutdown::Both);
}

/// The game id as a file name (`None` when the server gave none).
fn file_stem(game_id: &str) -> Option<String> {
    let safe: String = game_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_+.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    (!safe.is_empty()).then_some(safe)
}

/// How the server ended the game: the result line and the `#` lines before it.
struct Ending {
    /// `#WIN`, `#LOSE`, `#DRAW`, `#CENSORED` or `#CHUDAN`.
    result: String,
    reasons: Vec<String>,
}

/// The game as it is played: position, clocks and the record being written.
struct Game {
    us: usize,
    unit_ms: u64,
    least_time_ms: u64,
    max_moves: Option<u32>,
    opening: Opening,
    pos: Position,
    clock: Clock,
    record: GameRecord,
    fallback_moves: usize,
}

impl Game {
    fn new(summary: &GameSummary, started_unix: u64) -> Result<Game, CsaError> {
        let (opening, pos, used) = summary_position(summary)?;
        let mut clock = Clock::new(summary.tc);
        for (side, u) in used.iter().enumerate() {
            clock.set_remaining_ms(side, summary.tc.total_ms.saturating_sub(*u));
        }
        let record = GameRecord {
            black: summary.names[0].clone(),
            white: summary.names[1].clone(),
            opening: opening.clone(),
            moves: Vec::new(),
            winner: None,
            side_to_move_at_end: side_index(pos.turn()),
            reason: EndReason::Server(String::new()),
            limit: Limit::Time(summary.tc),
            started_unix,
        };
        Ok(Game {
            us: summary.our_side,
            unit_ms: summary.unit_ms,
            least_time_ms: summary.least_time_ms,
            max_moves: summary.max_moves,
            opening,
            pos,
            clock,
            record,
            fallback_moves: 0,
        })
    }

    /// Plies from the initial position, the summary's moves included.
    fn plies(&self) -> usize {
        self.opening.moves.len() + self.record.moves.len()
    }

    /// Whether the server's move limit is reached: no move may follow.
    fn at_max_moves(&self) -> bool {
        self.max_moves.is_some_and(|m| self.plies() >= m as usize)
    }

    /// Exchanges moves until the server's result line.
    fn play(
        &mut self,
        opts: &CsaOptions,
        conn: &mut Connection,
        engine: &mut Option<UsiEngine>,
        keepalive: Duration,
    ) -> Result<Ending, CsaError> {
        let mut new_game_done = false;
        let mut reasons = Vec::new();
        let mut pending: Option<PlayedMove> = None; // our move awaiting the echo
        let mut ended_by_us = false; // sent %TORYO or %KACHI; only # lines follow
        let mut turn_started = Instant::now();
        loop {
            let side = side_index(self.pos.turn());
            if side == self.us && pending.is_none() && !ended_by_us && !self.at_max_moves() {
                if !new_game_done {
                    if let Some(e) = engine.as_mut()
                        && e.new_game().is_err()
                    {
                        *engine = None; // think() starts a fresh one
                    }
                    new_game_done = true;
                }
                let (line, played) = think(
                    opts,
                    engine,
                    &self.pos,
                    &self.opening,
                    &self.record.moves,
                    &self.clock,
                    self.us,
                    turn_started,
                    &mut self.fallback_moves,
                )?;
                conn.send(&line)?;
                ended_by_us = line.starts_with('%');
                pending = played;
            }
            let Some((t, line)) = conn.recv(keepalive, None, "playing")? else {
                continue;
            };
            if line.starts_with("##") {
                continue; // shogi-server extensions (##[CHAT] …)
            }
            if line.starts_with('#') {
                if matches!(
                    line.as_str(),
                    "#WIN" | "#LOSE" | "#DRAW" | "#CENSORED" | "#CHUDAN"
                ) {
                    return Ok(Ending {
                        result: line,
                        reasons,
                    });
                }
                reasons.push(line);
                continue;
            }
            if line.starts_with('%') {
                continue; // %TORYO / %KACHI echoes; the # lines follow
            }
            if self.take_move(&line, &mut pending)? {
                turn_started = t;
            }
        }
    }

    /// Applies a move line from the server (ours echoed or the opponent's);
    /// `false` for lines that are not moves.
    fn take_move(
        &mut self,
        line: &str,
        pending: &mut Option<PlayedMove>,
    ) -> Result<bool, CsaError> {
        let (mv, time) = split_echo(line);
        if !(mv.starts_with('+') || mv.starts_with('-')) || mv.len() < 7 {
            return Ok(false); // comments and unknown lines are ignored
        }
        let mover = if mv.starts_with('+') { 0 } else { 1 };
        let proto = |what: &str| CsaError::Protocol {
            line: line.to_string(),
            what: what.into(),
        };
        if mover != side_index(self.pos.turn()) {
            return Err(proto("move by the side not to move"));
        }
        let usi = self.pos.move_from_csa(mv).to_usi();
        let Some(legal) = legal_move(&self.pos, &usi) else {
            return Err(proto("not a legal move"));
        };
        let used_ms = time.unwrap_or(0).saturating_mul(self.unit_ms);
        let _ = self
            .clock
            .consume(mover, used_ms.max(self.least_time_ms), u64::MAX / 4);
        let mut played = PlayedMove {
            usi: usi.clone(),
            elapsed_ms: used_ms,
            score: None,
            pv: Vec::new(),
            depth: None,
            nodes: None,
        };
        if mover == self.us {
            match pending.take() {
                Some(p) if p.usi == usi => {
                    played.score = p.score;
                    played.pv = p.pv;
                    played.depth = p.depth;
                    played.nodes = p.nodes;
                }
                _ => return Err(proto("echo of a move we did not send")),
            }
        }
        self.pos.apply_move32(legal);
        self.record.moves.push(played);
        Ok(true)
    }

    /// Puts the server's verdict into the record.
    fn record_ending(&mut self, ending: &Ending) {
        let stm = side_index(self.pos.turn());
        let record = &mut self.record;
        record.side_to_move_at_end = stm;
        record.winner = match ending.result.as_str() {
            "#WIN" => Some(self.us),
            "#LOSE" => Some(1 - self.us),
            _ => None,
        };
        record.reason = match ending.reasons.first().map(String::as_str) {
            Some("#RESIGN") => EndReason::Resign,
            Some("#TIME_UP") => EndReason::TimeLoss("server: #TIME_UP".into()),
            Some("#ILLEGAL_MOVE") => EndReason::IllegalMove("(server: #ILLEGAL_MOVE)".into()),
            Some("#SENNICHITE") => EndReason::Repetition,
            Some("#OUTE_SENNICHITE") => EndReason::PerpetualCheck,
            Some("#JISHOGI") if record.winner == Some(stm) => EndReason::Declaration,
            Some("#JISHOGI") if record.winner.is_some() => EndReason::IllegalDeclaration,
            Some("#MAX_MOVES") => EndReason::MaxMoves,
            _ => EndReason::Server(format!("{} {}", ending.reasons.join(" "), ending.result)),
        };
    }

    /// The USI `gameover` word for our engine.
    fn result_word(&self) -> &'static str {
        match self.record.winner {
            Some(w) if w == self.us => "win",
            Some(_) => "lose",
            None => "draw",
        }
    }

    /// Writes the CSA record, its event named after the server's game id.
    fn save(&self, path: &std::path::Path, game_id: &str) -> Result<(), CsaError> {
        let text = to_csa(&self.record).map_err(|e| CsaError::Protocol {
            line: String::new(),
            what: e.to_string(),
        })?;
        let text = text.replacen("$EVENT:niwatori match", &format!("$EVENT:{game_id}"), 1);
        write_atomic(path, &text).map_err(|source| CsaError::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}

/// Asks the engine for a move; returns the line to send and the move as played.
#[allow(clippy::too_many_arguments)]
fn think(
    opts: &CsaOptions,
    engine: &mut Option<UsiEngine>,
    pos: &Position,
    opening: &Opening,
    moves: &[PlayedMove],
    clock: &Clock,
    us: usize,
    turn_started: Instant,
    fallback_moves: &mut usize,
) -> Result<(String, Option<PlayedMove>), CsaError> {
    if pos.is_mated() {
        return Ok(("%TORYO".into(), None));
    }
    // The increment is not counted on: servers differ on when they add it.
    let budget = clock.remaining_ms(us).saturating_add(clock.tc.byoyomi_ms);
    let think_ms = budget.saturating_sub(opts.margin_ms).max(budget / 2);
    let already = turn_started.elapsed().as_millis() as u64;
    let left = think_ms.saturating_sub(already);
    let own_main = clock.remaining_ms(us).min(left);
    let mut shown = clock.clone();
    shown.set_remaining_ms(us, own_main);
    // Always the byoyomi form: the engine is told only what is safe to use
    // (an increment is left out, so the engine cannot plan on it).
    let [b, w] = [shown.remaining_ms(0), shown.remaining_ms(1)];
    let go = format!("go btime {b} wtime {w} byoyomi {}", left - own_main);
    let all: Vec<&str> = opening
        .moves
        .iter()
        .map(String::as_str)
        .chain(moves.iter().map(|m| m.usi.as_str()))
        .collect();
    let mut position = format!("position sfen {}", opening.start_sfen);
    if !all.is_empty() {
        position.push_str(" moves ");
        position.push_str(&all.join(" "));
    }
    if engine.is_none() {
        // Restarted after a crash or hang; it counts against this move's time.
        let mut e = UsiEngine::start(&opts.engine, &opts.niwatori_exe)?;
        e.new_game()?;
        *engine = Some(e);
    }
    let e = engine.as_mut().expect("engine started just above");
    let grace = Duration::from_millis((budget.saturating_sub(think_ms) / 2).max(1));
    let result = e.search(&position, &go, Some(Duration::from_millis(left)), grace);
    let r = match result {
        Ok(r) => r,
        Err(err) => {
            // The move goes out first; the engine is restarted on the next turn.
            eprintln!("warning: {err}; sending a legal move instead");
            *engine = None;
            return Ok(substitute_move(pos, fallback_moves));
        }
    };
    let usi = match r.bestmove {
        BestMove::Resign => return Ok(("%TORYO".into(), None)),
        BestMove::Win => return Ok(("%KACHI".into(), None)),
        BestMove::Move(m) => m,
    };
    let Some(mv) = legal_move(pos, &usi) else {
        // Never forfeit by the engine's illegal move: send a legal one instead.
        eprintln!("warning: engine move {usi} is illegal here; sending a legal move instead");
        return Ok(substitute_move(pos, fallback_moves));
    };
    let csa = mv.to_csa().expect("legal moves have CSA names");
    let score = r.info.score.map(|s| s.to_cp());
    let mut line = csa.clone();
    if opts.send_pv
        && let Some(sc) = score
    {
        let black_view = if us == 0 { sc } else { -sc };
        let mut p = pos.clone();
        p.apply_move32(mv);
        let after: &[String] = match r.info.pv.split_first() {
            Some((first, rest)) if *first == usi => rest,
            _ => &[],
        };
        let mut pv = Vec::new();
        for u in after.iter().take(16) {
            let Some(m) = legal_move(&p, u) else { break };
            pv.extend(m.to_csa());
            p.apply_move32(m);
        }
        line = format!("{csa},'* {black_view} {}", pv.join(" "));
        line = line.trim_end().to_string();
    }
    Ok((
        line,
        Some(PlayedMove {
            usi,
            elapsed_ms: 0,
            score,
            pv: r.info.pv,
            depth: r.info.depth,
            nodes: r.info.nodes,
        }),
    ))
}

/// A legal move sent in the engine's place (it failed or played illegally),
/// so the game is never forfeited by the bridge.
fn substitute_move(pos: &Position, fallback_moves: &mut usize) -> (String, Option<PlayedMove>) {
    *fallback_moves += 1;
    let mv = fallback_move(pos).expect("not mated, so a legal move exists");
    let usi = pos.move_from_csa(&mv).to_usi();
    (
        mv,
        Some(PlayedMove {
            usi,
            elapsed_ms: 0,
            score: None,
            pv: Vec::new(),
            depth: None,
            nodes: None,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str) -> Vec<String> {
        text.lines().map(String::from).collect()
    }

    /// Found by `scripts/fuzz.sh`: a move time of 333333333333333333 s in the
    /// position block overflowed the milliseconds it was charged.
    #[test]
    fn absurd_times_from_a_server_do_not_overflow() {
        let found = include_str!("../../tests/fuzz_regressions/csa_summary_time_overflow.txt");
        let s = GameSummary::parse(&summary(found)).unwrap();
        let (_, _, used) = summary_position(&s).unwrap();
        assert_eq!(used[0], u64::MAX, "the time saturates");

        let huge = "Your_Turn:+\nTotal_Time:18446744073709551615\n";
        let err = GameSummary::parse(&summary(huge)).unwrap_err().to_string();
        assert!(
            err.contains("Total_Time") && err.contains("more milliseconds"),
            "{err}"
        );
        let big_limit = "Your_Turn:+\nMax_Moves:4294967296\n";
        let err = GameSummary::parse(&summary(big_limit))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("Max_Moves") && err.contains("too large"),
            "{err}"
        );
    }
}

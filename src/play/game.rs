//! One refereed game between two USI engines.
//!
//! The referee (rsshogi) checks every move for legality, keeps the clock, and ends
//! the game on: mate (no legal move), `bestmove resign`, repetition (four times the
//! same position; the side giving perpetual check loses), `bestmove win` (a valid
//! entering-king declaration under the 27-point rule wins, an invalid one loses), the
//! move limit (draw), an illegal move, a time loss, or an engine crash or hang
//! (losses for the engine at fault, with the reason recorded).

use std::time::Duration;

use rsshogi::board::{
    Move32List, Position, STARTPOS_SFEN, generate_legal_all_move32, position_from_sfen,
};
use rsshogi::types::{Color, EnteringKingRule, Move32, RepetitionState};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::clock::{Clock, Limit};
use super::usi_engine::{BestMove, UsiEngine, UsiError};

/// Errors that stop a game before it could be played.
#[derive(Debug, Error)]
pub enum GameError {
    #[error("bad opening position {sfen:?}: {what}")]
    BadOpening { sfen: String, what: String },
}

/// A start position: an SFEN and moves already played from it (USI notation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Opening {
    pub start_sfen: String,
    pub moves: Vec<String>,
    /// Where it came from (file name and ply, or "random seed N").
    pub source: String,
}

impl Opening {
    /// The standard start position with no moves.
    pub fn startpos() -> Opening {
        Opening {
            start_sfen: STARTPOS_SFEN.to_string(),
            moves: Vec::new(),
            source: "startpos".into(),
        }
    }

    /// The position after the opening moves, with the entering-king rule set.
    pub fn position(&self) -> Result<Position, GameError> {
        let bad = |what: String| GameError::BadOpening {
            sfen: self.start_sfen.clone(),
            what,
        };
        let mut pos = position_from_sfen(&self.start_sfen).map_err(|e| bad(e.to_string()))?;
        crate::records::check_playable(&pos)
            .map_err(|e| bad(format!("not a playable position: {e}")))?;
        pos.set_entering_king_rule(EnteringKingRule::Point27);
        for (i, usi) in self.moves.iter().enumerate() {
            let mv = legal_move(&pos, usi)
                .ok_or_else(|| bad(format!("move {} ({usi}) is not legal", i + 1)))?;
            pos.apply_move32(mv);
        }
        Ok(pos)
    }
}

/// The legal move written `usi` in `pos`, if there is one.
pub fn legal_move(pos: &Position, usi: &str) -> Option<Move32> {
    let mut list = Move32List::new();
    generate_legal_all_move32(pos, &mut list);
    list.iter().copied().find(|m| m.to_usi() == usi)
}

/// One move as played, with what the engine said about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayedMove {
    pub usi: String,
    pub elapsed_ms: u64,
    /// Centipawns from the mover's view (mates as ±(32000 − plies)).
    pub score: Option<i32>,
    pub pv: Vec<String>,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
}

/// Why a game ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum EndReason {
    Resign,
    /// The side to move had no legal move.
    Mated,
    Repetition,
    /// Repetition during which the loser gave check every move.
    PerpetualCheck,
    /// A valid entering-king declaration.
    Declaration,
    IllegalDeclaration,
    /// The move as the engine sent it.
    IllegalMove(String),
    TimeLoss(String),
    /// The engine exited or stopped answering.
    Crash(String),
    MaxMoves,
    /// Ended by a CSA server for a reason not listed above (its `#` line).
    Server(String),
}

impl EndReason {
    /// Short name for summaries.
    pub fn name(&self) -> &'static str {
        match self {
            EndReason::Resign => "resign",
            EndReason::Mated => "mate",
            EndReason::Repetition => "repetition",
            EndReason::PerpetualCheck => "perpetual_check",
            EndReason::Declaration => "declaration",
            EndReason::IllegalDeclaration => "illegal_declaration",
            EndReason::IllegalMove(_) => "illegal_move",
            EndReason::TimeLoss(_) => "time_loss",
            EndReason::Crash(_) => "crash",
            EndReason::MaxMoves => "max_moves",
            EndReason::Server(_) => "server",
        }
    }
}

/// A finished game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    pub black: String,
    pub white: String,
    pub opening: Opening,
    /// Moves after the opening.
    pub moves: Vec<PlayedMove>,
    /// 0 = Black (sente) won, 1 = White won, None = draw.
    pub winner: Option<usize>,
    /// The side whose turn it was when the game ended.
    pub side_to_move_at_end: usize,
    pub reason: EndReason,
    pub limit: Limit,
    /// Unix seconds at the start.
    pub started_unix: u64,
}

impl GameRecord {
    /// Side that lost by its own fault (illegal move, time, crash), if any.
    pub fn faulty_side(&self) -> Option<usize> {
        match self.reason {
            EndReason::IllegalMove(_)
            | EndReason::TimeLoss(_)
            | EndReason::Crash(_)
            | EndReason::IllegalDeclaration => self.winner.map(|w| 1 - w),
            _ => None,
        }
    }
}

/// Rules of a game that do not depend on the engines.
#[derive(Debug, Clone)]
pub struct GameConfig {
    pub limit: Limit,
    /// Total plies (including the opening) after which the game is a draw.
    pub max_plies: u32,
    /// Pipe latency forgiven before a move counts as late.
    pub tolerance_ms: u64,
    /// How long a nodes-limited search may take before the engine counts as hung.
    pub hang_ms: u64,
}

/// The outcome of [`play_game`]: the record, and which engines must be restarted.
pub struct Played {
    pub record: GameRecord,
    /// An engine that crashed or hung is not fit for another game.
    pub broken: [bool; 2],
}

fn position_command(opening: &Opening, moves: &[PlayedMove]) -> String {
    let mut s = if opening.start_sfen == STARTPOS_SFEN {
        "position startpos".to_string()
    } else {
        format!("position sfen {}", opening.start_sfen)
    };
    let all: Vec<&str> = opening
        .moves
        .iter()
        .map(|m| m.as_str())
        .chain(moves.iter().map(|m| m.usi.as_str()))
        .collect();
    if !all.is_empty() {
        s.push_str(" moves ");
        s.push_str(&all.join(" "));
    }
    s
}

/// Plays one game: `engines[0]` has Black (sente), `engines[1]` White.
pub fn play_game(
    engines: [&mut UsiEngine; 2],
    opening: &Opening,
    cfg: &GameConfig,
) -> Result<Played, GameError> {
    let mut pos = opening.position()?;
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut record = GameRecord {
        black: engines[0].label().to_string(),
        white: engines[1].label().to_string(),
        opening: opening.clone(),
        moves: Vec::new(),
        winner: None,
        side_to_move_at_end: side_index(pos.turn()),
        reason: EndReason::MaxMoves,
        limit: cfg.limit,
        started_unix,
    };
    let mut broken = [false; 2];
    let mut engines = engines;
    for (side, e) in engines.iter_mut().enumerate() {
        if let Err(err) = e.new_game() {
            broken[side] = true;
            record.winner = Some(1 - side);
            record.reason = EndReason::Crash(err.to_string());
            return Ok(Played { record, broken });
        }
    }
    let mut clock = match cfg.limit {
        Limit::Time(tc) => Some(Clock::new(tc)),
        Limit::Nodes(_) | Limit::Depth(_) => None,
    };
    let opening_plies = opening.moves.len() as u32;
    let (winner, reason) = loop {
        let side = side_index(pos.turn());
        record.side_to_move_at_end = side;
        if opening_plies + record.moves.len() as u32 >= cfg.max_plies {
            break (None, EndReason::MaxMoves);
        }
        if pos.is_mated() {
            break (Some(1 - side), EndReason::Mated);
        }
        let (go, stop_after) = match (&clock, cfg.limit) {
            (Some(c), _) => (
                format!(
                    "go {}",
                    c.go_args_with_margin(side, engines[side].time_margin_ms)
                ),
                c.budget(side) + Duration::from_millis(cfg.tolerance_ms),
            ),
            (None, Limit::Nodes(_) | Limit::Depth(_)) => {
                let go = match cfg.limit {
                    Limit::Depth(d) => format!("go depth {d}"),
                    Limit::Nodes(n) => format!("go nodes {n}"),
                    Limit::Time(_) => unreachable!("handled above"),
                };
                match engines[side].nodes_fallback_byoyomi_ms {
                    Some(ms) => (
                        format!("go btime 0 wtime 0 byoyomi {ms}"),
                        Duration::from_millis(ms + cfg.hang_ms),
                    ),
                    None => (go, Duration::from_millis(cfg.hang_ms)),
                }
            }
            (None, Limit::Time(_)) => unreachable!("a time limit always has a clock"),
        };
        let position = position_command(opening, &record.moves);
        let result = engines[side].search(
            &position,
            &go,
            Some(stop_after),
            Duration::from_millis(1000),
        );
        let result = match result {
            Ok(r) => r,
            Err(
                err @ (UsiError::Timeout { .. }
                | UsiError::Exited { .. }
                | UsiError::Spawn { .. }
                | UsiError::NoSuchOption { .. }
                | UsiError::OptionRejected { .. }),
            ) => {
                broken[side] = true;
                let reason = match err {
                    UsiError::Timeout { .. } if clock.is_some() => {
                        EndReason::TimeLoss(err.to_string())
                    }
                    _ => EndReason::Crash(err.to_string()),
                };
                break (Some(1 - side), reason);
            }
        };
        let used_ms = result.elapsed.as_millis() as u64;
        if let Some(c) = clock.as_mut()
            && let Err(loss) = c.consume(side, used_ms, cfg.tolerance_ms)
        {
            break (Some(1 - side), EndReason::TimeLoss(loss.to_string()));
        }
        let mv = match &result.bestmove {
            BestMove::Resign => break (Some(1 - side), EndReason::Resign),
            BestMove::Win => {
                if pos.declaration_win_move() == Move32::MOVE_WIN {
                    break (Some(side), EndReason::Declaration);
                }
                break (Some(1 - side), EndReason::IllegalDeclaration);
            }
            BestMove::Move(usi) => match legal_move(&pos, usi) {
                Some(mv) => mv,
                None => break (Some(1 - side), EndReason::IllegalMove(usi.clone())),
            },
        };
        pos.apply_move32(mv);
        record.moves.push(PlayedMove {
            usi: mv.to_usi(),
            elapsed_ms: used_ms,
            score: result.info.score.map(|s| s.to_cp()),
            pv: result.info.pv.clone(),
            depth: result.info.depth,
            nodes: result.info.nodes,
        });
        // Win/Lose are from the view of the side now to move.
        let now = side_index(pos.turn());
        match pos.repetition_state() {
            RepetitionState::Draw => break (None, EndReason::Repetition),
            RepetitionState::Win => break (Some(now), EndReason::PerpetualCheck),
            RepetitionState::Lose => break (Some(1 - now), EndReason::PerpetualCheck),
            _ => {}
        }
    };
    if matches!(reason, EndReason::PerpetualCheck) {
        record.side_to_move_at_end = side_index(pos.turn());
    }
    record.winner = winner;
    record.reason = reason;
    for (side, e) in engines.iter_mut().enumerate() {
        if !broken[side] {
            let word = match winner {
                None => "draw",
                Some(w) if w == side => "win",
                Some(_) => "lose",
            };
            if e.game_over(word).is_err() {
                broken[side] = true;
            }
        }
    }
    Ok(Played { record, broken })
}

/// 0 for Black, 1 for White.
pub fn side_index(c: Color) -> usize {
    if c == Color::BLACK { 0 } else { 1 }
}

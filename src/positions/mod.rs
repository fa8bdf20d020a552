//! Position files of the ecosystem, for training data to pass between
//! engines: YaneuraOu's PackedSfenValue ([`psv`], `.psv`) and dlshogi's
//! HuffmanCodedPosAndEval ([`hcpe`], `.hcpe`). `extract --format psv|hcpe`
//! writes one record per expanded position (its depth-1 value, the game
//! move, the game's result), so niwatori's labels train other engines'
//! learners; a `.psv` or `.hcpe` file given to `extract`, `learn` or
//! `report` is read as one-move games (each record's position and move),
//! so their data trains niwatori.

use rsshogi::board::Position;
use rsshogi::types::{Color, Move};

pub mod hcpe;
pub mod psv;

/// A fixed-size record of one position.
pub trait PositionRecord: Sized {
    /// Bytes a record.
    const SIZE: usize;
    /// The format's own name.
    const NAME: &'static str;

    /// A record of `pos` valued `score` (centipawns, side to move's view),
    /// with the move played from it, its ply and the game's winner (`None`:
    /// a draw or no result); `None` for a position the code cannot hold.
    fn new(pos: &Position, score: i32, mv: Move, ply: usize, winner: Option<Color>)
    -> Option<Self>;

    /// Appends the record's [`Self::SIZE`] bytes.
    fn write(&self, out: &mut Vec<u8>);

    /// Reads a record from its [`Self::SIZE`] bytes.
    fn read(bytes: &[u8]) -> Self;

    /// The position as SFEN.
    fn sfen(&self) -> Result<String, String>;

    /// The move the record holds.
    fn game_move(&self) -> Move;
}

/// `sfen` with its move number set to `ply` (at least 1).
fn with_ply(sfen: &str, ply: u16) -> String {
    match sfen.rsplit_once(' ') {
        Some((head, _)) => format!("{head} {}", ply.max(1)),
        None => sfen.to_string(),
    }
}

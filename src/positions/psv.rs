//! YaneuraOu's PackedSfenValue (`.psv`): the position format of its learner
//! and of most shogi training data, 40 bytes a position, little-endian:
//!
//! | bytes | field | here |
//! |---|---|---|
//! | 0–31 | `sfen`: the position, Huffman-packed (rsshogi's [`PackedSfen`]) | the game position |
//! | 32–33 | `score` (i16, centipawns, side to move's view) | its depth-1 search value: the best sibling's score |
//! | 34–35 | `move` (u16, Move16: to, from or dropped kind, drop and promote bits) | the move played in the game |
//! | 36–37 | `gamePly` (u16) | 1-based ply of the position |
//! | 38 | `game_result` (i8: 1 win, 0 draw, −1 loss, for the side to move) | from the record's ending (0 when it names no winner) |
//! | 39 | padding (0) | |
//!
//! ```
//! use niwatori::positions::{PositionRecord, psv::PackedSfenValue};
//! let sfen = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";
//! let pos = rsshogi::board::position_from_sfen(sfen).unwrap();
//! let psv = PackedSfenValue::new(&pos, 40, "7g7f".parse().unwrap(), 1, None).unwrap();
//! let mut bytes = Vec::new();
//! psv.write(&mut bytes);
//! let back = PackedSfenValue::read(&bytes);
//! assert_eq!(back, psv);
//! assert_eq!(back.sfen().unwrap(), sfen);
//! assert_eq!(back.game_move().to_usi(), "7g7f");
//! ```

use rsshogi::board::{PackedSfen, Position};
use rsshogi::types::{Color, Move};

use super::PositionRecord;

/// Bytes of one record.
pub const SIZE: usize = 40;

/// One position with its score, move, ply and result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedSfenValue {
    pub packed: PackedSfen,
    pub score: i16,
    pub mv: u16,
    pub game_ply: u16,
    pub game_result: i8,
}

impl PositionRecord for PackedSfenValue {
    const SIZE: usize = SIZE;
    const NAME: &'static str = "PackedSfenValue";

    fn new(
        pos: &Position,
        score: i32,
        mv: Move,
        ply: usize,
        winner: Option<Color>,
    ) -> Option<Self> {
        Some(Self {
            packed: pos.try_to_packed_sfen().ok()?,
            score: score.clamp(-32000, 32000) as i16,
            mv: mv.raw(),
            game_ply: u16::try_from(ply).unwrap_or(u16::MAX),
            game_result: match winner {
                None => 0,
                Some(w) if w == pos.turn() => 1,
                Some(_) => -1,
            },
        })
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.packed.as_bytes());
        out.extend_from_slice(&self.score.to_le_bytes());
        out.extend_from_slice(&self.mv.to_le_bytes());
        out.extend_from_slice(&self.game_ply.to_le_bytes());
        out.extend_from_slice(&[self.game_result as u8, 0]);
    }

    fn read(b: &[u8]) -> Self {
        let word = |a: usize| [b[a], b[a + 1]];
        Self {
            packed: PackedSfen::from_bytes(b[..32].try_into().expect("32 bytes")),
            score: i16::from_le_bytes(word(32)),
            mv: u16::from_le_bytes(word(34)),
            game_ply: u16::from_le_bytes(word(36)),
            game_result: b[38] as i8,
        }
    }

    fn sfen(&self) -> Result<String, String> {
        let sfen = Position::sfen_unpack(&self.packed).map_err(|e| e.to_string())?;
        Ok(super::with_ply(&sfen, self.game_ply))
    }

    fn game_move(&self) -> Move {
        Move::from_raw(self.mv)
    }
}

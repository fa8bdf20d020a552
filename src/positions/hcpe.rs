//! dlshogi's HuffmanCodedPosAndEval (`.hcpe`), 38 bytes a position,
//! little-endian, as cshogi reads and writes it:
//!
//! | bytes | field | here |
//! |---|---|---|
//! | 0–31 | `hcp`: the position, Apery's Huffman code (rsshogi's [`HuffmanCodedPos`]) | the game position |
//! | 32–33 | `eval` (i16, side to move's view) | its depth-1 search value: the best sibling's score |
//! | 34–35 | `bestMove16` (u16, Apery's: to, from or 81 + dropped kind − 1, promote bit 14) | the move played in the game |
//! | 36 | `gameResult` (u8: 0 draw, 1 black won, 2 white won) | from the record's ending (0 when it names no winner) |
//! | 37 | padding (0) | |
//!
//! ```
//! use niwatori::positions::{PositionRecord, hcpe::Hcpe};
//! use rsshogi::types::Color;
//! let sfen = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";
//! let pos = rsshogi::board::position_from_sfen(sfen).unwrap();
//! let drop: rsshogi::types::Move = "7g7f".parse().unwrap();
//! let h = Hcpe::new(&pos, -15, drop, 1, Some(Color::WHITE)).unwrap();
//! let mut bytes = Vec::new();
//! h.write(&mut bytes);
//! assert_eq!(bytes.len(), 38);
//! assert_eq!(bytes[36], 2);
//! let back = Hcpe::read(&bytes);
//! assert_eq!(back, h);
//! assert_eq!(back.sfen().unwrap(), sfen);
//! assert_eq!(back.game_move().to_usi(), "7g7f");
//! ```

use rsshogi::board::{HuffmanCodedPos, Position};
use rsshogi::types::{AperyMove, Color, Move};

use super::PositionRecord;

/// One position with its evaluation, move and result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hcpe {
    pub hcp: HuffmanCodedPos,
    pub eval: i16,
    pub best_move16: u16,
    pub game_result: u8,
}

impl PositionRecord for Hcpe {
    const SIZE: usize = 38;
    const NAME: &'static str = "HuffmanCodedPosAndEval";

    fn new(
        pos: &Position,
        score: i32,
        mv: Move,
        _ply: usize,
        winner: Option<Color>,
    ) -> Option<Self> {
        Some(Self {
            hcp: pos.try_to_huffman_coded_pos().ok()?,
            eval: score.clamp(-32000, 32000) as i16,
            best_move16: AperyMove::from_move(mv).raw(),
            game_result: match winner {
                None => 0,
                Some(c) if c == Color::BLACK => 1,
                Some(_) => 2,
            },
        })
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.hcp.data);
        out.extend_from_slice(&self.eval.to_le_bytes());
        out.extend_from_slice(&self.best_move16.to_le_bytes());
        out.extend_from_slice(&[self.game_result, 0]);
    }

    fn read(b: &[u8]) -> Self {
        Self {
            hcp: HuffmanCodedPos {
                data: b[..32].try_into().expect("32 bytes"),
            },
            eval: i16::from_le_bytes([b[32], b[33]]),
            best_move16: u16::from_le_bytes([b[34], b[35]]),
            game_result: b[36],
        }
    }

    fn sfen(&self) -> Result<String, String> {
        // The format holds no ply.
        let sfen = Position::huffman_coded_pos_unpack(&self.hcp).map_err(|e| e.to_string())?;
        Ok(super::with_ply(&sfen, 1))
    }

    fn game_move(&self) -> Move {
        AperyMove::from_raw(self.best_move16).to_move()
    }
}

//! Move labels: a move of a position as one class of a fixed set, the output
//! space of a move policy.
//!
//! Both labelings see the move from the side to move (White's moves are
//! turned round, as [`crate::features`] does) and name its destination
//! square; they differ in what else they say:
//!
//! - [`DirectionLabel`], 2,187 = 81 × 27 classes: the direction the piece
//!   moves in (10: up, up-left, up-right, left, right, down, down-left,
//!   down-right, and the knight's two jumps), each with and without
//!   promotion, plus 7 drops. This is dlshogi's labeling and equals
//!   [`rsshogi::labels::policy::MoveLabel`] class for class.
//! - [`PieceLabel`], 7,695 = 81 × 95 classes: the moving piece's kind *and*
//!   direction (71 pairs a piece can move in, 17 of them also promoting, 7
//!   drops), the table below. Dropping the kind gives the direction label.
//!
//! | piece | directions | promoting |
//! |---|---|---|
//! | pawn, lance | up | up |
//! | knight | up2-left, up2-right | both |
//! | silver | up, up-left, up-right, down-left, down-right | all 5 |
//! | gold, +P, +L, +N, +S | up, up-left, up-right, left, right, down | — |
//! | bishop | the 4 diagonals | all 4 |
//! | rook | the 4 orthogonals | all 4 |
//! | king, horse, dragon | all 8 but the knight's | — |
//!
//! (1 + 1 + 2 + 5 + 6 × 5 + 4 + 4 + 8 × 3 = 71 and 1 + 1 + 2 + 5 + 4 + 4 =
//! 17.) Issue 18 quotes a reference labeling of 81 × 101 = 8,181 classes
//! with "23 with promotion"; the pieces that may promote have only the 17
//! directions above, so the 6 extra classes could never be played.
//!
//! Within one position a label names at most one legal move — pieces other
//! than the knight do not jump, so the mover is the first piece met walking
//! back from the destination against the direction — and
//! [`DirectionLabel::to_move`] / [`PieceLabel::to_move`] find it.
//!
//! ```
//! use niwatori::policy::labels::{DirectionLabel, PieceLabel};
//! use rsshogi::types::Move;
//! let pos = rsshogi::board::position_from_sfen(
//!     "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1").unwrap();
//! let mv = Move::from_usi("7g7f").unwrap();
//! let label = PieceLabel::of(&pos, mv).unwrap();
//! assert_eq!(label.to_string(), "P up 7f");
//! assert_eq!(label.to_move(&pos), Some(mv));
//! assert_eq!(label.direction(), DirectionLabel::of(&pos, mv).unwrap());
//! ```

use rsshogi::board::Position;
use rsshogi::labels::policy::MoveLabel;
use rsshogi::types::{Color, Move, PieceType, Square};
use std::fmt;

/// How a piece moves, seen from the side to move (up = towards the
/// opponent). Order and names follow rsshogi's (and dlshogi's) classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    Up,
    UpLeft,
    UpRight,
    Left,
    Right,
    Down,
    DownLeft,
    DownRight,
    Up2Left,
    Up2Right,
}

impl Direction {
    pub const ALL: [Direction; 10] = [
        Direction::Up,
        Direction::UpLeft,
        Direction::UpRight,
        Direction::Left,
        Direction::Right,
        Direction::Down,
        Direction::DownLeft,
        Direction::DownRight,
        Direction::Up2Left,
        Direction::Up2Right,
    ];

    /// The direction from `from` to `to`, both already seen from Black.
    fn between(from: Square, to: Square) -> Direction {
        // file 0 is file 1, on Black's right; rank 0 is rank 1, at the top
        let dx = to.file().raw() - from.file().raw(); // > 0: to the left
        let dy = to.rank().raw() - from.rank().raw(); // < 0: up
        match (dx.signum(), dy.signum()) {
            (1, -1) if dy == -2 && dx == 1 => Direction::Up2Left,
            (-1, -1) if dy == -2 && dx == -1 => Direction::Up2Right,
            (0, -1) => Direction::Up,
            (1, -1) => Direction::UpLeft,
            (-1, -1) => Direction::UpRight,
            (1, 0) => Direction::Left,
            (-1, 0) => Direction::Right,
            (0, 1) => Direction::Down,
            (1, 1) => Direction::DownLeft,
            _ => Direction::DownRight,
        }
    }

    /// (file, rank) step from the destination back towards the origin.
    const fn back(self) -> (i8, i8) {
        match self {
            Direction::Up => (0, 1),
            Direction::UpLeft => (-1, 1),
            Direction::UpRight => (1, 1),
            Direction::Left => (-1, 0),
            Direction::Right => (1, 0),
            Direction::Down => (0, -1),
            Direction::DownLeft => (-1, -1),
            Direction::DownRight => (1, -1),
            Direction::Up2Left => (-1, 2),
            Direction::Up2Right => (1, 2),
        }
    }

    const fn is_jump(self) -> bool {
        matches!(self, Direction::Up2Left | Direction::Up2Right)
    }

    pub const fn name(self) -> &'static str {
        match self {
            Direction::Up => "up",
            Direction::UpLeft => "up-left",
            Direction::UpRight => "up-right",
            Direction::Left => "left",
            Direction::Right => "right",
            Direction::Down => "down",
            Direction::DownLeft => "down-left",
            Direction::DownRight => "down-right",
            Direction::Up2Left => "up2-left",
            Direction::Up2Right => "up2-right",
        }
    }
}

/// What a label says besides the destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Motion {
    Move { direction: Direction, promote: bool },
    Drop(PieceType),
}

/// The seven kinds a player can hold, in rsshogi's drop-class order.
const DROPS: [PieceType; 7] = [
    PieceType::PAWN,
    PieceType::LANCE,
    PieceType::KNIGHT,
    PieceType::SILVER,
    PieceType::BISHOP,
    PieceType::ROOK,
    PieceType::GOLD,
];

/// The square seen from the side to move.
fn seen(square: Square, turn: Color) -> Square {
    if turn == Color::WHITE {
        square.flip()
    } else {
        square
    }
}

/// Destination (seen from the side to move) and motion of a legal-looking
/// move; `None` for special moves (null, resign, win).
fn motion_of(mv: Move, turn: Color) -> Option<(Square, Motion)> {
    if !mv.is_normal() {
        return None;
    }
    let to = seen(mv.to_sq(), turn);
    if mv.is_drop() {
        return Some((to, Motion::Drop(mv.dropped_piece()?)));
    }
    let direction = Direction::between(seen(mv.from_sq(), turn), to);
    Some((
        to,
        Motion::Move {
            direction,
            promote: mv.is_promotion(),
        },
    ))
}

/// The legal move that makes `motion` to `to` (seen from the side to move),
/// if any; `kind` restricts the mover's piece kind.
fn find_move(pos: &Position, to: Square, motion: Motion, kind: Option<PieceType>) -> Option<Move> {
    let turn = pos.turn();
    let mv = match motion {
        Motion::Drop(piece) => Move::drop(piece, seen(to, turn)),
        Motion::Move { direction, promote } => {
            let (df, dr) = direction.back();
            let (mut file, mut rank) = (to.file().raw(), to.rank().raw());
            let from = loop {
                file += df;
                rank += dr;
                if !(0..9).contains(&file) || !(0..9).contains(&rank) {
                    return None;
                }
                let square = seen(Square::new(9 * file + rank), turn);
                if !pos.piece_on(square).is_empty() || direction.is_jump() {
                    break square;
                }
            };
            let piece = pos.piece_on(from);
            if piece.is_empty()
                || piece.color() != turn
                || kind.is_some_and(|k| k != piece.piece_type())
            {
                return None;
            }
            let to = seen(to, turn);
            if promote {
                Move::promotion(from, to)
            } else {
                Move::normal(from, to)
            }
        }
    };
    pos.is_legal_move(mv).then_some(mv)
}

/// One of 2,187 classes: destination × (direction, promotion) or drop.
/// The raw value equals rsshogi's (dlshogi's) `MoveLabel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DirectionLabel(u16);

impl DirectionLabel {
    pub const COUNT: usize = 81 * 27;

    /// The label of `mv`, a move of `pos`; `None` for special moves.
    pub fn of(pos: &Position, mv: Move) -> Option<DirectionLabel> {
        let (to, motion) = motion_of(mv, pos.turn())?;
        Some(DirectionLabel::new(to, motion))
    }

    fn new(to: Square, motion: Motion) -> DirectionLabel {
        let class = match motion {
            Motion::Move { direction, promote } => direction as u16 + 10 * u16::from(promote),
            Motion::Drop(piece) => {
                20 + DROPS.iter().position(|&p| p == piece).expect("a hand kind") as u16
            }
        };
        DirectionLabel(81 * class + to.raw() as u16)
    }

    pub const fn raw(self) -> u16 {
        self.0
    }

    pub const fn from_raw(raw: u16) -> Option<DirectionLabel> {
        if (raw as usize) < Self::COUNT {
            Some(DirectionLabel(raw))
        } else {
            None
        }
    }

    /// The destination, seen from the side to move.
    pub fn to(self) -> Square {
        Square::new((self.0 % 81) as i8)
    }

    pub fn motion(self) -> Motion {
        let class = (self.0 / 81) as usize;
        match class {
            0..20 => Motion::Move {
                direction: Direction::ALL[class % 10],
                promote: class >= 10,
            },
            _ => Motion::Drop(DROPS[class - 20]),
        }
    }

    /// The legal move of `pos` this label names, if there is one.
    pub fn to_move(self, pos: &Position) -> Option<Move> {
        find_move(pos, self.to(), self.motion(), None)
    }

    /// rsshogi's label for the same class.
    pub fn to_rsshogi(self) -> MoveLabel {
        MoveLabel::from_raw(self.0).expect("in range")
    }
}

/// The piece kinds that move on the board, each with its directions (from
/// the side to move) and whether it may promote: the table in the module
/// docs.
const MOVERS: [(PieceType, &[Direction], bool); 14] = {
    use Direction::*;
    const GOLD: &[Direction] = &[Up, UpLeft, UpRight, Left, Right, Down];
    const EIGHT: &[Direction] = &[Up, UpLeft, UpRight, Left, Right, Down, DownLeft, DownRight];
    [
        (PieceType::PAWN, &[Up], true),
        (PieceType::LANCE, &[Up], true),
        (PieceType::KNIGHT, &[Up2Left, Up2Right], true),
        (
            PieceType::SILVER,
            &[Up, UpLeft, UpRight, DownLeft, DownRight],
            true,
        ),
        (
            PieceType::BISHOP,
            &[UpLeft, UpRight, DownLeft, DownRight],
            true,
        ),
        (PieceType::ROOK, &[Up, Left, Right, Down], true),
        (PieceType::GOLD, GOLD, false),
        (PieceType::KING, EIGHT, false),
        (PieceType::PRO_PAWN, GOLD, false),
        (PieceType::PRO_LANCE, GOLD, false),
        (PieceType::PRO_KNIGHT, GOLD, false),
        (PieceType::PRO_SILVER, GOLD, false),
        (PieceType::HORSE, EIGHT, false),
        (PieceType::DRAGON, EIGHT, false),
    ]
};

/// Everything but the destination of a piece label: one of the 95 slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PieceMotion {
    /// The piece that moves (for a drop, the kind dropped).
    pub kind: PieceType,
    pub motion: Motion,
}

/// The 95 slots in order: each mover's plain directions, then its
/// promoting ones, then the 7 drops.
static SLOTS: std::sync::LazyLock<Vec<PieceMotion>> = std::sync::LazyLock::new(|| {
    let mut slots = Vec::with_capacity(PieceLabel::SLOTS);
    for promote in [false, true] {
        for &(kind, directions, promotes) in &MOVERS {
            if promote && !promotes {
                continue;
            }
            for &direction in directions {
                slots.push(PieceMotion {
                    kind,
                    motion: Motion::Move { direction, promote },
                });
            }
        }
    }
    slots.extend(DROPS.iter().map(|&kind| PieceMotion {
        kind,
        motion: Motion::Drop(kind),
    }));
    slots
});

/// Slot of each (kind, direction, promote): `[kind][promote][direction]`.
static SLOT_OF: std::sync::LazyLock<[[[Option<u8>; 10]; 2]; 16]> = std::sync::LazyLock::new(|| {
    let mut table = [[[None; 10]; 2]; 16];
    for (slot, m) in SLOTS.iter().enumerate() {
        if let Motion::Move { direction, promote } = m.motion {
            table[m.kind.raw() as usize][usize::from(promote)][direction as usize] =
                Some(slot as u8);
        }
    }
    table
});

/// One of 7,695 classes: destination × (piece kind, direction, promotion)
/// or drop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PieceLabel(u16);

impl PieceLabel {
    /// Classes per destination: 71 moves, 17 promotions, 7 drops.
    pub const SLOTS: usize = 71 + 17 + 7;
    pub const COUNT: usize = 81 * Self::SLOTS;

    /// The label of `mv`, a move of `pos`; `None` for special moves and
    /// for a move no piece of that kind could make (not a legal move).
    pub fn of(pos: &Position, mv: Move) -> Option<PieceLabel> {
        let (to, motion) = motion_of(mv, pos.turn())?;
        let slot = match motion {
            Motion::Drop(piece) => 88 + DROPS.iter().position(|&p| p == piece)?,
            Motion::Move { direction, promote } => {
                let kind = pos.piece_on(mv.from_sq()).piece_type();
                usize::from(
                    SLOT_OF.get(kind.raw() as usize)?[usize::from(promote)][direction as usize]?,
                )
            }
        };
        Some(PieceLabel((Self::SLOTS * to.raw() as usize + slot) as u16))
    }

    pub const fn raw(self) -> u16 {
        self.0
    }

    pub const fn from_raw(raw: u16) -> Option<PieceLabel> {
        if (raw as usize) < Self::COUNT {
            Some(PieceLabel(raw))
        } else {
            None
        }
    }

    /// The destination, seen from the side to move.
    pub fn to(self) -> Square {
        Square::new((self.0 as usize / Self::SLOTS) as i8)
    }

    /// Which of the 95 slots, `0..SLOTS`.
    pub fn slot(self) -> usize {
        self.0 as usize % Self::SLOTS
    }

    pub fn piece_motion(self) -> PieceMotion {
        SLOTS[self.slot()]
    }

    /// The same move's direction label (the piece kind forgotten).
    pub fn direction(self) -> DirectionLabel {
        DirectionLabel::new(self.to(), self.piece_motion().motion)
    }

    /// The legal move of `pos` this label names, if there is one.
    pub fn to_move(self, pos: &Position) -> Option<Move> {
        let m = self.piece_motion();
        find_move(pos, self.to(), m.motion, Some(m.kind))
    }
}

impl fmt::Display for PieceLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.piece_motion();
        match m.motion {
            Motion::Move { direction, promote } => write!(
                f,
                "{} {}{}",
                m.kind,
                direction.name(),
                if promote { "+" } else { "" }
            )?,
            Motion::Drop(kind) => write!(f, "{kind} drop")?,
        }
        write!(f, " {}", self.to().to_usi())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_71_moves_17_promotions_and_7_drops() {
        let count = |f: &dyn Fn(&PieceMotion) -> bool| SLOTS.iter().filter(|m| f(m)).count();
        assert_eq!(
            count(&|m| matches!(m.motion, Motion::Move { promote: false, .. })),
            71
        );
        assert_eq!(
            count(&|m| matches!(m.motion, Motion::Move { promote: true, .. })),
            17
        );
        assert_eq!(count(&|m| matches!(m.motion, Motion::Drop(_))), 7);
        assert_eq!(SLOTS.len(), PieceLabel::SLOTS);
        // every slot maps back to itself
        for raw in 0..PieceLabel::COUNT as u16 {
            let label = PieceLabel::from_raw(raw).unwrap();
            assert_eq!(
                PieceLabel::SLOTS * label.to().raw() as usize + label.slot(),
                raw as usize
            );
        }
        assert_eq!(PieceLabel::from_raw(PieceLabel::COUNT as u16), None);
        assert_eq!(DirectionLabel::from_raw(DirectionLabel::COUNT as u16), None);
    }

    #[test]
    fn white_moves_are_seen_from_white() {
        rsshogi::board::init();
        let pos = rsshogi::board::position_from_sfen(
            "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
        )
        .unwrap();
        let mv = Move::from_usi("3c3d").unwrap();
        let label = PieceLabel::of(&pos, mv).unwrap();
        // White's 3c3d is Black's 7g7f turned round
        assert_eq!(label.to_string(), "P up 7f");
        assert_eq!(label.to_move(&pos), Some(mv));
        assert_eq!(PieceLabel::of(&pos, Move::MOVE_NULL), None);
    }
}

//! The kinds of relation between an attacking piece and the piece on the
//! square it attacks.

/// How piece A relates to piece B on a square A attacks (directly, or
/// through exactly one piece for a slider: an x-ray).
///
/// When several descriptions fit, the first in this order wins, so every
/// ordered pair (A, B) has exactly one kind. The number is the feature value
/// in [`RelationEncoding::Value`](super::RelationEncoding::Value) and the
/// offset (minus one) in [`RelationEncoding::OneHot`](super::RelationEncoding::OneHot).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Relation {
    /// A defends its own piece B, which no enemy piece attacks.
    Defend = 1,
    /// A defends its own piece B, which an enemy piece attacks.
    DefendAttacked = 2,
    /// A attacks enemy piece B, which B's side defends.
    Attack = 3,
    /// A attacks enemy piece B, which nothing of B's side defends.
    AttackHanging = 4,
    /// A attacks enemy piece B and could promote capturing it (A is an
    /// unpromoted pawn, lance, knight, silver, bishop or rook, and A's or B's
    /// square is in A's promotion zone). Wins over `Attack`/`AttackHanging`.
    AttackPromote = 5,
    /// A attacks the enemy king: a check.
    Check = 6,
    /// Slider A reaches its own piece B through exactly one piece.
    XrayOwn = 7,
    /// Slider A reaches enemy piece B through one of A's own pieces
    /// (a discovered attack waiting to happen).
    XrayThroughOwn = 8,
    /// Slider A reaches enemy piece B through another enemy piece (a pin or
    /// skewer).
    XrayThroughEnemy = 9,
    /// Slider A reaches the enemy king through exactly one piece (a pin, or
    /// a discovered check waiting to happen). Wins over 8 and 9.
    XrayKing = 10,
}

impl Relation {
    /// Number of relation kinds; values run 1..=COUNT.
    pub const COUNT: usize = 10;

    /// The kind's number, 1..=10.
    pub const fn value(self) -> u32 {
        self as u32
    }
}

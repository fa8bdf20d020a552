//! Sparse features of a move in its position, the policy's input.
//!
//! Every move has exactly [`PER_MOVE`] binary features, one from each block
//! below, so a position's features are a flat `moves × PER_MOVE` array. All
//! squares are seen from the side to move (as in [`super::labels`]); `kind`
//! is the piece after the move (promoted if it promotes; for a drop, the
//! kind dropped), 0..14 for piece types 1..=14.
//!
//! | block | size | what |
//! |---|---|---|
//! | label | 7,695 | the [`PieceLabel`]: kind, direction, promotion, destination |
//! | origin | 82 × 14 | origin square (82nd: a drop) × kind |
//! | capture | 15 × 14 | kind captured (0: none) × kind |
//! | exchange | 7 × 14 | static exchange bucket of the move × kind |
//! | escape | 5 × 14 | origin attacked? defended? (4 ways; 5th: a drop) × kind |
//! | enemy king | 17 × 17 × 14 | destination relative to the enemy king × kind |
//! | own king | 17 × 17 × 14 | destination relative to one's own king × kind |
//! | check | 2 × 14 | gives check? × kind |
//! | reply | 26 × 14 | destination relative to the last move's (25 within 2 squares, 26th: farther or none) × kind |
//! | contest | 3 × 3 × 14 | attackers of the destination after the move (0, 1, 2+) × defenders (0, 1, 2+) × kind |
//! | threat | 15 × 14 | the most valuable enemy piece the moved piece then attacks (0: none) × kind |
//! | fork | 3 × 2 × 14 | enemy pieces other than pawns it then attacks (0, 1, 2+) × destination safe (exchange ≥ 0) × kind |
//! | evasion | 2 × 2 × 14 | in check? × a capture? × kind |
//! | last | 15 × 2 × 14 | kind the opponent last moved (0: none) × onto the same square (a recapture)? × kind |
//! | hand | 5 × 14 | for a drop, how many of the kind are in hand (1, 2, 3, 4+; 0: not a drop) × kind |
//! | guard | 290 × 14 | origin relative to one's own king (290th: a drop) × kind |
//! | answer | 2 × 2 × 14 | the piece the opponent just moved attacks the origin? the destination? × kind |
//! | around | 8 × 30 × 14 | for each of the destination's 8 neighbours: what stands there after the move (own piece kind, enemy piece kind, empty, off the board) × kind |
//! | rescue | 6 × 5 × 14 | the mover's most valuable piece en prise (see [`Threat`]): none, the move takes it away, captures an attacker, interposes, defends it, or none of these × its class (pawn; lance, knight; silver, gold, promoted minor; bishop, horse; rook, dragon) × kind |

use rsshogi::board::Position;
use rsshogi::types::{Bitboard, Color, Move, Move32, Piece, PieceType, Square};

use super::labels::PieceLabel;
use crate::eval::piece_value;
use crate::features::piece_attacks;
use crate::search::see::see;

/// Features version, stored with a model: a model of another version is
/// refused.
pub const VERSION: u32 = 5;

/// Features of one move.
pub const PER_MOVE: usize = 26;

const KINDS: usize = 14;
const LABEL: usize = 0;
const ORIGIN: usize = LABEL + PieceLabel::COUNT;
const CAPTURE: usize = ORIGIN + 82 * KINDS;
const EXCHANGE: usize = CAPTURE + 15 * KINDS;
const ESCAPE: usize = EXCHANGE + 7 * KINDS;
const ENEMY_KING: usize = ESCAPE + 5 * KINDS;
const OWN_KING: usize = ENEMY_KING + 289 * KINDS;
const CHECK: usize = OWN_KING + 289 * KINDS;
const REPLY: usize = CHECK + 2 * KINDS;
const CONTEST: usize = REPLY + 26 * KINDS;

const THREAT: usize = CONTEST + 9 * KINDS;
const FORK: usize = THREAT + 15 * KINDS;
const EVASION: usize = FORK + 6 * KINDS;
const LAST: usize = EVASION + 4 * KINDS;
const HAND: usize = LAST + 30 * KINDS;
const GUARD: usize = HAND + 5 * KINDS;

const ANSWER: usize = GUARD + 290 * KINDS;
const AROUND: usize = ANSWER + 4 * KINDS;

const RESCUE: usize = AROUND + 8 * 30 * KINDS;

/// Number of features (the weight vector's length).
pub const COUNT: usize = RESCUE + 6 * 5 * KINDS;

const _: () = assert!(COUNT <= u16::MAX as usize);

/// A feature index.
pub type Feature = u16;

fn seen(square: Square, turn: Color) -> Square {
    if turn == Color::WHITE {
        square.flip()
    } else {
        square
    }
}

/// Index 0..289 of `to` relative to `from` (both seen from the mover).
fn relative(from: Square, to: Square) -> usize {
    let df = (to.file().raw() - from.file().raw() + 8) as usize;
    let dr = (to.rank().raw() - from.rank().raw() + 8) as usize;
    17 * df + dr
}

/// SEE in centipawns into 7 buckets.
fn exchange_bucket(value: i32) -> usize {
    match value {
        ..=-800 => 0,
        -799..=-300 => 1,
        -299..=-1 => 2,
        0 => 3,
        1..=299 => 4,
        300..=799 => 5,
        _ => 6,
    }
}

/// (file, rank) steps to the 8 neighbours of a square.
const NEIGHBOURS: [(i8, i8); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];

/// What the features of every move of one position share: the side to
/// move's most valuable piece (not the king) en prise, attacked while
/// undefended or by a less valuable piece. Computed once a position.
#[derive(Clone, Copy, Debug)]
pub struct Threat {
    square: Square,
    /// 0..5, the classes of the rescue block.
    class: usize,
    attackers: Bitboard,
}

impl Threat {
    pub fn of(pos: &Position) -> Option<Threat> {
        let us = pos.turn();
        let them = us.flip();
        let occupied = pos.pieces();
        let mut best: Option<(i32, Threat)> = None;
        for sq in pos.bitboards().color_pieces(us).iter() {
            let kind = pos.piece_on(sq).piece_type();
            if kind == PieceType::KING {
                continue;
            }
            let attackers = pos.attackers_to_color(them, sq, occupied);
            if attackers.is_empty() {
                continue;
            }
            let value = piece_value(kind);
            let defended = !pos.attackers_to_color(us, sq, occupied).is_empty();
            let cheaper = attackers
                .iter()
                .any(|a| piece_value(pos.piece_on(a).piece_type()) < value);
            if (defended && !cheaper) || best.is_some_and(|(v, _)| v >= value) {
                continue;
            }
            let class = match kind {
                PieceType::PAWN => 0,
                PieceType::LANCE | PieceType::KNIGHT => 1,
                PieceType::BISHOP | PieceType::HORSE => 3,
                PieceType::ROOK | PieceType::DRAGON => 4,
                _ => 2,
            };
            best = Some((
                value,
                Threat {
                    square: sq,
                    class,
                    attackers,
                },
            ));
        }
        best.map(|(_, t)| t)
    }

    /// 1..=5 of the rescue block for `mv`, whose piece attacks `reach`
    /// from its destination.
    fn answer(&self, mv: Move32, reach: Bitboard) -> usize {
        let to = mv.to_sq();
        if !mv.is_drop() && mv.from_sq() == self.square {
            1
        } else if self.attackers.test(to) {
            2
        } else if self
            .attackers
            .iter()
            .any(|a| Bitboard::between(a, self.square).test(to))
        {
            3
        } else if reach.test(self.square) {
            4
        } else {
            5
        }
    }
}

/// Appends the [`PER_MOVE`] features of `mv`, a legal move of `pos`, to
/// `out`; `threat` is [`Threat::of`] the position.
pub fn push_move_features(
    pos: &Position,
    threat: Option<&Threat>,
    mv: Move32,
    out: &mut Vec<Feature>,
) {
    let us = pos.turn();
    let them = us.flip();
    let to = mv.to_sq();
    let to_seen = seen(to, us);
    let label = PieceLabel::of(pos, mv.to_move()).expect("a legal move has a label");
    let (kind, origin, escape, occupied) = match mv.dropped_piece() {
        Some(dropped) => (dropped, 81, 4, pos.pieces()),
        None => {
            let from = mv.from_sq();
            let moved = pos.piece_on(from).piece_type();
            let kind = if mv.is_promotion() {
                moved.promote()
            } else {
                moved
            };
            let attacked = pos.is_attacked_by(from, them);
            let mut without = pos.pieces();
            without.clear(from);
            let defended = !pos.attackers_to_color(us, from, without).is_empty();
            let escape = 2 * usize::from(attacked) + usize::from(defended);
            (kind, seen(from, us).raw() as usize, escape, without)
        }
    };
    let k = kind.raw() as usize - 1;
    let captured = pos.piece_on(to).piece_type().raw() as usize; // 0: none
    let mut after = occupied;
    after.set(to);
    let attackers = pos.attackers_to_color(them, to, after).count().min(2) as usize;
    let mut defenders_bb = pos.attackers_to_color(us, to, after);
    if !mv.is_drop() {
        defenders_bb.clear(mv.from_sq());
    }
    let defenders = defenders_bb.count().min(2) as usize;
    let last = pos.last_move();
    let reply = if last.is_normal() {
        let last_to = seen(last.to_sq(), us);
        let (df, dr) = (
            to_seen.file().raw() - last_to.file().raw(),
            to_seen.rank().raw() - last_to.rank().raw(),
        );
        if df.abs() <= 2 && dr.abs() <= 2 {
            (5 * (df + 2) + (dr + 2)) as usize
        } else {
            25
        }
    } else {
        25
    };
    // relative to a king; a problem without that king: the unused offset 0
    let from_king = |c: Color| {
        let king = pos.king_square(c);
        if king.is_on_board() {
            relative(seen(king, us), to_seen)
        } else {
            144
        }
    };
    let exchange = see(pos, mv);
    // what the moved piece attacks from its new square
    let reach = piece_attacks(Piece::from_parts(us, kind), to, after).0;
    let targets = reach & pos.bitboards().color_pieces(them);
    let (mut best, mut best_value, mut big) = (0usize, 0, 0usize);
    for sq in targets.iter() {
        let victim = pos.piece_on(sq).piece_type();
        let value = if victim == PieceType::KING {
            1_000_000
        } else {
            piece_value(victim)
        };
        if value > best_value {
            (best, best_value) = (victim.raw() as usize, value);
        }
        big += usize::from(victim != PieceType::PAWN);
    }
    let fork = 2 * big.min(2) + usize::from(exchange >= 0);
    let evasion = 2 * usize::from(pos.is_in_check()) + usize::from(captured != 0);
    let last_kind = if last.is_normal() {
        last.piece_after_move().piece_type().raw() as usize
    } else {
        0
    };
    let recapture = last.is_normal() && last.to_sq() == to;
    let hand = match mv.dropped_piece() {
        Some(dropped) => rsshogi::types::HandPiece::from_piece_type(dropped)
            .map_or(1, |h| pos.hand(us).count(h).clamp(1, 4) as usize),
        None => 0,
    };
    let guard = match mv.is_drop() {
        true => 289,
        false => {
            let king = pos.king_square(us);
            if king.is_on_board() {
                relative(seen(king, us), seen(mv.from_sq(), us))
            } else {
                144
            }
        }
    };
    // what the piece the opponent just moved attacks: the move may flee it
    // or step into it
    let answer = if last.is_normal() {
        let attacks = piece_attacks(pos.piece_on(last.to_sq()), last.to_sq(), pos.pieces()).0;
        let origin = !mv.is_drop() && attacks.test(mv.from_sq());
        2 * usize::from(origin) + usize::from(attacks.test(to))
    } else {
        0
    };
    let block = |offset: usize, index: usize| (offset + KINDS * index + k) as Feature;
    out.extend([
        (LABEL + label.raw() as usize) as Feature,
        block(ORIGIN, origin),
        block(CAPTURE, captured),
        block(EXCHANGE, exchange_bucket(exchange)),
        block(ESCAPE, escape),
        block(ENEMY_KING, from_king(them)),
        block(OWN_KING, from_king(us)),
        block(CHECK, usize::from(pos.gives_check_move32(mv))),
        block(REPLY, reply),
        block(CONTEST, 3 * attackers + defenders),
        block(THREAT, best),
        block(FORK, fork),
        block(EVASION, evasion),
        block(LAST, 2 * last_kind + usize::from(recapture)),
        block(HAND, hand),
        block(GUARD, guard),
        block(ANSWER, answer),
        match threat {
            Some(t) => block(RESCUE, 6 * t.class + t.answer(mv, reach)),
            None => block(RESCUE, 0),
        },
    ]);
    // the destination's neighbours, seen from the mover, after the move
    let from = (!mv.is_drop()).then(|| mv.from_sq());
    for (d, (df, dr)) in NEIGHBOURS.iter().enumerate() {
        let (f, r) = (to_seen.file().raw() + df, to_seen.rank().raw() + dr);
        let state = if !(0..9).contains(&f) || !(0..9).contains(&r) {
            29
        } else {
            let sq = seen(Square::new(9 * f + r), us);
            let piece = pos.piece_on(sq);
            if piece.is_empty() || Some(sq) == from {
                28
            } else {
                usize::from(piece.color() != us) * 14 + piece.piece_type().raw() as usize - 1
            }
        };
        out.push(block(AROUND, 30 * d + state));
    }
}

/// Whether `PieceType` raw values fit the kind blocks (1..=14).
const _: () = assert!(PieceType::DRAGON.raw() as usize == KINDS);

/// The features of every move in `moves`, `PER_MOVE` each, in order.
pub fn move_features(pos: &Position, moves: &[Move32]) -> Vec<Feature> {
    let mut out = Vec::with_capacity(moves.len() * PER_MOVE);
    let threat = Threat::of(pos);
    for &mv in moves {
        push_move_features(pos, threat.as_ref(), mv, &mut out);
    }
    out
}

/// The game move's index among `moves`, if it is there.
pub fn index_of(moves: &[Move32], played: Move) -> Option<usize> {
    moves.iter().position(|m| m.to_move() == played)
}

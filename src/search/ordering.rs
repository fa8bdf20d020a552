//! Move ordering: the transposition-table move, winning and equal captures
//! (MVV-LVA), killers, quiet moves by history, losing captures last.

use rsshogi::board::Position;
use rsshogi::types::{Move32, Piece};

use super::see::see;
use crate::eval::piece_value;

/// More than the most legal moves a shogi position can have (593).
pub const MAX_MOVES: usize = 600;

/// The ordering score of the transposition table's move.
pub const TT_MOVE: i32 = 1 << 30;
/// Captures that do not lose material by SEE score from here up.
pub const GOOD_CAPTURE: i32 = 1 << 28;
pub const KILLER: i32 = 1 << 27;
/// The counter move's score, just below the killers'.
pub const COUNTER: i32 = KILLER - 2;
const BAD_CAPTURE: i32 = -(1 << 28);
const HISTORY_MAX: i32 = 1 << 14;

/// A move's slot in the history tables: the piece after the move and its
/// destination.
pub fn piece_to(mv: Move32) -> usize {
    mv.piece_after_move().to_index() * 81 + mv.to_sq().to_index()
}

/// Slots of [`piece_to`].
pub const PIECE_TO: usize = Piece::COUNT * 81;

fn gravity(slot: &mut i32, bonus: i32) {
    let bonus = bonus.clamp(-HISTORY_MAX, HISTORY_MAX);
    *slot += bonus - *slot * bonus.abs() / HISTORY_MAX;
}

/// Continuation history: how good a quiet move was after a given move one
/// or two plies earlier (both as [`piece_to`] slots). Allocated on first use.
#[derive(Default)]
pub struct ContinuationHistory {
    table: Vec<i16>,
}

impl ContinuationHistory {
    pub fn ensure(&mut self) {
        if self.table.is_empty() {
            self.table = vec![0; PIECE_TO * PIECE_TO];
        }
    }

    /// The value of quiet `mv` after the move in slot `prev` (None: no move).
    pub fn get(&self, prev: Option<usize>, mv: Move32) -> i32 {
        match prev {
            Some(p) if !self.table.is_empty() => i32::from(self.table[p * PIECE_TO + piece_to(mv)]),
            _ => 0,
        }
    }

    pub fn update(&mut self, prev: Option<usize>, mv: Move32, bonus: i32) {
        if let Some(p) = prev
            && !self.table.is_empty()
        {
            let slot = &mut self.table[p * PIECE_TO + piece_to(mv)];
            let mut v = i32::from(*slot);
            gravity(&mut v, bonus);
            *slot = v as i16;
        }
    }
}

/// Everything the ordering of a quiet move looks at besides the move.
pub struct QuietContext<'a> {
    pub killers: &'a [Move32; 2],
    pub counter: Move32,
    pub history: &'a History,
    pub continuation: &'a ContinuationHistory,
    /// Slots of the moves one and two plies before.
    pub previous: [Option<usize>; 2],
}

/// Quiet-move history, indexed by the piece after the move and its destination.
pub struct History {
    table: Box<[[i32; 81]; Piece::COUNT]>,
}

impl Default for History {
    fn default() -> Self {
        Self {
            table: Box::new([[0; 81]; Piece::COUNT]),
        }
    }
}

impl History {
    #[cfg(test)]
    pub fn nonzero(&self) -> usize {
        self.table.iter().flatten().filter(|&&v| v != 0).count()
    }

    pub fn get(&self, mv: Move32) -> i32 {
        self.table[mv.piece_after_move().to_index()][mv.to_sq().to_index()]
    }

    /// Rewards (or, with a negative bonus, punishes) a quiet move; values
    /// decay towards zero as they grow, so old results fade.
    pub fn update(&mut self, mv: Move32, bonus: i32) {
        gravity(
            &mut self.table[mv.piece_after_move().to_index()][mv.to_sq().to_index()],
            bonus,
        );
    }
}

/// A list of moves, handed out best score first. The first few after each
/// batch of pushes are picked by selection (most cut-offs come early); if
/// the node goes on, the rest is sorted once. Moves may be pushed in stages
/// (captures, then killers, then quiets): the ones not yet handed out join
/// the next batch.
pub struct ScoredMoves {
    moves: [(i32, Move32); MAX_MOVES],
    len: usize,
    next: usize,
    /// Moves handed out since the last push; `usize::MAX` once sorted.
    picked: usize,
}

const SELECT_FIRST: usize = 3;

impl ScoredMoves {
    pub fn new() -> Self {
        Self {
            moves: [(0, Move32::MOVE_NONE); MAX_MOVES],
            len: 0,
            next: 0,
            picked: 0,
        }
    }

    pub fn clear(&mut self) {
        self.len = 0;
        self.next = 0;
        self.picked = 0;
    }

    pub fn push(&mut self, mv: Move32, score: i32) {
        self.moves[self.len] = (score, mv);
        self.len += 1;
        self.picked = 0;
    }

    /// The best remaining move and its ordering score.
    pub fn pick(&mut self) -> Option<(Move32, i32)> {
        self.pick_at_least(i32::MIN)
    }

    /// The best remaining move if its score is at least `min` (else it
    /// stays for a later pick).
    pub fn pick_at_least(&mut self, min: i32) -> Option<(Move32, i32)> {
        if self.next >= self.len {
            return None;
        }
        if self.picked < SELECT_FIRST {
            let mut best = self.next;
            for i in self.next + 1..self.len {
                if rank(self.moves[i]) > rank(self.moves[best]) {
                    best = i;
                }
            }
            self.moves.swap(self.next, best);
        } else if self.picked == SELECT_FIRST {
            self.moves[self.next..self.len].sort_unstable_by_key(|&m| std::cmp::Reverse(rank(m)));
            self.picked = usize::MAX;
        }
        let (score, mv) = self.moves[self.next];
        if score < min {
            return None;
        }
        self.next += 1;
        self.picked = self.picked.saturating_add(1);
        Some((mv, score))
    }

    /// Drops the moves not yet handed out that fail `keep`. The others
    /// come out in the same order as before: the order is total.
    pub fn retain_remaining(&mut self, mut keep: impl FnMut(Move32) -> bool) {
        let mut kept = self.next;
        for i in self.next..self.len {
            if keep(self.moves[i].1) {
                self.moves[kept] = self.moves[i];
                kept += 1;
            }
        }
        self.len = kept;
    }
}

/// The order moves are handed out in, best first: by score, ties by the
/// move's code, so that it does not depend on where a move stood in the
/// list (dropping some moves must not reorder the rest).
#[inline(always)]
fn rank((score, mv): (i32, Move32)) -> (i32, u32) {
    (score, mv.raw())
}

impl Default for ScoredMoves {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether a move is a capture (the destination holds an enemy piece).
pub fn is_capture(pos: &Position, mv: Move32) -> bool {
    !mv.is_drop() && !pos.piece_on(mv.to_sq()).is_empty()
}

/// Whether a move is quiet: neither a capture nor a promotion (the moves
/// move-count and futility pruning apply to).
pub fn is_quiet(pos: &Position, mv: Move32) -> bool {
    !is_capture(pos, mv) && !mv.is_promotion()
}

/// Most valuable victim first, least valuable attacker breaking ties.
pub fn mvv_lva(pos: &Position, mv: Move32) -> i32 {
    let victim = piece_value(pos.piece_on(mv.to_sq()).piece_type());
    let attacker = piece_value(pos.piece_on(mv.from_sq()).piece_type());
    victim * 16 - attacker / 16
}

/// Whether a capture loses material by static exchange; taking a piece
/// worth at least the taker cannot, so SEE is skipped for those.
pub fn loses_material(pos: &Position, mv: Move32) -> bool {
    let victim = piece_value(pos.piece_on(mv.to_sq()).piece_type());
    let attacker = piece_value(pos.piece_on(mv.from_sq()).piece_type());
    victim < attacker && see(pos, mv) < 0
}

/// The ordering score of a move in the main search.
pub fn score_move(
    pos: &Position,
    mv: Move32,
    tt_move: Move32,
    killers: &[Move32; 2],
    history: &History,
) -> i32 {
    score_tt_capture_killer(pos, mv, tt_move, killers).unwrap_or_else(|| {
        let promotion = if mv.is_promotion() { HISTORY_MAX } else { 0 };
        history.get(mv) + promotion
    })
}

/// The TT move, captures (winning or not by SEE) and killers, which both
/// searches order alike; `None` for any other quiet move.
fn score_tt_capture_killer(
    pos: &Position,
    mv: Move32,
    tt_move: Move32,
    killers: &[Move32; 2],
) -> Option<i32> {
    if mv == tt_move {
        return Some(TT_MOVE);
    }
    if is_capture(pos, mv) {
        let base = mvv_lva(pos, mv);
        return Some(if !loses_material(pos, mv) {
            GOOD_CAPTURE + base
        } else {
            BAD_CAPTURE + base
        });
    }
    if mv == killers[0] {
        return Some(KILLER + 1);
    }
    if mv == killers[1] {
        return Some(KILLER);
    }
    None
}

/// The ordering score of a move in the selective game search: as
/// [`score_move`], with the counter move after the killers and quiet moves
/// ordered by their history and continuation histories.
pub fn score_move_selective(pos: &Position, mv: Move32, tt_move: Move32, q: &QuietContext) -> i32 {
    if let Some(s) = score_tt_capture_killer(pos, mv, tt_move, q.killers) {
        return s;
    }
    if mv == q.counter {
        return COUNTER;
    }
    let promotion = if mv.is_promotion() { HISTORY_MAX } else { 0 };
    q.history.get(mv)
        + q.continuation.get(q.previous[0], mv)
        + q.continuation.get(q.previous[1], mv)
        + promotion
}

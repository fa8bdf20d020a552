//! Depth-1 scores of sibling positions, the labels of `extract`.

use std::sync::Arc;

use rsshogi::board::{
    CapturePlusPro, Move32List, Position, QuietChecks, QuietsProMinus, generate_moves_move32,
};
use rsshogi::types::{Bitboard, Color, Move32, PieceType};

use super::Control;
use super::mode::{Labelling, Mode};
use super::ordering::{MAX_MOVES, is_capture, score_move};
use super::score::{EVAL_LIMIT, INFINITE, mated_in};
use super::worker::{SearchBuffers, Worker, is_king_move};
use crate::eval::{Accumulator, Evaluator, KingSums, Learned};
use crate::features::PieceChange;

/// Scores sibling positions (the position after one candidate move) by a
/// depth-1 search: the opponent's best reply by one ply of search plus
/// quiescence, seen from the mover. One per thread; it keeps buffers and
/// move-ordering statistics but no transposition table, so a score depends
/// only on the position (and its history), never on what was scored before
/// (its principal variation may: see [`SiblingScorer::start_position`]).
///
/// ```
/// use std::sync::Arc;
/// use niwatori::eval::Material;
/// use niwatori::search::SiblingScorer;
/// let mut scorer = SiblingScorer::new(Arc::new(Material));
/// // Black has just dropped a pawn on 5c that White's gold takes for free:
/// // Black ends a gold and a pawn (600 + 100) down.
/// let mut pos = rsshogi::board::position_from_sfen("4k4/4g4/4P4/9/9/9/9/9/4K4 w - 2").unwrap();
/// assert_eq!(scorer.score(&mut pos), -700);
/// ```
pub struct SiblingScorer {
    eval: Arc<dyn Evaluator>,
    search: SiblingSearch,
}

impl SiblingScorer {
    pub fn new(eval: Arc<dyn Evaluator>) -> Self {
        Self {
            eval,
            search: SiblingSearch::new(),
        }
    }

    /// The score of `pos` (the opponent to move) in centipawns from the
    /// mover's point of view; mates are beyond ±10000. `pos` is unchanged.
    pub fn score(&mut self, pos: &mut Position) -> i32 {
        self.search.score(self.eval.as_ref(), pos)
    }

    /// The score of the sibling the legal move `mv` of `pos` leads to, as
    /// [`SiblingScorer::score`] gives; `pos` is left at the sibling. Saves
    /// taking the move back to read the parent, as `score` does with a
    /// learned evaluation.
    pub fn score_move(&mut self, pos: &mut Position, mv: Move32) -> i32 {
        self.search.score_move(self.eval.as_ref(), pos, mv)
    }

    /// Forgets what earlier siblings taught move ordering. Scores never
    /// depend on it; the principal variation may (between equal-scoring
    /// replies), so callers that want it reproducible call this before the
    /// siblings of each position.
    pub fn start_position(&mut self) {
        self.search.start_position();
    }

    /// The principal variation of the last [`score`](Self::score), from the
    /// sibling: the opponent's reply, then the captures quiescence chose.
    /// Applying it gives the leaf whose evaluation the score is (a move
    /// pruned by its exact ceiling could leave the leaf a ply short).
    pub fn pv(&self) -> &[Move32] {
        &self.search.pv
    }
}

/// [`SiblingScorer`]'s search with the evaluation passed per call (for
/// callers that hold a borrowed evaluation).
pub struct SiblingSearch {
    control: Control,
    buffers: Box<SearchBuffers>,
    pv: Vec<Move32>,
    /// An incremental model's sums of the last siblings' parent (by its
    /// key and the model's fingerprint): each sibling's follow from them by
    /// its move, and the caches of a generation are this parent's.
    parent: Option<(u64, Accumulator)>,
    /// The change of the sibling's move, from the parent.
    change: Option<PieceChange>,
}

impl Default for SiblingSearch {
    fn default() -> Self {
        Self::new()
    }
}

impl SiblingSearch {
    pub fn new() -> Self {
        Self {
            control: Control::new(),
            buffers: Box::new(SearchBuffers::new()),
            pv: Vec::new(),
            parent: None,
            change: None,
        }
    }

    /// As [`SiblingScorer::start_position`].
    pub fn start_position(&mut self) {
        self.buffers.killers[0] = [Move32::MOVE_NONE; 2];
        self.buffers.counter_evasions.fill(Move32::MOVE_NONE);
        self.buffers.capture_refutations.fill(Move32::MOVE_NONE);
    }

    /// As [`SiblingScorer::score`], with `eval`.
    pub fn score(&mut self, eval: &dyn Evaluator, pos: &mut Position) -> i32 {
        let sums = eval
            .learned()
            .filter(|l| l.is_incremental())
            .and_then(|l| self.sibling_sums(l, pos));
        self.search(eval, pos, sums)
    }

    /// As [`SiblingScorer::score_move`], with `eval`.
    pub fn score_move(&mut self, eval: &dyn Evaluator, pos: &mut Position, mv: Move32) -> i32 {
        let sums = eval
            .learned()
            .filter(|l| l.is_incremental())
            .and_then(|l| self.sums_after(l, pos, mv));
        pos.apply_move32(mv);
        self.search(eval, pos, sums)
    }

    /// The search of the sibling `pos`, whose sums are `sums` if known.
    fn search(
        &mut self,
        eval: &dyn Evaluator,
        pos: &mut Position,
        sums: Option<Accumulator>,
    ) -> i32 {
        let change = self.change.take().filter(|_| sums.is_some());
        let mut worker =
            Worker::<Labelling>::new(pos, eval, None, &self.control, 0, &mut self.buffers);
        worker.buf.accs[0] = sums;
        worker.buf.path[0] = change;
        let score = -worker
            .staged_root()
            .unwrap_or_else(|| worker.search(-INFINITE, INFINITE, 1, 0, true, false));
        self.pv.clear();
        self.pv.extend_from_slice(worker.pv());
        score
    }
}

impl SiblingSearch {
    /// The sums of the sibling `pos` from its parent's (counted once for
    /// all its siblings): the last move taken back and played again.
    /// `None` (count them) without a last move.
    fn sibling_sums(&mut self, learned: &Learned, pos: &mut Position) -> Option<Accumulator> {
        let last = pos.last_move();
        if last == Move32::MOVE_NONE || pos.undo_move32(last).is_err() {
            return None;
        }
        let sums = self.sums_after(learned, pos, last);
        pos.apply_move32(last);
        sums
    }

    /// The sums after the legal move `mv` of `pos` (a sibling's parent),
    /// from `pos`'s (counted once for all its siblings), and the move's
    /// change for the search's king sums.
    fn sums_after(&mut self, learned: &Learned, pos: &Position, mv: Move32) -> Option<Accumulator> {
        // the model's too: the caches hold its weights' sums
        let key = pos.key().low_u64() ^ learned.fingerprint();
        let parent = match self.parent {
            Some((k, acc)) if k == key => acc,
            _ => {
                let acc = learned.accumulate_position(pos)?;
                self.parent = Some((key, acc));
                self.buffers.near_generation += 1;
                acc
            }
        };
        self.change = Some(PieceChange::of(pos, mv));
        learned.accumulate_before_move(&parent, pos, mv)
    }
}

/// The piece types whose promotions are quiet moves (a pawn's are generated
/// with the captures).
const QUIET_PROMOTERS: [PieceType; 5] = [
    PieceType::LANCE,
    PieceType::KNIGHT,
    PieceType::SILVER,
    PieceType::BISHOP,
    PieceType::ROOK,
];

/// Quiet-move groups: origin squares, then dropped kinds.
pub(super) const QUIET_GROUPS: usize = 81 + 8;
/// No move, in [`Worker::learned_quiet_replies`]' chains of a group's moves.
const NO_MOVE: u16 = u16::MAX;

/// The running result of a full-window root.
struct Root {
    alpha: i32,
    best: i32,
    searched: usize,
    /// With material evaluations, the common ceiling of the quiet moves
    /// (a quiet reply reaching it becomes a killer).
    quiet_ceiling: Option<i32>,
}

impl<M: Mode> Worker<'_, M> {
    /// The depth-1 search of a sibling from the opponent's side, as
    /// `search(-INFINITE, INFINITE, 1, 0, ..)` in labelling mode gives,
    /// with the moves generated in stages: captures and pawn promotions,
    /// then quiet checks, then the quiet reply that held the evaluation at
    /// an earlier sibling (a killer), then, only if one of them could still
    /// count, the other quiet moves, then losing captures. A quiet move that gives no
    /// check can score no more than its ceiling (the evaluation after it; the
    /// mover may stand pat), and once the best score reaches that, it changes
    /// nothing. That is so at most roots: of 96 moves generated per root, 90
    /// were quiet and almost all of them pruned, after being generated,
    /// ordered and tested for check, which took a third of labelling time.
    ///
    /// The value is the same as the general search's; the principal
    /// variation may differ between equal-scoring replies. `None` (nothing
    /// searched) when the side to move is in check or the evaluator does not
    /// give the gains the stages need.
    pub(super) fn staged_root(&mut self) -> Option<i32> {
        // exact ceilings need labelling mode and an incremental evaluator,
        // which every evaluator giving promotion gains is
        let learned = self.incremental.is_some();
        if !M::LABELLING
            || self.pos.is_in_check()
            || !learned && self.eval.promotion_gain(PieceType::ROOK).is_none()
        {
            return None;
        }
        if !learned && self.quiet_gain_bound.is_none() {
            return None;
        }
        self.buf.pv_len[0] = 0;
        self.count_node();
        let static_eval = self.static_eval(0);
        // learned models: every quiet move has its own ceiling
        let quiet_ceiling = self.quiet_gain_bound.map(|bound| static_eval + bound);
        let mut root = Root {
            alpha: -INFINITE,
            best: -INFINITE,
            searched: 0,
            quiet_ceiling: quiet_ceiling.filter(|_| !learned),
        };

        let mut generated = Move32List::new();
        generate_moves_move32::<CapturePlusPro>(self.pos, &mut generated);
        let none = [Move32::MOVE_NONE; 2];
        self.buf.lists[0].clear();
        self.buf.bad_captures.clear();
        for &mv in generated.iter() {
            let s = score_move(self.pos, mv, Move32::MOVE_NONE, &none, &self.buf.history);
            if s < 0 {
                self.buf.bad_captures.push(mv, s);
            } else {
                self.buf.lists[0].push(mv, s);
            }
        }
        while let Some((mv, _)) = self.buf.lists[0].pick() {
            self.root_move(mv, is_capture(self.pos, mv), None, None, &mut root);
        }

        generated.clear();
        generate_moves_move32::<QuietChecks>(self.pos, &mut generated);
        for &mv in generated.iter() {
            if !self.is_pawn_promotion(mv) {
                self.root_move(mv, false, Some(true), None, &mut root);
            }
        }

        let Some(quiet_ceiling) = root.quiet_ceiling else {
            self.learned_quiet_replies(&mut root);
            return Some(self.finish_root(root));
        };

        // A quiet reply that held the evaluation at an earlier sibling often
        // holds it here too, and then the other quiet moves change nothing.
        let killers = self.buf.killers[0];
        for &mv in &killers {
            if (root.searched == 0 || root.best < quiet_ceiling)
                && mv != Move32::MOVE_NONE
                && !mv.is_promotion()
                && self.pos.is_pseudo_legal_move32(mv, false)
                && !is_capture(self.pos, mv)
                && !self.pos.gives_check_move32(mv)
            {
                self.root_move(mv, false, Some(false), Some(quiet_ceiling), &mut root);
            }
        }
        if root.searched == 0 || root.best < quiet_ceiling || self.promotion_may_exceed(root.best) {
            generated.clear();
            generate_moves_move32::<QuietsProMinus>(self.pos, &mut generated);
            // promotions first, as the general search orders them
            for promotions in [true, false] {
                for &mv in generated.iter() {
                    if mv.is_promotion() != promotions {
                        continue;
                    }
                    let ceiling = if promotions {
                        self.exact_ceiling(0, mv).expect("checked above")
                    } else {
                        quiet_ceiling
                    };
                    // a no-op if it gives no check; searched above if it does
                    if root.searched > 0 && root.best >= ceiling || killers.contains(&mv) {
                        continue;
                    }
                    if !self.pos.gives_check_move32(mv) {
                        let known = Some(ceiling);
                        self.root_move(mv, false, Some(false), known, &mut root);
                    }
                }
            }
        }

        Some(self.finish_root(root))
    }

    /// The losing captures, then the root's value.
    fn finish_root(&mut self, mut root: Root) -> i32 {
        while let Some((mv, _)) = self.buf.bad_captures.pick() {
            self.root_move(mv, true, None, None, &mut root);
        }
        if self.stopped {
            0
        } else if root.searched == 0 {
            mated_in(0)
        } else {
            root.best
        }
    }

    /// With a learned evaluation every quiet move has its own ceiling (the
    /// evaluation after it, from the accumulator without playing it): the
    /// ones that give no check, best ceiling first, until the next cannot
    /// beat the best score (most often after one). A piece's moves (or a
    /// kind's drops) form a group that shares a bound on their ceilings
    /// ([`Learned::quiet_ceiling_bound`]), and a group's exact ceilings are
    /// read only when its bound could beat the best ceiling known: most
    /// groups' never are. King moves and promotions are read exactly.
    ///
    /// Only the few groups are ranked, never the moves, and the ceilings'
    /// list is kept from sibling to sibling.
    fn learned_quiet_replies(&mut self, root: &mut Root) {
        let learned = self.incremental.expect("an incremental model");
        let acc = self.buf.accs[0].expect("evaluated at the root");
        let mut generated = Move32List::new();
        generate_moves_move32::<QuietsProMinus>(self.pos, &mut generated);
        // the ceilings read, with the sums each read, for `make_move` to reuse
        let mut exact = std::mem::take(&mut self.buf.quiet_ceilings);
        exact.clear();
        // The groups by their bounds' changes (which order them as the
        // bounds), best first, and each group's moves. A group's change is
        // the same at every sibling of a parent whose move moved no king:
        // the piece (or the hand) is the mover's and the sibling's move the
        // other side's.
        let cached = self.parent_changes_hold();
        let generation = self.buf.near_generation;
        let key = self.pos.key().low_u64();
        let mut groups = [(0i64, 0u8); QUIET_GROUPS];
        let mut groups_len = 0;
        // each group's moves in generated order, chained: `head[g]`,
        // `next[i]`, `last[g]`
        let mut head = [NO_MOVE; QUIET_GROUPS];
        let mut last = [NO_MOVE; QUIET_GROUPS];
        let mut next = [NO_MOVE; MAX_MOVES];
        for (i, &mv) in generated.iter().enumerate() {
            let Some(g) = self.quiet_group(mv) else {
                // legality before a king move's ceiling, as in quiescence
                if !is_king_move(mv) || self.pos.is_legal_after_pseudo_move32(mv) {
                    let ceiling = self.ceiling(mv);
                    exact.push((ceiling, mv, self.buf.ahead[0].2));
                }
                continue;
            };
            if head[g] == NO_MOVE {
                let count = || {
                    let change = learned.quiet_bound_change(self.pos, mv);
                    change.expect("an incremental model")
                };
                let change = if cached {
                    self.buf.quiet_bound_changes[g].get(generation, count)
                } else {
                    count()
                };
                groups[groups_len] = (change, g as u8);
                groups_len += 1;
            }
            match last[g] {
                NO_MOVE => head[g] = i as u16,
                l => next[usize::from(l)] = i as u16,
            }
            last[g] = i as u16;
        }
        let groups = &mut groups[..groups_len];
        groups.sort_unstable_by_key(|&(change, _)| std::cmp::Reverse(change));
        let mut groups = groups.iter().peekable();
        let turn = self.pos.turn();
        let bound_of = |change| {
            let bound = learned.quiet_bound_of(&acc, turn, change);
            bound.clamp(-EVAL_LIMIT, EVAL_LIMIT)
        };
        loop {
            let mut top = (0..exact.len()).max_by_key(|&i| exact[i].0);
            // read the groups that might beat the best ceiling known
            while let Some(&&(change, g)) = groups.peek() {
                let bound = bound_of(change);
                if top.is_some_and(|t| exact[t].0 >= bound)
                    || root.searched > 0 && root.best >= bound
                {
                    break;
                }
                groups.next();
                let mut i = head[usize::from(g)];
                while i != NO_MOVE {
                    let mv = generated[usize::from(i)];
                    let (ceiling, sum) =
                        self.quiet_ceiling(learned, &acc, usize::from(g), mv, cached);
                    exact.push((ceiling, mv, sum));
                    if top.is_none_or(|t| exact[t].0 < ceiling) {
                        top = Some(exact.len() - 1);
                    }
                    i = next[usize::from(i)];
                }
            }
            let Some(i) = top else {
                break;
            };
            let (ceiling, mv, sum) = exact.swap_remove(i);
            if root.searched > 0 && root.best >= ceiling {
                break;
            }
            // the quiet checks were searched with their stage
            if !self.pos.gives_check_move32(mv) {
                self.buf.ahead[0] = (key, mv, sum);
                self.root_move(mv, false, Some(false), Some(ceiling), root);
            }
        }
        self.buf.quiet_ceilings = exact;
    }

    /// The group of a quiet move: its origin square, or its dropped kind
    /// (`None` for promotions and king moves, whose ceilings are read
    /// exactly).
    fn quiet_group(&self, mv: Move32) -> Option<usize> {
        match mv.dropped_piece() {
            Some(pt) => Some(81 + pt.raw() as usize % 8),
            None if mv.is_promotion() || is_king_move(mv) => None,
            None => Some(mv.from_sq().to_index()),
        }
    }

    /// A root move's exact ceiling.
    fn ceiling(&mut self, mv: Move32) -> i32 {
        self.exact_ceiling(0, mv).expect("checked by staged_root")
    }

    /// The exact ceiling of the root's quiet move `mv` of group `g` (see
    /// [`Worker::exact_ceiling`]). Its change to the opponent's sums is
    /// the same at every sibling (`cached`: of a parent whose move moved no
    /// king; the piece and its squares are the mover's), so it is counted
    /// once per parent and move. With the opponent's sums after it.
    fn quiet_ceiling(
        &mut self,
        learned: &Learned,
        acc: &Accumulator,
        g: usize,
        mv: Move32,
        cached: bool,
    ) -> (i32, KingSums) {
        if !cached {
            let ceiling = self.ceiling(mv);
            return (ceiling, self.buf.ahead[0].2);
        }
        let change = self.quiet_change(learned, g, mv);
        let (after, sum) = learned.evaluate_after_change(acc, self.pos, mv, change);
        ((-after).clamp(-EVAL_LIMIT, EVAL_LIMIT), sum)
    }

    /// The change of the root's quiet move `mv` of group `g` to the
    /// opponent's sums, counted once per parent and move (a parent whose
    /// move moved no king: see [`Worker::quiet_ceiling`]).
    fn quiet_change(&mut self, learned: &Learned, g: usize, mv: Move32) -> KingSums {
        let them = self.pos.turn().flip();
        let generation = self.buf.near_generation;
        let known = &mut self.buf.quiet_changes[g * 81 + mv.to_sq().to_index()];
        // a few weights of at most 2^24 each
        let change = known.get(generation, || {
            learned.move_change(self.pos, mv, them).map(|c| c as i32)
        });
        change.map(i64::from)
    }

    /// Whether the root's quiet moves' changes come from the parent's
    /// ([`Worker::quiet_change`]): a sibling's move that moved no king.
    fn parent_changes_hold(&self) -> bool {
        self.buf.path[0]
            .is_some_and(|m| !m.moves_king_of(Color::BLACK) && !m.moves_king_of(Color::WHITE))
    }

    /// A non-capture pawn promotion (generated with the captures).
    fn is_pawn_promotion(&self, mv: Move32) -> bool {
        mv.is_promotion() && self.pos.piece_on(mv.from_sq()).piece_type() == PieceType::PAWN
    }

    /// Whether a quiet promotion might score above `best`: some piece that
    /// could promote has a ceiling above it and stands in the promotion
    /// zone or reaches an empty square there (a superset of the pieces that
    /// have a quiet promotion).
    fn promotion_may_exceed(&self, best: i32) -> bool {
        let us = self.pos.turn();
        let zone = Bitboard::promotion_zone(us);
        let empty = !self.pos.pieces();
        let raw = self.buf.evals[0].expect("evaluated at the root");
        QUIET_PROMOTERS.iter().any(|&pt| {
            let gain = self.eval.promotion_gain(pt).expect("checked by the caller");
            raw.saturating_add(gain).clamp(-EVAL_LIMIT, EVAL_LIMIT) > best
                && (!(self.pos.bitboards().pieces_for(pt, us) & zone).is_empty()
                    || !(self.pos.attacks_by(us, pt) & zone & empty).is_empty())
        })
    }

    /// One root move: skipped by its ceiling (`ceiling`, else its exact
    /// one) when that cannot reach alpha, else searched (a full window for
    /// the first, then a null window). `gives_check` is computed unless
    /// given.
    fn root_move(
        &mut self,
        mv: Move32,
        capture: bool,
        gives_check: Option<bool>,
        ceiling: Option<i32>,
        root: &mut Root,
    ) {
        let gives_check = gives_check.unwrap_or_else(|| self.pos.gives_check_move32(mv));
        // legality before a king move's ceiling, as in quiescence
        let king = is_king_move(mv);
        if king && !self.pos.is_legal_after_pseudo_move32(mv) {
            return;
        }
        if !gives_check {
            let ceiling = ceiling.unwrap_or_else(|| self.ceiling(mv));
            if ceiling <= root.alpha {
                if root.searched > 0 && root.best >= ceiling {
                    return;
                }
                if king || self.pos.is_legal_after_pseudo_move32(mv) {
                    root.best = root.best.max(ceiling);
                    root.searched += 1;
                }
                return;
            }
        }
        if !king && !self.pos.is_legal_after_pseudo_move32(mv) {
            return;
        }
        self.make_move(mv, gives_check, 0);
        let alpha = root.alpha;
        let mut score = if root.searched == 0 {
            INFINITE
        } else {
            -self.quiescence(-alpha - 1, -alpha, 1, 0)
        };
        if score > alpha {
            score = -self.quiescence(-INFINITE, -alpha, 1, 0);
        }
        self.pos
            .undo_move32(mv)
            .expect("undo of a move just applied cannot fail");
        root.searched += 1;
        if !capture
            && !gives_check
            && !mv.is_promotion()
            && root.quiet_ceiling.is_some_and(|c| score >= c)
        {
            let killers = &mut self.buf.killers[0];
            if killers[0] != mv {
                killers[1] = killers[0];
                killers[0] = mv;
            }
        }
        if score > root.best {
            root.best = score;
            if score > root.alpha {
                self.update_pv(0, mv);
                root.alpha = score;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{Material, MaterialHand};
    use crate::search::mode::FullWidth;
    use rsshogi::board::{NonEvasions, generate_legal_all_move32, position_from_sfen};

    /// The bench positions, every position one move after them, and every
    /// position of a bundled game.
    fn positions() -> Vec<Position> {
        let mut found = Vec::new();
        let mut moves = Move32List::new();
        for sfen in crate::bench::POSITIONS {
            let mut pos = position_from_sfen(sfen).unwrap();
            found.push(pos.clone());
            generate_legal_all_move32(&pos, &mut moves);
            for &mv in moves.iter() {
                pos.apply_move32(mv);
                found.push(pos.clone());
                pos.undo_move32(mv).unwrap();
            }
        }
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/kifu/pro/kifu09136.csa");
        let read = crate::records::read_games(std::path::Path::new(path)).unwrap();
        let game = &read.games[0];
        let mut pos = game.start_position();
        for mv in game.moves32() {
            found.push(pos.clone());
            pos.apply_move32(mv);
        }
        found
    }

    fn sorted(list: impl IntoIterator<Item = Move32>) -> Vec<u32> {
        let mut raw: Vec<u32> = list.into_iter().map(|m| m.raw()).collect();
        raw.sort_unstable();
        raw
    }

    /// The stages see each move of the general search's generator once:
    /// captures and pawn promotions plus the other quiet moves are all the
    /// moves, and the quiet checks are exactly those quiet moves that check.
    #[test]
    fn stages_generate_every_move_once() {
        let mut checked = 0;
        for pos in positions().iter().filter(|p| !p.is_in_check()) {
            let generate = |f: fn(&Position, &mut Move32List)| {
                let mut list = Move32List::new();
                f(pos, &mut list);
                list.iter().copied().collect::<Vec<_>>()
            };
            let all = generate(generate_moves_move32::<NonEvasions>);
            let mut staged = generate(generate_moves_move32::<CapturePlusPro>);
            let quiets = generate(generate_moves_move32::<QuietsProMinus>);
            staged.extend(&quiets);
            assert_eq!(sorted(staged), sorted(all), "{}", pos.to_sfen(None));
            let pawn = |mv: Move32| {
                mv.is_promotion() && pos.piece_on(mv.from_sq()).piece_type() == PieceType::PAWN
            };
            let checks = generate(generate_moves_move32::<QuietChecks>);
            let expected = quiets
                .iter()
                .copied()
                .filter(|&m| pos.gives_check_move32(m));
            assert_eq!(
                sorted(checks.into_iter().filter(|&m| !pawn(m))),
                sorted(expected),
                "{}",
                pos.to_sfen(None)
            );
            checked += 1;
        }
        assert!(checked > 500, "only {checked} positions");
    }

    /// The staged root gives every sibling the value of the plain depth-1
    /// search (not in labelling mode), with killers carried from sibling to
    /// sibling as extraction does, for both material evaluations and the
    /// incremental learned models (whose quiet replies each have their own
    /// ceiling).
    #[test]
    fn staged_root_scores_as_the_plain_search() {
        let control = Control::new();
        let mut moves = Move32List::new();
        let (mut compared, mut staged) = (0, 0);
        let [learned, learned_on_material] = crate::search::worker::tests::incremental_models();
        for eval in [
            &Material as &dyn Evaluator,
            &MaterialHand,
            &learned,
            &learned_on_material,
        ] {
            let mut search = SiblingSearch::new();
            for mut pos in positions() {
                generate_legal_all_move32(&pos, &mut moves);
                search.start_position();
                for &mv in moves.iter() {
                    pos.apply_move32(mv);
                    let score = search.score(eval, &mut pos);
                    let mut buf = SearchBuffers::new();
                    let mut w =
                        Worker::<FullWidth>::new(&mut pos, eval, None, &control, 0, &mut buf);
                    let plain = -w.search(-INFINITE, INFINITE, 1, 0, true, false);
                    assert_eq!(score, plain, "{}", pos.to_sfen(None));
                    compared += 1;
                    staged += usize::from(!pos.is_in_check());
                    pos.undo_move32(mv).unwrap();
                }
            }
        }
        assert!(staged > 40_000, "only {staged} of {compared} staged");
    }

    /// One search scoring each sibling with two models in turn (the
    /// caches it keeps per parent are the model's too) scores as a fresh
    /// search per model does.
    #[test]
    fn models_taking_turns_share_no_cached_sums() {
        let models = crate::search::worker::tests::incremental_models();
        let mut shared = SiblingSearch::new();
        let mut own = [SiblingSearch::new(), SiblingSearch::new()];
        let mut moves = Move32List::new();
        let mut compared = 0;
        for mut pos in positions().into_iter().step_by(7) {
            generate_legal_all_move32(&pos, &mut moves);
            for &mv in moves.iter() {
                for (model, alone) in models.iter().zip(&mut own) {
                    let turns = shared.score_move(model, &mut pos, mv);
                    pos.undo_move32(mv).unwrap();
                    let fresh = alone.score_move(model, &mut pos, mv);
                    assert_eq!(turns, fresh, "{}", pos.to_sfen(None));
                    pos.undo_move32(mv).unwrap();
                    compared += 1;
                }
            }
        }
        assert!(compared > 2_000, "only {compared} compared");
    }
}

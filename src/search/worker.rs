//! One search thread: principal variation search with a transposition
//! table, null-move pruning, late-move reductions, killers and history, and
//! a quiescence search over captures and pawn promotions with SEE pruning
//! and a mate-in-1 check at the horizon.

use std::marker::PhantomData;
use std::ops::ControlFlow;
use std::sync::atomic::Ordering;

use rsshogi::board::{
    CapturePlusPro, Legal, Move32List, MoveGenType, NonEvasions, Position, QuietsProMinus,
    generate_moves_move32, generate_recaptures_move32,
};
use rsshogi::mate::solve_mate_in_one_in_place;
use rsshogi::types::{Color, Move32, Piece, PieceType, RepetitionState};

use super::Control;
use super::mode::Mode;
use super::ordering::{
    COUNTER, ContinuationHistory, GOOD_CAPTURE, History, KILLER, PIECE_TO, QuietContext,
    ScoredMoves, TT_MOVE, is_capture, is_quiet, loses_material, mvv_lva, piece_to, score_move,
    score_move_selective,
};
use super::score::{
    EVAL_LIMIT, INFINITE, MATE_IN_MAX_PLY, MAX_PLY, from_tt, is_mate_score, mate_in, mated_in,
    to_tt,
};
use super::see::see;
use super::sibling::QUIET_GROUPS;
use crate::eval::{Accumulator, Evaluator, KingSums, Learned, Material};
use crate::features::PieceChange;
use crate::policy::PolicyModel;
use crate::policy::features::{PER_MOVE, Threat, push_move_features};
use crate::tt::{Bound, Entry, TranspositionTable};

/// Beyond this many plies of quiescence, a position is judged by its evaluation.
const MAX_QUIESCENCE_PLY: usize = 16;

/// From this quiescence ply on, only recaptures on the square of the last
/// move are searched (Stockfish long used this rule from its fifth
/// quiescence ply). With every capture allowed, material-only quiescence ran
/// through long sequences of free captures all over the board: 80 nodes per
/// sibling, many of them 2-16 plies deep, 92 % of the depth-1 labelling
/// search's time. Two plies of any capture (the reply to the move, and the
/// answer to that), then recaptures, cut that search's time by 2.4x and
/// changed 22 % of the labels; a model trained on them agreed with the game
/// move as often as one trained on full-quiescence labels (27.8 % against
/// 26.0 % held-out, 550 games).
const RECAPTURES_FROM_QPLY: usize = 2;

/// The game search's quiescence tries any capture for more plies than
/// labelling's (Stockfish and YaneuraOu: five), and looks for a mate in
/// one at every node not found in the table (as YaneuraOu does), not only
/// at its first.
const GAME_RECAPTURES_FROM_QPLY: usize = 5;

// Selective search (the game search) parameters; margins in centipawns
// of material (a pawn is 100).
const RFP_DEPTH: i32 = 7;
const RFP_MARGIN: i32 = 120;
const RAZOR_DEPTH: i32 = 3;
const RAZOR_MARGIN: i32 = 350;
/// The null move is tried only this far above beta, less 16 per ply of
/// depth (YaneuraOu's condition). With `eval >= beta` alone a flat
/// material evaluation cut almost every node: niwatori reported depth 22
/// where YaneuraOu reached 13 in the same time, and lost more.
const NULL_MOVE_MARGIN: i32 = 378;
const NULL_MOVE_SLOPE: i32 = 16;
const IIR_DEPTH: i32 = 4;
const SINGULAR_DEPTH: i32 = 8;
const SINGULAR_MARGIN: i32 = 2;
const LMP_DEPTH: i32 = 8;
const FUTILITY_DEPTH: i32 = 7;
const FUTILITY_BASE: i32 = 150;
const FUTILITY_MARGIN: i32 = 110;
const SEE_QUIET_DEPTH: i32 = 8;
const SEE_QUIET_MARGIN: i32 = 25;
const SEE_CAPTURE_DEPTH: i32 = 6;
const SEE_CAPTURE_MARGIN: i32 = 120;
/// Ordering scores from here up are the killers and the counter move.
const COUNTER_ORDER: i32 = 1 << 26;

/// No static evaluation at this ply (the side to move was in check).
const NO_EVAL: i32 = i32::MIN;

/// What the pruning and reduction rules read of a node of the main search.
#[derive(Clone, Copy)]
struct Node {
    ply: usize,
    depth: i32,
    pv_node: bool,
    in_check: bool,
    /// `-INFINITE` in check.
    static_eval: i32,
    improving: bool,
}

/// A move of a node's loop, as late-move pruning and reductions see it.
struct LateMove {
    mv: Move32,
    /// Its ordering score.
    order: i32,
    /// Moves searched before it.
    searched: usize,
    quiet: bool,
    gives_check: bool,
    /// The game search's base reduction for its depth and move number.
    reduction: i32,
}

/// What the shallow pruning of a move that gives no check decided.
#[derive(Clone, Copy)]
enum Pruned {
    No,
    Alone,
    /// This move and every later quiet move that gives no check: the node's
    /// quiet moves not yet handed out are dropped unscored.
    WithLaterQuiets,
}

/// How many plies shallower a move after the first is searched with a null
/// window (it is searched again at full depth if it beats alpha).
#[inline(always)]
fn late_move_reduction<M: Mode>(node: &Node, late: &LateMove, new_depth: i32) -> i32 {
    let (depth, searched, quiet, order) = (node.depth, late.searched, late.quiet, late.order);
    if M::SELECTIVE {
        if depth >= 2 && searched > usize::from(node.pv_node) && (quiet || order < 0) {
            let mut r = late.reduction;
            r -= i32::from(node.pv_node);
            r += i32::from(!node.improving);
            // A check is extended a ply and reduced as any other move:
            // reducing it a ply less too grew the tree by a quarter.
            r -= i32::from(node.in_check);
            if quiet {
                r -= i32::from(order >= COUNTER_ORDER);
                r -= (order / 12_000).clamp(-2, 2);
            }
            r.clamp(0, (new_depth - 1).max(0))
        } else {
            0
        }
    } else if depth >= 3 && searched >= 3 && quiet && !node.in_check && !late.gives_check {
        1 + i32::from(searched >= 8) + i32::from(depth >= 8 && searched >= 16)
    } else {
        0
    }
}

/// A table score of this bound settles the window (`alpha`, `beta`).
fn bound_cuts(bound: Bound, score: i32, alpha: i32, beta: i32) -> bool {
    match bound {
        Bound::Exact => true,
        Bound::Lower => score >= beta,
        Bound::Upper => score <= alpha,
    }
}

/// Quiet moves searched at `depth` before the rest are pruned.
fn lmp_limit(depth: i32, improving: bool) -> usize {
    let base = 3 + depth * depth;
    (if improving { base } else { base / 2 }) as usize
}

/// Late-move reductions by depth and move number: ln(d) ln(m) /
/// [`LMR_DIVISOR`], rounded.
pub(crate) struct Reductions([[i8; 64]; 64]);

/// Against YaneuraOu's search at byoyomi 200 ms, 2.5 scored 4.5 points
/// more than 2 over 200 paired games, where 1.6 had fallen to 6.6 %
/// (README, search strength).
const LMR_DIVISOR: f64 = 2.5;

impl Reductions {
    fn new() -> Self {
        let mut t = [[0i8; 64]; 64];
        for (d, row) in t.iter_mut().enumerate().skip(1) {
            for (m, r) in row.iter_mut().enumerate().skip(1) {
                *r = (0.5 + (d as f64).ln() * (m as f64).ln() / LMR_DIVISOR) as i8;
            }
        }
        Self(t)
    }

    fn get(&self, depth: i32, move_number: usize) -> i32 {
        i32::from(self.0[(depth.max(0) as usize).min(63)][move_number.min(63)])
    }
}

/// Whether `mv` moves a king (whose exact ceiling costs a recount).
pub(super) fn is_king_move(mv: Move32) -> bool {
    mv.piece_after_move().piece_type() == PieceType::KING
}

/// Per-thread tables and move lists, kept between searches so that a
/// search (a sibling score) allocates nothing.
pub(crate) struct SearchBuffers {
    /// The evasion that last refuted a check in quiescence, by the checking
    /// piece and its square (sibling scoring only).
    pub(super) counter_evasions: Box<[Move32; Piece::COUNT * 81]>,
    /// The capture that last failed high in quiescence, by ply (sibling
    /// scoring only).
    pub(super) capture_refutations: [Move32; MAX_PLY + 2],
    /// The sibling root's losing captures, searched last.
    pub(super) bad_captures: ScoredMoves,
    pub(super) killers: Vec<[Move32; 2]>,
    pub(super) history: History,
    pub(super) lists: Vec<ScoredMoves>,
    pv: Box<[[Move32; MAX_PLY + 1]; MAX_PLY + 1]>,
    pub(super) pv_len: [usize; MAX_PLY + 1],
    /// Unclamped static evaluation of the position at each ply, carried down
    /// by [`Evaluator::move_delta`]; `None` until known.
    pub(super) evals: [Option<i32>; MAX_PLY + 2],
    /// A learned evaluation's sums at each ply, carried down by
    /// [`Learned::accumulate_before_move`] (incremental models only);
    /// `None` until known.
    pub(super) accs: [Option<Accumulator>; MAX_PLY + 2],
    /// At each ply, the position (key) and move whose exact ceiling was
    /// last read from `accs`, with the opponent's sum after it:
    /// [`Worker::make_move`] then adds only the mover's own view.
    pub(super) ahead: [(u64, Move32, KingSums); MAX_PLY + 2],
    /// The sibling root's quiet moves with their exact ceilings (and the
    /// opponent's sums after each, for [`SearchBuffers::ahead`]), kept to
    /// allocate once.
    pub(super) quiet_ceilings: Vec<(i32, Move32, KingSums)>,
    /// The clamped static evaluation the search saw at each ply
    /// ([`NO_EVAL`] in check), for "improving".
    static_evals: [i32; MAX_PLY + 2],
    /// The [`piece_to`] slot of the move played from each ply (`None`
    /// for a null move).
    pub(super) played: [Option<usize>; MAX_PLY + 2],
    /// The move left out of the node at each ply (singular extension).
    excluded: [Move32; MAX_PLY + 2],
    /// The quiet move that last refuted each move (by its slot).
    counter_moves: Box<[Move32; PIECE_TO]>,
    continuation: ContinuationHistory,
    reductions: Reductions,
    /// Sibling scoring with an incremental model: the changes of the moves
    /// from the siblings' parent to the root (the sibling's move), then to
    /// each ply of the first few (the moves made). See
    /// [`Worker::king_sum_near`].
    pub(super) path: [Option<PieceChange>; NEAR_PLIES],
    /// Each king's sums near each square in each view, in the siblings'
    /// parent, as of generation `near_generation` (one per parent):
    /// `near[king][view][square]`.
    pub(super) near: Box<[[[PerParent<i64>; 81]; 2]; 2]>,
    pub(super) near_generation: u32,
    /// The sibling root's quiet-move groups' bound changes in the siblings'
    /// parent ([`Learned::quiet_bound_change`]), by group, as of a
    /// generation of `near_generation`.
    pub(super) quiet_bound_changes: [PerParent<i64>; QUIET_GROUPS],
    /// Likewise each quiet move's change to the opponent's sums
    /// ([`Learned::move_change`]), by group and destination.
    pub(super) quiet_changes: Box<[PerParent<[i32; 2]>; QUIET_GROUPS * 81]>,
    /// Recent full evaluations by position key (learned evaluations only:
    /// a pure function of the position, and costly); empty until used.
    eval_cache: Vec<(u64, i32)>,
    /// The fingerprint of the model whose values `eval_cache` holds: the
    /// buffers outlive a search, and the model may change between two.
    eval_cache_model: Option<u64>,
}

/// The plies of a sibling search whose king moves' sums come from the
/// parent's ([`Worker::king_sum_near`]). Deeper, a move's change read at
/// every move made cost more than the king moves it served (labelling
/// 0.5 % slower with 3, 1.9 % with 4).
const NEAR_PLIES: usize = 2;

/// A value counted once for all the siblings of a parent: the generation
/// (`near_generation`) it was counted in, and the value.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PerParent<T>(u32, T);

impl<T: Copy + PartialEq + std::fmt::Debug> PerParent<T> {
    /// The value of `generation`: counted by `count` unless it was already
    /// (in test builds counted again and compared).
    #[inline]
    pub(super) fn get(&mut self, generation: u32, count: impl FnOnce() -> T) -> T {
        if self.0 == generation {
            if cfg!(any(test, debug_assertions)) {
                assert_eq!(self.1, count(), "a value kept for the siblings' parent");
            }
            return self.1;
        }
        let value = count();
        *self = Self(generation, value);
        value
    }
}

/// Entries of [`SearchBuffers::eval_cache`] (a power of two; 1 MiB).
const EVAL_CACHE: usize = 1 << 16;

impl SearchBuffers {
    /// Quiet-move history entries that are not zero.
    #[cfg(test)]
    pub fn history_entries(&self) -> usize {
        self.history.nonzero()
    }

    /// Ready for a new search from the root, keeping the histories.
    pub fn start_search(&mut self) {
        self.killers.fill([Move32::MOVE_NONE; 2]);
        self.excluded.fill(Move32::MOVE_NONE);
        self.played.fill(None);
        self.static_evals.fill(NO_EVAL);
    }

    pub fn new() -> Self {
        Self {
            counter_evasions: Box::new([Move32::MOVE_NONE; Piece::COUNT * 81]),
            capture_refutations: [Move32::MOVE_NONE; MAX_PLY + 2],
            bad_captures: ScoredMoves::new(),
            killers: vec![[Move32::MOVE_NONE; 2]; MAX_PLY + 2],
            history: History::default(),
            lists: (0..=MAX_PLY).map(|_| ScoredMoves::new()).collect(),
            pv: Box::new([[Move32::MOVE_NONE; MAX_PLY + 1]; MAX_PLY + 1]),
            pv_len: [0; MAX_PLY + 1],
            evals: [None; MAX_PLY + 2],
            accs: [None; MAX_PLY + 2],
            ahead: [(0, Move32::MOVE_NONE, [0; 2]); MAX_PLY + 2],
            quiet_ceilings: Vec::new(),
            static_evals: [NO_EVAL; MAX_PLY + 2],
            played: [None; MAX_PLY + 2],
            excluded: [Move32::MOVE_NONE; MAX_PLY + 2],
            counter_moves: Box::new([Move32::MOVE_NONE; PIECE_TO]),
            continuation: ContinuationHistory::default(),
            reductions: Reductions::new(),
            eval_cache: Vec::new(),
            eval_cache_model: None,
            path: [None; NEAR_PLIES],
            near: Box::new([[[PerParent::default(); 81]; 2]; 2]),
            near_generation: 0,
            quiet_bound_changes: [PerParent::default(); QUIET_GROUPS],
            quiet_changes: Box::new([PerParent::default(); QUIET_GROUPS * 81]),
        }
    }
}

/// The legal check evasions, in the order of rsshogi's `Evasions`
/// generator. `Legal` in check yields exactly those (tested below) without
/// `Evasions`' full pseudo-legality test of every drop on every empty square.
fn generate_evasions(pos: &Position, list: &mut Move32List) {
    debug_assert!(pos.is_in_check());
    generate_moves_move32::<Legal>(pos, list);
}

/// How far a node's staged move generation has got (see [`Worker::next_move`]).
#[derive(Clone, Copy)]
enum Stage {
    /// Only the table move is in the list.
    Table,
    /// Captures and pawn promotions are in; the good captures go first.
    GoodCaptures,
    /// The killers and the counter move that are moves here are in.
    Killers([Move32; 3]),
    /// Everything is in; `filtered`: the pruned quiet moves are out.
    Rest { filtered: bool },
}

/// What a node's move ordering needs besides the histories.
struct OrderContext {
    in_check: bool,
    /// Remaining depth of the node (the policy orders only deep enough ones).
    depth: i32,
    tt_move: Move32,
    killers: [Move32; 2],
    counter: Move32,
    previous: [Option<usize>; 2],
}

impl OrderContext {
    /// What the ordering of a quiet move needs, with the worker's tables
    /// (passed as fields, so that the move list stays free to push to).
    fn quiet<'a>(
        &'a self,
        history: &'a History,
        continuation: &'a ContinuationHistory,
    ) -> QuietContext<'a> {
        QuietContext {
            killers: &self.killers,
            counter: self.counter,
            history,
            continuation,
            previous: self.previous,
        }
    }
}

/// What quiescence's stand pat found.
enum StandPat {
    /// At least beta: this bound cuts.
    Cut(i32),
    /// At most alpha: the stand pat is worth at most this.
    Below(i32),
    /// The static evaluation.
    Exact(i32),
}

/// One thread's search of one kind ([`Mode`]).
pub(crate) struct Worker<'a, M: Mode> {
    pub pos: &'a mut Position,
    pub(super) eval: &'a dyn Evaluator,
    /// Exact upper bound on what a quiet move gains (see [`Evaluator::quiet_gain_bound`]).
    pub(super) quiet_gain_bound: Option<i32>,
    /// How far the evaluation may stray from material (see
    /// [`Evaluator::material_spread`]).
    material_spread: Option<i32>,
    /// The evaluation as a learned model whose sums follow a move
    /// ([`Learned::is_incremental`]).
    pub(super) incremental: Option<&'a Learned>,
    pub tt: Option<&'a TranspositionTable>,
    pub control: &'a Control,
    pub id: usize,
    pub nodes: u64,
    pub seldepth: usize,
    /// The depth of the iteration under way (bounds check extensions).
    pub root_depth: i32,
    pub stopped: bool,
    pub(super) buf: &'a mut SearchBuffers,
    /// A move policy that orders quiet moves at nodes of at least
    /// [`POLICY_DEPTH`] (selective search only).
    pub(super) policy: Option<&'a PolicyModel>,
    /// Whether quiet moves the pruning rules would all prune are dropped
    /// unsorted ([`Pruned::WithLaterQuiets`]); off only to test that this
    /// leaves the tree as it was.
    pub(super) drop_pruned_quiets: bool,
    mode: PhantomData<M>,
}

/// Remaining depth from which the policy orders quiet moves: below it the
/// features cost more than the nodes a better order saves.
pub const POLICY_DEPTH: i32 = 5;
/// Ordering points per unit of the policy's score (its log-odds): a unit is
/// worth two saturated history entries, so the policy leads and history
/// orders the moves it scores alike (bench: 0.63× the nodes, against
/// 0.70× at 8,192; equal-time Elo alike within the noise).
pub const POLICY_SCALE: f32 = 32768.0;

impl<'a, M: Mode> Worker<'a, M> {
    pub fn new(
        pos: &'a mut Position,
        eval: &'a dyn Evaluator,
        tt: Option<&'a TranspositionTable>,
        control: &'a Control,
        id: usize,
        buf: &'a mut SearchBuffers,
    ) -> Self {
        buf.evals[0] = None;
        buf.accs[0] = None;
        buf.path = [None; NEAR_PLIES];
        if M::SELECTIVE {
            // the continuation history the selective search orders by
            buf.continuation.ensure();
        }
        let model = eval.learned().map(Learned::fingerprint);
        if model.is_some() && buf.eval_cache_model != model {
            buf.eval_cache.clear();
            buf.eval_cache.resize(EVAL_CACHE, (u64::MAX, 0));
            buf.eval_cache_model = model;
        }
        Self {
            pos,
            eval,
            quiet_gain_bound: eval.quiet_gain_bound(),
            material_spread: eval.material_spread(),
            incremental: eval.learned().filter(|l| l.is_incremental()),
            tt,
            control,
            id,
            nodes: 0,
            seldepth: 0,
            root_depth: 0,
            stopped: false,
            buf,
            policy: None,
            drop_pruned_quiets: true,
            mode: PhantomData,
        }
    }

    /// Orders quiet moves by `policy` too.
    pub fn with_policy(mut self, policy: Option<&'a PolicyModel>) -> Self {
        self.policy = policy;
        self
    }

    /// The principal variation found by the last search from ply 0.
    pub fn pv(&self) -> &[Move32] {
        &self.buf.pv[0][..self.buf.pv_len[0]]
    }

    /// The static evaluation of the position at `ply`, clamped: the
    /// incremental score when the parent carried one down, else the full
    /// evaluation (then remembered for the children).
    pub(super) fn static_eval(&mut self, ply: usize) -> i32 {
        let raw = match self.buf.evals[ply] {
            Some(v) => {
                if cfg!(any(test, debug_assertions)) {
                    assert_eq!(
                        v,
                        self.eval.evaluate(self.pos),
                        "carried evaluation of {}",
                        self.pos.to_sfen(None)
                    );
                }
                v
            }
            None => {
                let v = match self.incremental {
                    Some(learned) => {
                        let acc = self.accumulator(learned, ply);
                        let v = learned.evaluate_accumulated(&acc, self.pos.turn());
                        if cfg!(any(test, debug_assertions)) {
                            assert_eq!(
                                v,
                                self.eval.evaluate(self.pos),
                                "carried sums of {}",
                                self.pos.to_sfen(None)
                            );
                        }
                        v
                    }
                    None => self.full_eval(),
                };
                self.buf.evals[ply] = Some(v);
                v
            }
        };
        raw.clamp(-EVAL_LIMIT, EVAL_LIMIT)
    }

    /// The incremental model's sums of the position at `ply`: carried down,
    /// or counted now (and kept for the children).
    fn accumulator(&mut self, learned: &Learned, ply: usize) -> Accumulator {
        *self.buf.accs[ply].get_or_insert_with(|| {
            learned
                .accumulate_position(self.pos)
                .expect("an incremental model")
        })
    }

    /// The full evaluation of the current position, through the cache when
    /// the evaluation is a learned one (a position recurs through
    /// transpositions and re-searches; a table hit is cheaper than the sum).
    fn full_eval(&mut self) -> i32 {
        if self.eval.learned().is_none() {
            return self.eval.evaluate(self.pos);
        }
        let key = self.pos.key().low_u64();
        let slot = &mut self.buf.eval_cache[key as usize & (EVAL_CACHE - 1)];
        if slot.0 == key {
            debug_assert_eq!(slot.1, self.eval.evaluate(self.pos));
            return slot.1;
        }
        let v = self.eval.evaluate(self.pos);
        *slot = (key, v);
        v
    }

    /// Quiescence's stand pat at `ply`: with an evaluation that stays
    /// within `r` of material, material alone settles it when it is more
    /// than `r` outside the window (fail-soft bounds); else the static
    /// evaluation.
    fn lazy_stand_pat(&mut self, ply: usize, alpha: i32, beta: i32) -> StandPat {
        if let Some(r) = self.material_spread
            && self.buf.evals[ply].is_none()
            && self.buf.accs[ply].is_none()
        {
            let material = Material.evaluate(self.pos);
            let floor = (material - r).clamp(-EVAL_LIMIT, EVAL_LIMIT);
            if floor >= beta {
                return StandPat::Cut(floor);
            }
            let ceiling = (material + r).clamp(-EVAL_LIMIT, EVAL_LIMIT);
            if ceiling <= alpha {
                return StandPat::Below(ceiling);
            }
        }
        StandPat::Exact(self.static_eval(ply))
    }

    /// With an incremental evaluator, the clamped evaluation after `mv` from
    /// the mover's side. When `mv` gives no check its child is a quiescence
    /// node that may stand pat (or finds a mate against the mover, lower
    /// still), so the move scores at most this.
    pub(super) fn exact_ceiling(&mut self, ply: usize, mv: Move32) -> Option<i32> {
        if !M::LABELLING {
            return None;
        }
        if let Some(learned) = self.incremental {
            let near = self.king_sum_near(learned, ply, mv, self.pos.turn().flip());
            let acc = self.buf.accs[ply].as_ref()?;
            let (after, sum) = learned.evaluate_after_move(acc, self.pos, mv, near)?;
            self.buf.ahead[ply] = (self.pos.key().low_u64(), mv, sum);
            return Some((-after).clamp(-EVAL_LIMIT, EVAL_LIMIT));
        }
        let raw = self.buf.evals[ply]?;
        let delta = self.eval.move_delta(self.pos, mv)?;
        Some((raw + delta).clamp(-EVAL_LIMIT, EVAL_LIMIT))
    }

    /// For a king move `mv` in the first plies of a sibling search, the moving
    /// king's sum in `view` from its new square ([`Learned::sum_near`]),
    /// which would count every piece: the siblings' parent's, counted once
    /// for all of them, followed through the moves since. King moves were
    /// a tenth of the ceilings read and half their cost.
    fn king_sum_near(
        &mut self,
        learned: &Learned,
        ply: usize,
        mv: Move32,
        view: Color,
    ) -> Option<i64> {
        if !M::LABELLING || ply >= NEAR_PLIES || !is_king_move(mv) {
            return None;
        }
        let king = self.pos.turn();
        let owner = usize::from(view != king);
        let to = mv.to_sq();
        let mut since = 0;
        for change in &self.buf.path[..=ply] {
            let change = change.as_ref()?;
            if change.moves_king_of(king) {
                return None;
            }
            since += learned.change_near(change, view, owner, to);
        }
        let generation = self.buf.near_generation;
        let near = &mut self.buf.near[king.to_index()][view.to_index()][to.to_index()];
        let parent = near.get(generation, || {
            learned.sum_near(self.pos, view, owner, to, mv.from_sq()) - since
        });
        Some(parent + since)
    }

    /// The table's move for this position as a pseudo-legal move of it, or
    /// `MOVE_NONE` (none stored, or another position's under the same index).
    fn pseudo_legal_tt_move(&self, tt_move16: u16) -> Move32 {
        if tt_move16 == 0 {
            return Move32::MOVE_NONE;
        }
        let mv = self
            .pos
            .move32_from_move(rsshogi::types::Move::from_raw(tt_move16));
        if mv != Move32::MOVE_NONE && self.pos.is_pseudo_legal_move32(mv, false) {
            mv
        } else {
            Move32::MOVE_NONE
        }
    }

    /// Generates the moves of type `G` of the position at `ply` but the ones
    /// in `skip` (already in the list) and pushes them with their ordering
    /// scores.
    fn push_scored<G: MoveGenType>(&mut self, ply: usize, skip: &[Move32], q: &OrderContext) {
        let mut generated = Move32List::new();
        generate_moves_move32::<G>(self.pos, &mut generated);
        let qc = q.quiet(&self.buf.history, &self.buf.continuation);
        for &mv in generated.iter() {
            // Whole moves, piece included: a killer from another position
            // with this one's squares is another move.
            if skip.contains(&mv) {
                continue;
            }
            let s = if M::SELECTIVE {
                score_move_selective(self.pos, mv, Move32::MOVE_NONE, &qc)
            } else {
                score_move(
                    self.pos,
                    mv,
                    Move32::MOVE_NONE,
                    &q.killers,
                    &self.buf.history,
                )
            };
            self.buf.lists[ply].push(mv, s);
        }
    }

    /// The quiet moves (as [`Self::push_scored`] with `QuietsProMinus`),
    /// their history scores raised by the policy's.
    fn push_quiets_by_policy(
        &mut self,
        policy: &PolicyModel,
        ply: usize,
        skip: &[Move32],
        q: &OrderContext,
    ) {
        let mut generated = Move32List::new();
        generate_moves_move32::<QuietsProMinus>(self.pos, &mut generated);
        let mut features = Vec::with_capacity(generated.len() * PER_MOVE);
        let threat = Threat::of(self.pos);
        for &mv in generated.iter() {
            if !skip.contains(&mv) {
                push_move_features(self.pos, threat.as_ref(), mv, &mut features);
            }
        }
        let qc = q.quiet(&self.buf.history, &self.buf.continuation);
        let mut scored = features.chunks_exact(PER_MOVE);
        for &mv in generated.iter() {
            if skip.contains(&mv) {
                continue;
            }
            let history = score_move_selective(self.pos, mv, Move32::MOVE_NONE, &qc);
            let policy = policy.score(scored.next().expect("one score a move"));
            self.buf.lists[ply].push(mv, history + (POLICY_SCALE * policy) as i32);
        }
    }

    /// The next move of the node at `ply` to search, best first, with its
    /// ordering score; generated in stages so that a cut-off by the table
    /// move, a good capture or a killer saves generating (and scoring) the
    /// quiet moves. Evasions, and the full-width search's moves, are
    /// generated all at once after the table move.
    ///
    /// Once `quiets_pruned` (see [`Pruned::WithLaterQuiets`]), the quiet
    /// moves not yet handed out that give no check are dropped unsorted.
    fn next_move(
        &mut self,
        ply: usize,
        stage: &mut Stage,
        q: &OrderContext,
        quiets_pruned: bool,
    ) -> Option<(Move32, i32)> {
        loop {
            match *stage {
                Stage::Table => {
                    if let Some(next) = self.buf.lists[ply].pick() {
                        return Some(next);
                    }
                    if q.in_check {
                        // `Legal` in check: the evasions (see `generate_evasions`).
                        self.push_scored::<Legal>(ply, &[q.tt_move], q);
                        *stage = Stage::Rest { filtered: false };
                    } else if M::SELECTIVE {
                        self.push_scored::<CapturePlusPro>(ply, &[q.tt_move], q);
                        *stage = Stage::GoodCaptures;
                    } else {
                        self.push_scored::<NonEvasions>(ply, &[q.tt_move], q);
                        *stage = Stage::Rest { filtered: false };
                    }
                }
                Stage::GoodCaptures => {
                    if let Some(next) = self.buf.lists[ply].pick_at_least(GOOD_CAPTURE) {
                        return Some(next);
                    }
                    // Killers and the counter move: quiet moves (never
                    // promotions) that are still pseudo-legal here.
                    let tt16 = q.tt_move.to_move().raw();
                    let candidates = [
                        (q.killers[0], KILLER + 1),
                        (q.killers[1], KILLER),
                        (q.counter, COUNTER),
                    ];
                    let mut pushed = [Move32::MOVE_NONE; 3];
                    for (i, &(mv, score)) in candidates.iter().enumerate() {
                        if mv != Move32::MOVE_NONE
                            && mv.to_move().raw() != tt16
                            && candidates[..i].iter().all(|&(m, _)| m != mv)
                            && !mv.is_promotion()
                            && self.pos.is_pseudo_legal_move32(mv, false)
                            && !is_capture(self.pos, mv)
                        {
                            self.buf.lists[ply].push(mv, score);
                            pushed[i] = mv;
                        }
                    }
                    *stage = Stage::Killers(pushed);
                }
                Stage::Killers(pushed) => {
                    if let Some(next) = self.buf.lists[ply].pick_at_least(COUNTER) {
                        return Some(next);
                    }
                    let skip = [q.tt_move, pushed[0], pushed[1], pushed[2]];
                    match self.policy {
                        Some(policy) if M::SELECTIVE && q.depth >= POLICY_DEPTH => {
                            self.push_quiets_by_policy(policy, ply, &skip, q)
                        }
                        _ => self.push_scored::<QuietsProMinus>(ply, &skip, q),
                    }
                    *stage = Stage::Rest { filtered: false };
                }
                Stage::Rest { filtered } => {
                    if quiets_pruned && !filtered {
                        let pos = &*self.pos;
                        self.buf.lists[ply].retain_remaining(|mv| {
                            !is_quiet(pos, mv) || pos.gives_check_move32(mv)
                        });
                        *stage = Stage::Rest { filtered: true };
                    }
                    return self.buf.lists[ply].pick();
                }
            }
        }
    }

    /// Starts loading the table cluster of the position after `mv`, so that
    /// the child's probe finds it in the cache.
    fn prefetch_after(&self, mv: Move32) {
        if let Some(tt) = self.tt {
            // rsshogi marks its key prediction for removal in 2.0; until then
            // it is the exact key `make_move` will produce.
            #[allow(deprecated)]
            tt.prefetch(self.pos.key_after(mv).low_u64());
        }
    }

    /// Plays `mv` from the position at `ply`, carrying the evaluation down.
    pub fn make_move(&mut self, mv: Move32, gives_check: bool, ply: usize) {
        if let Some(learned) = self.incremental {
            let acc = self.accumulator(learned, ply);
            let (key, ahead, sum) = self.buf.ahead[ply];
            self.buf.accs[ply + 1] = if ahead == mv && key == self.pos.key().low_u64() {
                let them = self.pos.turn().flip();
                let near = self.king_sum_near(learned, ply, mv, self.pos.turn());
                learned.accumulate_before_move_knowing(&acc, self.pos, mv, (them, sum), near)
            } else {
                learned.accumulate_before_move(&acc, self.pos, mv)
            };
            self.buf.evals[ply + 1] = None;
            if M::LABELLING && ply + 1 < NEAR_PLIES {
                self.buf.path[ply + 1] = Some(PieceChange::of(self.pos, mv));
            }
        } else {
            self.buf.evals[ply + 1] = match self.buf.evals[ply] {
                Some(e) => self.eval.move_delta(self.pos, mv).map(|d| -(e + d)),
                None => None,
            };
        }
        self.buf.played[ply] = Some(piece_to(mv));
        self.pos.apply_move32_with_gives_check(mv, gives_check);
    }

    pub(super) fn count_node(&mut self) {
        self.nodes += 1;
        if self.nodes & 255 == 0 || self.control.nodes_limited() {
            if self.id == 0 {
                self.control.check_limits(self.nodes);
            } else {
                self.control.publish_nodes(self.id, self.nodes);
            }
            self.stopped = self.control.stop.load(Ordering::Relaxed);
        }
    }

    pub fn update_pv(&mut self, ply: usize, mv: Move32) {
        self.buf.pv[ply][ply] = mv;
        let child_len = self.buf.pv_len[ply + 1].max(ply + 1);
        for i in ply + 1..child_len {
            self.buf.pv[ply][i] = self.buf.pv[ply + 1][i];
        }
        self.buf.pv_len[ply] = child_len;
    }

    /// The PV at `ply` is this one move (a mate found without a child search).
    fn set_pv_leaf(&mut self, ply: usize, mv: Move32) {
        self.buf.pv[ply][ply] = mv;
        self.buf.pv_len[ply] = ply + 1;
    }

    /// Alpha-beta search of `depth` plies from the current position, `ply`
    /// plies below the root. Fail-soft; returns 0 when stopped.
    ///
    /// In a mode without `SELECTIVE` ([`Mode`]) the search is full-width (only exact
    /// shortcuts prune), as labelling and its tests need; the game search
    /// is selective: reverse futility, razoring, a stronger null move,
    /// internal iterative reductions, move-count, futility and SEE pruning
    /// and logarithmic late-move reductions, with moves ordered by counter
    /// moves and continuation histories too.
    pub fn search(
        &mut self,
        alpha: i32,
        beta: i32,
        mut depth: i32,
        ply: usize,
        pv_node: bool,
        null_ok: bool,
    ) -> i32 {
        if depth <= 0 {
            return self.quiescence(alpha, beta, ply, 0);
        }
        self.buf.pv_len[ply] = ply;
        self.count_node();
        if self.stopped {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        let (mut alpha, beta) = match self.node_window(alpha, beta, ply) {
            ControlFlow::Continue(window) => window,
            ControlFlow::Break(value) => return value,
        };
        let selective = M::SELECTIVE;

        // A search of this node without one move, for a singular extension:
        // the table holds the full node's result, neither read nor written.
        let excluded = self.buf.excluded[ply];
        let key = self.pos.key().low_u64();
        let tt_entry = self
            .tt
            .filter(|_| excluded == Move32::MOVE_NONE)
            .and_then(|tt| tt.probe(key));
        let tt_move16 = tt_entry.map_or(0, |e| e.mv);
        if let Some(e) = tt_entry
            && !pv_node
            && e.depth >= depth
        {
            let score = from_tt(e.score, ply);
            if bound_cuts(e.bound, score, alpha, beta) {
                return score;
            }
        }

        let in_check = self.pos.is_in_check();
        let static_eval = if in_check {
            -INFINITE
        } else {
            self.static_eval(ply)
        };
        self.buf.static_evals[ply] = if in_check { NO_EVAL } else { static_eval };
        // The position is better than two plies ago (or than four, when the
        // side was in check then): prune less, reduce less.
        let improving = !in_check && {
            let earlier = [2, 4]
                .into_iter()
                .filter(|&back| ply >= back)
                .map(|back| self.buf.static_evals[ply - back])
                .find(|&e| e != NO_EVAL);
            earlier.is_none_or(|e| static_eval > e)
        };
        let node = Node {
            ply,
            depth,
            pv_node,
            in_check,
            static_eval,
            improving,
        };
        // A main-search entry (depth ≥ 1) was written by a visit that
        // probed this very position for a mate in one and found none (a
        // mate returns before any write), and a quiescence entry says so
        // when its visit probed: the probe would say the same.
        let mate_probed = tt_entry.is_some_and(|e| e.depth >= 1 || e.no_mate_in_one);
        if !in_check
            && ply > 0
            && excluded == Move32::MOVE_NONE
            && let Some(value) = self.cut_before_moves(&node, alpha, beta, null_ok, mate_probed)
        {
            return value;
        }
        // Internal iterative reduction: without a move from the table this
        // node was not searched before; a shallower search is cheaper and
        // fills the table for the next iteration.
        if selective && depth >= IIR_DEPTH && tt_move16 == 0 && excluded == Move32::MOVE_NONE {
            depth -= 1;
        }
        let node = Node { depth, ..node };
        let singular = match tt_entry {
            Some(e) if selective && ply > 0 && excluded == Move32::MOVE_NONE => {
                match self.singular(&node, e, beta) {
                    ControlFlow::Continue(singular) => singular,
                    ControlFlow::Break(value) => return value,
                }
            }
            _ => false,
        };

        let killers = self.buf.killers[ply];
        let previous = [
            ply.checked_sub(1).and_then(|p| self.buf.played[p]),
            ply.checked_sub(2).and_then(|p| self.buf.played[p]),
        ];
        let counter = previous[0].map_or(Move32::MOVE_NONE, |p| self.buf.counter_moves[p]);
        // The table move is tried before any move is generated: when it
        // cuts, as it mostly does, generating and ordering the rest is saved.
        self.buf.lists[ply].clear();
        let tt_move = self.pseudo_legal_tt_move(tt_move16);
        if tt_move != Move32::MOVE_NONE {
            self.buf.lists[ply].push(tt_move, TT_MOVE);
        }
        let order_context = OrderContext {
            in_check,
            depth,
            tt_move,
            killers,
            counter,
            previous,
        };
        let mut stage = Stage::Table;

        // At the frontier a move that gives no check leads to a quiescence
        // node that may stand pat, so it cannot score above a ceiling: for a
        // quiet move static_eval + the evaluator's quiet gain bound, for any
        // move with an incremental evaluator the evaluation after it. It is
        // skipped when that cannot reach alpha.
        let frontier = depth == 1 && !in_check;
        let quiet_ceiling = self.quiet_gain_bound.map(|b| static_eval + b);

        let mut best = -INFINITE;
        let mut best_move = Move32::MOVE_NONE;
        let mut searched = 0usize;
        let mut quiets_tried = [Move32::MOVE_NONE; 64];
        let mut quiet_count = 0usize;
        // Set once a rule has pruned a quiet move that would prune all later
        // quiet moves that give no check alike.
        let mut quiets_pruned = false;
        while let Some((mv, order)) = self.next_move(ply, &mut stage, &order_context, quiets_pruned)
        {
            if mv == excluded {
                continue;
            }
            let gives_check = self.pos.gives_check_move32(mv);
            let quiet = is_quiet(self.pos, mv);
            if frontier
                && !gives_check
                && let Some(ceiling) = if quiet {
                    quiet_ceiling
                } else {
                    self.exact_ceiling(ply, mv)
                }
                && ceiling <= alpha
            {
                // Pruning a legal move lifts `best` to the ceiling and counts
                // it as searched; once both already hold that is a no-op, so
                // legality need not even be tested. A quiet move's ceiling is
                // the node's: from then on every quiet move is such a no-op.
                if searched > 0 && best >= ceiling {
                    quiets_pruned |= quiet && self.drop_pruned_quiets;
                    continue;
                }
                if self.pos.is_legal_after_pseudo_move32(mv) {
                    best = best.max(ceiling);
                    searched += 1;
                    quiets_pruned |= quiet && self.drop_pruned_quiets;
                }
                continue;
            }
            let late = LateMove {
                mv,
                order,
                searched,
                quiet,
                gives_check,
                reduction: if selective {
                    self.buf.reductions.get(depth, searched + 1)
                } else {
                    0
                },
            };
            // Shallow pruning once some move holds a score that is not a
            // loss by mate (so a position is never called mated for want of
            // searched moves).
            if selective && ply > 0 && best > -MATE_IN_MAX_PLY && !gives_check {
                match self.prunes_late_move(&node, &late, alpha) {
                    Pruned::No => {}
                    Pruned::Alone => continue,
                    Pruned::WithLaterQuiets => {
                        quiets_pruned |= self.drop_pruned_quiets;
                        continue;
                    }
                }
            }
            if !self.pos.is_legal_after_pseudo_move32(mv) {
                continue;
            }
            // Checks are searched a ply deeper (shogi's mating attacks are
            // strings of checks), up to twice the iteration's depth.
            let extension = i32::from(
                selective
                    && (gives_check || singular && mv.to_move().raw() == tt_move16)
                    && (ply as i32) < 2 * self.root_depth,
            );
            let new_depth = depth - 1 + extension;
            if new_depth > 0 {
                self.prefetch_after(mv);
            }
            self.make_move(mv, gives_check, ply);
            let score = if searched == 0 {
                -self.search(-beta, -alpha, new_depth, ply + 1, pv_node, true)
            } else {
                let reduction = late_move_reduction::<M>(&node, &late, new_depth);
                let mut s = -self.search(
                    -alpha - 1,
                    -alpha,
                    new_depth - reduction,
                    ply + 1,
                    false,
                    true,
                );
                if s > alpha && reduction > 0 {
                    s = -self.search(-alpha - 1, -alpha, new_depth, ply + 1, false, true);
                }
                if s > alpha && s < beta && pv_node {
                    s = -self.search(-beta, -alpha, new_depth, ply + 1, true, true);
                }
                s
            };
            self.pos
                .undo_move32(mv)
                .expect("undo of a move just applied cannot fail");
            if self.stopped {
                return 0;
            }
            searched += 1;
            if score > best {
                best = score;
                if score > alpha {
                    best_move = mv;
                    self.update_pv(ply, mv);
                    if score >= beta {
                        if quiet {
                            self.reward_quiet(
                                ply,
                                depth,
                                mv,
                                &quiets_tried[..quiet_count],
                                previous,
                            );
                        }
                        break;
                    }
                    alpha = score;
                }
            }
            if quiet && quiet_count < quiets_tried.len() {
                quiets_tried[quiet_count] = mv;
                quiet_count += 1;
            }
        }
        if searched == 0 {
            // No legal move: mated (a position without moves is lost in
            // shogi); without the excluded move, below the singular beta.
            return if excluded == Move32::MOVE_NONE {
                mated_in(ply)
            } else {
                alpha
            };
        }
        if let Some(tt) = self.tt.filter(|_| excluded == Move32::MOVE_NONE) {
            let bound = if best >= beta {
                Bound::Lower
            } else if best_move != Move32::MOVE_NONE {
                Bound::Exact
            } else {
                Bound::Upper
            };
            tt.store(
                key,
                best_move.to_move().raw(),
                to_tt(best, ply),
                depth,
                bound,
            );
        }
        best
    }

    /// Repetitions, mate-distance bounds and the ply limit: the node's value
    /// when it ends here, else its window narrowed to the mates still possible.
    #[inline(always)]
    fn node_window(&mut self, alpha: i32, beta: i32, ply: usize) -> ControlFlow<i32, (i32, i32)> {
        if ply == 0 {
            return ControlFlow::Continue((alpha, beta));
        }
        match self.pos.cached_repetition_state_with_ply(ply) {
            RepetitionState::Draw => return ControlFlow::Break(0),
            RepetitionState::Win => return ControlFlow::Break(mate_in(ply)),
            RepetitionState::Lose => return ControlFlow::Break(mated_in(ply)),
            _ => {}
        }
        let alpha = alpha.max(mated_in(ply));
        let beta = beta.min(mate_in(ply + 1));
        if alpha >= beta {
            return ControlFlow::Break(alpha);
        }
        if ply >= MAX_PLY - 1 {
            return ControlFlow::Break(self.static_eval(ply));
        }
        ControlFlow::Continue((alpha, beta))
    }

    /// The cuts tried before any move, at a node not in check: a mate in
    /// one (unless `mate_probed`: an earlier visit looked); in the game
    /// search reverse futility and razoring; the null move.
    #[inline(always)]
    fn cut_before_moves(
        &mut self,
        node: &Node,
        alpha: i32,
        beta: i32,
        null_ok: bool,
        mate_probed: bool,
    ) -> Option<i32> {
        let Node {
            ply,
            depth,
            pv_node,
            static_eval,
            improving,
            ..
        } = *node;
        let selective = M::SELECTIVE;
        // Reverse futility: so far above beta that a quiet move would not
        // bring it back at this depth. Before the mate-in-one probe: the
        // node fails high either way.
        if selective
            && !pv_node
            && !is_mate_score(beta)
            && depth <= RFP_DEPTH
            && static_eval - RFP_MARGIN * (depth - i32::from(improving)) >= beta
        {
            return Some(static_eval);
        }
        // The game search leaves a depth-1 node's mate in one to its moves
        // (a check is never pruned, and the mated child has no evasion):
        // probing every frontier node cost more than finding it a ply later.
        if !mate_probed
            && (!selective || depth >= 2)
            && let Some(mv) = solve_mate_in_one_in_place(self.pos)
        {
            self.set_pv_leaf(ply, mv);
            return Some(mate_in(ply + 1));
        }
        if selective && !pv_node && !is_mate_score(beta) {
            // Razoring: far below alpha, only captures could help.
            if depth <= RAZOR_DEPTH && static_eval + RAZOR_MARGIN * depth <= alpha {
                let v = self.quiescence(alpha, alpha + 1, ply, 0);
                if self.stopped {
                    return Some(0);
                }
                if v <= alpha {
                    return Some(v);
                }
            }
        }
        let null_depth = if selective { 2 } else { 3 };
        let null_margin = if selective {
            NULL_MOVE_MARGIN - NULL_MOVE_SLOPE * depth
        } else {
            0
        };
        if pv_node
            || !null_ok
            || depth < null_depth
            || static_eval < beta
            || static_eval < beta + null_margin
        {
            return None;
        }
        let reduction = if selective {
            3 + depth / 3 + ((static_eval - beta) / 200).min(3)
        } else {
            2 + depth / 4
        };
        if self.pos.apply_null_move().is_err() {
            return None;
        }
        self.buf.evals[ply + 1] = if self.eval.null_move_negates() {
            self.buf.evals[ply].map(|e| -e)
        } else {
            None
        };
        // passing keeps the sums; the other side's view applies
        self.buf.accs[ply + 1] = self.buf.accs[ply];
        if let Some(change) = self.buf.path.get_mut(ply + 1) {
            *change = None;
        }
        self.buf.played[ply] = None;
        let score = -self.search(
            -beta,
            -beta + 1,
            depth - 1 - reduction,
            ply + 1,
            false,
            false,
        );
        let _ = self.pos.undo_null_move();
        if self.stopped {
            return Some(0);
        }
        (score >= beta).then(|| if is_mate_score(score) { beta } else { score })
    }

    /// Singular extension: when every other move falls well short of the
    /// table move's score at half the depth, the table move is searched a
    /// ply deeper (`Continue(true)`); when some other move also reaches
    /// beta, the node cuts (`Break`).
    #[inline(always)]
    fn singular(&mut self, node: &Node, e: Entry, beta: i32) -> ControlFlow<i32, bool> {
        let Node { ply, depth, .. } = *node;
        if depth < SINGULAR_DEPTH
            || e.mv == 0
            || e.depth < depth - 3
            || e.bound == Bound::Upper
            || is_mate_score(from_tt(e.score, ply))
        {
            return ControlFlow::Continue(false);
        }
        let tt_move = self
            .pos
            .move32_from_move(rsshogi::types::Move::from_raw(e.mv));
        if !self.pos.is_pseudo_legal_move32(tt_move, false)
            || !self.pos.is_legal_after_pseudo_move32(tt_move)
        {
            return ControlFlow::Continue(false);
        }
        let singular_beta = from_tt(e.score, ply) - SINGULAR_MARGIN * depth;
        self.buf.excluded[ply] = tt_move;
        let value = self.search(
            singular_beta - 1,
            singular_beta,
            (depth - 1) / 2,
            ply,
            false,
            false,
        );
        self.buf.excluded[ply] = Move32::MOVE_NONE;
        self.buf.pv_len[ply] = ply;
        if self.stopped {
            ControlFlow::Break(0)
        } else if value < singular_beta {
            ControlFlow::Continue(true)
        } else if singular_beta >= beta {
            ControlFlow::Break(singular_beta)
        } else {
            ControlFlow::Continue(false)
        }
    }

    /// The game search's shallow pruning of a move that gives no check:
    /// late quiet moves (move count), quiet moves far below alpha
    /// (futility), and moves that lose material (SEE).
    #[inline(always)]
    fn prunes_late_move(&self, node: &Node, late: &LateMove, alpha: i32) -> Pruned {
        let depth = node.depth;
        let lmr_depth = (depth - 1 - late.reduction).max(0);
        let mv = late.mv;
        let pruned = if late.quiet {
            // Move count and futility only tighten as the loop goes on
            // (more moves searched, alpha higher, later quiet moves
            // ordered lower): every later quiet move goes too.
            if (depth <= LMP_DEPTH
                && late.searched >= lmp_limit(depth, node.improving)
                && late.order < COUNTER_ORDER)
                || (!node.in_check
                    && lmr_depth <= FUTILITY_DEPTH
                    && node.static_eval + FUTILITY_BASE + FUTILITY_MARGIN * lmr_depth <= alpha)
            {
                return Pruned::WithLaterQuiets;
            }
            lmr_depth <= SEE_QUIET_DEPTH
                && !mv.is_drop()
                && see(self.pos, mv) < -SEE_QUIET_MARGIN * lmr_depth * lmr_depth
        } else {
            depth <= SEE_CAPTURE_DEPTH
                && !mv.is_drop()
                && see(self.pos, mv) < -SEE_CAPTURE_MARGIN * depth
        };
        if pruned { Pruned::Alone } else { Pruned::No }
    }

    fn reward_quiet(
        &mut self,
        ply: usize,
        depth: i32,
        mv: Move32,
        tried: &[Move32],
        previous: [Option<usize>; 2],
    ) {
        let killers = &mut self.buf.killers[ply];
        if killers[0] != mv {
            killers[1] = killers[0];
            killers[0] = mv;
        }
        let bonus = depth * depth;
        self.buf.history.update(mv, bonus);
        for &other in tried {
            if other != mv {
                self.buf.history.update(other, -bonus);
            }
        }
        if M::SELECTIVE {
            if let Some(p) = previous[0] {
                self.buf.counter_moves[p] = mv;
            }
            let bonus = (depth * depth * 16).min(2000);
            for prev in previous {
                self.buf.continuation.update(prev, mv, bonus);
                for &other in tried {
                    if other != mv {
                        self.buf.continuation.update(prev, other, -bonus);
                    }
                }
            }
        }
    }

    /// The score of quiescence move `mv` at `qply` when its child can only
    /// stand pat, known without playing it: the child may try nothing but
    /// recaptures, is not in check, and no piece of its side attacks the
    /// destination once `mv` is played. Its value is then its evaluation,
    /// and `mv` scores its exact ceiling (`known` if the caller has it).
    /// `None`: search the child.
    fn stand_pat_child(
        &mut self,
        ply: usize,
        qply: usize,
        mv: Move32,
        gives_check: bool,
        known: Option<i32>,
    ) -> Option<i32> {
        if gives_check || qply + 1 < RECAPTURES_FROM_QPLY {
            return None;
        }
        let ceiling = match known {
            Some(c) => c,
            None => self.exact_ceiling(ply, mv)?,
        };
        let to = mv.to_sq();
        let mut occupied = self.pos.pieces();
        if !mv.is_drop() {
            occupied.clear(mv.from_sq());
        }
        occupied.set(to);
        let them = self.pos.turn().flip();
        if !self.pos.attackers_to_color(them, to, occupied).is_empty() {
            return None;
        }
        self.buf.pv_len[ply + 1] = ply + 1;
        Some(ceiling)
    }

    /// Takes `mv`'s `score` into a quiescence node's `best` and `alpha`
    /// (and its principal variation); true when it reaches `beta`.
    fn raise_best(
        &mut self,
        ply: usize,
        mv: Move32,
        score: i32,
        best: &mut i32,
        alpha: &mut i32,
        beta: i32,
    ) -> bool {
        if score > *best {
            *best = score;
            if score > *alpha {
                self.update_pv(ply, mv);
                if score >= beta {
                    return true;
                }
                *alpha = score;
            }
        }
        false
    }

    /// The score of the legal quiescence move `mv` at `ply`: its child
    /// searched, or read off when it can only stand pat (`ceiling`: its
    /// exact ceiling, if already read). `None` if stopped.
    #[allow(clippy::too_many_arguments)]
    fn quiescence_move(
        &mut self,
        mv: Move32,
        gives_check: bool,
        ceiling: Option<i32>,
        alpha: i32,
        beta: i32,
        ply: usize,
        qply: usize,
    ) -> Option<i32> {
        if let Some(leaf) = self.stand_pat_child(ply, qply, mv, gives_check, ceiling) {
            return Some(leaf);
        }
        if M::SELECTIVE {
            self.prefetch_after(mv);
        }
        self.make_move(mv, gives_check, ply);
        let score = -self.quiescence(-beta, -alpha, ply + 1, qply + 1);
        self.pos
            .undo_move32(mv)
            .expect("undo of a move just applied cannot fail");
        (!self.stopped).then_some(score)
    }

    /// The slot of [`SearchBuffers::counter_evasions`] for the check just
    /// given (labelling only).
    fn counter_slot(&self) -> Option<usize> {
        let last = self.pos.last_move();
        (M::LABELLING && last != Move32::MOVE_NONE)
            .then(|| last.piece_after_move().to_index() * 81 + last.to_sq().to_index())
    }

    /// One pseudo-legal move of a quiescence node: skipped by its ceiling,
    /// its legality or SEE, else searched and `best` raised. `Some(true)`
    /// on a cutoff (remembered as the node's refutation when labelling),
    /// `None` if stopped.
    #[allow(clippy::too_many_arguments)]
    fn quiescence_try(
        &mut self,
        mv: Move32,
        in_check: bool,
        best: &mut i32,
        alpha: &mut i32,
        beta: i32,
        ply: usize,
        qply: usize,
    ) -> Option<bool> {
        let gives_check = self.pos.gives_check_move32(mv);
        // a king move's ceiling recounts every piece: its legality
        // costs less and rules many out first
        let king = is_king_move(mv);
        if king && !self.pos.is_legal_after_pseudo_move32(mv) {
            return Some(false);
        }
        let ceiling = if gives_check {
            None
        } else {
            self.exact_ceiling(ply, mv)
        };
        if let Some(ceiling) = ceiling
            && ceiling <= *alpha
        {
            // Cannot reach alpha (the child may stand pat); the ceiling
            // is a true upper bound whether or not the move is legal
            // or SEE-pruned, so neither needs testing.
            *best = (*best).max(ceiling);
            return Some(false);
        }
        if !king && !self.pos.is_legal_after_pseudo_move32(mv)
            || !in_check && !mv.is_drop() && loses_material(self.pos, mv)
        {
            return Some(false);
        }
        let score = self.quiescence_move(mv, gives_check, ceiling, *alpha, beta, ply, qply)?;
        let cut = self.raise_best(ply, mv, score, best, alpha, beta);
        if cut && M::LABELLING {
            if in_check {
                if let Some(slot) = self.counter_slot() {
                    self.buf.counter_evasions[slot] = mv;
                }
            } else if is_capture(self.pos, mv) {
                self.buf.capture_refutations[ply] = mv;
            }
        }
        Some(cut)
    }

    /// Captures and pawn promotions until the position is quiet; the side
    /// to move may stand pat unless in check. `qply` counts quiescence plies;
    /// from [`RECAPTURES_FROM_QPLY`] on only recaptures are tried. The game
    /// search reads and fills the transposition table here too.
    pub fn quiescence(&mut self, alpha: i32, beta: i32, ply: usize, qply: usize) -> i32 {
        let Some(tt) = self.tt.filter(|_| M::SELECTIVE) else {
            return self.quiescence_node(alpha, beta, ply, qply, qply == 0).0;
        };
        let key = self.pos.key().low_u64();
        let entry = tt.probe(key);
        if let Some(e) = entry {
            let score = from_tt(e.score, ply);
            if bound_cuts(e.bound, score, alpha, beta) {
                self.buf.pv_len[ply] = ply;
                return score;
            }
        }
        // A position found in the table was looked at for a mate in one.
        let (value, no_mate) = self.quiescence_node(alpha, beta, ply, qply, entry.is_none());
        if !self.stopped {
            let (bound, mv) = if value >= beta {
                (Bound::Lower, self.buf.pv[ply][ply])
            } else if value > alpha && self.buf.pv_len[ply] > ply {
                (Bound::Exact, self.buf.pv[ply][ply])
            } else {
                (Bound::Upper, Move32::MOVE_NONE)
            };
            let mv = if self.buf.pv_len[ply] > ply {
                mv
            } else {
                Move32::MOVE_NONE
            };
            tt.store_probed(
                key,
                mv.to_move().raw(),
                to_tt(value, ply),
                0,
                bound,
                no_mate,
            );
        }
        value
    }

    /// [`Worker::quiescence`] without the table; `mate_check`: look for a
    /// mate in one when no capture fails high. Returns the value and
    /// whether that look found no mate (for the table entry).
    fn quiescence_node(
        &mut self,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        qply: usize,
        mate_check: bool,
    ) -> (i32, bool) {
        self.buf.pv_len[ply] = ply;
        self.count_node();
        if self.stopped {
            return (0, false);
        }
        self.seldepth = self.seldepth.max(ply);
        let in_check = self.pos.is_in_check();
        if ply >= MAX_PLY - 1 || qply >= MAX_QUIESCENCE_PLY {
            let value = if in_check { 0 } else { self.static_eval(ply) };
            return (value, false);
        }
        let mut generated = Move32List::new();
        let mut best;
        // When labelling, one move is tried before generating the others.
        // In check: the evasion that last refuted the same checking move
        // (piece and square); the checks of one position's siblings are
        // mostly the same and so are their refutations. Otherwise: the
        // capture that last failed high at this ply; the quiet replies of a
        // sibling root are mostly refuted by the same capture.
        let mut tried = Move32::MOVE_NONE;
        let recaptures_from = if M::SELECTIVE {
            GAME_RECAPTURES_FROM_QPLY
        } else {
            RECAPTURES_FROM_QPLY
        };
        if in_check {
            best = mated_in(ply);
            if let Some(slot) = self.counter_slot() {
                tried = self.buf.counter_evasions[slot];
            }
        } else {
            match self.lazy_stand_pat(ply, alpha, beta) {
                StandPat::Cut(v) => return (v, false),
                StandPat::Below(ceiling) => best = ceiling,
                StandPat::Exact(stand_pat) => {
                    if stand_pat >= beta {
                        return (stand_pat, false);
                    }
                    best = stand_pat;
                    alpha = alpha.max(stand_pat);
                }
            }
            // any capture is one the generator below gives, before the
            // recaptures-only plies
            if M::LABELLING && qply < recaptures_from {
                tried = self.buf.capture_refutations[ply];
            }
        }
        if tried != Move32::MOVE_NONE
            && !(self.pos.is_pseudo_legal_move32(tried, false)
                && (in_check || is_capture(self.pos, tried)))
        {
            tried = Move32::MOVE_NONE;
        }
        if tried != Move32::MOVE_NONE {
            match self.quiescence_try(tried, in_check, &mut best, &mut alpha, beta, ply, qply) {
                None => return (0, false),
                Some(true) => return (best, false),
                Some(false) => {}
            }
        }
        if in_check {
            generate_evasions(self.pos, &mut generated);
        } else if qply >= recaptures_from {
            generate_recaptures_move32(self.pos, self.pos.last_move().to_sq(), &mut generated);
        } else {
            generate_moves_move32::<CapturePlusPro>(self.pos, &mut generated);
        }
        self.buf.lists[ply].clear();
        for &mv in generated.iter() {
            let s = if is_capture(self.pos, mv) {
                mvv_lva(self.pos, mv)
            } else {
                0
            };
            self.buf.lists[ply].push(mv, s);
        }
        while let Some((mv, _)) = self.buf.lists[ply].pick() {
            if mv == tried {
                continue;
            }
            match self.quiescence_try(mv, in_check, &mut best, &mut alpha, beta, ply, qply) {
                None => return (0, false),
                Some(true) => break,
                Some(false) => {}
            }
        }
        // The mate-in-1 check comes after the captures: when one of them
        // already fails high, a mate could only fail high too, and the check
        // (a tenth of labelling time) is skipped.
        if mate_check && !in_check && best < beta {
            match solve_mate_in_one_in_place(self.pos) {
                Some(mv) => {
                    self.set_pv_leaf(ply, mv);
                    return (mate_in(ply + 1), false);
                }
                None => return (best, true),
            }
        }
        (best, false)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::features::FeatureSet;
    use crate::rows::Base;
    use crate::search::mode::{FullWidth, GameSearch, Labelling};

    #[test]
    fn reductions_grow_with_depth_and_move_number() {
        let r = Reductions::new();
        assert_eq!(r.get(1, 1), 0, "the first move is never reduced");
        assert_eq!(r.get(20, 1), 0);
        for d in 1..63 {
            for m in 1..63 {
                assert!(r.get(d + 1, m) >= r.get(d, m), "depth {d} move {m}");
                assert!(r.get(d, m + 1) >= r.get(d, m), "depth {d} move {m}");
            }
        }
        // ln(10) ln(20) / 2.5 + 0.5 = 3.26
        assert_eq!(r.get(10, 20), 3);
        assert_eq!(lmp_limit(1, true), 4);
        assert_eq!(lmp_limit(1, false), 2);
    }

    /// Material plus a bonus for the side to move: passing the turn does not
    /// negate it, as with a learned evaluation.
    struct Tempo;
    impl Evaluator for Tempo {
        fn evaluate(&self, pos: &Position) -> i32 {
            crate::eval::Material.evaluate(pos) + 30
        }
        fn name(&self) -> &str {
            "tempo"
        }
    }

    #[test]
    fn null_move_recomputes_an_evaluation_that_passing_does_not_negate() {
        // static_eval asserts (under cfg(test)) that every score carried
        // down equals a fresh evaluation; null moves happen at depth >= 3
        for sfen in crate::bench::POSITIONS {
            let mut pos = position_from_sfen(sfen).unwrap();
            let control = Control::new();
            let mut buf = Box::new(SearchBuffers::new());
            let mut w = Worker::<FullWidth>::new(&mut pos, &Tempo, None, &control, 0, &mut buf);
            for depth in 1..=4 {
                w.search(-INFINITE, INFINITE, depth, 0, true, true);
            }
        }
    }
    use rsshogi::board::{Evasions, generate_legal_all_move32, position_from_sfen};

    /// Positions in check: the bench positions after every checking move
    /// one, two or three plies deep.
    fn positions_in_check() -> Vec<Position> {
        let mut found = Vec::new();
        let mut moves = Move32List::new();
        let mut replies = Move32List::new();
        // every bench position contributes, each up to a cap
        for sfen in crate::bench::POSITIONS {
            let cap = found.len() + 3000;
            let mut pos = position_from_sfen(sfen).unwrap();
            generate_legal_all_move32(&pos, &mut moves);
            for &mv in moves.iter() {
                pos.apply_move32(mv);
                if pos.is_in_check() {
                    found.push(pos.clone());
                }
                generate_legal_all_move32(&pos, &mut replies);
                for &r in replies.iter() {
                    pos.apply_move32(r);
                    if pos.is_in_check() {
                        found.push(pos.clone());
                    } else if found.len() < cap {
                        // and after every check one ply further
                        let mut third = Move32List::new();
                        generate_legal_all_move32(&pos, &mut third);
                        for &c in third.iter() {
                            if !pos.gives_check_move32(c) {
                                continue;
                            }
                            pos.apply_move32(c);
                            found.push(pos.clone());
                            pos.undo_move32(c).unwrap();
                        }
                    }
                    pos.undo_move32(r).unwrap();
                }
                pos.undo_move32(mv).unwrap();
            }
        }
        found
    }

    /// Positions in check met on random walks (a fixed LCG) from the bench
    /// positions, preferring checks, so deep and odd positions appear.
    fn random_positions_in_check() -> Vec<Position> {
        let mut found = Vec::new();
        let mut moves = Move32List::new();
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) as usize % n
        };
        for sfen in crate::bench::POSITIONS {
            for _ in 0..200 {
                let mut pos = position_from_sfen(sfen).unwrap();
                for _ in 0..60 {
                    generate_legal_all_move32(&pos, &mut moves);
                    if moves.is_empty() {
                        break;
                    }
                    let checks: Vec<Move32> = moves
                        .iter()
                        .copied()
                        .filter(|&m| pos.gives_check_move32(m))
                        .collect();
                    let mv = if !checks.is_empty() && next(2) == 0 {
                        checks[next(checks.len())]
                    } else {
                        moves[next(moves.len())]
                    };
                    pos.apply_move32(mv);
                    if pos.is_in_check() {
                        found.push(pos.clone());
                    }
                }
            }
        }
        found
    }

    /// The staged picker hands out each non-evasion exactly once, whatever
    /// the table move, killers and counter move (from this position or
    /// another), with the same ordering scores in the same order as
    /// generating them all at once: only ties may come out differently.
    #[test]
    fn staged_moves_are_the_non_evasions_once_each() {
        let control = Control::new();
        let mut buf = Box::new(SearchBuffers::new());
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) as usize % n
        };
        let mut moves = Move32List::new();
        let mut foreign = vec![Move32::MOVE_NONE];
        let mut checked = 0;
        for sfen in crate::bench::POSITIONS {
            for _ in 0..60 {
                let mut pos = position_from_sfen(sfen).unwrap();
                for _ in 0..next(80) {
                    generate_legal_all_move32(&pos, &mut moves);
                    if moves.is_empty() {
                        break;
                    }
                    let mv = moves[next(moves.len())];
                    foreign.push(mv);
                    pos.apply_move32(mv);
                }
                if pos.is_in_check() {
                    continue;
                }
                let mut all = Move32List::new();
                generate_moves_move32::<NonEvasions>(&pos, &mut all);
                if all.is_empty() {
                    continue;
                }
                // Killers and counter moves are quiet moves where they were
                // recorded (from this position or another), never promotions.
                let pick = |n: usize| {
                    let mv = if n.is_multiple_of(2) {
                        all[n / 2 % all.len()]
                    } else {
                        foreign[n % foreign.len()]
                    };
                    if mv.is_promotion() {
                        Move32::MOVE_NONE
                    } else {
                        mv
                    }
                };
                let q = OrderContext {
                    in_check: false,
                    depth: 0,
                    tt_move: if next(3) == 0 {
                        Move32::MOVE_NONE
                    } else {
                        all[next(all.len())]
                    },
                    killers: [pick(next(1000)), pick(next(1000))],
                    counter: pick(next(1000)),
                    previous: [None, None],
                };
                let mut w = Worker::<GameSearch>::new(
                    &mut pos,
                    &crate::eval::Material,
                    None,
                    &control,
                    0,
                    &mut buf,
                );
                w.buf.lists[0].clear();
                if q.tt_move != Move32::MOVE_NONE {
                    w.buf.lists[0].push(q.tt_move, TT_MOVE);
                }
                let mut stage = Stage::Table;
                let mut handed = Vec::new();
                while let Some((mv, order)) = w.next_move(0, &mut stage, &q, false) {
                    handed.push((mv.to_move().raw(), order));
                }
                // The same scores in the same order as generating all at once.
                w.buf.lists[0].clear();
                if q.tt_move != Move32::MOVE_NONE {
                    w.buf.lists[0].push(q.tt_move, TT_MOVE);
                }
                w.push_scored::<NonEvasions>(0, &[q.tt_move], &q);
                let mut at_once = Vec::new();
                while let Some((_, order)) = w.buf.lists[0].pick() {
                    at_once.push(order);
                }
                let staged: Vec<i32> = handed.iter().map(|&(_, o)| o).collect();
                assert_eq!(staged, at_once, "{}", w.pos.to_sfen(None));
                let mut got: Vec<u16> = handed.iter().map(|&(m, _)| m).collect();
                let mut want: Vec<u16> = all.iter().map(|m| m.to_move().raw()).collect();
                got.sort_unstable();
                want.sort_unstable();
                assert_eq!(got, want, "{}", w.pos.to_sfen(None));
                let first_killer = handed
                    .iter()
                    .position(|&(_, o)| (COUNTER..GOOD_CAPTURE).contains(&o));
                let last_good = handed
                    .iter()
                    .rposition(|&(_, o)| (GOOD_CAPTURE..TT_MOVE).contains(&o));
                if let (Some(k), Some(g)) = (first_killer, last_good) {
                    assert!(
                        g < k,
                        "a good capture after a killer: {}",
                        w.pos.to_sfen(None)
                    );
                }
                checked += handed.len();
            }
        }
        assert!(checked > 20_000, "only {checked} moves");
    }

    /// A learned model of `set` and `base` with weights
    /// `w(i) = scale · ((i · 7919) mod 1000 − 500) · 1e-6`.
    fn test_model(scale: f64, set: FeatureSet, base: Base) -> Learned {
        use crate::features::{SCHEME, SCHEME_VERSION};
        use crate::rows::model::{LinearModel, ModelMetadata};
        let n = set.num_features();
        let meta: ModelMetadata = serde_json::from_value(serde_json::json!({
            "features": {"scheme": SCHEME, "scheme_version": SCHEME_VERSION, "num_features": n,
                         "label_scale": 1000.0, "features_at": "sibling", "base": base,
                         "attacks": set.attacks, "king_piece": set.king_piece},
            "solver": "test", "c": 1.0, "p": 0.0, "e": 0.0, "bias": -1.0, "nr_feature": n,
            "objective": 0.0, "gradient_norm": 0.0, "iterations": 0, "converged": true,
            "data": {"files": 0, "rows": 0, "nonzeros": 0, "max_index": n, "bytes": 0},
            "load_seconds": 0.0, "train_seconds": 0.0
        }))
        .unwrap();
        let w = (0..n)
            .map(|i| scale * (((i * 7919) % 1000) as f64 - 500.0) * 1e-6)
            .collect();
        Learned::from_model(&LinearModel::new(w, 0.0, Some(meta))).unwrap()
    }

    /// The evaluation cache outlives a search with its buffers: a search
    /// with another model must not read the first model's values.
    #[test]
    fn evaluation_cache_follows_the_model() {
        let control = Control::new();
        let mut buf = Box::new(SearchBuffers::new());
        let set = FeatureSet::default();
        let (a, b) = (
            test_model(1.0, set, Base::None),
            test_model(-3.0, set, Base::None),
        );
        let mut pos = position_from_sfen(crate::bench::POSITIONS[2]).unwrap();
        assert_ne!(a.evaluate(&pos), b.evaluate(&pos));
        for model in [&a, &b, &a] {
            let mut w = Worker::<FullWidth>::new(&mut pos, model, None, &control, 0, &mut buf);
            let want = model.evaluate(w.pos);
            assert_eq!(w.full_eval(), want);
            assert_eq!(w.full_eval(), want, "a cache hit");
        }
    }

    /// The hand and king-piece blocks alone, weights large enough to move
    /// scores by hundreds of centipawns, with each base: the models whose
    /// sums the search carries down.
    pub(in crate::search) fn incremental_models() -> [Learned; 2] {
        let set = FeatureSet {
            attacks: false,
            king_piece: true,
            ..FeatureSet::default()
        };
        [Base::None, Base::Material].map(|base| test_model(40.0, set, base))
    }

    /// The game search with an incremental model: `static_eval` asserts
    /// (under cfg(test)) at every node that the evaluation of the carried
    /// sums equals a fresh full evaluation, through captures, drops,
    /// promotions, king moves, null moves and undo.
    #[test]
    fn game_search_carries_exact_learned_sums() {
        let control = Control::new();
        for model in &incremental_models() {
            assert!(model.is_incremental());
            let mut nodes = 0;
            for sfen in crate::bench::POSITIONS {
                let mut pos = position_from_sfen(sfen).unwrap();
                let mut buf = Box::new(SearchBuffers::new());
                let mut w = Worker::<GameSearch>::new(&mut pos, model, None, &control, 0, &mut buf);
                for depth in 1..=6 {
                    w.search(-INFINITE, INFINITE, depth, 0, true, true);
                }
                nodes += w.nodes;
            }
            assert!(nodes > 60_000, "only {nodes} nodes");
        }
    }

    /// Labelling mode must not change the value of a full-window search:
    /// every sibling of the bench positions, depth 1 (the extract labels)
    /// and depth 2, with both material evaluations and the incremental
    /// learned models (whose moves it scores without playing them).
    #[test]
    fn labelling_keeps_full_window_values() {
        fn full_window<M: Mode>(
            pos: &mut Position,
            eval: &dyn Evaluator,
            control: &Control,
            depth: i32,
        ) -> i32 {
            let mut buf = SearchBuffers::new();
            let mut w = Worker::<M>::new(pos, eval, None, control, 0, &mut buf);
            w.search(-INFINITE, INFINITE, depth, 0, true, false)
        }
        use crate::eval::{Material, MaterialHand};
        let control = Control::new();
        let mut moves = Move32List::new();
        let mut compared = 0;
        let [learned, learned_on_material] = incremental_models();
        for eval in [
            &Material as &dyn Evaluator,
            &MaterialHand,
            &learned,
            &learned_on_material,
        ] {
            for sfen in crate::bench::POSITIONS {
                let mut pos = position_from_sfen(sfen).unwrap();
                generate_legal_all_move32(&pos, &mut moves);
                for &mv in moves.iter() {
                    pos.apply_move32(mv);
                    for depth in [1, 2] {
                        let mut values = [0; 2];
                        values[0] = full_window::<FullWidth>(&mut pos, eval, &control, depth);
                        values[1] = full_window::<Labelling>(&mut pos, eval, &control, depth);
                        assert_eq!(values[0], values[1], "{} depth {depth}", pos.to_sfen(None));
                        compared += 1;
                    }
                    pos.undo_move32(mv).unwrap();
                }
            }
        }
        assert!(compared > 2000, "only {compared} searches compared");
    }

    /// Full-window material quiescence of `pos` as if `qply` plies deep
    /// (ply 1): its value and principal variation.
    fn material_quiescence(pos: &mut Position, qply: usize) -> (i32, Vec<String>) {
        let control = Control::new();
        let mut buf = SearchBuffers::new();
        let mut w =
            Worker::<FullWidth>::new(pos, &crate::eval::Material, None, &control, 0, &mut buf);
        let value = w.quiescence(-INFINITE, INFINITE, 1, qply);
        let pv = w.buf.pv[1][1..w.buf.pv_len[1]]
            .iter()
            .map(|m| m.to_usi())
            .collect();
        (value, pv)
    }

    /// Deep in quiescence a free capture elsewhere is not taken, a
    /// recapture on the last move's square still is.
    #[test]
    fn deep_quiescence_only_recaptures() {
        let value_at = |sfen: &str, last: &str, qply: usize| {
            let mut pos = position_from_sfen(sfen).unwrap();
            let mv = pos.move32_from_move(rsshogi::types::Move::from_usi(last).unwrap());
            pos.apply_move32(mv);
            material_quiescence(&mut pos, qply).0
        };
        // White's king steps to 4a; Black's rook on 2h can take the pawn on 2d
        let free_pawn = "4k4/9/9/7p1/9/9/9/7R1/4K4 w - 1";
        let stand_pat = value_at(free_pawn, "5a4a", RECAPTURES_FROM_QPLY);
        assert_eq!(value_at(free_pawn, "5a4a", 0), stand_pat + 200);
        // White's silver takes a pawn on 5e that Black's rook on 5h retakes
        let exchange = "4k4/9/9/4s4/4P4/9/9/4R4/K8 w - 1";
        let before = value_at(exchange, "5d5e", 0);
        assert_eq!(value_at(exchange, "5d5e", RECAPTURES_FROM_QPLY), before);
        assert!(before > 0, "the silver is won back: {before}");
    }

    /// The mate-in-1 check at quiescence's first ply still finds a mate
    /// when a capture is there to be searched first.
    #[test]
    fn quiescence_finds_a_mate_in_one_besides_a_capture() {
        // Black drops the gold on 1b (held by the pawn on 1c): mate; the rook
        // on 5h could take the pawn on 5e instead
        let mut pos = position_from_sfen("8k/9/8P/9/4p4/9/9/4R4/K8 b G 1").unwrap();
        assert_eq!(
            material_quiescence(&mut pos, 0),
            (mate_in(2), vec!["G*1b".to_string()])
        );
    }

    /// The table move is tried before generation, rebuilt from its 16 bits:
    /// it must be exactly the generated move, and pseudo-legal exactly when
    /// generated (or a move would be searched twice, or one never
    /// generated searched).
    #[test]
    fn table_moves_rebuild_to_the_generated_moves() {
        let mut positions = positions_in_check();
        positions.extend(random_positions_in_check());
        let mut checked = 0;
        for pos in &positions {
            let mut list = Move32List::new();
            generate_evasions(pos, &mut list);
            let mut quiet = pos.clone();
            // The position before the check: plenty of non-evasions.
            if let Some(last) = Some(quiet.last_move()).filter(|&m| m != Move32::MOVE_NONE)
                && quiet.undo_move32(last).is_ok()
                && !quiet.is_in_check()
            {
                let mut non_evasions = Move32List::new();
                generate_moves_move32::<NonEvasions>(&quiet, &mut non_evasions);
                for &mv in non_evasions.iter() {
                    assert_eq!(
                        quiet.move32_from_move(mv.to_move()),
                        mv,
                        "{}",
                        quiet.to_sfen(None)
                    );
                    assert!(
                        quiet.is_pseudo_legal_move32(mv, false),
                        "{}",
                        quiet.to_sfen(None)
                    );
                    checked += 1;
                }
            }
            for &mv in list.iter() {
                assert_eq!(
                    pos.move32_from_move(mv.to_move()),
                    mv,
                    "{}",
                    pos.to_sfen(None)
                );
                assert!(
                    pos.is_pseudo_legal_move32(mv, false),
                    "{}",
                    pos.to_sfen(None)
                );
                checked += 1;
            }
        }
        assert!(checked > 100_000, "only {checked} moves");
    }

    #[test]
    fn evasions_are_the_legal_pseudo_evasions_in_order() {
        let mut positions = positions_in_check();
        positions.extend(random_positions_in_check());
        assert!(
            positions.len() > 10_000,
            "only {} positions",
            positions.len()
        );
        let mut with_drops = 0;
        for pos in &positions {
            let mut pseudo = Move32List::new();
            generate_moves_move32::<Evasions>(pos, &mut pseudo);
            let expected: Vec<Move32> = pseudo
                .iter()
                .copied()
                .filter(|&mv| pos.is_legal_after_pseudo_move32(mv))
                .collect();
            let mut list = Move32List::new();
            generate_evasions(pos, &mut list);
            assert_eq!(
                list.iter().copied().collect::<Vec<_>>(),
                expected,
                "{}",
                pos.to_sfen(None)
            );
            with_drops += usize::from(expected.iter().any(|m| m.is_drop()));
        }
        assert!(
            with_drops > 100,
            "only {with_drops} positions with drop evasions"
        );
    }
}

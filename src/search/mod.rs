//! The search: iterative deepening over [`worker`]'s alpha-beta, Lazy SMP
//! threads sharing one transposition table, time management and the
//! reporting of each completed iteration.
//!
//! ```
//! use niwatori::eval::Material;
//! use niwatori::search::{Control, Limits, think};
//! use niwatori::tt::TranspositionTable;
//!
//! // Black mates at once with a gold drop on 5b.
//! let pos = rsshogi::board::position_from_sfen("4k4/9/4P4/9/9/9/9/9/4K4 b G 1").unwrap();
//! let tt = TranspositionTable::new(1);
//! let result = think(&pos, &Material, &tt, &Limits::depth(3), 1, &Control::new(), &mut |_| {});
//! assert_eq!(result.best_move.unwrap().to_usi(), "G*5b");
//! ```

pub mod mate;
mod mode;
mod ordering;
pub mod score;
pub mod see;
mod sibling;
pub mod time;
mod worker;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rsshogi::board::{Legal, Move32List, Position, generate_moves_move32};
use rsshogi::types::Move32;

pub use sibling::{SiblingScorer, SiblingSearch};
pub use time::{Limits, TimeBudget};

use crate::eval::Evaluator;
use crate::tt::TranspositionTable;
use mode::GameSearch;
use score::{INFINITE, MAX_PLY};
use worker::{SearchBuffers, Worker};

/// Most search threads (`Threads` option).
pub const MAX_THREADS: usize = 64;

/// Shared between the threads of one search and the code that started it
/// (USI's `stop` and `ponderhit`).
pub struct Control {
    pub stop: AtomicBool,
    /// Pondering: no time limit until `ponderhit`.
    pub pondering: AtomicBool,
    start: Mutex<Instant>,
    /// The moment the clock started, in ms after `start` (later on ponderhit).
    clock_origin_ms: AtomicU64,
    budget: Mutex<Option<TimeBudget>>,
    node_limit: AtomicU64,
    helper_nodes: Vec<AtomicU64>,
}

impl Default for Control {
    fn default() -> Self {
        Self::new()
    }
}

impl Control {
    pub fn new() -> Self {
        Self {
            stop: AtomicBool::new(false),
            pondering: AtomicBool::new(false),
            start: Mutex::new(Instant::now()),
            clock_origin_ms: AtomicU64::new(0),
            budget: Mutex::new(None),
            node_limit: AtomicU64::new(u64::MAX),
            helper_nodes: (0..MAX_THREADS).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Asks the search to finish as soon as possible.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// The opponent played the expected move: the clock starts now.
    pub fn ponderhit(&self) {
        self.clock_origin_ms
            .store(self.elapsed_ms(), Ordering::Relaxed);
        self.pondering.store(false, Ordering::Relaxed);
    }

    /// Milliseconds since the search started.
    pub fn elapsed_ms(&self) -> u64 {
        self.start
            .lock()
            .map_or(0, |s| s.elapsed().as_millis() as u64)
    }

    fn clock_ms(&self) -> u64 {
        self.elapsed_ms()
            .saturating_sub(self.clock_origin_ms.load(Ordering::Relaxed))
    }

    fn reset(&self, budget: Option<TimeBudget>, node_limit: Option<u64>, ponder: bool) {
        if let Ok(mut s) = self.start.lock() {
            *s = Instant::now();
        }
        self.clock_origin_ms.store(0, Ordering::Relaxed);
        if let Ok(mut b) = self.budget.lock() {
            *b = budget;
        }
        self.node_limit
            .store(node_limit.unwrap_or(u64::MAX), Ordering::Relaxed);
        self.pondering.store(ponder, Ordering::Relaxed);
        for n in &self.helper_nodes {
            n.store(0, Ordering::Relaxed);
        }
    }

    fn budget(&self) -> Option<TimeBudget> {
        self.budget.lock().ok().and_then(|b| *b)
    }

    fn nodes_limited(&self) -> bool {
        self.node_limit.load(Ordering::Relaxed) != u64::MAX
    }

    fn publish_nodes(&self, id: usize, nodes: u64) {
        self.helper_nodes[id].store(nodes, Ordering::Relaxed);
    }

    fn total_nodes(&self, main_nodes: u64) -> u64 {
        main_nodes
            + self.helper_nodes[1..]
                .iter()
                .map(|n| n.load(Ordering::Relaxed))
                .sum::<u64>()
    }

    /// Called by the main thread: stops the search at the node or time limit.
    fn check_limits(&self, main_nodes: u64) {
        if self.total_nodes(main_nodes) >= self.node_limit.load(Ordering::Relaxed) {
            self.stop();
        }
        if !self.pondering.load(Ordering::Relaxed)
            && let Some(b) = self.budget()
            && self.clock_ms() >= b.maximum
        {
            self.stop();
        }
    }
}

/// What a completed iteration found, for `info` lines.
#[derive(Clone, Debug)]
pub struct Info {
    pub depth: u32,
    pub seldepth: u32,
    pub time_ms: u64,
    pub nodes: u64,
    pub nps: u64,
    pub hashfull: u32,
    /// Centipawns from the side to move, or a mate score (see [`score`]).
    pub score: i32,
    pub pv: Vec<Move32>,
}

/// The outcome of [`think`].
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// `None` when the side to move has no legal move (it has lost).
    pub best_move: Option<Move32>,
    /// The expected reply, for pondering.
    pub ponder_move: Option<Move32>,
    pub score: i32,
    pub depth: u32,
    pub nodes: u64,
    pub pv: Vec<Move32>,
}

/// Search options that do not change between moves.
#[derive(Clone, Debug)]
pub struct SearchOptions {
    pub threads: usize,
    /// Milliseconds kept for transport so a move never arrives late.
    pub move_overhead_ms: u64,
    /// Move-ordering history kept from one search to the next; `None`:
    /// every search starts afresh (reproducible, as `bench` needs).
    pub memory: Option<Arc<SearchMemory>>,
    /// A move policy ordering quiet moves (USI option `PolicyFile`).
    pub policy: Option<Arc<crate::policy::PolicyModel>>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            threads: 1,
            move_overhead_ms: 50,
            memory: None,
            policy: None,
        }
    }
}

/// The search threads' move-ordering tables (history, continuation
/// history, counter moves), kept between the moves of a game as engines
/// keep them: at a fraction of a second per move, a search that starts with
/// what the last one learnt orders its first iterations better. Cleared
/// for a new game.
#[derive(Default)]
pub struct SearchMemory {
    buffers: Mutex<Vec<Box<SearchBuffers>>>,
}

impl std::fmt::Debug for SearchMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SearchMemory")
    }
}

impl SearchMemory {
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets everything (`usinewgame`).
    pub fn clear(&self) {
        if let Ok(mut b) = self.buffers.lock() {
            b.clear();
        }
    }

    /// The tables of thread `id`, or new ones.
    fn take(memory: Option<&Self>, id: usize) -> Box<SearchBuffers> {
        let kept = memory.and_then(|m| {
            let mut b = m.buffers.lock().ok()?;
            (id < b.len()).then(|| std::mem::replace(&mut b[id], Box::new(SearchBuffers::new())))
        });
        let mut buf = kept.unwrap_or_else(|| Box::new(SearchBuffers::new()));
        buf.start_search();
        buf
    }

    fn put(memory: Option<&Self>, id: usize, buf: Box<SearchBuffers>) {
        if let Some(m) = memory
            && let Ok(mut b) = m.buffers.lock()
        {
            while b.len() <= id {
                b.push(Box::new(SearchBuffers::new()));
            }
            b[id] = buf;
        }
    }
}

/// Searches `pos` within `limits` with `threads` threads and returns the best
/// move; each completed iteration of the main thread is passed to `report`.
pub fn think(
    pos: &Position,
    eval: &dyn Evaluator,
    tt: &TranspositionTable,
    limits: &Limits,
    threads: usize,
    control: &Control,
    report: &mut (dyn FnMut(&Info) + Send),
) -> SearchResult {
    let options = SearchOptions {
        threads,
        ..SearchOptions::default()
    };
    think_with(pos, eval, tt, limits, &options, control, report)
}

/// [`think`] with all options.
pub fn think_with(
    pos: &Position,
    eval: &dyn Evaluator,
    tt: &TranspositionTable,
    limits: &Limits,
    options: &SearchOptions,
    control: &Control,
    report: &mut (dyn FnMut(&Info) + Send),
) -> SearchResult {
    let budget = time::budget(limits, pos.turn(), options.move_overhead_ms);
    control.reset(budget, limits.nodes, limits.ponder);
    tt.new_search();

    let root = pos.clone_for_search();
    let mut legal = Move32List::new();
    generate_moves_move32::<Legal>(&root, &mut legal);
    let root_moves: Vec<Move32> = legal.iter().copied().collect();
    let window = limits.window.map_or((-INFINITE, INFINITE), |(a, b)| {
        (a.max(-INFINITE), b.min(INFINITE))
    });
    let max_depth = limits
        .depth
        .unwrap_or(MAX_PLY as u32 - 8)
        .clamp(1, MAX_PLY as u32 - 8);

    let result = if root_moves.is_empty() {
        SearchResult {
            best_move: None,
            ponder_move: None,
            score: score::mated_in(0),
            depth: 0,
            nodes: 0,
            pv: Vec::new(),
        }
    } else {
        let threads = options.threads.clamp(1, MAX_THREADS);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (1..threads)
                .map(|id| {
                    let mut root = root.clone_for_search();
                    let root_moves = root_moves.clone();
                    let memory = options.memory.as_deref();
                    std::thread::Builder::new()
                        .stack_size(32 << 20)
                        .spawn_scoped(scope, move || {
                            let mut buf = SearchMemory::take(memory, id);
                            let mut worker = Worker::<GameSearch>::new(
                                &mut root,
                                eval,
                                Some(tt),
                                control,
                                id,
                                &mut buf,
                            )
                            .with_policy(options.policy.as_deref());
                            iterate(&mut worker, root_moves, max_depth, window, &mut |_| {});
                            SearchMemory::put(memory, id, buf);
                        })
                        .expect("spawning a search thread")
                })
                .collect();
            let mut main_root = root.clone_for_search();
            let memory = options.memory.as_deref();
            let mut buf = SearchMemory::take(memory, 0);
            let mut worker =
                Worker::<GameSearch>::new(&mut main_root, eval, Some(tt), control, 0, &mut buf)
                    .with_policy(options.policy.as_deref());
            let result = iterate(&mut worker, root_moves.clone(), max_depth, window, report);
            SearchMemory::put(memory, 0, buf);
            // Pondering or infinite search: the move may only be sent after
            // `stop` (or, when pondering, `ponderhit` and the time it allows).
            while (limits.infinite || control.pondering.load(Ordering::Relaxed))
                && !control.stop.load(Ordering::Relaxed)
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            control.stop();
            for h in handles {
                let _ = h.join();
            }
            result
        })
    };
    control.stop();
    result
}

/// Iterative deepening of one thread. Helper threads (id > 0) skip some
/// depths so that the threads spread over the tree.
fn iterate(
    worker: &mut Worker<GameSearch>,
    mut root_moves: Vec<Move32>,
    max_depth: u32,
    window: (i32, i32),
    report: &mut (dyn FnMut(&Info) + Send),
) -> SearchResult {
    let control = worker.control;
    let mut result = SearchResult {
        best_move: Some(root_moves[0]),
        ponder_move: None,
        score: 0,
        depth: 0,
        nodes: 0,
        pv: vec![root_moves[0]],
    };
    let mut depth = 1 + (worker.id as u32 & 1);
    let mut reported_nodes = 0;
    while depth <= max_depth {
        worker.root_depth = depth as i32;
        let iteration = aspiration(worker, &mut root_moves, depth as i32, result.score, window);
        if iteration.improved {
            result.best_move = Some(root_moves[0]);
            result.pv = worker.pv().to_vec();
            result.score = iteration.score;
            result.ponder_move = result.pv.get(1).copied();
        } else if iteration.completed {
            // failed low against the caller's window: the score is an
            // upper bound, the move the previous iteration's
            result.score = iteration.score;
        }
        if !iteration.completed {
            break;
        }
        let score = iteration.score;
        result.depth = depth;
        if worker.id == 0 {
            reported_nodes = report_iteration(worker, &result, report);
            if !control.pondering.load(Ordering::Relaxed)
                && let Some(b) = control.budget()
                && control.clock_ms() >= b.optimum
            {
                break;
            }
            if score::is_mate_score(score) && score > 0 && depth > (score::MATE - score) as u32 + 2
            {
                break;
            }
        }
        depth += 1;
    }
    // Stopped inside an iteration: its nodes were searched too, and a
    // host comparing nodes per move (or a GUI's counter) should see them.
    if worker.id == 0 && result.depth > 0 && control.total_nodes(worker.nodes) > reported_nodes {
        report_iteration(worker, &result, report);
    }
    result.nodes = control.total_nodes(worker.nodes);
    result
}

/// Reports `result` (the last completed iteration's depth, the best move's
/// score and line) with the nodes and time so far; returns the nodes.
fn report_iteration(
    worker: &Worker<GameSearch>,
    result: &SearchResult,
    report: &mut (dyn FnMut(&Info) + Send),
) -> u64 {
    let time_ms = worker.control.elapsed_ms();
    let nodes = worker.control.total_nodes(worker.nodes);
    report(&Info {
        depth: result.depth,
        seldepth: worker.seldepth as u32,
        time_ms,
        nodes,
        nps: nodes * 1000 / time_ms.max(1),
        hashfull: worker.tt.map_or(0, TranspositionTable::hashfull),
        score: result.score,
        pv: result.pv.clone(),
    });
    nodes
}

struct Iteration {
    /// The best score, exact when the iteration completed.
    score: i32,
    completed: bool,
    /// A root move was fully searched and became (or stayed) best.
    improved: bool,
}

/// Half the first aspiration window, in centipawns, around a level score.
const ASPIRATION_DELTA: i32 = 40;

/// Half the first aspiration window around `previous`: wider as the score
/// grows (YaneuraOu's 5 + score² / 9000), since a lopsided position's score
/// moves by more from one iteration to the next, and each fail low
/// searches every root move again.
fn aspiration_delta(previous: i32) -> i32 {
    let s = previous.abs().min(5_000);
    ASPIRATION_DELTA + s * s / 10_000
}

/// One iteration, first in a window around the previous score, widened
/// each time the score falls outside it, up to the caller's `window`
/// (`(lo, hi)`; a score at or beyond it is returned as the bound it is).
fn aspiration(
    worker: &mut Worker<GameSearch>,
    root_moves: &mut [Move32],
    depth: i32,
    previous: i32,
    (lo, hi): (i32, i32),
) -> Iteration {
    if depth < 4 || score::is_mate_score(previous) {
        return root_search(worker, root_moves, depth, lo, hi);
    }
    let mut delta = aspiration_delta(previous);
    let mut alpha = (previous - delta).max(lo);
    let mut beta = (previous + delta).min(hi);
    let mut improved = false;
    loop {
        let mut iteration = root_search(worker, root_moves, depth, alpha, beta);
        improved |= iteration.improved;
        iteration.improved = improved;
        if !iteration.completed {
            return iteration;
        }
        if (iteration.score <= alpha && alpha <= lo) || (iteration.score >= beta && beta >= hi) {
            return iteration;
        }
        if iteration.score <= alpha {
            beta = (alpha + beta) / 2;
            alpha = (iteration.score - delta).max(lo);
        } else if iteration.score >= beta {
            beta = (iteration.score + delta).min(hi);
        } else {
            return iteration;
        }
        delta += delta / 2;
        if delta > 1000 {
            alpha = lo;
            beta = hi;
        }
    }
}

/// One iteration at the root in the window (`alpha`, `beta`): root moves
/// searched best first until one reaches beta; the best move is moved to
/// the front. `improved` only when a move scored inside the window.
fn root_search(
    worker: &mut Worker<GameSearch>,
    root_moves: &mut [Move32],
    depth: i32,
    mut alpha: i32,
    beta: i32,
) -> Iteration {
    let mut best = -INFINITE;
    let mut improved = false;
    worker.seldepth = 0;
    for i in 0..root_moves.len() {
        let mv = root_moves[i];
        let gives_check = worker.pos.gives_check_move32(mv);
        worker.make_move(mv, gives_check, 0);
        let score = if i == 0 {
            -worker.search(-beta, -alpha, depth - 1, 1, true, true)
        } else {
            let s = -worker.search(-alpha - 1, -alpha, depth - 1, 1, false, true);
            if s > alpha && !worker.stopped {
                -worker.search(-beta, -alpha, depth - 1, 1, true, true)
            } else {
                s
            }
        };
        worker
            .pos
            .undo_move32(mv)
            .expect("undo of a move just applied cannot fail");
        if worker.stopped {
            return Iteration {
                score: best,
                completed: false,
                improved,
            };
        }
        if score > best {
            best = score;
            if score > alpha {
                worker.update_pv(0, mv);
                root_moves[..=i].rotate_right(1);
                if score >= beta {
                    // Failed high: the move is better than expected, and
                    // the caller searches it again in a wider window.
                    improved = true;
                    break;
                }
                alpha = score;
                improved = true;
            }
        }
    }
    Iteration {
        score: best,
        completed: true,
        improved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Material;

    #[test]
    fn the_aspiration_window_widens_with_the_score() {
        assert_eq!(aspiration_delta(0), ASPIRATION_DELTA);
        assert_eq!(aspiration_delta(1_000), 140);
        assert_eq!(aspiration_delta(-2_400), 616, "a loss widens as a win");
        for s in 0..6_000 {
            assert!(aspiration_delta(s + 1) >= aspiration_delta(s), "score {s}");
        }
        assert_eq!(aspiration_delta(20_000), aspiration_delta(5_000), "capped");
    }

    /// A root window that holds the full-window score gives it back; one
    /// above it fails low (an upper bound at or below alpha), one below it
    /// fails high (a lower bound at or above beta).
    #[test]
    fn a_root_window_bounds_the_score() {
        let search = |sfen: &str, limits: Limits| {
            let pos = rsshogi::board::position_from_sfen(sfen).unwrap();
            let tt = TranspositionTable::new(4);
            think(
                &pos,
                &Material,
                &tt,
                &limits,
                1,
                &Control::new(),
                &mut |_| {},
            )
        };
        // Two quiet middlegames: in the tactical bench positions the
        // selective search's value depends on its window (null move and
        // reductions prune by it), as in any such search, and a window can
        // find more than the full window did.
        for sfen in &crate::bench::POSITIONS[1..3] {
            let full = search(sfen, Limits::depth(6));
            let s = full.score;
            let inside = search(sfen, Limits::depth(6).window(s - 300, s + 300));
            assert_eq!(
                (inside.score, inside.best_move),
                (s, full.best_move),
                "{sfen}"
            );
            let above = search(sfen, Limits::depth(6).window(s + 300, s + 600));
            assert!(above.score <= s + 300, "{sfen}: {} for {s}", above.score);
            let below = search(sfen, Limits::depth(6).window(s - 600, s - 300));
            assert!(below.score >= s - 300, "{sfen}: {} for {s}", below.score);
            assert!(below.best_move.is_some() && above.best_move.is_some());
        }
    }

    /// Quiet moves that the pruning rules would all prune are dropped
    /// unscored and unsorted (see `Pruned::WithLaterQuiets`): the search
    /// visits the same nodes and finds the same scores and moves as when
    /// each is handed out and pruned in turn.
    #[test]
    fn dropping_pruned_quiet_moves_keeps_the_tree() {
        let search = |sfen: &str, drop: bool| {
            let mut pos = rsshogi::board::position_from_sfen(sfen).unwrap();
            let tt = TranspositionTable::new(16);
            let control = Control::new();
            control.reset(None, None, false);
            let mut buf = SearchMemory::take(None, 0);
            let mut legal = Move32List::new();
            generate_moves_move32::<Legal>(&pos, &mut legal);
            let root_moves = legal.iter().copied().collect();
            let mut worker =
                Worker::<GameSearch>::new(&mut pos, &Material, Some(&tt), &control, 0, &mut buf);
            worker.drop_pruned_quiets = drop;
            let r = iterate(
                &mut worker,
                root_moves,
                8,
                (-INFINITE, INFINITE),
                &mut |_| {},
            );
            (r.nodes, r.score, r.best_move, r.pv)
        };
        for sfen in crate::bench::POSITIONS {
            let dropped = search(sfen, true);
            assert_eq!(dropped, search(sfen, false), "{sfen}");
            assert!(dropped.0 > 1000, "{sfen}: {} nodes", dropped.0);
        }
    }

    fn search_with(memory: &Arc<SearchMemory>, pos: &Position, depth: u32) -> SearchResult {
        let options = SearchOptions {
            memory: Some(memory.clone()),
            ..SearchOptions::default()
        };
        let tt = TranspositionTable::new(1);
        think_with(
            pos,
            &Material,
            &tt,
            &Limits::depth(depth),
            &options,
            &Control::new(),
            &mut |_| {},
        )
    }

    /// The quiet moves' history learnt in one search is there at the start
    /// of the next, and gone after `clear`; the search itself is unchanged
    /// by where its tables came from when they are fresh.
    #[test]
    fn memory_keeps_the_history_between_searches() {
        let pos = rsshogi::board::position_from_sfen(crate::bench::POSITIONS[1]).unwrap();
        let memory = Arc::new(SearchMemory::new());
        let first = search_with(&memory, &pos, 7);
        let tt = TranspositionTable::new(1);
        let fresh = think(
            &pos,
            &Material,
            &tt,
            &Limits::depth(7),
            1,
            &Control::new(),
            &mut |_| {},
        );
        assert_eq!(
            (first.nodes, first.best_move),
            (fresh.nodes, fresh.best_move)
        );

        let learnt = |m: &SearchMemory| {
            let b = m.buffers.lock().unwrap();
            b.first().map_or(0, |buf| buf.history_entries())
        };
        assert!(learnt(&memory) > 0, "no history kept");
        let second = search_with(&memory, &pos, 7);
        assert_ne!(
            second.nodes, first.nodes,
            "the second search ordered as the first"
        );
        memory.clear();
        assert_eq!(learnt(&memory), 0);
        let third = search_with(&memory, &pos, 7);
        assert_eq!(third.nodes, first.nodes, "cleared memory searches as new");
    }
}

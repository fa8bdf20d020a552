//! Depth-1 scores of sibling positions, the labels of `extract`.

use std::sync::Arc;

use rsshogi::board::Position;
use rsshogi::types::Move32;

use super::Control;
use super::score::INFINITE;
use super::worker::{SearchBuffers, Worker};
use crate::eval::Evaluator;

/// Scores sibling positions (the position after one candidate move) by a
/// depth-1 search: the opponent's best reply by one ply of search plus
/// quiescence, seen from the mover. One per thread; it keeps buffers and
/// move-ordering statistics but no transposition table, so a score depends
/// only on the position (and its history), never on what was scored before.
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
        }
    }

    /// As [`SiblingScorer::score`], with `eval`.
    pub fn score(&mut self, eval: &dyn Evaluator, pos: &mut Position) -> i32 {
        let mut worker = Worker::new(pos, eval, None, &self.control, 0, &mut self.buffers);
        worker.ceiling_pruning = true;
        let score = -worker.search(-INFINITE, INFINITE, 1, 0, true, false);
        self.pv.clear();
        self.pv.extend_from_slice(worker.pv());
        score
    }
}

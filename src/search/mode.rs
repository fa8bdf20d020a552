//! What kind of search a [`Worker`](super::worker::Worker) runs, fixed at
//! compile time so that each kind's code has no branches for the others.
//!
//! ```text
//! GameSearch  the engine's search: selective pruning and reductions
//! Labelling   sibling scores for extract: full width, with shortcuts that
//!             keep a full-window search's value exactly
//! FullWidth   plain alpha-beta, the reference the other two are tested against
//! ```

/// A kind of search.
pub(crate) trait Mode {
    /// The game search's selective pruning and reductions (null move,
    /// futility, LMR, singular extensions, ...); off, the search is
    /// full-width.
    const SELECTIVE: bool;
    /// Labelling shortcuts: captures and promotions that cannot reach alpha
    /// are skipped ([`Worker::exact_ceiling`](super::worker::Worker::exact_ceiling))
    /// at the frontier and in quiescence; a quiescence move whose child
    /// could only stand pat is scored without playing it; in check, the
    /// evasion that last refuted the same check is tried first. Values are
    /// a full-window search's; fail-soft bounds, node counts and (between
    /// equal moves) the principal variation may differ. The game search
    /// leaves them off: ceiling pruning measured no faster to a given depth
    /// there, only fewer (cheap) nodes.
    const LABELLING: bool;
}

/// The engine's search.
pub(crate) struct GameSearch;

impl Mode for GameSearch {
    const SELECTIVE: bool = true;
    const LABELLING: bool = false;
}

/// Sibling scores for extract.
pub(crate) struct Labelling;

impl Mode for Labelling {
    const SELECTIVE: bool = false;
    const LABELLING: bool = true;
}

/// Plain full-width alpha-beta with quiescence.
#[cfg(test)]
pub(crate) struct FullWidth;

#[cfg(test)]
impl Mode for FullWidth {
    const SELECTIVE: bool = false;
    const LABELLING: bool = false;
}

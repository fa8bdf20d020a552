//! niwatori: a shogi engine that learns its evaluation function from game records.
//!
//! The data flows one way, and each module uses only those above it:
//!
//! ```text
//! perft              count legal move sequences (move generator check)
//! eval               Evaluator trait: material, material-hand (learned later)
//! search             alpha-beta: TT, killers, history, quiescence with SEE, mate-in-1
//! usi                the USI protocol front-end
//! bench              fixed-depth search over fixed positions; node count = signature
//! ```
//!
//! The board, legal moves, SFEN and mate-in-1 come from [`rsshogi`].

pub mod atomic;
pub mod bench;
pub mod eval;
pub mod extract;
pub mod features;
pub mod learn;
pub mod opening;
pub mod perft;
pub mod play;
pub mod plot;
pub mod records;
pub mod report;
pub mod search;
pub mod train;
pub mod tt;
pub mod usi;

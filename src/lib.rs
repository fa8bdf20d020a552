//! niwatori: a shogi engine that learns its evaluation function from game records.
//!
//! The data flows one way — records → rows → model → evaluation → search →
//! report/match — and the modules, in that order:
//!
//! ```text
//! records   reading CSA / KIF game records (and PSV positions), errors by file and line
//! positions PackedSfenValue and HCPE position files, read and written
//! corpus    a folder of records split into training and held-out games
//! features  the two-piece attack-relation features of a position
//! extract   sibling expansion and labels: game records → libsvm rows
//! rows      what passes between the stages: the rows' feature scheme, the model file
//! train     L2-loss SVR in the primal (LIBLINEAR -s 11): rows → model
//! eval      the Evaluator trait: material, material-hand, learned (a model)
//! tt        the transposition table
//! search    iterative deepening alpha-beta, quiescence, sibling scores
//! report    next-move agreement of an evaluation on held-out games
//! learn     the loop: extract → train → report, iterated
//! plot      agreement and learning-curve pictures
//! opening   random opening moves
//! usi       the USI protocol front-end
//! play      games and matches between engines, Elo, the CSA network client
//! bench     the benches: search (node count = signature), extract, train
//! perft     count legal move sequences (move generator check)
//! atomic    files written whole or not at all
//! progress  a long job's progress bar, or a line every ten seconds in logs
//! random    seeded hashing (FNV-1a, SplitMix64) and the move-choosing generator
//! ```
//!
//! The board, legal moves, SFEN and mate-in-1 come from [`rsshogi`].
//!
//! # Driving the search from another program
//!
//! A host gives a position, an evaluation, a depth (or time, or nodes), a
//! root window and threads, and gets back the best move, its score and the
//! principal variation, as a host drives a search processor:
//!
//! ```
//! use niwatori::eval::Material;
//! use niwatori::search::{Control, Limits, SearchOptions, think_with};
//! use niwatori::tt::TranspositionTable;
//!
//! // Black to move; a gold drop on 5b mates.
//! let pos = rsshogi::board::position_from_sfen("4k4/9/4P4/9/9/9/9/9/4K4 b G 1").unwrap();
//! let tt = TranspositionTable::new(16);
//! let options = SearchOptions { threads: 2, ..SearchOptions::default() };
//!
//! // Full window, depth 3.
//! let r = think_with(&pos, &Material, &tt, &Limits::depth(3), &options, &Control::new(), &mut |_| {});
//! assert_eq!(r.best_move.unwrap().to_usi(), "G*5b");
//! assert_eq!(r.pv[0], r.best_move.unwrap());
//! assert!(niwatori::search::score::is_mate_score(r.score) && r.score > 0);
//!
//! // Black is a gold and a pawn up, so in the window (-100, 100) every
//! // move fails high: the score is a lower bound at or above 100 and the
//! // move whichever reached it first.
//! let limits = Limits::depth(3).window(-100, 100);
//! let r = think_with(&pos, &Material, &tt, &limits, &options, &Control::new(), &mut |_| {});
//! assert!(r.score >= 100);
//!
//! // Above any material count, only the mate fails high.
//! let limits = Limits::depth(3).window(10_000, 10_100);
//! let r = think_with(&pos, &Material, &tt, &limits, &options, &Control::new(), &mut |_| {});
//! assert!(r.score >= 10_100);
//! assert_eq!(r.best_move.unwrap().to_usi(), "G*5b");
//! ```
//!
//! [`search::Control`] stops a search from another thread, and the last
//! argument receives each completed iteration ([`search::Info`]).

pub mod atomic;
pub mod bench;
pub mod corpus;
pub mod eval;
pub mod extract;
pub mod features;
pub mod learn;
pub mod mpirun;
pub mod opening;
pub mod perft;
pub mod play;
pub mod plot;
pub mod policy;
pub mod positions;
pub mod progress;
pub mod random;
pub mod records;
pub mod report;
pub mod rows;
pub mod search;
pub mod train;
pub mod tt;
pub mod usi;

//! Playing games: engine-vs-engine matches and the CSA network protocol.
//!
//! Every player is a USI engine in a child process (niwatori's own evaluations run
//! as `niwatori usi` with options set), so one code path serves all engines and a
//! crashing engine cannot take the referee down with it.
//!
//! ```text
//! spec          SPEC strings: material, learned:PATH, usi:COMMAND --option N=V
//! usi_engine    a USI engine as a child process (handshake, go, stop, quit)
//! clock         time controls, the `go` limits they produce, time-loss checks
//! game          one refereed game between two engines, with adjudication
//! openings      start positions: prefixes of real games or seeded random play
//! elo           Elo difference, 95% interval, SPRT
//! csa_record    writing CSA V2.2 records with scores and PVs as comments
//! matches       the match runner (parallel games, resumable, JSON summary)
//! csa_client    the CSA network protocol client (floodgate-style servers)
//! cli           the `match` and `csa` subcommands
//! ```

pub mod cli;
pub mod clock;
pub mod csa_client;
pub mod csa_record;
pub mod elo;
pub mod game;
pub mod matches;
pub mod openings;
pub mod spec;
pub mod usi_engine;

pub use matches::{MatchOptions, MatchSummary, run_match};

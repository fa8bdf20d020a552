//! `niwatori bench` (or `bench search`): a fixed-depth, single-threaded search of fixed
//! positions. The node count is a signature of the search: it changes only
//! when the search (or the evaluation) changes, as with Stockfish's bench.

use std::time::Instant;

use rsshogi::board::position_from_sfen;

use crate::eval::Evaluator;
use std::sync::Arc;

use crate::policy::PolicyModel;
use crate::search::{Control, Limits, SearchOptions, think_with};
use crate::tt::TranspositionTable;

/// Opening, middlegame and endgame positions, from real games and
/// well-known test positions.
pub const POSITIONS: &[&str] = &[
    "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
    "lnsgkgsnl/1r7/p1ppp1bpp/1p3pp2/7P1/2P6/PP1PPPP1P/1B3S1R1/LNSGKG1NL b - 9",
    "ln1g3nl/1r1s1kg2/p2ppps1p/2p3pp1/1p7/2P1P1P2/PPSP1PN1P/2G2S1R1/LN2KG2L b Bb 29",
    "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1",
    "lr5nl/3g1kg2/2n1ppsp1/p1pp2p1p/1p3P1P1/P1PPP1P1P/1PS1G1N2/2G1K4/LN5RL b BSbs 57",
    "8l/1l+R2P3/p2pBG1pp/kps1p4/Nn1P2G2/P1P1P2PP/1PS6/1KSG3+r1/LN2+p3L w Sbgn2p 124",
    "ln5nl/2r2gk2/3p1g1p1/p1ps1ss1p/1p3p3/P1PSP1P1P/1PGP1P3/3K1G1R1/LN5NL b BP2p 53",
    "3g4l/+R1sg2S2/p1npk1s+Rp/2pb2p2/4g2N1/1p7/P1PP1PP1P/1P1S5/LNK2G2L w BNL4P 88",
];

/// The default depth of `niwatori bench`.
pub const DEFAULT_DEPTH: u32 = 9;

/// How to run the bench.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Search each position to this depth...
    pub depth: u32,
    /// ...or, when set, for this many milliseconds (the depth is then what
    /// is measured: Lazy SMP threads should reach deeper).
    pub movetime_ms: Option<u64>,
    pub threads: usize,
    pub hash_mb: usize,
    /// A move policy ordering quiet moves (`--policy`; the baseline of a
    /// comparison runs without it).
    pub policy: Option<Arc<PolicyModel>>,
}

impl Default for BenchConfig {
    fn default() -> Self {
        Self {
            depth: DEFAULT_DEPTH,
            movetime_ms: None,
            threads: 1,
            hash_mb: 16,
            policy: None,
        }
    }
}

/// What a bench run measured.
#[derive(Clone, Debug)]
pub struct BenchReport {
    pub nodes: u64,
    pub seconds: f64,
    /// Mean completed depth over the positions.
    pub mean_depth: f64,
}

impl BenchReport {
    pub fn nps(&self) -> f64 {
        self.nodes as f64 / self.seconds.max(1e-9)
    }
}

/// Searches every bench position with a fresh table, printing one line per
/// position when `verbose`.
pub fn run(eval: &dyn Evaluator, config: &BenchConfig, verbose: bool) -> BenchReport {
    let tt = TranspositionTable::new(config.hash_mb);
    let limits = match config.movetime_ms {
        Some(ms) => Limits::movetime(ms),
        None => Limits::depth(config.depth),
    };
    let mut nodes = 0;
    let mut depths = 0;
    let start = Instant::now();
    for (i, sfen) in POSITIONS.iter().enumerate() {
        let pos = position_from_sfen(sfen).expect("bench positions are valid SFEN");
        tt.clear();
        let control = Control::new();
        let options = SearchOptions {
            threads: config.threads,
            policy: config.policy.clone(),
            ..SearchOptions::default()
        };
        let result = think_with(&pos, eval, &tt, &limits, &options, &control, &mut |_| {});
        nodes += result.nodes;
        depths += result.depth;
        if verbose {
            println!(
                "position {:>2}: depth {:>2} bestmove {:<6} score {:<10} nodes {}",
                i + 1,
                result.depth,
                result.best_move.map_or("resign".into(), |m| m.to_usi()),
                crate::search::score::to_usi(result.score),
                result.nodes
            );
        }
    }
    BenchReport {
        nodes,
        seconds: start.elapsed().as_secs_f64(),
        mean_depth: f64::from(depths) / POSITIONS.len() as f64,
    }
}

/// An evaluation's bench against a baseline's, in one process: the runs
/// alternate (this machine is shared and noisy), node counts must agree
/// between runs (one thread is deterministic), and times are medians.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub eval: BenchReport,
    pub baseline: BenchReport,
}

impl Comparison {
    pub fn nodes_ratio(&self) -> f64 {
        self.eval.nodes as f64 / self.baseline.nodes.max(1) as f64
    }

    pub fn time_ratio(&self) -> f64 {
        self.eval.seconds / self.baseline.seconds.max(1e-9)
    }

    pub fn nps_ratio(&self) -> f64 {
        self.eval.nps() / self.baseline.nps().max(1e-9)
    }
}

/// Benches `eval` and `baseline` `runs` times each, alternating.
pub fn compare(
    eval: &dyn Evaluator,
    baseline: &dyn Evaluator,
    config: &BenchConfig,
    runs: usize,
) -> Comparison {
    let median = |mut reports: Vec<BenchReport>| {
        reports.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
        reports.swap_remove(reports.len() / 2)
    };
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let baseline_config = BenchConfig {
        policy: None,
        ..config.clone()
    };
    for _ in 0..runs.max(1) {
        ours.push(run(eval, config, false));
        theirs.push(run(baseline, &baseline_config, false));
    }
    if config.threads == 1 {
        for reports in [&ours, &theirs] {
            debug_assert!(reports.iter().all(|r| r.nodes == reports[0].nodes));
        }
    }
    Comparison {
        eval: median(ours),
        baseline: median(theirs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The USI front end refuses an unplayable position (the eighth had
    /// five lances until 2026-12-07), so the bench must not search one.
    #[test]
    fn every_bench_position_is_playable() {
        for sfen in POSITIONS {
            let pos = position_from_sfen(sfen).unwrap();
            crate::records::check_playable(&pos).unwrap_or_else(|e| panic!("{sfen}: {e}"));
        }
    }
}

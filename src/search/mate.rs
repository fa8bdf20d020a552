//! `go mate`: a checkmate search. The attacker plays only checks, the
//! defender every legal evasion; iterative deepening over odd depths finds
//! the shortest mate. A search that ran out of checks everywhere before its
//! depth limit proves there is no mate at all.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Instant;

use rsshogi::board::{ChecksAll, EvasionsAll, Move32List, Position, generate_moves_move32};
use rsshogi::mate::solve_mate_in_one;
use rsshogi::types::Move32;

use super::Control;

/// The answer to `go mate`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MateAnswer {
    /// A mating sequence, attacker's moves and the defender's longest defence.
    Mate(Vec<Move32>),
    /// Proven: no sequence of checks mates.
    NoMate,
    /// The time ran out (or `stop`) before either was shown.
    Timeout,
}

struct MateSearch<'a> {
    control: &'a Control,
    deadline: Option<Instant>,
    /// Some attacker node still had checks when the depth ran out.
    depth_cut: bool,
    aborted: bool,
    nodes: u64,
    /// Some check below was skipped for repeating a position of the path:
    /// the result holds for this path only and is not cached.
    repetition_cut: bool,
    /// Positions (key) shown not to be mated within the given remaining
    /// depth, and whether that held at any depth (no depth cut below);
    /// only results that no repetition of the path decided.
    no_mate: HashMap<u64, (u32, bool)>,
    /// Off only in tests, as the reference the cache must agree with.
    use_cache: bool,
}

fn legal_moves<T: rsshogi::board::MoveGenType>(pos: &Position) -> Vec<Move32> {
    let mut list = Move32List::new();
    generate_moves_move32::<T>(pos, &mut list);
    list.iter()
        .copied()
        .filter(|&mv| pos.is_legal_move32(mv))
        .collect()
}

impl MateSearch<'_> {
    fn should_stop(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes & 1023 == 0
            && (self.control.stop.load(Ordering::Relaxed)
                || self.deadline.is_some_and(|d| Instant::now() >= d))
        {
            self.aborted = true;
        }
        self.aborted
    }

    /// The attacker to move: a mate in at most `depth` plies (odd)?
    fn attack(&mut self, pos: &mut Position, depth: u32) -> Option<Vec<Move32>> {
        if self.should_stop() {
            return None;
        }
        if let Some(mv) = solve_mate_in_one(pos) {
            return Some(vec![mv]);
        }
        let key = pos.key().low_u64();
        if self.use_cache
            && let Some(&(d, absolute)) = self.no_mate.get(&key)
            && (absolute || d >= depth)
        {
            self.depth_cut |= !absolute;
            return None;
        }
        let outer_cut = std::mem::replace(&mut self.depth_cut, false);
        let outer_repetition = std::mem::replace(&mut self.repetition_cut, false);
        let found = self.attack_checks(pos, depth);
        if found.is_none() && !self.aborted && !self.repetition_cut && self.use_cache {
            self.no_mate.insert(key, (depth, !self.depth_cut));
        }
        self.depth_cut |= outer_cut;
        self.repetition_cut |= outer_repetition;
        found
    }

    fn attack_checks(&mut self, pos: &mut Position, depth: u32) -> Option<Vec<Move32>> {
        let checks = legal_moves::<ChecksAll>(pos);
        if depth < 3 {
            if !checks.is_empty() {
                self.depth_cut = true;
            }
            return None;
        }
        for mv in checks {
            pos.apply_move32(mv);
            // A repeated position does not help the attacker (perpetual check loses).
            let found = if pos.repetition_state_with_ply(usize::MAX)
                == rsshogi::types::RepetitionState::None
            {
                self.defend(pos, depth - 1)
            } else {
                self.repetition_cut = true;
                None
            };
            pos.undo_move32(mv).expect("undo of a move just applied");
            if let Some(mut line) = found {
                line.insert(0, mv);
                return Some(line);
            }
            if self.aborted {
                return None;
            }
        }
        None
    }

    /// The defender to move, in check: mated in at most `depth` plies
    /// whatever it does? Returns the longest defence.
    fn defend(&mut self, pos: &mut Position, depth: u32) -> Option<Vec<Move32>> {
        let evasions = legal_moves::<EvasionsAll>(pos);
        let mut longest: Option<Vec<Move32>> = Some(Vec::new());
        for mv in evasions {
            pos.apply_move32(mv);
            let line = self.attack(pos, depth - 1);
            pos.undo_move32(mv).expect("undo of a move just applied");
            let mut line = line?;
            line.insert(0, mv);
            if longest.as_ref().is_none_or(|l| line.len() > l.len()) {
                longest = Some(line);
            }
        }
        longest
    }
}

/// Searches for a mate from `pos` (the attacker to move) until one is found,
/// none is proven, `max_plies` is reached, the time `limit_ms` runs out or
/// `control` is stopped.
pub fn solve(
    pos: &Position,
    limit_ms: Option<u64>,
    max_plies: u32,
    control: &Control,
) -> MateAnswer {
    solve_with(pos, limit_ms, max_plies, control, true)
}

fn solve_with(
    pos: &Position,
    limit_ms: Option<u64>,
    max_plies: u32,
    control: &Control,
    use_cache: bool,
) -> MateAnswer {
    let mut search = MateSearch {
        use_cache,
        control,
        deadline: limit_ms.map(|ms| Instant::now() + std::time::Duration::from_millis(ms)),
        depth_cut: false,
        repetition_cut: false,
        aborted: false,
        nodes: 0,
        no_mate: HashMap::new(),
    };
    let mut work = pos.clone();
    let mut depth = 1;
    while depth <= max_plies.max(1) {
        search.depth_cut = false;
        if let Some(line) = search.attack(&mut work, depth) {
            return MateAnswer::Mate(line);
        }
        if search.aborted {
            return MateAnswer::Timeout;
        }
        if !search.depth_cut {
            return MateAnswer::NoMate;
        }
        depth += 2;
    }
    MateAnswer::Timeout
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsshogi::board::position_from_sfen;

    fn answer(sfen: &str) -> MateAnswer {
        solve(
            &position_from_sfen(sfen).unwrap(),
            Some(10_000),
            15,
            &Control::new(),
        )
    }

    #[test]
    fn mate_in_one() {
        let MateAnswer::Mate(pv) = answer("4k4/9/4P4/9/9/9/9/9/4K4 b G 1") else {
            panic!("mate expected")
        };
        assert_eq!(pv.len(), 1);
        assert_eq!(pv[0].to_usi(), "G*5b");
    }

    /// The "no mate" cache is keyed by position, but a check that repeats
    /// a position of the path is skipped, which depends on the path: the
    /// cached search must answer as the search without a cache, on real
    /// problems and on positions one evasion into them.
    #[test]
    fn the_cache_answers_as_the_search_without_it() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/positions/mate.tsv");
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("{path}: {e} (the shared data sits beside the repository)"));
        let mut compared = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')).step_by(7) {
            let cols: Vec<&str> = line.split('\t').collect();
            if cols[2].parse::<u32>().unwrap() > 7 {
                continue;
            }
            let pos = position_from_sfen(cols[0]).unwrap();
            let length = |use_cache| match solve_with(&pos, None, 9, &Control::new(), use_cache) {
                MateAnswer::Mate(pv) => Some(pv.len()),
                MateAnswer::NoMate => None,
                MateAnswer::Timeout => panic!("no time limit was set"),
            };
            assert_eq!(length(true), length(false), "{}", cols[0]);
            compared += 1;
        }
        assert!(compared > 250, "{compared} problems compared");
    }

    #[test]
    fn no_checks_means_no_mate() {
        assert_eq!(answer("4k4/9/9/9/9/9/9/9/4K4 b - 1"), MateAnswer::NoMate);
    }
}

//! How long to think: search limits from `go` and the time budget they allow.

use rsshogi::types::Color;

/// What `go` asked for. Times are in milliseconds.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Remaining time of Black and White (`btime`, `wtime`).
    pub time: [Option<u64>; 2],
    /// Increment per move (`binc`, `winc`).
    pub inc: [u64; 2],
    pub byoyomi: u64,
    pub movetime: Option<u64>,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    /// Search until `stop`.
    pub infinite: bool,
    /// Search the opponent's time until `ponderhit` or `stop`.
    pub ponder: bool,
    /// The root window (alpha, beta), as a host driving the search asks:
    /// a score at or below alpha is an upper bound, at or above beta a
    /// lower bound. `None`: the full window.
    pub window: Option<(i32, i32)>,
}

impl Limits {
    pub fn depth(depth: u32) -> Self {
        Self {
            depth: Some(depth),
            ..Self::default()
        }
    }

    pub fn nodes(nodes: u64) -> Self {
        Self {
            nodes: Some(nodes),
            ..Self::default()
        }
    }

    pub fn movetime(ms: u64) -> Self {
        Self {
            movetime: Some(ms),
            ..Self::default()
        }
    }

    /// These limits in the root window (`alpha`, `beta`), centipawns.
    ///
    /// # Panics
    /// If `alpha >= beta`: the window would hold no score.
    pub fn window(self, alpha: i32, beta: i32) -> Self {
        assert!(alpha < beta, "empty root window ({alpha}, {beta})");
        Self {
            window: Some((alpha, beta)),
            ..self
        }
    }
}

/// Soft and hard time limits for one move, in milliseconds from the
/// moment the clock started (the `go`, or `ponderhit` when pondering).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBudget {
    /// Do not start another iteration after this.
    pub optimum: u64,
    /// Stop searching at this moment.
    pub maximum: u64,
}

/// The budget for the side `us`, keeping `overhead` ms for the transport
/// (GUI, server, network) so that the move arrives in time.
/// `None` when the search has no time limit.
pub fn budget(limits: &Limits, us: Color, overhead: u64) -> Option<TimeBudget> {
    if let Some(ms) = limits.movetime {
        let t = ms.saturating_sub(overhead).max(1);
        return Some(TimeBudget {
            optimum: t,
            maximum: t,
        });
    }
    let side = us.to_index();
    let remaining = limits.time[side];
    let inc = limits.inc[side];
    let byoyomi = limits.byoyomi;
    if remaining.is_none() && inc == 0 && byoyomi == 0 {
        return None;
    }
    let remaining = remaining.unwrap_or(0);
    // The most we may use and still have our move arrive in time.
    let hard = (remaining + inc + byoyomi).saturating_sub(overhead).max(1);
    let (optimum, maximum) = if byoyomi > 0 {
        // While main time remains every second spent is main time: aim at
        // a 60th of it (at floodgate's 600 s + 10 s the main time then
        // lasts some 45 moves, through the middle game) and never spend
        // more than 3 % of it on one move; neither below the byoyomi, which
        // is there to be used once the main time is gone. (A 30th plus the
        // byoyomi, with 10 % more to finish an iteration, spent a quarter
        // of floodgate's main time on the first four moves.)
        let maximum = (remaining * 3 / 100).max(byoyomi);
        ((remaining / 60).max(byoyomi), maximum)
    } else if inc > 0 {
        (remaining / 40 + inc * 9 / 10, remaining / 8 + inc)
    } else {
        (remaining / 50, remaining / 10)
    };
    let maximum = maximum.min(hard).max(1);
    Some(TimeBudget {
        optimum: optimum.min(maximum).max(1),
        maximum,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byoyomi_only_uses_the_byoyomi_less_overhead() {
        let limits = Limits {
            time: [Some(0), Some(0)],
            byoyomi: 100,
            ..Limits::default()
        };
        let b = budget(&limits, Color::BLACK, 30).unwrap();
        assert_eq!(b.maximum, 70);
        assert!(b.optimum <= b.maximum);
    }

    #[test]
    fn at_floodgates_600_plus_10_a_move_spends_at_most_3_percent_of_the_main_time() {
        let at = |remaining: u64| {
            let limits = Limits {
                time: [Some(remaining), Some(600_000)],
                byoyomi: 10_000,
                ..Limits::default()
            };
            budget(&limits, Color::BLACK, 100).unwrap()
        };
        assert_eq!(
            at(600_000),
            TimeBudget {
                optimum: 10_000,
                maximum: 18_000
            }
        );
        // Less main time, the same bar; never below the byoyomi.
        assert_eq!(at(400_000).maximum, 12_000);
        assert_eq!(
            at(100_000),
            TimeBudget {
                optimum: 10_000,
                maximum: 10_000
            }
        );
        // Main time gone: the byoyomi less the transport's overhead.
        assert_eq!(
            at(0),
            TimeBudget {
                optimum: 9_900,
                maximum: 9_900
            }
        );
        // 5 s of main time left: still the byoyomi (the clock allows 14.9 s).
        assert_eq!(at(5_000).maximum, 10_000);
    }

    #[test]
    fn never_more_than_the_clock_allows() {
        let limits = Limits {
            time: [Some(50), Some(60_000)],
            inc: [10, 10],
            ..Limits::default()
        };
        let b = budget(&limits, Color::BLACK, 30).unwrap();
        assert!(b.maximum <= 30, "{b:?}");
    }

    #[test]
    fn depth_only_has_no_budget() {
        assert_eq!(budget(&Limits::depth(5), Color::WHITE, 30), None);
    }
}

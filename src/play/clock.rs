//! Time controls, the `go` limits they produce, and the referee's clock.
//!
//! Time is counted as in shogi: each side has a main time; when it is spent, each
//! move may use up to the byoyomi; with an increment (Fischer) the increment is
//! added when the side's turn starts (as shogi-server does, and as engines read
//! `btime`+`binc`). A move that takes longer than the main time left plus the
//! increment plus the byoyomi (plus the referee's tolerance for pipe latency)
//! loses on time.
//!
//! ```
//! use niwatori::play::clock::{Clock, TimeControl};
//! let tc = TimeControl { total_ms: 1000, byoyomi_ms: 500, increment_ms: 0 };
//! let mut clock = Clock::new(tc);
//! assert_eq!(clock.go_args(0), "btime 1000 wtime 1000 byoyomi 500");
//! assert!(clock.consume(0, 1200, 0).is_ok()); // 1000 main + 200 of the byoyomi
//! assert_eq!(clock.remaining_ms(0), 0);
//! assert!(clock.consume(0, 600, 0).is_err()); // byoyomi exceeded
//! ```

use std::fmt;
use std::time::Duration;

use thiserror::Error;

/// Errors in a time-control argument.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ClockError {
    #[error("bad time control {0:?}: expected MS or MS+INC (milliseconds)")]
    BadTime(String),
    #[error("no time to think: give --byoyomi or a nonzero --time")]
    NoTime,
}

/// Main time, byoyomi and increment, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct TimeControl {
    pub total_ms: u64,
    pub byoyomi_ms: u64,
    pub increment_ms: u64,
}

impl TimeControl {
    /// From `--time MS[+INC]` and `--byoyomi MS`.
    pub fn from_args(time: Option<&str>, byoyomi_ms: Option<u64>) -> Result<Self, ClockError> {
        let mut tc = TimeControl {
            byoyomi_ms: byoyomi_ms.unwrap_or(0),
            ..Default::default()
        };
        if let Some(t) = time {
            let bad = || ClockError::BadTime(t.to_string());
            let (total, inc) = t.split_once('+').unwrap_or((t, "0"));
            tc.total_ms = total.trim().parse().map_err(|_| bad())?;
            tc.increment_ms = inc.trim().parse().map_err(|_| bad())?;
        }
        if tc.total_ms == 0 && tc.byoyomi_ms == 0 && tc.increment_ms == 0 {
            return Err(ClockError::NoTime);
        }
        Ok(tc)
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.total_ms)?;
        if self.increment_ms > 0 {
            write!(f, "+{}ms", self.increment_ms)?;
        }
        if self.byoyomi_ms > 0 {
            write!(f, " byoyomi {}ms", self.byoyomi_ms)?;
        }
        Ok(())
    }
}

/// How a game's moves are limited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Limit {
    /// `go nodes K` for every move (engines that cannot take it use their fallback).
    Nodes(u64),
    /// `go depth D` for every move: equal search depth, whatever each
    /// evaluation costs (engines that cannot take it use their fallback).
    Depth(u32),
    /// A clock.
    Time(TimeControl),
}

/// The move took longer than the clock allowed.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("used {used_ms} ms with {allowed_ms} ms allowed")]
pub struct TimeLoss {
    pub used_ms: u64,
    pub allowed_ms: u64,
}

/// Both sides' remaining main time. Side 0 is Black (sente), 1 is White.
#[derive(Debug, Clone)]
pub struct Clock {
    pub tc: TimeControl,
    remaining: [u64; 2],
}

impl Clock {
    pub fn new(tc: TimeControl) -> Clock {
        Clock {
            tc,
            remaining: [tc.total_ms; 2],
        }
    }

    /// Main time left for `side`.
    pub fn remaining_ms(&self, side: usize) -> u64 {
        self.remaining[side]
    }

    /// Overrides the main time left (the CSA client follows the server's figures).
    pub fn set_remaining_ms(&mut self, side: usize, ms: u64) {
        self.remaining[side] = ms;
    }

    /// The longest `side` may think on this move.
    pub fn budget(&self, side: usize) -> Duration {
        Duration::from_millis(self.remaining[side] + self.tc.increment_ms + self.tc.byoyomi_ms)
    }

    /// The time part of a USI `go` command (without the word `go`).
    pub fn go_args(&self, side_to_move: usize) -> String {
        self.go_args_with_margin(side_to_move, 0)
    }

    /// Like [`Clock::go_args`], but shows the side to move `margin_ms` less than it
    /// has (taken from the byoyomi first), for engines that overrun their time.
    pub fn go_args_with_margin(&self, side_to_move: usize, margin_ms: u64) -> String {
        let mut shown = self.remaining;
        let mut byoyomi = self.tc.byoyomi_ms;
        let from_byoyomi = margin_ms.min(byoyomi);
        byoyomi -= from_byoyomi;
        shown[side_to_move] = shown[side_to_move].saturating_sub(margin_ms - from_byoyomi);
        let [b, w] = shown;
        if self.tc.increment_ms > 0 {
            let i = self.tc.increment_ms;
            format!("btime {b} wtime {w} binc {i} winc {i}")
        } else {
            format!("btime {b} wtime {w} byoyomi {byoyomi}")
        }
    }

    /// Charges `used_ms` to `side`; an error when it exceeded the budget by more
    /// than `tolerance_ms` (the clock is still charged, clamped at zero).
    pub fn consume(
        &mut self,
        side: usize,
        used_ms: u64,
        tolerance_ms: u64,
    ) -> Result<(), TimeLoss> {
        // Saturating: the times may come from a server, as large as a u64.
        let with_increment = self.remaining[side].saturating_add(self.tc.increment_ms);
        let allowed_ms = with_increment.saturating_add(self.tc.byoyomi_ms);
        self.remaining[side] = with_increment.saturating_sub(used_ms);
        if used_ms > allowed_ms.saturating_add(tolerance_ms) {
            Err(TimeLoss {
                used_ms,
                allowed_ms,
            })
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_counts_fischer() {
        let tc = TimeControl::from_args(Some("10000+500"), None).unwrap();
        assert_eq!(
            tc,
            TimeControl {
                total_ms: 10000,
                byoyomi_ms: 0,
                increment_ms: 500
            }
        );
        let mut c = Clock::new(tc);
        assert_eq!(c.go_args(1), "btime 10000 wtime 10000 binc 500 winc 500");
        c.consume(1, 3000, 0).unwrap();
        assert_eq!(c.remaining_ms(1), 7500);
        assert_eq!(c.budget(1).as_millis(), 8000);
        assert_eq!(
            c.go_args_with_margin(1, 200),
            "btime 10000 wtime 7300 binc 500 winc 500"
        );
        let b = Clock::new(TimeControl {
            total_ms: 1000,
            byoyomi_ms: 300,
            increment_ms: 0,
        });
        assert_eq!(
            b.go_args_with_margin(0, 200),
            "btime 1000 wtime 1000 byoyomi 100"
        );
        assert_eq!(
            b.go_args_with_margin(0, 500),
            "btime 800 wtime 1000 byoyomi 0"
        );
        assert_eq!(
            c.consume(1, 8100, 50),
            Err(TimeLoss {
                used_ms: 8100,
                allowed_ms: 8000
            })
        );
        assert_eq!(
            TimeControl::from_args(Some("1e3"), None),
            Err(ClockError::BadTime("1e3".into()))
        );
        assert_eq!(TimeControl::from_args(None, None), Err(ClockError::NoTime));
        assert_eq!(
            TimeControl::from_args(None, Some(300)).unwrap().byoyomi_ms,
            300
        );
    }
}

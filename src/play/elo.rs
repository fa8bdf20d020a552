//! Elo difference with a 95% interval, and a sequential probability ratio test.
//!
//! The score is s = (W + D/2) / N and the Elo difference −400·log10(1/s − 1). The
//! interval comes from the per-game score variance (normal approximation), mapped
//! through the same logistic curve. The SPRT is the usual GSPRT on the trinomial
//! (W/D/L) model with logistic Elo bounds, α = β = 0.05.
//!
//! ```
//! use niwatori::play::elo::Elo;
//! let e = Elo::from_wdl(60, 20, 20);
//! assert!((e.diff - 147.19).abs() < 0.01);
//! assert!(e.ci95.0 < e.diff && e.diff < e.ci95.1);
//! ```

/// Elo estimate from one side's point of view.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Elo {
    /// Score fraction in [0, 1].
    pub score: f64,
    /// Elo difference (±infinity is clamped to ±2000).
    pub diff: f64,
    /// 95% interval (low, high).
    pub ci95: (f64, f64),
}

const CLAMP: f64 = 2000.0;

/// Logistic Elo of a score fraction.
pub fn elo_of_score(s: f64) -> f64 {
    if s <= 0.0 {
        -CLAMP
    } else if s >= 1.0 {
        CLAMP
    } else {
        (-400.0 * (1.0 / s - 1.0).log10()).clamp(-CLAMP, CLAMP)
    }
}

/// Expected score for an Elo difference.
pub fn score_of_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

fn mean_var(w: u64, d: u64, l: u64) -> (f64, f64, f64) {
    let n = (w + d + l) as f64;
    let s = (w as f64 + 0.5 * d as f64) / n;
    let var = (w as f64 * (1.0 - s).powi(2) + d as f64 * (0.5 - s).powi(2) + l as f64 * s * s) / n;
    (n, s, var)
}

impl Elo {
    /// From wins, draws and losses (of the side whose Elo is wanted).
    pub fn from_wdl(w: u64, d: u64, l: u64) -> Elo {
        if w + d + l == 0 {
            return Elo {
                score: 0.5,
                diff: 0.0,
                ci95: (-CLAMP, CLAMP),
            };
        }
        let (n, s, var) = mean_var(w, d, l);
        let half = 1.959964 * (var / n).sqrt();
        Elo {
            score: s,
            diff: elo_of_score(s),
            ci95: (elo_of_score(s - half), elo_of_score(s + half)),
        }
    }
}

/// SPRT state for H0: elo = elo0 against H1: elo = elo1.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    /// Log-likelihood ratio so far.
    pub llr: f64,
    /// Accept H0 at or below this.
    pub lower: f64,
    /// Accept H1 at or above this.
    pub upper: f64,
    /// "H1" (accept elo1), "H0" (accept elo0) or "continue".
    pub verdict: &'static str,
}

impl Sprt {
    /// The GSPRT log-likelihood ratio for W/D/L (α = β = 0.05).
    pub fn new(elo0: f64, elo1: f64, w: u64, d: u64, l: u64) -> Sprt {
        let (alpha, beta) = (0.05f64, 0.05f64);
        let lower = (beta / (1.0 - alpha)).ln();
        let upper = ((1.0 - beta) / alpha).ln();
        let llr = if w + d + l == 0 {
            0.0
        } else {
            let (n, s, var) = mean_var(w, d, l);
            if var <= 0.0 {
                0.0
            } else {
                let (s0, s1) = (score_of_elo(elo0), score_of_elo(elo1));
                n * (s1 - s0) * (2.0 * s - s0 - s1) / (2.0 * var)
            }
        };
        let verdict = if llr >= upper {
            "H1"
        } else if llr <= lower {
            "H0"
        } else {
            "continue"
        };
        Sprt {
            elo0,
            elo1,
            llr,
            lower,
            upper,
            verdict,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_matches_hand_computed_values() {
        // 50% is 0 Elo; 75% is 400·log10(3) = 190.85.
        assert_eq!(Elo::from_wdl(5, 10, 5).diff, 0.0);
        assert!((Elo::from_wdl(75, 0, 25).diff - 190.849).abs() < 0.01);
        // 75/25 W/L: var = 0.1875, se = sqrt(0.1875/100) = 0.0433; s ± 1.96·se.
        let e = Elo::from_wdl(75, 0, 25);
        let lo = elo_of_score(0.75 - 1.959964 * 0.043301);
        assert!((e.ci95.0 - lo).abs() < 0.01);
        assert_eq!(Elo::from_wdl(3, 0, 0).diff, 2000.0);
        assert!((score_of_elo(elo_of_score(0.3)) - 0.3).abs() < 1e-12);
    }

    #[test]
    fn sprt_decides_clear_cases() {
        assert_eq!(Sprt::new(0.0, 10.0, 600, 200, 200).verdict, "H1");
        assert_eq!(Sprt::new(0.0, 10.0, 200, 200, 600).verdict, "H0");
        assert_eq!(Sprt::new(0.0, 10.0, 5, 0, 5).verdict, "continue");
        // LLR by hand for 60/20/20, elo 0 vs 50: s0 = .5, s1 = .57146.
        let s = Sprt::new(0.0, 50.0, 60, 20, 20);
        let s1 = score_of_elo(50.0);
        let var = (60.0 * 0.3f64.powi(2) + 20.0 * 0.2f64.powi(2) + 20.0 * 0.7f64.powi(2)) / 100.0;
        let want = 100.0 * (s1 - 0.5) * (1.4 - 0.5 - s1) / (2.0 * var);
        assert!((s.llr - want).abs() < 1e-9);
    }
}

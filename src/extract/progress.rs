//! Progress of a long extraction: an indicatif bar on a terminal, a plain
//! line every ten seconds otherwise (logs, CI).

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Counts games and rows from many threads and shows them.
pub struct Progress {
    bar: Option<ProgressBar>,
    rows: Arc<AtomicU64>,
    games: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// Starts showing progress over `total` games (nothing if `!enabled`).
    pub fn start(total: u64, enabled: bool) -> Self {
        let rows = Arc::new(AtomicU64::new(0));
        let games = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let mut bar = None;
        let mut ticker = None;
        if enabled && std::io::stderr().is_terminal() {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} games, {msg}, {elapsed_precise} elapsed, ETA {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar = Some(b);
        } else if enabled {
            let (rows, games, done) = (rows.clone(), games.clone(), done.clone());
            ticker = Some(std::thread::spawn(move || {
                let start = Instant::now();
                let mut next = Duration::from_secs(10);
                while !done.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(200));
                    let t = start.elapsed();
                    if t < next {
                        continue;
                    }
                    next += Duration::from_secs(10);
                    let g = games.load(Ordering::Relaxed);
                    let r = rows.load(Ordering::Relaxed);
                    let rate = r as f64 / t.as_secs_f64();
                    let eta = if g > 0 {
                        t.as_secs_f64() * (total.saturating_sub(g)) as f64 / g as f64
                    } else {
                        f64::NAN
                    };
                    eprintln!(
                        "extract: {g}/{total} games, {r} rows, {rate:.0} rows/s, ETA {eta:.0} s"
                    );
                }
            }));
        }
        Self {
            bar,
            rows,
            games,
            done,
            ticker,
        }
    }

    /// One more game of `rows` rows is done.
    pub fn game_done(&self, rows: u64, start: Instant) {
        let r = self.rows.fetch_add(rows, Ordering::Relaxed) + rows;
        self.games.fetch_add(1, Ordering::Relaxed);
        if let Some(b) = &self.bar {
            b.inc(1);
            let rate = r as f64 / start.elapsed().as_secs_f64().max(1e-9);
            b.set_message(format!("{r} rows, {rate:.0} rows/s"));
        }
    }

    /// Stops the display.
    pub fn finish(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(b) = self.bar.take() {
            b.finish();
        }
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
    }
}

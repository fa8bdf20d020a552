//! Progress of a long job, one kind for every stage: an indicatif bar on a
//! terminal, a plain line every ten seconds otherwise (logs, CI). It may be
//! advanced from many threads at once.
//!
//! ```
//! use niwatori::progress::{Progress, Unit};
//! let p = Progress::start("extract", 3, Unit::Items("games"), Some("rows"), false);
//! p.inc(1, 120);
//! p.inc(2, 80);
//! assert_eq!(p.counts(), (3, 200));
//! p.finish();
//! ```

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// What the total counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Bytes,
    /// Things of this name (`games`, ...).
    Items(&'static str),
}

struct Counts {
    done: AtomicU64,
    /// A second count that rides along (rows of the games done, say).
    also: AtomicU64,
    /// A line of state shown after the counts (a match's score, say).
    status: Mutex<String>,
    finished: AtomicBool,
}

/// Progress over a known total.
pub struct Progress {
    bar: Option<ProgressBar>,
    counts: Arc<Counts>,
    also: Option<&'static str>,
    start: Instant,
    ticker: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// Starts showing `label`'s progress over `total` `unit`s, with a
    /// second count named `also` and its rate (nothing if `!enabled`).
    pub fn start(
        label: &str,
        total: u64,
        unit: Unit,
        also: Option<&'static str>,
        enabled: bool,
    ) -> Self {
        let counts = Arc::new(Counts {
            done: AtomicU64::new(0),
            also: AtomicU64::new(0),
            status: Mutex::new(String::new()),
            finished: AtomicBool::new(false),
        });
        let start = Instant::now();
        let mut bar = None;
        let mut ticker = None;
        if enabled && std::io::stderr().is_terminal() {
            let b = ProgressBar::new(total);
            let template = match unit {
                Unit::Bytes => {
                    "{prefix} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}{msg}, ETA {eta}"
                        .to_string()
                }
                Unit::Items(name) => {
                    format!("{{prefix}} [{{bar:30}}] {{pos}}/{{len}} {name}{{msg}}, ETA {{eta}}")
                }
            };
            b.set_style(
                ProgressStyle::with_template(&template)
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.set_prefix(label.to_string());
            bar = Some(b);
        } else if enabled {
            let (counts, label) = (counts.clone(), label.to_string());
            ticker = Some(std::thread::spawn(move || {
                let mut next = Duration::from_secs(10);
                while !counts.finished.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(200));
                    let t = start.elapsed();
                    if t < next {
                        continue;
                    }
                    next += Duration::from_secs(10);
                    let done = counts.done.load(Ordering::Relaxed);
                    let secs = t.as_secs_f64();
                    let eta = if done > 0 {
                        secs * total.saturating_sub(done) as f64 / done as f64
                    } else {
                        f64::NAN
                    };
                    let unit = match unit {
                        Unit::Bytes => "bytes",
                        Unit::Items(name) => name,
                    };
                    let also = also.map_or(String::new(), |name| {
                        let n = counts.also.load(Ordering::Relaxed);
                        format!(", {n} {name}, {:.0} {name}/s", n as f64 / secs)
                    });
                    let status = counts.status.lock().map_or(String::new(), |s| s.clone());
                    let status = if status.is_empty() {
                        status
                    } else {
                        format!("  {status}")
                    };
                    eprintln!("{label}: {done}/{total} {unit}{also}, ETA {eta:.0} s{status}");
                }
            }));
        }
        Self {
            bar,
            counts,
            also,
            start,
            ticker,
        }
    }

    /// `n` more units are done, and `also` more of the second count.
    pub fn inc(&self, n: u64, also: u64) {
        self.counts.done.fetch_add(n, Ordering::Relaxed);
        self.counts.also.fetch_add(also, Ordering::Relaxed);
        if let Some(b) = &self.bar {
            b.inc(n);
            self.show_message(b);
        }
    }

    /// Shows `status` after the counts from now on.
    pub fn set_status(&self, status: String) {
        if let Ok(mut s) = self.counts.status.lock() {
            *s = status;
        }
        if let Some(b) = &self.bar {
            self.show_message(b);
        }
    }

    /// The bar's message: the second count and its rate, then the status.
    fn show_message(&self, b: &ProgressBar) {
        let mut msg = String::new();
        if let Some(name) = self.also {
            let n = self.counts.also.load(Ordering::Relaxed);
            let rate = n as f64 / self.start.elapsed().as_secs_f64().max(1e-9);
            msg = format!(", {n} {name}, {rate:.0} {name}/s");
        }
        if let Ok(s) = self.counts.status.lock()
            && !s.is_empty()
        {
            msg.push_str("  ");
            msg.push_str(&s);
        }
        b.set_message(msg);
    }

    /// The units done and the second count so far.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.counts.done.load(Ordering::Relaxed),
            self.counts.also.load(Ordering::Relaxed),
        )
    }

    /// Prints a line without breaking the bar.
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// Stops the display.
    pub fn finish(mut self) {
        self.counts.finished.store(true, Ordering::Relaxed);
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Progress {
    /// A job that ends early (an error) stops its ticker too.
    fn drop(&mut self) {
        self.counts.finished.store(true, Ordering::Relaxed);
    }
}

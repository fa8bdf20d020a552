//! Progress for long jobs: an indicatif bar on a terminal, plain periodic
//! lines otherwise (logs, CI).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Progress over a known total, in `unit`s.
pub struct Progress {
    bar: Option<ProgressBar>,
    plain: bool,
    label: String,
    total: u64,
    done: u64,
    start: Instant,
    last_print: Instant,
}

impl Progress {
    /// `enabled == false` prints nothing.
    pub fn new(enabled: bool, label: &str, total: u64, bytes: bool) -> Self {
        let terminal = enabled && std::io::stderr().is_terminal();
        let bar = terminal.then(|| {
            let bar = ProgressBar::new(total);
            let template = if bytes {
                "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}"
            } else {
                "{msg} [{bar:30}] {pos}/{len} {per_sec} ETA {eta}"
            };
            bar.set_style(ProgressStyle::with_template(template).expect("valid template"));
            bar.set_message(label.to_string());
            bar
        });
        Progress {
            bar,
            plain: enabled && !terminal,
            label: label.to_string(),
            total,
            done: 0,
            start: Instant::now(),
            last_print: Instant::now(),
        }
    }

    pub fn inc(&mut self, n: u64) {
        self.done += n;
        if let Some(bar) = &self.bar {
            bar.inc(n);
        } else if self.plain && self.last_print.elapsed() >= Duration::from_secs(10) {
            self.last_print = Instant::now();
            let secs = self.start.elapsed().as_secs_f64();
            let rate = self.done as f64 / secs.max(1e-9);
            let eta = (self.total.saturating_sub(self.done)) as f64 / rate.max(1e-9);
            eprintln!(
                "{}: {}/{} ({:.0}/s, ETA {:.0} s)",
                self.label, self.done, self.total, rate, eta
            );
        }
    }

    /// Print a line without breaking the bar.
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

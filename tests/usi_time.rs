//! Time limits, in a test binary of their own so that no other test
//! competes for the processor while the clock runs.

mod common;

use std::time::{Duration, Instant};

use common::UsiProcess;

const T: Duration = Duration::from_secs(20);

#[test]
fn byoyomi_100_is_respected() {
    let mut e = UsiProcess::start();
    e.send("isready");
    e.until("readyok", T);
    let mut moves: Vec<String> = Vec::new();
    let mut worst = Duration::ZERO;
    for _ in 0..16 {
        e.send(&format!("position startpos moves {}", moves.join(" ")));
        let start = Instant::now();
        e.send("go btime 0 wtime 0 byoyomi 100");
        let lines = e.until("bestmove", T);
        worst = worst.max(start.elapsed());
        let best = lines
            .last()
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string();
        if best == "resign" || best == "win" {
            break;
        }
        moves.push(best);
    }
    assert!(
        worst < Duration::from_millis(100),
        "slowest move took {worst:?}"
    );
    e.quit();
}

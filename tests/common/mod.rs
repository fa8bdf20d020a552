//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// `../shared` beside the repository.
pub fn shared(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(path)
}

/// Rows of `positions/mate.tsv`: (sfen, answer pv, plies).
pub fn mate_problems(plies: u32) -> Vec<(String, Vec<String>, u32)> {
    let text = std::fs::read_to_string(shared("positions/mate.tsv")).expect("shared mate.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let n: u32 = f.get(2)?.parse().ok()?;
            (n == plies).then(|| {
                (
                    f[0].to_string(),
                    f[1].split_whitespace().map(String::from).collect(),
                    n,
                )
            })
        })
        .collect()
}

/// Asserts that `pv` is a line of legal moves from `pos` that ends with the
/// defender mated.
pub fn assert_pv_mates(sfen: &str, pos: &rsshogi::board::Position, pv: &[rsshogi::types::Move32]) {
    let mut p = pos.clone();
    for mv in pv {
        assert!(
            p.is_legal_move32(*mv),
            "{sfen}: illegal pv move {}",
            mv.to_usi()
        );
        p.apply_move32(*mv);
    }
    assert!(p.is_mated(), "{sfen}: pv does not end in mate");
}

/// The niwatori binary speaking USI, read line by line on a thread.
pub struct UsiProcess {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl UsiProcess {
    pub fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_niwatori"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("niwatori starts");
        let stdin = child.stdin.take().unwrap();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
        }
    }

    pub fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Lines up to and including the first that starts with `prefix`.
    pub fn until(&mut self, prefix: &str, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let done = line.starts_with(prefix);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                Err(_) => {
                    panic!("no line starting with {prefix:?} within {timeout:?}; got {seen:?}")
                }
            }
        }
    }

    /// Every line that arrives within `wait`.
    pub fn lines_for(&mut self, wait: Duration) -> Vec<String> {
        let deadline = Instant::now() + wait;
        let mut seen = Vec::new();
        while let Ok(line) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            seen.push(line);
        }
        seen
    }

    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    pub fn quit(mut self) {
        self.send("quit");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        panic!("niwatori did not quit");
    }
}

/// Runs a command that must succeed (a reference tool such as
/// `liblinear-train`), showing its stderr if it does not.
pub fn run(cmd: &mut Command) {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The numbers of a `liblinear-predict` output file, one per line.
pub fn predictions(path: &Path) -> Vec<f64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// A learned evaluation of the `attack2` feature set `set` whose every
/// weight is a distinct pseudo-random number in [-`half_width`,
/// `half_width`) (SplitMix64 from `seed`): any term missed, counted twice
/// or counted with the wrong relation shows.
pub fn random_model(
    seed: u64,
    half_width: f64,
    label_scale: f64,
    features_at: niwatori::rows::FeaturesAt,
    base: niwatori::rows::Base,
    set: niwatori::features::FeatureSet,
) -> niwatori::eval::Learned {
    use niwatori::features;
    use niwatori::rows::model::{DataSummary, FeatureScheme, LinearModel, ModelMetadata};
    let n = set.num_features();
    let mut state = seed;
    let w: Vec<f64> = (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            ((z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * half_width
        })
        .collect();
    let meta = ModelMetadata {
        features: Some(FeatureScheme {
            base,
            scheme: features::SCHEME.into(),
            scheme_version: u64::from(features::SCHEME_VERSION),
            num_features: n,
            label_scale,
            features_at,
            king_piece: set.king_piece,
            attacks: set.attacks,
        }),
        solver: "test".into(),
        c: 1.0,
        p: 0.0,
        e: 0.0,
        bias: -1.0,
        nr_feature: n,
        objective: 0.0,
        gradient_norm: 0.0,
        iterations: 0,
        converged: true,
        data: DataSummary {
            files: 0,
            rows: 0,
            nonzeros: 0,
            max_index: n,
            bytes: 0,
        },
        load_seconds: 0.0,
        train_seconds: 0.0,
    };
    niwatori::eval::Learned::from_model(&LinearModel::new(w, 0.0, Some(meta)))
        .expect("a valid model")
}

//! The match runner: N games between engines A and B, in parallel, resumable.
//!
//! Game `2k` has A as Black and game `2k+1` has B as Black, both from opening `k`.
//! Every finished game is appended to `results.jsonl` in the `--csa-out` folder and
//! written as `game-NNNNN.csa`; rerunning the same command there skips the games
//! already played (so an interrupted match resumes). With an SPRT the match stops
//! as soon as the test decides.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::clock::Limit;
use super::csa_record::to_csa;
use super::elo::{Elo, Sprt};
use super::game::{EndReason, GameConfig, GameRecord, Opening, play_game};
use super::openings::{openings_from_dir, openings_from_file, random_opening};
use super::spec::EngineSpec;
use super::usi_engine::UsiEngine;
use crate::atomic::write_atomic;
use crate::progress::{Progress, Unit};

/// Where openings come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum OpeningChoice {
    /// Prefixes of the CSA records in a folder, cut at a ply in `min_ply..=max_ply`.
    Dir {
        path: PathBuf,
        min_ply: usize,
        max_ply: usize,
    },
    /// The positions of a file of USI lines (`startpos moves …`, `sfen … moves …`).
    File { path: PathBuf },
    /// Seeded random play of this many plies without material loss.
    Random { plies: usize },
}

/// Everything a match needs.
#[derive(Debug, Clone)]
pub struct MatchOptions {
    pub a: EngineSpec,
    pub b: EngineSpec,
    pub games: usize,
    pub limit: Limit,
    pub openings: OpeningChoice,
    /// Each opening for one game, not two (colours still alternate): for
    /// generating games, where one deterministic engine playing itself
    /// would repeat a game with the colours swapped.
    pub one_game_per_opening: bool,
    pub seed: u64,
    pub concurrency: usize,
    pub max_plies: u32,
    pub csa_out: Option<PathBuf>,
    /// SPRT bounds (elo0, elo1) for A against B.
    pub sprt: Option<(f64, f64)>,
    pub tolerance_ms: u64,
    pub hang_ms: u64,
    /// The binary that runs niwatori's own evaluations (`niwatori usi`).
    pub niwatori_exe: PathBuf,
    /// Show progress on stderr.
    pub progress: bool,
}

/// One side's results.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SideStats {
    pub name: String,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub wins_as_black: u64,
    pub draws_as_black: u64,
    pub losses_as_black: u64,
    pub wins_as_white: u64,
    pub draws_as_white: u64,
    pub losses_as_white: u64,
    pub illegal_moves: u64,
    pub time_losses: u64,
    pub crashes: u64,
}

impl SideStats {
    fn add(&mut self, result: Option<bool>, as_black: bool, fault: Option<&EndReason>) {
        let (total, black, white) = match result {
            Some(true) => (
                &mut self.wins,
                &mut self.wins_as_black,
                &mut self.wins_as_white,
            ),
            Some(false) => (
                &mut self.losses,
                &mut self.losses_as_black,
                &mut self.losses_as_white,
            ),
            None => (
                &mut self.draws,
                &mut self.draws_as_black,
                &mut self.draws_as_white,
            ),
        };
        *total += 1;
        *(if as_black { black } else { white }) += 1;
        match fault {
            Some(EndReason::IllegalMove(_) | EndReason::IllegalDeclaration) => {
                self.illegal_moves += 1
            }
            Some(EndReason::TimeLoss(_)) => self.time_losses += 1,
            Some(EndReason::Crash(_)) => self.crashes += 1,
            _ => {}
        }
    }
}

/// The result of a match (A's point of view for Elo and SPRT).
#[derive(Debug, Clone, Serialize)]
pub struct MatchSummary {
    pub games: u64,
    pub a_wins: u64,
    pub b_wins: u64,
    pub draws: u64,
    /// A's score fraction.
    pub score: f64,
    /// Elo of A relative to B.
    pub elo: f64,
    pub elo_ci95: [f64; 2],
    pub a: SideStats,
    pub b: SideStats,
    pub sprt: Option<Sprt>,
    /// Games ended by each reason.
    pub reasons: BTreeMap<String, u64>,
    /// Average game length in plies (opening included).
    pub avg_plies: f64,
    /// Games found already played in `--csa-out` and not replayed.
    pub resumed_games: u64,
    /// Opening files that could not be used.
    pub bad_opening_files: Vec<String>,
    pub seconds: f64,
}

#[derive(Default)]
struct Tally {
    a: SideStats,
    b: SideStats,
    reasons: BTreeMap<String, u64>,
    plies: u64,
}

impl Tally {
    fn add(&mut self, rec: &GameRecord, a_black: bool) {
        let a_side = if a_black { 0 } else { 1 };
        let a_result = rec.winner.map(|w| w == a_side);
        let fault = rec.faulty_side().map(|_| &rec.reason);
        let a_fault = if rec.faulty_side() == Some(a_side) {
            fault
        } else {
            None
        };
        let b_fault = if rec.faulty_side() == Some(1 - a_side) {
            fault
        } else {
            None
        };
        self.a.add(a_result, a_black, a_fault);
        self.b.add(a_result.map(|x| !x), !a_black, b_fault);
        *self
            .reasons
            .entry(rec.reason.name().to_string())
            .or_default() += 1;
        self.plies += (rec.opening.moves.len() + rec.moves.len()) as u64;
    }

    fn line(&self) -> String {
        let e = Elo::from_wdl(self.a.wins, self.a.draws, self.a.losses);
        format!(
            "A +{} ={} -{}  Elo {:+.0} [{:+.0}, {:+.0}]",
            self.a.wins, self.a.draws, self.a.losses, e.diff, e.ci95.0, e.ci95.1
        )
    }
}

/// One line of `results.jsonl`.
#[derive(Serialize, Deserialize)]
struct ResultLine {
    game: usize,
    key: String,
    a_black: bool,
    record: GameRecord,
}

fn match_key(o: &MatchOptions) -> String {
    let key = format!(
        "{:?}|{:?}|{:?}|{:?}|{}|{}",
        o.a, o.b, o.limit, o.openings, o.seed, o.max_plies
    );
    // Matches recorded before the option keep their key.
    if o.one_game_per_opening {
        key + "|one-game-per-opening"
    } else {
        key
    }
}

fn load_done(path: &Path, key: &str) -> Result<BTreeMap<usize, ResultLine>> {
    let mut done = BTreeMap::new();
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(done);
    };
    let lines: Vec<String> = std::io::BufReader::new(file)
        .lines()
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("reading {}", path.display()))?;
    let n = lines.len();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let parsed: ResultLine = match serde_json::from_str(line) {
            Ok(p) => p,
            // An interrupted run may leave a torn last line; it is replayed.
            Err(e) if i + 1 == n => {
                eprintln!(
                    "{}:{}: ignoring incomplete last line ({e})",
                    path.display(),
                    i + 1
                );
                continue;
            }
            Err(e) => bail!("{}:{}: not a result line: {e}", path.display(), i + 1),
        };
        if parsed.key != key {
            bail!(
                "{}:{}: holds games of a different match (other engines, limit, openings or seed); \
                 use another --csa-out folder",
                path.display(),
                i + 1
            );
        }
        done.insert(parsed.game, parsed);
    }
    Ok(done)
}

/// Runs the match described by `opts`.
pub fn run_match(opts: &MatchOptions) -> Result<MatchSummary> {
    let start = Instant::now();
    let (openings, bad_files) = load_openings(opts)?;
    let key = match_key(opts);
    let (mut log, done) = match &opts.csa_out {
        Some(dir) => {
            let (log, done) = ResultsLog::open(dir, key)?;
            (Some(log), done)
        }
        None => (None, BTreeMap::new()),
    };
    let mut tally = Tally::default();
    tally.a.name = opts.a.label.clone();
    tally.b.name = opts.b.label.clone();
    let mut resumed = 0;
    for r in done.values().filter(|r| r.game < opts.games) {
        tally.add(&r.record, r.a_black);
        resumed += 1;
    }
    let todo: Vec<usize> = (0..opts.games).filter(|g| !done.contains_key(g)).collect();
    let sprt_of = |t: &Tally| {
        opts.sprt
            .map(|(e0, e1)| Sprt::new(e0, e1, t.a.wins, t.a.draws, t.a.losses))
    };
    let decided = |t: &Tally| sprt_of(t).is_some_and(|s| s.verdict != "continue");
    let cfg = GameConfig {
        limit: opts.limit,
        max_plies: opts.max_plies,
        tolerance_ms: opts.tolerance_ms,
        hang_ms: opts.hang_ms,
    };
    let progress = Progress::start(
        "match",
        opts.games as u64,
        Unit::Items("games"),
        None,
        opts.progress,
    );
    progress.inc(resumed, 0);
    progress.set_status(tally.line());

    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(decided(&tally));
    let (tx, rx) = channel::<Result<Played>>();
    let mut first_error = None;
    std::thread::scope(|scope| {
        for _ in 0..opts.concurrency.max(1).min(todo.len().max(1)) {
            let tx = tx.clone();
            let schedule = Schedule {
                opts,
                todo: &todo,
                next: &next,
                stop: &stop,
                openings: &openings,
                cfg: &cfg,
            };
            scope.spawn(move || schedule.play(&tx));
        }
        drop(tx);
        // Bookkeeping, in this thread only: the log, the tally, the SPRT.
        for msg in rx {
            let played = match msg {
                Ok(p) => p,
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    first_error.get_or_insert(e);
                    continue;
                }
            };
            if let Some(log) = &mut log
                && let Err(e) = log.append(&played)
            {
                stop.store(true, Ordering::Relaxed);
                first_error.get_or_insert(e);
            }
            tally.add(&played.record, played.a_black);
            if decided(&tally) {
                stop.store(true, Ordering::Relaxed);
            }
            progress.set_status(tally.line());
            progress.inc(1, 0);
        }
    });
    progress.finish();
    if let Some(e) = first_error {
        return Err(e);
    }
    let (w, d, l) = (tally.a.wins, tally.a.draws, tally.a.losses);
    let elo = Elo::from_wdl(w, d, l);
    let games = w + d + l;
    Ok(MatchSummary {
        games,
        a_wins: w,
        b_wins: l,
        draws: d,
        score: elo.score,
        elo: elo.diff,
        elo_ci95: [elo.ci95.0, elo.ci95.1],
        sprt: sprt_of(&tally),
        reasons: tally.reasons.clone(),
        avg_plies: if games > 0 {
            tally.plies as f64 / games as f64
        } else {
            0.0
        },
        a: tally.a,
        b: tally.b,
        resumed_games: resumed,
        bad_opening_files: bad_files,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The match's openings, and the opening files that could not be read
/// (warned about, and listed in the summary).
fn load_openings(opts: &MatchOptions) -> Result<(Vec<Opening>, Vec<String>)> {
    Ok(match &opts.openings {
        OpeningChoice::Dir {
            path,
            min_ply,
            max_ply,
        } => {
            let (o, bad) = openings_from_dir(path, *min_ply, *max_ply, opts.seed)?;
            for b in &bad {
                eprintln!("warning: opening file {}: {}", b.path.display(), b.why);
            }
            let bad = bad
                .iter()
                .map(|b| format!("{}: {}", b.path.display(), b.why))
                .collect();
            (o, bad)
        }
        OpeningChoice::File { path } => (openings_from_file(path, opts.seed)?, Vec::new()),
        OpeningChoice::Random { plies } => (
            (0..opts.games.div_ceil(2))
                .map(|k| random_opening(opts.seed.wrapping_add(k as u64), *plies))
                .collect(),
            Vec::new(),
        ),
    })
}

/// One finished game, as a scheduling thread hands it on.
struct Played {
    game: usize,
    a_black: bool,
    record: GameRecord,
}

/// What every scheduling thread shares: the games still to play and the
/// flag that stops them (an error, or a decided SPRT).
struct Schedule<'a> {
    opts: &'a MatchOptions,
    todo: &'a [usize],
    next: &'a AtomicUsize,
    stop: &'a AtomicBool,
    openings: &'a [Opening],
    cfg: &'a GameConfig,
}

impl Schedule<'_> {
    /// Takes games from the queue and plays them with one pair of engines
    /// (restarting one that broke), until the queue is empty or `stop`.
    fn play(&self, tx: &Sender<Result<Played>>) {
        let opts = self.opts;
        let mut engines: [Option<UsiEngine>; 2] = [None, None];
        let specs = [&opts.a, &opts.b];
        loop {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(&game) = self.todo.get(i) else { break };
            for (k, slot) in engines.iter_mut().enumerate() {
                if slot.is_none() {
                    match UsiEngine::start(specs[k], &opts.niwatori_exe) {
                        Ok(e) => *slot = Some(e),
                        Err(e) => {
                            let _ = tx.send(Err(anyhow::Error::new(e)
                                .context(format!("starting engine {}", specs[k].label))));
                            return;
                        }
                    }
                }
            }
            let a_black = game % 2 == 0;
            let per_opening = if self.opts.one_game_per_opening { 1 } else { 2 };
            let opening = &self.openings[(game / per_opening) % self.openings.len()];
            let [ea, eb] = &mut engines;
            let (ea, eb) = (ea.as_mut().expect("started"), eb.as_mut().expect("started"));
            let players = if a_black { [ea, eb] } else { [eb, ea] };
            let played = match play_game(players, opening, self.cfg) {
                Ok(p) => p,
                Err(e) => {
                    let _ = tx.send(Err(e.into()));
                    return;
                }
            };
            // broken[] is by colour; map back to A/B.
            let (a_colour, b_colour) = if a_black { (0, 1) } else { (1, 0) };
            if played.broken[a_colour] {
                engines[0] = None;
            }
            if played.broken[b_colour] {
                engines[1] = None;
            }
            let record = played.record;
            if tx
                .send(Ok(Played {
                    game,
                    a_black,
                    record,
                }))
                .is_err()
            {
                return;
            }
        }
        for e in engines.into_iter().flatten() {
            e.quit();
        }
    }
}

/// The `--csa-out` folder: one CSA record per game and `results.jsonl`, a
/// line per finished game, from which an interrupted match resumes.
struct ResultsLog {
    dir: PathBuf,
    key: String,
    file: std::fs::File,
}

impl ResultsLog {
    /// Opens (creating) the folder's log, with the games it already holds.
    fn open(dir: &Path, key: String) -> Result<(Self, BTreeMap<usize, ResultLine>)> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join("results.jsonl");
        let done = load_done(&path, &key)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        let dir = dir.to_path_buf();
        Ok((Self { dir, key, file }, done))
    }

    /// Writes the game's record, then its result line.
    fn append(&mut self, p: &Played) -> Result<()> {
        let path = self.dir.join(format!("game-{:05}.csa", p.game));
        let text = to_csa(&p.record)?;
        write_atomic(&path, &text).with_context(|| format!("writing {}", path.display()))?;
        let line = serde_json::to_string(&ResultLine {
            game: p.game,
            key: self.key.clone(),
            a_black: p.a_black,
            record: p.record.clone(),
        })
        .expect("result serializes");
        writeln!(self.file, "{line}")
            .and_then(|_| self.file.flush())
            .context("appending to results.jsonl")
    }
}

impl MatchSummary {
    /// A human-readable report.
    pub fn report(&self) -> String {
        let mut s = String::new();
        let side = |x: &SideStats| {
            format!(
                "{:<20} +{} ={} -{}   as Black +{} ={} -{}   as White +{} ={} -{}   illegal {} time {} crash {}\n",
                x.name,
                x.wins,
                x.draws,
                x.losses,
                x.wins_as_black,
                x.draws_as_black,
                x.losses_as_black,
                x.wins_as_white,
                x.draws_as_white,
                x.losses_as_white,
                x.illegal_moves,
                x.time_losses,
                x.crashes
            )
        };
        s.push_str(&format!(
            "games {}  (A {} wins, B {} wins, {} draws; {:.1} plies on average)\n",
            self.games, self.a_wins, self.b_wins, self.draws, self.avg_plies
        ));
        s.push_str(&format!("A {}", side(&self.a)));
        s.push_str(&format!("B {}", side(&self.b)));
        s.push_str(&format!(
            "A vs B: score {:.3}, Elo {:+.1} (95% [{:+.1}, {:+.1}])\n",
            self.score, self.elo, self.elo_ci95[0], self.elo_ci95[1]
        ));
        let reasons: Vec<String> = self
            .reasons
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        s.push_str(&format!("endings: {}\n", reasons.join(", ")));
        if let Some(sp) = &self.sprt {
            s.push_str(&format!(
                "SPRT elo0={} elo1={}: LLR {:.2} (bounds {:.2}, {:.2}) -> {}\n",
                sp.elo0, sp.elo1, sp.llr, sp.lower, sp.upper, sp.verdict
            ));
        }
        if self.resumed_games > 0 {
            s.push_str(&format!(
                "({} games were resumed from earlier runs)\n",
                self.resumed_games
            ));
        }
        s
    }
}

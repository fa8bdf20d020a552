//! `niwatori extract`: game records to training rows.
//!
//! For every position of every game, every legal move gives a sibling
//! position; the sibling is scored from the mover's point of view
//! ([`SiblingScore`]), labelled ([`targets`]: the game move `g + margin`,
//! better-scored siblings `g - margin`, the rest their own score, clamped to
//! ±10000 and divided by 10000) and written as one libsvm row of the
//! sibling's [`features`](crate::features) (seen from the side to move in the
//! sibling, i.e. the mover's opponent). Each game goes to its own `.svm`
//! file with a JSON sidecar saying which rows form each position; see
//! [`output`] and `features/README.md`.
//!
//! Games run in parallel (rayon); each game's file depends on that game only,
//! so the output is byte-identical whatever the number of threads.

mod cli;
pub mod convert;
pub mod output;
mod siblings;

pub use cli::{ExtractArgs, RowArgs, check_sample, run};
pub use siblings::{
    ExpandError, GameRows, PositionRows, PositionSample, RowSink, Scratch, SiblingScore,
    StaticScorer, expand_game, targets,
};

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use crate::eval::Evaluator;
use crate::features::{FeatureSet, SCHEME, SCHEME_VERSION};
use crate::positions::{hcpe::Hcpe, psv::PackedSfenValue};
use crate::progress::{Progress, Unit};
use crate::records::{self, Game, Problem, ProblemKind, RecordsError};
use crate::rows::{Base, FeaturesAt, LABEL_SCALE, Labels, RowFormat, Scheme};
use crate::search::SiblingScorer;
use output::{GameMeta, RunMeta};

/// Options of an extraction run.
#[derive(Clone, Debug)]
pub struct ExtractOptions {
    /// Margin in centipawns (default 100, one pawn).
    pub margin: i32,
    /// Which features a row holds (relation encoding, king-piece block).
    pub features: FeatureSet,
    /// Which position each row describes.
    pub features_at: FeaturesAt,
    /// Which rows a position gives: every sibling, or the game move's
    /// with the record's score.
    pub labels: Labels,
    /// What targets are measured from: the score itself, or the score less
    /// the row position's material.
    pub base: Base,
    /// Worker threads (default: rayon's, one per core).
    pub jobs: Option<usize>,
    /// Skip games whose output is already complete.
    pub resume: bool,
    /// Show progress on stderr.
    pub progress: bool,
    /// Name outputs by their path below this folder rather than below each
    /// input (for a list of files from one tree whose names repeat across
    /// subfolders, as `learn` passes).
    pub root: Option<PathBuf>,
    /// Fraction of each game's positions expanded, chosen by a hash of the
    /// record's file name, game index and ply (1 = every position). For
    /// labelling with a slow learned evaluation across many games.
    pub sample: f64,
    /// Only this shard of the games (`--shard I/K`, or the ranks of
    /// `mpirun`); `None`: all of them.
    pub shard: Option<Shard>,
    /// libsvm text (`.svm`) or compact binary rows (`.bin`).
    pub format: RowFormat,
    /// Only games whose players are both rated at least this (floodgate's
    /// `'black_rate`/`'white_rate` comments); `None`: every game.
    pub min_rating: Option<f64>,
}

/// Shard `index` of `count`: the games whose place in the run's order
/// (record files sorted, games in file order, repeats left out) is
/// `index` modulo `count`. The shards' outputs together are the whole
/// run's, file for file and byte for byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is not a shard I/K with 0 <= I < K (e.g. 0/4)");
        let (i, k) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.parse::<usize>().map_err(|_| bad())?,
            k.parse::<usize>().map_err(|_| bad())?,
        );
        if index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Default for ExtractOptions {
    fn default() -> Self {
        Self {
            margin: 100,
            features: FeatureSet::default(),
            features_at: FeaturesAt::default(),
            labels: Labels::default(),
            base: Base::default(),
            jobs: None,
            resume: false,
            progress: false,
            root: None,
            sample: 1.0,
            shard: None,
            format: RowFormat::Text,
            min_rating: None,
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ExtractSummary {
    /// Record files read.
    pub files: usize,
    /// Games read in full.
    pub games_complete: usize,
    /// Games cut short by an error, their first moves used.
    pub games_truncated: usize,
    /// Games skipped (nothing usable).
    pub games_skipped: usize,
    /// Games that repeat an earlier game of the input (same start and
    /// moves), extracted once.
    pub games_duplicate: usize,
    /// Each repeat and the game it repeats.
    pub duplicates: Vec<String>,
    /// Games left out by `--min-rating` (a player rated lower, or unrated).
    pub games_below_rating: usize,
    /// Of `games_written`, those found complete in the output (`--resume`):
    /// the totals below describe the output, whichever run wrote it.
    pub games_resumed: usize,
    /// Of `rows`, those of the games found complete.
    pub rows_resumed: usize,
    /// Games in the output.
    pub games_written: usize,
    /// Positions expanded.
    pub positions: usize,
    /// Rows in the output.
    pub rows: usize,
    /// Bytes of the `.svm` files.
    pub bytes: u64,
    /// Non-zero features.
    pub nnz: usize,
    /// Problems by kind.
    pub problems_by_kind: BTreeMap<String, usize>,
    /// Every problem, one line each (file:line: what).
    pub problems: Vec<String>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Errors that stop a run.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// An input path could not be listed.
    #[error(transparent)]
    Records(#[from] RecordsError),
    /// Writing the output failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Two records would write the same output file.
    #[error("{} and {} both map to output {}", a.display(), b.display(), name.display())]
    NameClash {
        /// First record.
        a: PathBuf,
        /// Second record.
        b: PathBuf,
        /// Their output name.
        name: PathBuf,
    },
    /// `--resume` into a directory extracted with other settings.
    #[error("{}: written with {found}, this run uses {wanted}; use another --out or drop --resume", path.display())]
    SchemeMismatch {
        /// The run metadata file.
        path: PathBuf,
        /// Its settings.
        found: String,
        /// This run's settings.
        wanted: String,
    },
    /// The thread pool could not be built.
    #[error("thread pool: {0}")]
    Pool(String),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ExtractError + '_ {
    move |source| ExtractError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Name of the search scorer in metadata.
pub const SEARCH_SCORER: &str = "search-depth1";

/// Extracts `paths` (record files or directories) into `out`, scoring
/// siblings by the depth-1 search ([`SiblingScorer`]) with `eval`.
pub fn extract(
    paths: &[PathBuf],
    out: &Path,
    options: &ExtractOptions,
    eval: Arc<dyn Evaluator>,
) -> Result<ExtractSummary, ExtractError> {
    let name = eval.identity();
    extract_with(paths, out, options, &name, SEARCH_SCORER, || {
        SiblingScorer::new(eval.clone())
    })
}

/// The scheme and labelling of a run.
pub fn scheme_of(options: &ExtractOptions, evaluator: &str, scorer: &str) -> Scheme {
    Scheme {
        scheme: SCHEME.to_string(),
        scheme_version: SCHEME_VERSION,
        num_features: options.features.num_features(),
        relation_encoding: options.features.encoding.as_str().to_string(),
        king_piece: options.features.king_piece,
        attacks: options.features.attacks,
        label_scale: f64::from(LABEL_SCALE),
        margin: options.margin,
        evaluator: evaluator.to_string(),
        scorer: scorer.to_string(),
        features_at: options.features_at,
        sample: options.sample,
        labels: options.labels,
        base: options.base,
    }
}

/// One record file found under an input path, with its games.
#[derive(Clone, Debug)]
pub struct InputFile {
    /// The input path (file or directory) as given.
    pub input: PathBuf,
    /// The record file.
    pub file: PathBuf,
    /// Its usable games.
    pub games: Vec<Game>,
}

/// Everything read from the input paths.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// Record files in sorted order per input.
    pub files: Vec<InputFile>,
    /// Problems met while reading, unreadable files included.
    pub problems: Vec<Problem>,
}

/// Reads every game under `paths`; problems (including unreadable files)
/// are collected, not fatal.
pub fn read_inputs(paths: &[PathBuf]) -> Result<Inputs, ExtractError> {
    let mut files = Vec::new();
    for p in paths {
        for f in records::find_record_files(std::slice::from_ref(p))? {
            files.push((p.clone(), f));
        }
    }
    let read: Vec<_> = files
        .par_iter()
        .map(|(input, f)| match records::read_games(f) {
            Ok(fg) => (input.clone(), f.clone(), fg.games, fg.problems),
            Err(e) => {
                let problem = Problem {
                    file: f.clone(),
                    line: 1,
                    game_index: 0,
                    kind: ProblemKind::Io,
                    message: e.to_string(),
                    kept_moves: 0,
                };
                (input.clone(), f.clone(), Vec::new(), vec![problem])
            }
        })
        .collect();
    let mut inputs = Inputs::default();
    for (input, file, games, probs) in read {
        inputs.problems.extend(probs);
        inputs.files.push(InputFile { input, file, games });
    }
    Ok(inputs)
}

/// [`extract`] with any scorer: `make_scorer` builds one per worker;
/// `evaluator` and `scorer` name them in the metadata.
pub fn extract_with<S, F>(
    paths: &[PathBuf],
    out: &Path,
    options: &ExtractOptions,
    evaluator: &str,
    scorer: &str,
    make_scorer: F,
) -> Result<ExtractSummary, ExtractError>
where
    S: SiblingScore,
    F: Fn() -> S + Sync,
{
    let start = Instant::now();
    let pool = {
        let mut b = rayon::ThreadPoolBuilder::new();
        if let Some(j) = options.jobs {
            b = b.num_threads(j);
        }
        b.build().map_err(|e| ExtractError::Pool(e.to_string()))?
    };
    pool.install(|| extract_in_pool(paths, out, options, evaluator, scorer, &make_scorer, start))
}

fn extract_in_pool<S, F>(
    paths: &[PathBuf],
    out: &Path,
    options: &ExtractOptions,
    evaluator: &str,
    scorer: &str,
    make_scorer: &F,
    start: Instant,
) -> Result<ExtractSummary, ExtractError>
where
    S: SiblingScore,
    F: Fn() -> S + Sync,
{
    let scheme = scheme_of(options, evaluator, scorer);
    let Inputs {
        files: inputs,
        mut problems,
    } = read_inputs(paths)?;
    let files = inputs.len();

    // output names, checked for clashes before anything is written
    let mut names: HashMap<PathBuf, PathBuf> = HashMap::new();
    // One output file a game; a position file's one-move games go
    // POSITIONS_PER_FILE to a file.
    let mut jobs: Vec<(PathBuf, Vec<&Game>)> = Vec::new();
    let mut seen = crate::records::Duplicates::default();
    let mut duplicates = Vec::new();
    let mut below_rating = 0;
    for InputFile { input, file, games } in &inputs {
        let rel = match options.root.as_deref().map(|r| file.strip_prefix(r)) {
            Some(Ok(below)) => below.to_path_buf(),
            _ => output::relative_name(input, file),
        };
        if let Some(prev) = names.insert(rel.clone(), file.clone())
            && prev != *file
        {
            return Err(ExtractError::NameClash {
                a: prev,
                b: file.clone(),
                name: rel,
            });
        }
        let grouped = records::Format::of(file).is_some_and(records::Format::is_positions);
        let first_job = jobs.len();
        for g in games {
            if options.min_rating.is_some_and(|r| !g.rated_at_least(r)) {
                below_rating += 1;
                continue;
            }
            if let Some(first) = seen.first_seen(g) {
                duplicates.push(format!(
                    "{} game {} repeats {first}: extracted once",
                    g.source.display(),
                    g.index + 1
                ));
                continue;
            }
            let this_file = jobs.len() > first_job;
            match jobs.last_mut() {
                Some((_, group)) if grouped && this_file && group.len() < POSITIONS_PER_FILE => {
                    group.push(g)
                }
                _ => jobs.push((
                    output::rows_path(out, &rel, g.index, options.format),
                    vec![g],
                )),
            }
        }
    }

    if let Some(Shard { index, count }) = options.shard {
        let mut k = 0;
        jobs.retain(|_| {
            k += 1;
            (k - 1) % count == index
        });
    }

    let meta_path = out.join("extract.json");
    let layout = output::layout(options.format);
    if options.resume
        && let Ok(text) = std::fs::read_to_string(&meta_path)
        && let Ok(old) = serde_json::from_str::<RunMeta>(&text)
        && (old.scheme != scheme || old.layout != layout)
    {
        return Err(ExtractError::SchemeMismatch {
            path: meta_path,
            found: format!("{:?}, {}", old.scheme, old.layout),
            wanted: format!("{scheme:?}, {layout}"),
        });
    }
    let mut meta = RunMeta {
        scheme: scheme.clone(),
        layout,
        inputs: paths.iter().map(|p| p.display().to_string()).collect(),
        summary: None,
    };
    if options.shard.is_some() {
        write_json_shared(&meta_path, &meta)?;
    } else {
        write_json(&meta_path, &meta)?;
    }

    let mut summary = ExtractSummary {
        files,
        games_duplicate: duplicates.len(),
        duplicates,
        games_below_rating: below_rating,
        ..Default::default()
    };
    for f in &inputs {
        for g in &f.games {
            if g.truncated {
                summary.games_truncated += 1;
            } else {
                summary.games_complete += 1;
            }
        }
    }
    summary.games_skipped = problems
        .iter()
        .filter(|p| p.kept_moves == 0 && p.kind != ProblemKind::Io)
        .count();

    if options.resume {
        jobs.retain(|(svm, _)| match output::completed(svm, &scheme) {
            Some(done) => {
                summary.add(&done);
                summary.games_resumed += 1;
                summary.rows_resumed += done.rows;
                false
            }
            None => true,
        });
    }

    let progress = Progress::start(
        "extract",
        jobs.iter().map(|(_, g)| g.len() as u64).sum(),
        Unit::Items("games"),
        Some("rows"),
        options.progress,
    );
    let results: Vec<Result<Result<GameMeta, ExpandError>, ExtractError>> = jobs
        .par_iter()
        .map_init(
            || (make_scorer(), Scratch::default(), Vec::new()),
            |(sc, scratch, buf), (svm, games)| {
                buf.clear();
                let mut rows = GameRows::default();
                let mut add = |r: GameRows| {
                    for mut p in r.positions {
                        p.first_row += rows.rows;
                        p.game_row += rows.rows;
                        rows.positions.push(p);
                    }
                    rows.rows += r.rows;
                    rows.nnz += r.nnz;
                };
                let expanded: Result<(), ExpandError> = (|| {
                    match options.format {
                        RowFormat::Text => {
                            for g in games {
                                add(expand_game(g, sc, options, scratch, buf)?);
                            }
                        }
                        RowFormat::Bin => {
                            let mut w = crate::rows::binary::Writer::new(std::mem::take(buf))
                                .expect("writing to memory");
                            for g in games {
                                add(expand_game(g, sc, options, scratch, &mut w)?);
                            }
                            *buf = w.finish().expect("writing to memory");
                        }
                        RowFormat::Psv => {
                            for g in games {
                                add(expand_positions::<PackedSfenValue, _>(
                                    g, sc, options, scratch, buf,
                                )?);
                            }
                        }
                        RowFormat::Hcpe => {
                            for g in games {
                                add(expand_positions::<Hcpe, _>(g, sc, options, scratch, buf)?);
                            }
                        }
                    }
                    Ok(())
                })();
                if let Err(e) = expanded {
                    return Ok(Err(e));
                }
                let game = games[0];
                crate::atomic::write_atomic(svm, &buf[..]).map_err(io_err(svm))?;
                let gm = GameMeta {
                    scheme: scheme.clone(),
                    source: game.source.display().to_string(),
                    game_index: game.index,
                    truncated: games.iter().any(|g| g.truncated),
                    rows: rows.rows,
                    bytes: buf.len() as u64,
                    nnz: rows.nnz,
                    positions: rows.positions,
                };
                let side = output::sidecar_path(svm);
                write_json(&side, &gm)?;
                progress.inc(games.len() as u64, gm.rows as u64);
                Ok(Ok(gm))
            },
        )
        .collect();
    progress.finish();

    for (r, (_, games)) in results.into_iter().zip(&jobs) {
        let game = games[0];
        match r? {
            Ok(gm) => summary.add(&gm),
            Err(e) => {
                // cannot happen for games the records module accepted
                problems.push(Problem {
                    file: game.source.clone(),
                    line: game.line,
                    game_index: game.index,
                    kind: ProblemKind::IllegalMove,
                    message: e.to_string(),
                    kept_moves: 0,
                });
                summary.games_skipped += 1;
            }
        }
    }
    for p in &problems {
        *summary
            .problems_by_kind
            .entry(p.kind.name().to_string())
            .or_default() += 1;
    }
    summary.problems = problems.iter().map(ToString::to_string).collect();
    summary.seconds = start.elapsed().as_secs_f64();
    match options.shard {
        // Every shard writes the same extract.json (the scheme, no totals):
        // shards into one folder may end in any order. Each one's totals
        // go beside it.
        Some(Shard { index, count }) => write_json(
            &out.join(format!("extract.shard-{index}-of-{count}.json")),
            &summary,
        )?,
        None => {
            meta.summary = serde_json::to_value(&summary).ok();
            write_json(&meta_path, &meta)?;
        }
    }
    Ok(summary)
}

impl ExtractSummary {
    /// Counts a game of the output.
    fn add(&mut self, game: &GameMeta) {
        self.games_written += 1;
        self.positions += game.positions.len();
        self.rows += game.rows;
        self.bytes += game.bytes;
        self.nnz += game.nnz;
    }
}

/// One-move games of a position file (`.psv`, `.hcpe`) that go to one
/// output file: a learner's data set holds millions.
pub const POSITIONS_PER_FILE: usize = 4096;

/// [`expand_game`] into position records of format `R`, in `buf`.
fn expand_positions<R: crate::positions::PositionRecord, S: SiblingScore + ?Sized>(
    game: &Game,
    scorer: &mut S,
    options: &ExtractOptions,
    scratch: &mut Scratch,
    buf: &mut Vec<u8>,
) -> Result<GameRows, ExpandError> {
    let winner = match game.outcome() {
        records::Outcome::Win(c) => Some(c),
        _ => None,
    };
    let mut sink = siblings::PositionSink::<R> {
        bytes: std::mem::take(buf),
        winner,
        unpackable: 0,
        format: std::marker::PhantomData,
    };
    let rows = expand_game(game, scorer, options, scratch, &mut sink);
    if sink.unpackable > 0 {
        // Not an error of the record: the format cannot hold such a position.
        eprintln!(
            "{} game {}: {} positions left out of the {} file (it holds only positions with both kings)",
            game.source.display(),
            game.index + 1,
            sink.unpackable,
            R::NAME
        );
    }
    *buf = sink.bytes;
    rows
}

fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), ExtractError> {
    crate::atomic::write_atomic(path, json_text(path, value)?).map_err(io_err(path))
}

/// [`write_json`] of a file that the shards of a run all write.
fn write_json_shared<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), ExtractError> {
    crate::atomic::write_atomic_shared(path, json_text(path, value)?).map_err(io_err(path))
}

fn json_text<T: serde::Serialize>(path: &Path, value: &T) -> Result<Vec<u8>, ExtractError> {
    let mut text = serde_json::to_vec_pretty(value).map_err(|e| ExtractError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e),
    })?;
    text.push(b'\n');
    Ok(text)
}

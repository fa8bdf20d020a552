//! A collection of game records and its split into training and held-out
//! games, shared by `learn`, `report` and `policy train`: whole record
//! files are held out, chosen by a seeded hash of their path relative to
//! the folder given, so a file is always on the same side for the same
//! seed, on any machine. Split by opening (`--split-opening N`), the hash
//! is of the first game's start position and first N moves instead: games
//! that open alike (a generated game played from a real game's prefix, two
//! games of one joseki) fall on the same side, so no held-out game shares
//! its first N plies with a training game.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::records::{Game, find_record_files};

use crate::random::{FNV_OFFSET, fnv1a, mix};

/// How `learn`, `report` and `policy train` hold games out: the same
/// options give the same split in all three.
#[derive(clap::Args, Debug, Clone, PartialEq)]
pub struct SplitArgs {
    /// Fraction of record files held out of training (a seeded hash of the
    /// path, or of the opening with --split-opening).
    #[arg(long, default_value_t = 0.1)]
    pub holdout: f64,
    /// Seed of the held-out split (and of `policy train`'s order).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Split by opening: files whose first game has the same start and
    /// first N moves are held out together (default: split by path).
    #[arg(long, value_name = "N")]
    pub split_opening: Option<u32>,
}

impl Default for SplitArgs {
    fn default() -> Self {
        SplitArgs {
            holdout: 0.1,
            seed: 1,
            split_opening: None,
        }
    }
}

impl SplitArgs {
    /// Record files under `kifu` as (training, held-out).
    pub fn files(&self, kifu: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
        split_files(kifu, self.holdout, self.seed, self.split_opening)
    }

    /// Their games as (training, held-out), rated at least `min_rating`.
    pub fn games(&self, kifu: &Path, min_rating: Option<f64>) -> Result<(Vec<Game>, Vec<Game>)> {
        split_games(
            kifu,
            self.holdout,
            self.seed,
            self.split_opening,
            min_rating,
        )
    }
}

/// Whether the record at `relative` (path below the kifu folder) is held out.
///
/// ```
/// use niwatori::corpus::is_held_out;
/// let p = std::path::Path::new("wcsc28/game1.csa");
/// assert_eq!(is_held_out(p, 0.1, 7), is_held_out(p, 0.1, 7));
/// assert!(!is_held_out(p, 0.0, 7));
/// assert!(is_held_out(p, 1.0, 7));
/// ```
pub fn is_held_out(relative: &Path, fraction: f64, seed: u64) -> bool {
    is_key_held_out(
        &relative.to_string_lossy().replace('\\', "/"),
        fraction,
        seed,
    )
}

fn is_key_held_out(key: &str, fraction: f64, seed: u64) -> bool {
    let u = (mix(fnv1a(FNV_OFFSET, key.as_bytes()) ^ mix(seed)) >> 11) as f64 / (1u64 << 53) as f64;
    u < fraction
}

/// The key a file is split by: its relative path, or with `opening_plies`
/// the start position and first moves of its first game (the path for a
/// file without a readable game).
fn split_key(kifu: &Path, file: &Path, opening_plies: Option<u32>) -> String {
    let path = || {
        file.strip_prefix(kifu)
            .unwrap_or(file)
            .to_string_lossy()
            .replace('\\', "/")
    };
    let Some(n) = opening_plies else {
        return path();
    };
    match crate::records::read_games(file)
        .ok()
        .and_then(|fg| fg.games.into_iter().next())
    {
        Some(game) if !game.moves.is_empty() => opening_key(&game, n),
        _ => path(),
    }
}

/// A game's start position and first `plies` moves: what a split by
/// opening groups by.
pub fn opening_key(game: &Game, plies: u32) -> String {
    let moves = game.usi_moves();
    let opening = &moves[..moves.len().min(plies as usize)];
    format!(
        "{} moves {}",
        game.start_position().to_sfen(None),
        opening.join(" ")
    )
}

/// Whether `file` (under `kifu`) falls on the held-out side of a split by
/// path or, with `opening_plies`, by opening.
pub fn is_file_held_out(
    kifu: &Path,
    file: &Path,
    fraction: f64,
    seed: u64,
    opening_plies: Option<u32>,
) -> bool {
    is_key_held_out(&split_key(kifu, file, opening_plies), fraction, seed)
}

/// Record files under `kifu` split into (training, held-out), by path or,
/// with `opening_plies`, by opening (see the module docs).
pub fn split_files(
    kifu: &Path,
    holdout: f64,
    seed: u64,
    opening_plies: Option<u32>,
) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    anyhow::ensure!(
        (0.0..=1.0).contains(&holdout),
        "--holdout {holdout} is not in 0..=1"
    );
    let files = find_record_files(&[kifu.to_path_buf()])
        .with_context(|| format!("listing records in {}", kifu.display()))?;
    anyhow::ensure!(
        !files.is_empty(),
        "{}: no record files (.csa, .kif, .kifu)",
        kifu.display()
    );
    Ok(files
        .into_iter()
        .partition(|f| !is_file_held_out(kifu, f, holdout, seed, opening_plies)))
}

/// Record games split into (training, held-out), only those whose players
/// are both rated at least `min_rating` if it is given.
pub fn split_games(
    kifu: &Path,
    holdout: f64,
    seed: u64,
    opening_plies: Option<u32>,
    min_rating: Option<f64>,
) -> Result<(Vec<Game>, Vec<Game>)> {
    let (train, held) = split_files(kifu, holdout, seed, opening_plies)?;
    let rated = |games: Vec<Game>| rated_at_least(games, min_rating);
    Ok((rated(read_all_games(&train)), rated(read_all_games(&held))))
}

/// The games whose players are both rated at least `min_rating` (all of
/// them for `None`).
pub fn rated_at_least(mut games: Vec<Game>, min_rating: Option<f64>) -> Vec<Game> {
    if let Some(r) = min_rating {
        games.retain(|g| g.rated_at_least(r));
    }
    games
}

/// Reads every game of the record files (problems are reported by the
/// caller's reader; unusable files are skipped with a message); a game that
/// repeats an earlier one is kept once.
pub fn read_all_games(files: &[impl AsRef<Path>]) -> Vec<Game> {
    let mut games = Vec::new();
    let mut seen = crate::records::Duplicates::default();
    for file in files {
        match crate::records::read_games(file.as_ref()) {
            Ok(fg) => {
                for p in &fg.problems {
                    eprintln!("{p}");
                }
                for g in fg.games {
                    match seen.first_seen(&g) {
                        Some(first) => eprintln!(
                            "{} game {} repeats {first}: counted once",
                            g.source.display(),
                            g.index + 1
                        ),
                        None => games.push(g),
                    }
                }
            }
            Err(e) => eprintln!("{e}"),
        }
    }
    games
}

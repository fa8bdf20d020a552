//! Start positions for matches.
//!
//! Each pair of games starts from the same opening with colours swapped. Openings
//! come from a file of USI position lines ([`openings_from_file`], as the
//! floodgate openings in `../shared/openings/`), from real games (a prefix of a record: a seeded random ply in
//! `min_ply..=max_ply`, e.g. 16–30, of each CSA file in a folder, taken only from
//! games that went on at least 40 plies after it) or from seeded
//! random legal play from the start position that never captures and never moves a
//! piece to a square the opponent attacks, so no material is lost.
//!
//! ```
//! use niwatori::play::openings::random_opening;
//! let a = random_opening(42, 12);
//! assert_eq!(a, random_opening(42, 12)); // seeded
//! assert_eq!(a.moves.len(), 12);
//! a.position().unwrap(); // every move is legal
//! ```

use std::path::{Path, PathBuf};

use rsshogi::board::{Move32List, STARTPOS_SFEN, generate_legal_all_move32};
use thiserror::Error;

use super::game::{Opening, side_index};
use crate::random::Rng;

/// Errors while collecting openings.
#[derive(Debug, Error)]
pub enum OpeningError {
    #[error("cannot read openings folder {path}: {source}")]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "no usable opening in {path} ({bad} bad files, {short} records shorter than {min_ply} plies)"
    )]
    NoneUsable {
        path: PathBuf,
        bad: usize,
        short: usize,
        min_ply: usize,
    },
    #[error("bad opening ply range {0}..={1}")]
    BadRange(usize, usize),
    #[error("cannot read openings file {path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {what}")]
    BadLine {
        path: PathBuf,
        line: usize,
        what: String,
    },
    #[error("{0}: no opening in the file")]
    Empty(PathBuf),
}

/// A record must go on for this many plies after the cut to give an opening.
pub const MIN_TAIL: usize = 40;

/// One file that could not be used, and why.
#[derive(Debug, Clone)]
pub struct BadFile {
    pub path: PathBuf,
    pub why: String,
}

/// Seeded random play without captures or hanging pieces.
pub fn random_opening(seed: u64, plies: usize) -> Opening {
    let mut rng = Rng::new(seed);
    let mut pos = rsshogi::board::hirate_position();
    let mut moves = Vec::new();
    while moves.len() < plies {
        let mut list = Move32List::new();
        generate_legal_all_move32(&pos, &mut list);
        let us = pos.turn();
        let them = if side_index(us) == 0 {
            rsshogi::types::Color::WHITE
        } else {
            rsshogi::types::Color::BLACK
        };
        let mut safe = Vec::new();
        for &mv in list.iter() {
            if pos.is_capture_move32(mv) {
                continue;
            }
            pos.apply_move32(mv);
            let hanging = pos.is_attacked_by(mv.to_sq(), them);
            let in_check = pos.is_in_check();
            pos.undo_move32(mv).expect("undo of a move just applied");
            if !hanging && !in_check {
                safe.push(mv);
            }
        }
        if safe.is_empty() {
            break;
        }
        let mv = safe[rng.below(safe.len())];
        moves.push(mv.to_usi());
        pos.apply_move32(mv);
    }
    Opening {
        start_sfen: STARTPOS_SFEN.to_string(),
        moves,
        source: format!("random seed {seed}"),
    }
}

/// Prefixes of the records in `dir` (`*.csa`, sorted by name), each cut at a seeded
/// random ply in `min_ply..=max_ply` that leaves at least [`MIN_TAIL`] plies of the
/// game after it. Files that cannot be read are returned as [`BadFile`]s; shorter
/// records are skipped.
pub fn openings_from_dir(
    dir: &Path,
    min_ply: usize,
    max_ply: usize,
    seed: u64,
) -> Result<(Vec<Opening>, Vec<BadFile>), OpeningError> {
    if min_ply > max_ply {
        return Err(OpeningError::BadRange(min_ply, max_ply));
    }
    let entries = std::fs::read_dir(dir).map_err(|source| OpeningError::Dir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("csa")))
        .collect();
    files.sort();
    let mut rng = Rng::new(seed);
    let mut openings = Vec::new();
    let mut bad = Vec::new();
    let mut short = 0;
    for path in files {
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let data = match std::fs::read(&path) {
            Ok(d) => d,
            Err(e) => {
                bad.push(BadFile {
                    path,
                    why: e.to_string(),
                });
                continue;
            }
        };
        let record = match rsshogi::records::formats::csa::parse_csa_bytes(&data) {
            Ok(r) => r,
            Err(e) => {
                bad.push(BadFile {
                    path,
                    why: e.to_string(),
                });
                continue;
            }
        };
        let moves: Vec<String> = record.main_moves().map(|m| m.mv().to_usi()).collect();
        // A game that ended soon after the cut (a crash, an early blunder) gives
        // a decided position, not an opening.
        if moves.len() < min_ply + MIN_TAIL {
            short += 1;
            continue;
        }
        let top = max_ply.min(moves.len() - MIN_TAIL);
        let ply = min_ply + rng.below(top - min_ply + 1);
        let opening = Opening {
            start_sfen: record.init_position_sfen().to_string(),
            moves: moves[..ply].to_vec(),
            source: format!("{name} ply {ply}"),
        };
        match opening.position() {
            Ok(pos) if !pos.is_mated() => openings.push(opening),
            Ok(_) => short += 1,
            Err(e) => bad.push(BadFile {
                path,
                why: e.to_string(),
            }),
        }
    }
    if openings.is_empty() {
        return Err(OpeningError::NoneUsable {
            path: dir.to_path_buf(),
            bad: bad.len(),
            short,
            min_ply,
        });
    }
    // Shuffle so that a short match samples the whole folder.
    for i in (1..openings.len()).rev() {
        let j = rng.below(i + 1);
        openings.swap(i, j);
    }
    Ok((openings, bad))
}

/// One opening a line, as USI's `position` command and opening tools
/// (TanukiColiseum, cutechess) write them: `startpos [moves M…]` or
/// `sfen BOARD TURN HAND PLY [moves M…]`, with an optional leading
/// `position`. Blank lines and lines starting with `#` are skipped; any
/// other line that does not give a legal, unfinished position is an error
/// naming the file and line. Shuffled by `seed`, so that a short match
/// samples the whole file.
pub fn openings_from_file(path: &Path, seed: u64) -> Result<Vec<Opening>, OpeningError> {
    let text = std::fs::read_to_string(path).map_err(|source| OpeningError::File {
        path: path.to_path_buf(),
        source,
    })?;
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let mut openings = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let bad = |what: String| OpeningError::BadLine {
            path: path.to_path_buf(),
            line: i + 1,
            what,
        };
        let opening = parse_opening_line(t)
            .map(|(start_sfen, moves)| Opening {
                start_sfen,
                moves,
                source: format!("{name} line {}", i + 1),
            })
            .map_err(bad)?;
        match opening.position() {
            Ok(pos) if pos.is_mated() => return Err(bad("the position is already mated".into())),
            Ok(_) => openings.push(opening),
            Err(e) => return Err(bad(e.to_string())),
        }
    }
    if openings.is_empty() {
        return Err(OpeningError::Empty(path.to_path_buf()));
    }
    let mut rng = Rng::new(seed);
    for i in (1..openings.len()).rev() {
        let j = rng.below(i + 1);
        openings.swap(i, j);
    }
    Ok(openings)
}

/// The start SFEN and moves of one line of an openings file.
fn parse_opening_line(line: &str) -> Result<(String, Vec<String>), String> {
    let mut words: Vec<&str> = line.split_whitespace().collect();
    if words.first() == Some(&"position") {
        words.remove(0);
    }
    let (sfen, rest) = match words.first() {
        Some(&"startpos") => (STARTPOS_SFEN.to_string(), &words[1..]),
        Some(&"sfen") if words.len() >= 5 => (words[1..5].join(" "), &words[5..]),
        Some(&"sfen") => return Err("sfen needs board, side, hand and ply".into()),
        _ => return Err(format!("expected startpos or sfen, found {line:?}")),
    };
    let moves = match rest.split_first() {
        None => Vec::new(),
        Some((&"moves", m)) => m.iter().map(|s| s.to_string()).collect(),
        Some((w, _)) => return Err(format!("expected moves, found {w:?}")),
    };
    Ok((sfen, moves))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_openings_keep_material_and_differ_by_seed() {
        for seed in 0..20 {
            let o = random_opening(seed, 16);
            let pos = o.position().unwrap();
            // No captures: both hands empty, all 40 pieces on the board.
            assert_eq!(pos.bitboards().occupied().count(), 40, "seed {seed}");
            assert!(!pos.is_in_check());
        }
        assert_ne!(random_opening(1, 16).moves, random_opening(2, 16).moves);
    }

    #[test]
    fn opening_lines_in_both_forms() {
        let (sfen, moves) = parse_opening_line("startpos moves 7g7f 3c3d").unwrap();
        assert_eq!(
            (sfen.as_str(), moves),
            (STARTPOS_SFEN, vec!["7g7f".to_string(), "3c3d".into()])
        );
        let (sfen, moves) = parse_opening_line(
            "position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
        )
        .unwrap();
        assert!(sfen.ends_with(" b - 1") && moves.is_empty());
        assert!(parse_opening_line("startpos 7g7f").is_err());
        assert!(parse_opening_line("sfen 9/9 b").is_err());
        assert!(parse_opening_line("7g7f 3c3d").is_err());
    }
}

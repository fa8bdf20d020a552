//! Reading game records (CSA, KIF) into games: a start position and moves.
//!
//! Parsing is rsshogi's (`records` feature); this module finds the files,
//! decodes UTF-8 (with or without a byte-order mark) or Shift_JIS, splits
//! CSA files holding several games (`/` lines), and turns rsshogi's errors,
//! which carry no line number, into [`Problem`]s that name the file, the
//! line and what is wrong. A bad game never stops the others: when the error
//! comes after some moves, those moves are kept as a truncated game and the
//! problem says how many.
//!
//! ```
//! use niwatori::records::{parse_games, Format};
//! let text = "V2.2\nPI\n+\n+7776FU\n-3334FU\n+8822UM\n%TORYO\n/\nPI\n+\n+2726FU\nhello\n";
//! let read = parse_games("two.csa".as_ref(), Format::Csa, text.as_bytes());
//! assert_eq!(read.games.len(), 2);
//! assert_eq!(read.games[0].moves.len(), 3);
//! assert!(read.games[1].truncated); // the unknown line ends game 2 after 1 move
//! assert_eq!(read.problems[0].line, 12);
//! assert_eq!(read.problems[0].to_string(),
//!     "two.csa:12: game 2: unknown line \"hello\"; its first 1 moves are used");
//! ```

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

use rsshogi::board::{Position, position_from_sfen};
use rsshogi::records::formats::{csa, kif};
use rsshogi::types::{Move, Move32};

use crate::positions::PositionRecord;
use crate::positions::hcpe::Hcpe;
use crate::positions::psv::PackedSfenValue;

/// File formats read by this module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// CSA V2 / V2.2, possibly several games separated by `/` lines.
    Csa,
    /// KIF (Kakinoki), one game per file; `.kifu` files are the UTF-8 variant.
    Kif,
    /// YaneuraOu's PackedSfenValue ([`crate::positions::psv`]): each
    /// 40-byte record is a one-move game, its position and its move (score
    /// and result are not read: extraction labels by its own search).
    Psv,
    /// dlshogi's HuffmanCodedPosAndEval ([`crate::positions::hcpe`]), 38
    /// bytes a record, read as `Psv` is.
    Hcpe,
}

impl Format {
    /// Whether the file holds positions (one-move games), not game records.
    pub const fn is_positions(self) -> bool {
        matches!(self, Self::Psv | Self::Hcpe)
    }

    /// The format of a file by its extension (`.csa`, `.kif`, `.kifu`,
    /// case-insensitive), or `None` for other files.
    pub fn of(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "csa" => Some(Self::Csa),
            "kif" | "kifu" => Some(Self::Kif),
            "psv" => Some(Self::Psv),
            "hcpe" => Some(Self::Hcpe),
            _ => None,
        }
    }
}

/// One game read from a record file.
#[derive(Clone, Debug, PartialEq)]
pub struct Game {
    /// The record file.
    pub source: PathBuf,
    /// 0-based index of the game within its file.
    pub index: usize,
    /// 1-based line where the game starts in the file.
    pub line: usize,
    /// Start position as SFEN.
    pub start_sfen: String,
    /// Main-line moves, in order, all legal.
    pub moves: Vec<Move>,
    /// The raw ending line (`%TORYO`, `まで64手で後手の勝ち`, ...), if any.
    pub ending: Option<String>,
    /// True when an error cut the game short and only the moves before it
    /// are here (see the matching [`Problem`]).
    pub truncated: bool,
    /// The players' ratings (black, white) from floodgate's
    /// `'black_rate:NAME:RATE` and `'white_rate:` comments, if given.
    pub ratings: [Option<f64>; 2],
    /// Per move of `moves`, the score the record's `'**` comment after it
    /// gives (CSA's convention, and `niwatori match`'s: the mover's search
    /// score before the move, from Black's view); empty when the record
    /// has none (KIF, position files).
    pub scores: Vec<Option<i32>>,
}

/// Finds games that repeat an earlier one (the same start position and the
/// same moves, wherever they were read from), so that a collection counts
/// each game once: the same game saved in two folders, or a generated game
/// that replays a real one.
///
/// ```
/// use niwatori::records::{Duplicates, Format, parse_games};
/// let a = parse_games("a.csa".as_ref(), Format::Csa, b"PI\n+\n+7776FU\n%TORYO\n");
/// let b = parse_games("b.csa".as_ref(), Format::Csa, b"PI\n+\n+7776FU\n%TORYO\n");
/// let mut seen = Duplicates::default();
/// assert!(seen.first_seen(&a.games[0]).is_none());
/// assert_eq!(seen.first_seen(&b.games[0]).unwrap(), "a.csa game 1");
/// ```
#[derive(Default)]
pub struct Duplicates {
    first: std::collections::HashMap<(String, Vec<u16>), String>,
}

impl Duplicates {
    /// `None` the first time a game is met; after that, where it was first
    /// met (`FILE game N`, 1-based).
    pub fn first_seen(&mut self, game: &Game) -> Option<&str> {
        let key = (
            game.start_sfen.clone(),
            game.moves.iter().map(|m| m.raw()).collect(),
        );
        match self.first.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => Some(e.into_mut().as_str()),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(format!("{} game {}", game.source.display(), game.index + 1));
                None
            }
        }
    }
}

/// How a game ended, as far as its record says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Win(rsshogi::types::Color),
    Draw,
    /// Interrupted, or an ending that names no winner.
    Unknown,
}

impl Game {
    /// The side to move after the last move.
    pub fn side_to_move_at_end(&self) -> rsshogi::types::Color {
        use rsshogi::types::Color;
        let black_starts = !self.start_sfen.contains(" w ");
        if black_starts == self.moves.len().is_multiple_of(2) {
            Color::Black
        } else {
            Color::White
        }
    }

    /// Who won, read from the ending: CSA's `%TORYO`, `%TIME_UP` and
    /// `%ILLEGAL_MOVE` lose for the side to move, `%KACHI` wins for it,
    /// `%±ILLEGAL_ACTION` loses for the side named, `%SENNICHITE` and
    /// `%JISHOGI` draw; KIF's `…先手の勝ち` / `…後手の勝ち` (`下手`/`上手`
    /// in handicap games), `千日手` and `持将棋`.
    ///
    /// ```
    /// use niwatori::records::{Format, Outcome, parse_games};
    /// use rsshogi::types::Color;
    /// let g = |t: &str| parse_games("g.csa".as_ref(), Format::Csa, t.as_bytes()).games[0].outcome();
    /// assert_eq!(g("PI\n+\n+7776FU\n%TORYO\n"), Outcome::Win(Color::Black));
    /// assert_eq!(g("PI\n+\n+7776FU\n%KACHI\n"), Outcome::Win(Color::White));
    /// assert_eq!(g("PI\n+\n+7776FU\n%SENNICHITE\n"), Outcome::Draw);
    /// assert_eq!(g("PI\n+\n+7776FU\n%CHUDAN\n"), Outcome::Unknown);
    /// ```
    pub fn outcome(&self) -> Outcome {
        use rsshogi::types::Color;
        let to_move = self.side_to_move_at_end();
        let other = to_move.flip();
        let Some(end) = self.ending.as_deref().map(str::trim) else {
            return Outcome::Unknown;
        };
        match end {
            "%TORYO" | "%TIME_UP" | "%ILLEGAL_MOVE" => Outcome::Win(other),
            "%KACHI" => Outcome::Win(to_move),
            "%+ILLEGAL_ACTION" => Outcome::Win(Color::White),
            "%-ILLEGAL_ACTION" => Outcome::Win(Color::Black),
            "%SENNICHITE" | "%JISHOGI" => Outcome::Draw,
            _ if end.contains("先手の勝ち") || end.contains("下手の勝ち") => {
                Outcome::Win(Color::Black)
            }
            _ if end.contains("後手の勝ち") || end.contains("上手の勝ち") => {
                Outcome::Win(Color::White)
            }
            _ if end.contains("千日手") || end.contains("持将棋") => Outcome::Draw,
            _ => Outcome::Unknown,
        }
    }

    /// The score recorded after move `i` (0-based), from the mover's view
    /// (`'**` comments give Black's).
    ///
    /// ```
    /// use niwatori::records::{Format, parse_games};
    /// let text = "PI\n+\n+7776FU\n'** 30 -3334FU\n-3334FU,T3\n'** 25\n+2726FU\n%TORYO\n";
    /// let game = &parse_games("g.csa".as_ref(), Format::Csa, text.as_bytes()).games[0];
    /// assert_eq!(game.scores, [Some(30), Some(25), None]);
    /// assert_eq!((game.mover_score(0), game.mover_score(1), game.mover_score(2)), (Some(30), Some(-25), None));
    /// ```
    pub fn mover_score(&self, i: usize) -> Option<i32> {
        let black = self.scores.get(i).copied().flatten()?;
        let white_first = self.start_sfen.split_whitespace().nth(1) == Some("w");
        Some(if white_first == i.is_multiple_of(2) {
            -black
        } else {
            black
        })
    }

    /// Whether both players are rated at least `rating` (an unrated game
    /// is not).
    ///
    /// ```
    /// use niwatori::records::{Format, parse_games};
    /// let text = "'black_rate:a+1:3100.0\n'white_rate:b+2:2950\nPI\n+\n+7776FU\n%TORYO\n";
    /// let game = &parse_games("g.csa".as_ref(), Format::Csa, text.as_bytes()).games[0];
    /// assert_eq!(game.ratings, [Some(3100.0), Some(2950.0)]);
    /// assert!(game.rated_at_least(2900.0) && !game.rated_at_least(3000.0));
    /// ```
    pub fn rated_at_least(&self, rating: f64) -> bool {
        self.ratings.iter().all(|r| r.is_some_and(|r| r >= rating))
    }

    /// The moves as USI strings (`7g7f`, `P*5e`, `8h2b+`).
    pub fn usi_moves(&self) -> Vec<String> {
        self.moves.iter().map(|m| m.to_usi()).collect()
    }

    /// The start position, ready for `apply_move32` (`init_stack` done).
    pub fn start_position(&self) -> Position {
        // the SFEN came from rsshogi's own parse of this game, so it is valid
        let mut pos = position_from_sfen(&self.start_sfen).unwrap_or_else(|_| {
            unreachable!("rsshogi produced an unreadable SFEN {:?}", self.start_sfen)
        });
        pos.init_stack();
        pos
    }

    /// The moves as 32-bit moves, each for the position it is played in.
    pub fn moves32(&self) -> Vec<Move32> {
        let mut pos = self.start_position();
        let mut out = Vec::with_capacity(self.moves.len());
        for &mv in &self.moves {
            let m32 = pos.move32_from_move(mv);
            pos.apply_move32(m32);
            out.push(m32);
        }
        out
    }
}

/// What was wrong with a game or a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProblemKind {
    /// The file could not be read.
    Io,
    /// A line that is not part of the format.
    UnknownLine,
    /// A line of the format that could not be understood (board, hand, move).
    Syntax,
    /// A move that is not legal in its position.
    IllegalMove,
    /// A move for the wrong side (`-` when Black is to move).
    WrongSide,
    /// A start position that is not a valid shogi position.
    BadPosition,
    /// A file holding no game at all.
    NoGame,
}

impl ProblemKind {
    /// A short name for summaries.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Io => "unreadable file",
            Self::UnknownLine => "unknown line",
            Self::Syntax => "syntax error",
            Self::IllegalMove => "illegal move",
            Self::WrongSide => "move by the wrong side",
            Self::BadPosition => "bad start position",
            Self::NoGame => "no game in file",
        }
    }
}

/// A problem found while reading a record file, with its place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The record file.
    pub file: PathBuf,
    /// 1-based line of the offending text (1 when the whole file is at fault).
    pub line: usize,
    /// 0-based index of the game within the file.
    pub game_index: usize,
    /// What kind of problem.
    pub kind: ProblemKind,
    /// What is wrong, in words.
    pub message: String,
    /// How many moves before the error were kept (0: the game is skipped).
    pub kept_moves: usize,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: game {}: {}",
            self.file.display(),
            self.line,
            self.game_index + 1,
            self.message
        )?;
        match (self.kind, self.kept_moves) {
            (ProblemKind::Io | ProblemKind::NoGame, _) => Ok(()),
            (_, 0) => write!(f, "; the game is skipped"),
            (_, n) => write!(f, "; its first {n} moves are used"),
        }
    }
}

/// Whether moves can be played in `pos`, a position read from outside (an
/// SFEN): rsshogi reads any board, and its move application panics in one
/// with two kings or where the side not to move is in check (found by
/// `scripts/fuzz.sh`). Missing kings (mate problems) are allowed.
pub fn check_playable(pos: &Position) -> Result<(), String> {
    pos.validate().map_err(|e| format!("{e:?}"))?;
    let them = pos.turn().flip();
    let has_king = !pos
        .bitboards()
        .pieces_for(rsshogi::types::PieceType::KING, them)
        .is_empty();
    if has_king && pos.is_attacked_by(pos.king_square(them), pos.turn()) {
        return Err("the side not to move is in check".into());
    }
    Ok(())
}

/// Errors that stop reading a whole file (the caller reports and goes on).
#[derive(Debug, thiserror::Error)]
pub enum RecordsError {
    /// A file or directory could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A path given explicitly is a file of an unknown format.
    #[error("{}: not a record file (expected .csa, .kif, .kifu, .psv or .hcpe)", .0.display())]
    UnknownFormat(PathBuf),
}

/// Games read from one file, and the problems met.
#[derive(Clone, Debug, Default)]
pub struct FileGames {
    /// Games usable for extraction (complete or truncated).
    pub games: Vec<Game>,
    /// Problems, in file order.
    pub problems: Vec<Problem>,
}

/// Lists the record files under `paths`: files as given (their format must
/// be known), directories scanned recursively for `.csa`, `.kif` and `.kifu`
/// files. The result is sorted and free of duplicates.
pub fn find_record_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, RecordsError> {
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|source| RecordsError::Io {
            path: path.clone(),
            source,
        })?;
        if meta.is_dir() {
            scan_dir(path, &mut out)?;
        } else if Format::of(path).is_some() {
            out.push(path.clone());
        } else {
            return Err(RecordsError::UnknownFormat(path.clone()));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn scan_dir(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), RecordsError> {
    let io = |source| RecordsError::Io {
        path: dir.to_path_buf(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_dir() {
            scan_dir(&path, out)?;
        } else if Format::of(&path).is_some() {
            out.push(path);
        }
    }
    Ok(())
}

/// Reads every game of one record file (format from its extension).
pub fn read_games(path: &Path) -> Result<FileGames, RecordsError> {
    let format = Format::of(path).ok_or_else(|| RecordsError::UnknownFormat(path.to_path_buf()))?;
    let data = std::fs::read(path).map_err(|source| RecordsError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(parse_games(path, format, &data))
}

/// Parses the bytes of a record file; `source` only names it in games and
/// problems.
pub fn parse_games(source: &Path, format: Format, data: &[u8]) -> FileGames {
    match format {
        Format::Psv => return read_positions::<PackedSfenValue>(source, data),
        Format::Hcpe => return read_positions::<Hcpe>(source, data),
        Format::Csa | Format::Kif => {}
    }
    let text = decode(data);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut out = FileGames::default();
    match format {
        Format::Csa => {
            for (index, (start, chunk)) in csa_chunks(&lines).into_iter().enumerate() {
                read_csa_game(source, index, start, chunk, &mut out);
            }
        }
        Format::Kif => read_kif_game(source, 0, &lines, &mut out),
        Format::Psv | Format::Hcpe => unreachable!("read above"),
    }
    if out.games.is_empty() && out.problems.is_empty() {
        out.problems.push(Problem {
            file: source.to_path_buf(),
            line: 1,
            game_index: 0,
            kind: ProblemKind::NoGame,
            message: "no game found".into(),
            kept_moves: 0,
        });
    }
    out
}

/// Position records as one-move games; a problem's line is the record's
/// number (1-based).
fn read_positions<R: PositionRecord>(source: &Path, data: &[u8]) -> FileGames {
    let mut out = FileGames::default();
    let problem = |index: usize, kind, message: String| Problem {
        file: source.to_path_buf(),
        line: index + 1,
        game_index: index,
        kind,
        message,
        kept_moves: 0,
    };
    let records = data.chunks_exact(R::SIZE);
    let rest = records.remainder().len();
    let mut legal = rsshogi::board::Move32List::new();
    for (index, bytes) in records.enumerate() {
        match position_game(source, index, &R::read(bytes), &mut legal) {
            Ok(game) => out.games.push(game),
            Err((kind, why)) => {
                let message = format!("record {}: {why}", index + 1);
                out.problems.push(problem(index, kind, message));
            }
        }
    }
    if rest > 0 {
        let index = data.len() / R::SIZE;
        let message = format!(
            "{rest} bytes after the last whole {}-byte {} record (a cut-off file?)",
            R::SIZE,
            R::NAME
        );
        out.problems
            .push(problem(index, ProblemKind::Syntax, message));
    }
    if out.games.is_empty() && out.problems.is_empty() {
        out.problems
            .push(problem(0, ProblemKind::NoGame, "no record".into()));
    }
    out
}

/// Record `index` of a position file as a one-move game, or what is wrong
/// with it.
fn position_game(
    source: &Path,
    index: usize,
    record: &impl PositionRecord,
    legal: &mut rsshogi::board::Move32List,
) -> Result<Game, (ProblemKind, String)> {
    let bad = |e: String| (ProblemKind::BadPosition, e);
    let sfen = record.sfen().map_err(bad)?;
    let pos = position_from_sfen(&sfen).map_err(|e| bad(format!("{sfen:?}: {e}")))?;
    check_playable(&pos).map_err(|e| bad(format!("{sfen:?}: {e}")))?;
    legal.clear();
    rsshogi::board::generate_legal_all_move32(&pos, legal);
    let mv = record.game_move();
    if !legal.iter().any(|m| m.to_move() == mv) {
        let why = format!(
            "move {} ({:#06x}) is not legal in {sfen:?}",
            mv.to_usi(),
            mv.raw()
        );
        return Err((ProblemKind::IllegalMove, why));
    }
    Ok(Game {
        source: source.to_path_buf(),
        index,
        line: index + 1,
        start_sfen: sfen,
        moves: vec![mv],
        ending: None,
        truncated: false,
        ratings: [None, None],
        scores: Vec::new(),
    })
}

fn decode(data: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(data) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => encoding_rs::SHIFT_JIS.decode(data).0,
    }
}

/// Splits CSA lines at `/` lines into (0-based first line, lines) chunks that
/// hold something besides blank lines and comments.
fn csa_chunks<'a>(lines: &'a [&'a str]) -> Vec<(usize, &'a [&'a str])> {
    let mut chunks = Vec::new();
    let mut start = 0;
    for (i, line) in lines.iter().enumerate() {
        if line.trim() == "/" {
            chunks.push((start, &lines[start..i]));
            start = i + 1;
        }
    }
    chunks.push((start, &lines[start..]));
    chunks.retain(|(_, chunk)| {
        chunk.iter().any(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('\'')
        })
    });
    chunks
}

/// First characters a CSA line may start with.
fn csa_line_known(line: &str) -> bool {
    let t = line.trim();
    t.is_empty()
        || matches!(
            t.as_bytes()[0],
            b'V' | b'N' | b'$' | b'P' | b'+' | b'-' | b'\'' | b'T' | b'%'
        )
        || is_server_result(t)
}

/// The game-end lines a CSA server sends its clients (`#RESIGN`, `#WIN`,
/// …), which records saved from a client's log keep after the moves. They
/// restate the `%` ending, so the reader passes over them.
fn is_server_result(line: &str) -> bool {
    const RESULTS: [&str; 14] = [
        "#WIN",
        "#LOSE",
        "#DRAW",
        "#CENSORED",
        "#CHUDAN",
        "#RESIGN",
        "#TIME_UP",
        "#ILLEGAL_MOVE",
        "#SENNICHITE",
        "#OUTE_SENNICHITE",
        "#JISHOGI",
        "#MAX_MOVES",
        "#ILLEGAL_ACTION",
        "#ABNORMAL",
    ];
    RESULTS.contains(&line.trim())
}

/// A malformed `+`/`-` token of a CSA line (rsshogi would take a short one
/// for a side-to-move line and drop it silently), if any.
fn csa_bad_move_token(line: &str) -> Option<&str> {
    let t = line.trim();
    if t.starts_with('\'') || t.starts_with('N') || t.starts_with('$') {
        return None;
    }
    t.split(',').map(str::trim).find(|tok| {
        let b = tok.as_bytes();
        (tok.starts_with('+') || tok.starts_with('-'))
            && b.len() != 1
            && !(b.len() == 7
                && b[1..5].iter().all(u8::is_ascii_digit)
                && b[5..].iter().all(u8::is_ascii_uppercase))
    })
}

/// Index (within `chunk`) of the CSA move token number `n` (0-based).
fn csa_move_line(chunk: &[&str], n: usize) -> Option<usize> {
    let mut seen = 0;
    for (i, line) in chunk.iter().enumerate() {
        if line.trim_start().starts_with('\'') {
            continue;
        }
        for token in line.split(',') {
            let t = token.trim();
            if (t.starts_with('+') || t.starts_with('-')) && t.len() >= 7 {
                if seen == n {
                    return Some(i);
                }
                seen += 1;
            }
        }
    }
    None
}

/// Index of the first line containing `needle` (trimmed), if any.
fn line_containing(lines: &[&str], needle: &str) -> Option<usize> {
    let find = |n: &str| {
        let n = n.trim();
        (!n.is_empty())
            .then(|| lines.iter().position(|l| l.contains(n)))
            .flatten()
    };
    // some messages wrap the text: "unknown piece code: XX"
    find(needle).or_else(|| needle.rsplit_once(": ").and_then(|(_, tail)| find(tail)))
}

/// The ratings of floodgate's `'black_rate:NAME:RATE` / `'white_rate:`
/// comments in a game's lines.
fn csa_ratings(chunk: &[&str]) -> [Option<f64>; 2] {
    let mut ratings = [None, None];
    for line in chunk {
        let line = line.trim();
        for (side, tag) in ["'black_rate:", "'white_rate:"].iter().enumerate() {
            if let Some(rest) = line.strip_prefix(tag) {
                ratings[side] = rest
                    .rsplit_once(':')
                    .and_then(|(_, r)| r.trim().parse::<f64>().ok())
                    .filter(|r| r.is_finite());
            }
        }
    }
    ratings
}

fn read_csa_game(source: &Path, index: usize, start: usize, chunk: &[&str], out: &mut FileGames) {
    let before = out.games.len();
    read_csa_moves(source, index, start, chunk, out);
    let ratings = csa_ratings(chunk);
    for g in &mut out.games[before..] {
        g.ratings = ratings;
        g.scores = csa_scores(chunk, g.moves.len());
    }
}

/// The `'**` score of each of the first `moves` moves of a game's lines:
/// the comment's first number after the move, if any, before the next move.
fn csa_scores(chunk: &[&str], moves: usize) -> Vec<Option<i32>> {
    let mut scores = vec![None; moves];
    let mut seen = 0usize;
    for line in chunk {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix("'**") {
            if let Some(slot) = seen.checked_sub(1).and_then(|i| scores.get_mut(i)) {
                *slot = rest.split_whitespace().next().and_then(|v| v.parse().ok());
            }
        } else if !line.starts_with('\'') {
            seen += line
                .split(',')
                .map(str::trim)
                .filter(|t| (t.starts_with('+') || t.starts_with('-')) && t.len() >= 7)
                .count();
        }
    }
    scores
}

fn read_csa_moves(source: &Path, index: usize, start: usize, chunk: &[&str], out: &mut FileGames) {
    // rsshogi skips unknown header lines silently; we do not drop data silently
    let unknown = chunk.iter().position(|l| !csa_line_known(l));
    let bad_move = chunk
        .iter()
        .enumerate()
        .find_map(|(i, l)| csa_bad_move_token(l).map(|t| (i, t)));
    let (error_at, kind, message) =
        if let Some(bad) = unknown.filter(|&u| bad_move.is_none_or(|(m, _)| u < m)) {
            (
                bad,
                ProblemKind::UnknownLine,
                format!("unknown line {:?}", chunk[bad].trim()),
            )
        } else if let Some((at, token)) = bad_move {
            (
                at,
                ProblemKind::Syntax,
                format!("invalid CSA move {token:?}"),
            )
        } else {
            let lines: Vec<&str> = chunk
                .iter()
                .copied()
                .filter(|l| !is_server_result(l))
                .collect();
            match csa::parse_csa_str(&lines.join("\n")) {
                Ok(record) => {
                    out.games
                        .push(game_from_record(source, index, start, &record, false));
                    return;
                }
                Err(e) => {
                    let (kind, at) = match &e {
                        csa::CsaError::InvalidLine(s) => {
                            (ProblemKind::Syntax, line_containing(chunk, s))
                        }
                        csa::CsaError::InvalidBoard(s) => {
                            (ProblemKind::Syntax, line_containing(chunk, s))
                        }
                        csa::CsaError::InvalidMove(s) => {
                            (ProblemKind::Syntax, line_containing(chunk, s))
                        }
                        csa::CsaError::MoveSideMismatch(s) => {
                            (ProblemKind::WrongSide, line_containing(chunk, s))
                        }
                        csa::CsaError::IllegalMove { index } => {
                            (ProblemKind::IllegalMove, csa_move_line(chunk, *index))
                        }
                        csa::CsaError::Sfen(_) => (
                            ProblemKind::BadPosition,
                            chunk.iter().position(|l| l.trim_start().starts_with('P')),
                        ),
                        csa::CsaError::MissingEndMarker => (ProblemKind::Syntax, None),
                    };
                    let message = match (&e, at) {
                        (csa::CsaError::IllegalMove { index }, Some(i)) => {
                            illegal_move_message(chunk, i, *index)
                        }
                        _ => e.to_string(),
                    };
                    (at.unwrap_or(0), kind, message)
                }
            }
        };
    let failure = Failure {
        at: error_at,
        kind,
        message,
    };
    let parse = |text: &str| csa::parse_csa_str(text).ok();
    salvage(source, index, start, chunk, failure, parse, out);
}

/// Index of KIF move line number `n` (0-based) of the main line.
fn kif_move_line(lines: &[&str], n: usize) -> Option<usize> {
    let mut seen = 0;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if t.starts_with("変化") {
            return None;
        }
        if t.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            if seen == n {
                return Some(i);
            }
            seen += 1;
        }
    }
    None
}

/// The longest KIF move line read. Real ones are under 80 bytes (number,
/// move, origin, times); rsshogi's move parser takes time quadratic in a
/// line's length (a 22 kB line of junk took 4·10⁹ instructions, found by
/// fuzzing), so a longer line ends the game there.
pub const MAX_KIF_MOVE_LINE: usize = 512;

fn read_kif_game(source: &Path, index: usize, lines: &[&str], out: &mut FileGames) {
    let overlong = lines.iter().position(|l| {
        l.len() > MAX_KIF_MOVE_LINE && l.trim_start().starts_with(|c: char| c.is_ascii_digit())
    });
    if let Some(at) = overlong {
        let failure = Failure {
            at,
            kind: ProblemKind::Syntax,
            message: format!(
                "a move line of {} bytes (KIF move lines are at most {MAX_KIF_MOVE_LINE})",
                lines[at].len()
            ),
        };
        let parse = |text: &str| kif::parse_kif_str(text).ok();
        return salvage(source, index, 0, lines, failure, parse, out);
    }
    let error = match kif::parse_kif_str(&lines.join("\n")) {
        Ok(record) => {
            if record.move_count() == 0
                && !lines
                    .iter()
                    .any(|l| l.contains("手合割") || l.contains('|') || l.contains("まで"))
            {
                return; // nothing that looks like a game: reported as "no game"
            }
            out.games
                .push(game_from_record(source, index, 0, &record, false));
            return;
        }
        Err(e) => e,
    };
    let (kind, at) = match &error {
        kif::KifError::InvalidLine(s) => (ProblemKind::Syntax, line_containing(lines, s)),
        kif::KifError::InvalidMove(s) => (ProblemKind::Syntax, line_containing(lines, s)),
        kif::KifError::IllegalMove { index } => {
            (ProblemKind::IllegalMove, kif_move_line(lines, *index))
        }
        kif::KifError::Sfen(_) => (
            ProblemKind::BadPosition,
            lines.iter().position(|l| l.contains('|')),
        ),
        kif::KifError::MissingResult => (ProblemKind::Syntax, None),
    };
    let message = match (&error, at) {
        (kif::KifError::IllegalMove { index }, Some(i)) => illegal_move_message(lines, i, *index),
        _ => error.to_string(),
    };
    let failure = Failure {
        at: at.unwrap_or(0),
        kind,
        message,
    };
    let parse = |text: &str| kif::parse_kif_str(text).ok();
    salvage(source, index, 0, lines, failure, parse, out);
}

/// Where and why a game failed to parse.
struct Failure {
    /// The bad line's index in the game's lines (0 when not found).
    at: usize,
    kind: ProblemKind,
    message: String,
}

fn illegal_move_message(lines: &[&str], at: usize, move_index: usize) -> String {
    format!(
        "illegal move {:?} (move {})",
        lines[at].trim(),
        move_index + 1
    )
}

/// Reports a game that failed to parse, keeping the moves before the bad
/// line when they parse on their own (`parse` reads a game's text).
fn salvage(
    source: &Path,
    index: usize,
    start: usize,
    lines: &[&str],
    failure: Failure,
    parse: impl Fn(&str) -> Option<rsshogi::records::Record>,
    out: &mut FileGames,
) {
    let kept = (failure.at > 0)
        .then(|| parse(&lines[..failure.at].join("\n")))
        .flatten()
        .filter(|r| r.move_count() > 0);
    let kept_moves = kept.as_ref().map_or(0, |r| r.move_count());
    if let Some(record) = kept {
        out.games
            .push(game_from_record(source, index, start, &record, true));
    }
    out.problems.push(Problem {
        file: source.to_path_buf(),
        line: start + failure.at + 1,
        game_index: index,
        kind: failure.kind,
        message: failure.message,
        kept_moves,
    });
}

fn game_from_record(
    source: &Path,
    index: usize,
    start: usize,
    record: &rsshogi::records::Record,
    truncated: bool,
) -> Game {
    Game {
        source: source.to_path_buf(),
        index,
        line: start + 1,
        start_sfen: record.init_position_sfen().to_string(),
        moves: record.main_moves().map(|m| m.mv()).collect(),
        ending: record
            .main_terminal()
            .and_then(|t| t.raw().map(str::to_string)),
        truncated,
        ratings: [None, None],
        scores: Vec::new(),
    }
}

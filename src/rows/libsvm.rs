//! libsvm text rows (`label idx:val idx:val ...`, one row a line, 1-based
//! ascending indices), as LIBLINEAR reads them: the writer `extract` uses
//! and the reader `train` uses.
//!
//! The writer puts targets (centipawns divided by [`LABEL_SCALE`]) exactly,
//! with at most 4 decimals; values are small integers.
//!
//! The reader is strict, as training on silently damaged data is worse than
//! not training: every line must have a finite label and `index:value` pairs
//! with 1-based, strictly ascending indices and finite values, and the file
//! must end with a newline (a missing one means the writer was cut off).
//! Indices are at most [`MAX_INDEX`]: a model is dense, one weight per
//! index up to the largest, so one stray large index would size every
//! weight vector by it. Every error names the file and the 1-based line.
//!
//! Files are read in blocks cut at line ends, so a file larger than memory
//! can be parsed piece by piece; pieces are parsed in parallel by
//! [`crate::train::dataset`].
//!
//! ```
//! use niwatori::rows::libsvm::{parse_block, write_row, Rows};
//! let mut out = Vec::new();
//! write_row(&mut out, -150, &[(0, 3), (41, 1)]);
//! assert_eq!(out, b"-0.015 1:3 42:1\n");
//! let mut rows = Rows::default();
//! parse_block(&out, &mut rows).unwrap();
//! assert_eq!(rows.pairs(), [(-0.015, vec![(1, 3.0), (42, 1.0)])]);
//!
//! let mut rows = Rows::default();
//! let mut rows = Rows::default();
//! parse_block(b"0.5 1:1 3:2\n-1 2:7\n", &mut rows).unwrap();
//! assert_eq!(rows.labels, vec![0.5, -1.0]);
//! assert_eq!(rows.indices, vec![1, 3, 2]);
//! assert_eq!(rows.row_lengths, vec![2, 1]);
//! ```

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::LABEL_SCALE;

// Writing.

#[inline]
fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends `cp / 10000` in shortest exact decimal form (`0.015`, `-1`, `0`).
pub fn push_target(out: &mut Vec<u8>, cp: i32) {
    let scale = LABEL_SCALE.unsigned_abs();
    if cp < 0 {
        out.push(b'-');
    }
    let a = cp.unsigned_abs();
    push_u64(out, u64::from(a / scale));
    let mut frac = a % scale;
    if frac != 0 {
        out.push(b'.');
        let mut div = scale / 10;
        while frac != 0 {
            out.push(b'0' + (frac / div) as u8);
            frac %= div;
            div /= 10;
        }
    }
}

/// Decimal digits of `n` (at least 1).
#[inline]
fn digits(n: u32) -> usize {
    match n {
        0..=9 => 1,
        10..=99 => 2,
        100..=999 => 3,
        1_000..=9_999 => 4,
        10_000..=99_999 => 5,
        100_000..=999_999 => 6,
        1_000_000..=9_999_999 => 7,
        10_000_000..=99_999_999 => 8,
        100_000_000..=999_999_999 => 9,
        _ => 10,
    }
}

/// Writes `n` in decimal at the start of `buf`; returns its length.
#[inline]
fn put_u32(buf: &mut [u8], mut n: u32) -> usize {
    let len = digits(n);
    for b in buf[..len].iter_mut().rev() {
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
    len
}

/// "00" to "99", two bytes each.
const DIGIT_PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// Writes `n` in decimal at the start of `buf`, which has room for 10
/// digits; returns its length. Below 10⁸ the digits come from two
/// independent halves and a shift drops the leading zeros: no chain of
/// divisions, no branch on the length.
#[inline]
fn put_index(buf: &mut [u8], n: u32) -> usize {
    if n >= 100_000_000 {
        return put_u32(buf, n);
    }
    let pair = |x: u32| {
        let i = 2 * x as usize;
        u64::from(u16::from_le_bytes([DIGIT_PAIRS[i], DIGIT_PAIRS[i + 1]]))
    };
    let (hi, lo) = (n / 10_000, n % 10_000);
    // eight digits, the most significant in the lowest byte
    let padded =
        pair(hi / 100) | pair(hi % 100) << 16 | pair(lo / 100) << 32 | pair(lo % 100) << 48;
    let leading_zeros = ((padded ^ 0x3030_3030_3030_3030).trailing_zeros() / 8).min(7) as usize;
    buf[..8].copy_from_slice(&(padded >> (8 * leading_zeros)).to_le_bytes());
    8 - leading_zeros
}

/// The largest feature index read: 2²⁷ (134,217,728), a dense weight
/// vector of 1 GiB, about 2.6 times the largest feature scheme
/// ([`crate::features::RelationEncoding::OneHot`]).
pub const MAX_INDEX: u32 = 1 << 27;

/// Room for one ` index:value` pair: a space, 10 digits, a colon, 3 digits.
const PAIR_MAX: usize = 1 + 10 + 1 + 3;

/// Appends one row: the target (centipawns, scaled here) and the features
/// as sorted 0-based indices with their values (written 1-based).
pub fn write_row(out: &mut Vec<u8>, target_cp: i32, features: &[(u32, u8)]) {
    push_target(out, target_cp);
    // Written into room made in one step: a push per byte and a copy per
    // number cost more than the digits themselves.
    let start = out.len();
    out.resize(start + features.len() * PAIR_MAX + 1, 0);
    let buf = &mut out[start..];
    let mut at = 0;
    for &(idx, v) in features {
        buf[at] = b' ';
        at += 1;
        at += put_index(&mut buf[at..], idx + 1);
        buf[at] = b':';
        at += 1;
        if v < 10 {
            buf[at] = b'0' + v;
            at += 1;
        } else {
            at += put_u32(&mut buf[at..], u32::from(v));
        }
    }
    buf[at] = b'\n';
    out.truncate(start + at + 1);
}

// Reading.

/// What was wrong with a line.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum LineError {
    #[error("empty line (every line must hold a label)")]
    EmptyLine,
    #[error("label {0:?} is not a finite number")]
    BadLabel(String),
    #[error("{0:?} is not of the form index:value")]
    BadPair(String),
    #[error("index {0:?} is not an integer in 1..=4294967295")]
    BadIndex(String),
    #[error("index 0 (indices are 1-based)")]
    ZeroIndex,
    #[error(
        "index {0} is beyond the largest read, {MAX_INDEX} (a model holds a weight for every index up to its largest)"
    )]
    IndexTooLarge(u32),
    #[error("index {index} after {previous}: indices must be strictly ascending")]
    Unsorted { previous: u32, index: u32 },
    #[error("value {0:?} is not a finite number")]
    BadValue(String),
    #[error("truncated last line (no newline at the end of the file)")]
    Truncated,
}

/// An error reading a libsvm file.
#[derive(Debug, Error)]
pub enum LibsvmError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {error}")]
    Line {
        path: PathBuf,
        line: u64,
        error: LineError,
    },
}

/// Feature values in the narrowest exact representation seen so far.
///
/// Feature files hold small integers, stored as one byte each; other libsvm
/// files fall back to `f32` when every value is exact in it, else to `f64`.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    U8(Vec<u8>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Default for Values {
    fn default() -> Self {
        Values::U8(Vec::new())
    }
}

impl Values {
    pub fn len(&self) -> usize {
        match self {
            Values::U8(v) => v.len(),
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes per value.
    pub fn width(&self) -> usize {
        match self {
            Values::U8(_) => 1,
            Values::F32(_) => 4,
            Values::F64(_) => 8,
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Values::U8(_) => 0,
            Values::F32(_) => 1,
            Values::F64(_) => 2,
        }
    }

    /// Widen in place so that values of `rank` fit.
    fn widen_to(&mut self, rank: u8) {
        if rank <= self.rank() {
            return;
        }
        let old = std::mem::take(self);
        *self = match (old, rank) {
            (Values::U8(v), 1) => Values::F32(v.into_iter().map(f32::from).collect()),
            (Values::U8(v), _) => Values::F64(v.into_iter().map(f64::from).collect()),
            (Values::F32(v), _) => Values::F64(v.into_iter().map(f64::from).collect()),
            (Values::F64(v), _) => Values::F64(v),
        };
    }

    /// Append one value, widening when it does not fit exactly.
    pub fn push(&mut self, x: f64) {
        let rank =
            if (0.0..=255.0).contains(&x) && x.fract() == 0.0 && x.to_bits() != (-0.0f64).to_bits()
            {
                0
            } else if f64::from(x as f32) == x {
                1
            } else {
                2
            };
        self.widen_to(rank);
        match self {
            Values::U8(v) => v.push(x as u8),
            Values::F32(v) => v.push(x as f32),
            Values::F64(v) => v.push(x),
        }
    }

    /// Append all of `other`, widening as needed.
    pub fn append(&mut self, other: Values) {
        self.widen_to(other.rank());
        match (self, other) {
            (Values::U8(a), Values::U8(b)) => a.extend_from_slice(&b),
            (Values::F32(a), Values::U8(b)) => a.extend(b.into_iter().map(f32::from)),
            (Values::F32(a), Values::F32(b)) => a.extend_from_slice(&b),
            (Values::F64(a), Values::U8(b)) => a.extend(b.into_iter().map(f64::from)),
            (Values::F64(a), Values::F32(b)) => a.extend(b.into_iter().map(f64::from)),
            (Values::F64(a), Values::F64(b)) => a.extend_from_slice(&b),
            _ => unreachable!("widen_to made self at least as wide as other"),
        }
    }

    /// Value `k` as `f64`.
    pub fn get(&self, k: usize) -> f64 {
        match self {
            Values::U8(v) => f64::from(v[k]),
            Values::F32(v) => f64::from(v[k]),
            Values::F64(v) => v[k],
        }
    }
}

/// Rows parsed from one block of text.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Rows {
    pub labels: Vec<f64>,
    pub row_lengths: Vec<u32>,
    pub indices: Vec<u32>,
    pub values: Values,
    /// Largest feature index seen (0 if none).
    pub max_index: u32,
}

impl Rows {
    /// Every row as its label and (index, value) pairs.
    pub fn pairs(&self) -> Vec<(f64, Vec<(u32, f64)>)> {
        let mut start = 0;
        let rows = self.labels.iter().zip(&self.row_lengths);
        rows.map(|(&label, &len)| {
            let end = start + len as usize;
            let row = (start..end).map(|k| (self.indices[k], self.values.get(k)));
            let row = (label, row.collect());
            start = end;
            row
        })
        .collect()
    }

    pub fn len(&self) -> usize {
        self.labels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Keeps only the rows whose label passes `keep`; returns how many were
    /// dropped. (`max_index` stays an upper bound.)
    pub fn retain_labels(&mut self, keep: impl Fn(f64) -> bool) -> usize {
        fn compact<T: Copy>(v: &mut Vec<T>, spans: &[(usize, usize)]) {
            let mut w = 0;
            for &(a, b) in spans {
                v.copy_within(a..b, w);
                w += b - a;
            }
            v.truncate(w);
        }
        let mut spans = Vec::with_capacity(self.len());
        let (mut start, mut kept) = (0usize, 0usize);
        for i in 0..self.len() {
            let len = self.row_lengths[i] as usize;
            if keep(self.labels[i]) {
                spans.push((start, start + len));
                self.labels[kept] = self.labels[i];
                self.row_lengths[kept] = self.row_lengths[i];
                kept += 1;
            }
            start += len;
        }
        let dropped = self.len() - kept;
        if dropped > 0 {
            self.labels.truncate(kept);
            self.row_lengths.truncate(kept);
            compact(&mut self.indices, &spans);
            match &mut self.values {
                Values::U8(v) => compact(v, &spans),
                Values::F32(v) => compact(v, &spans),
                Values::F64(v) => compact(v, &spans),
            }
        }
        dropped
    }

    /// Append `other` after these rows.
    pub fn append(&mut self, other: Rows) {
        self.labels.extend_from_slice(&other.labels);
        self.row_lengths.extend_from_slice(&other.row_lengths);
        self.indices.extend_from_slice(&other.indices);
        self.values.append(other.values);
        self.max_index = self.max_index.max(other.max_index);
    }
}

/// An error at a line counted from the start of the block (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct BlockError {
    pub line: u64,
    pub error: LineError,
}

impl fmt::Display for BlockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.error)
    }
}

/// Parse a block of complete lines (each ending in `\n`) and append to `rows`.
///
/// On error, rows parsed before the bad line stay in `rows`; the line number
/// is counted from the start of the block.
pub fn parse_block(block: &[u8], rows: &mut Rows) -> Result<(), BlockError> {
    let mut line_no = 0u64;
    let mut rest = block;
    while !rest.is_empty() {
        line_no += 1;
        let Some(end) = rest.iter().position(|&b| b == b'\n') else {
            return Err(BlockError {
                line: line_no,
                error: LineError::Truncated,
            });
        };
        let line = &rest[..end];
        rest = &rest[end + 1..];
        parse_line(line, rows).map_err(|error| BlockError {
            line: line_no,
            error,
        })?;
    }
    Ok(())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn parse_f64(tok: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(tok).ok()?;
    let x: f64 = s.parse().ok()?;
    x.is_finite().then_some(x)
}

/// Small non-negative integers are the common case in feature files.
fn parse_small_uint(tok: &[u8]) -> Option<u32> {
    if tok.is_empty() || tok.len() > 9 {
        return None;
    }
    let mut v = 0u32;
    for &b in tok {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u32::from(b - b'0');
    }
    Some(v)
}

fn parse_line(line: &[u8], rows: &mut Rows) -> Result<(), LineError> {
    let mut tokens = line
        .split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty());
    let Some(label) = tokens.next() else {
        return Err(LineError::EmptyLine);
    };
    let label = parse_f64(label).ok_or_else(|| LineError::BadLabel(text(label)))?;
    let start = rows.indices.len();
    let mut previous = 0u32;
    for tok in tokens {
        let result = parse_pair(tok, previous);
        let (index, value) = match result {
            Ok(pair) => pair,
            Err(e) => {
                // Leave `rows` as it was before this line.
                rows.indices.truncate(start);
                truncate_values(&mut rows.values, start);
                return Err(e);
            }
        };
        rows.indices.push(index);
        rows.values.push(value);
        previous = index;
    }
    rows.max_index = rows.max_index.max(previous);
    rows.labels.push(label);
    rows.row_lengths.push((rows.indices.len() - start) as u32);
    Ok(())
}

fn truncate_values(values: &mut Values, len: usize) {
    match values {
        Values::U8(v) => v.truncate(len),
        Values::F32(v) => v.truncate(len),
        Values::F64(v) => v.truncate(len),
    }
}

fn parse_pair(tok: &[u8], previous: u32) -> Result<(u32, f64), LineError> {
    let colon = tok
        .iter()
        .position(|&b| b == b':')
        .ok_or_else(|| LineError::BadPair(text(tok)))?;
    let (idx, val) = (&tok[..colon], &tok[colon + 1..]);
    let index = match parse_small_uint(idx) {
        Some(i) => i,
        None => std::str::from_utf8(idx)
            .ok()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|s| s.parse::<u32>().ok())
            .ok_or_else(|| LineError::BadIndex(text(idx)))?,
    };
    if index == 0 {
        return Err(LineError::ZeroIndex);
    }
    if index > MAX_INDEX {
        return Err(LineError::IndexTooLarge(index));
    }
    if index <= previous {
        return Err(LineError::Unsorted { previous, index });
    }
    let value = match parse_small_uint(val) {
        Some(v) => f64::from(v),
        None => parse_f64(val).ok_or_else(|| LineError::BadValue(text(val)))?,
    };
    Ok((index, value))
}

/// Reads a file in blocks of whole lines, so that a file of any size can be
/// parsed with bounded memory.
pub struct BlockReader {
    path: PathBuf,
    file: File,
    carry: Vec<u8>,
    block_size: usize,
    done: bool,
}

impl BlockReader {
    pub fn open(path: &Path, block_size: usize) -> Result<Self, LibsvmError> {
        let file = File::open(path).map_err(|source| LibsvmError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(BlockReader {
            path: path.to_path_buf(),
            file,
            carry: Vec::new(),
            block_size: block_size.max(1),
            done: false,
        })
    }

    /// The next block of whole lines; `Ok(None)` at the end of the file.
    ///
    /// A final line without a newline is returned as its own block, so the
    /// parser reports it as truncated at the right line.
    pub fn next_block(&mut self) -> Result<Option<Vec<u8>>, LibsvmError> {
        if self.done {
            return Ok(None);
        }
        let mut buf = std::mem::take(&mut self.carry);
        loop {
            let old = buf.len();
            buf.resize(old + self.block_size, 0);
            let n =
                read_full(&mut self.file, &mut buf[old..]).map_err(|source| LibsvmError::Io {
                    path: self.path.clone(),
                    source,
                })?;
            buf.truncate(old + n);
            if n == 0 {
                self.done = true;
                return Ok((!buf.is_empty()).then_some(buf));
            }
            if let Some(last_nl) = buf.iter().rposition(|&b| b == b'\n') {
                self.carry = buf.split_off(last_nl + 1);
                return Ok(Some(buf));
            }
            // A single line longer than the block: keep reading.
        }
    }
}

fn read_full(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Parse a whole file (convenience for small files and tests).
pub fn read_file(path: &Path) -> Result<Rows, LibsvmError> {
    let mut reader = BlockReader::open(path, 1 << 24)?;
    let mut rows = Rows::default();
    let mut lines_before = 0u64;
    while let Some(block) = reader.next_block()? {
        let before = rows.len() as u64;
        parse_block(&block, &mut rows).map_err(|e| LibsvmError::Line {
            path: path.to_path_buf(),
            line: lines_before + e.line,
            error: e.error,
        })?;
        lines_before += rows.len() as u64 - before;
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> BlockError {
        parse_block(text.as_bytes(), &mut Rows::default()).unwrap_err()
    }

    #[test]
    fn values_widen_only_when_needed() {
        let mut rows = Rows::default();
        parse_block(b"1 1:1 2:10\n", &mut rows).unwrap();
        assert!(matches!(rows.values, Values::U8(_)));
        parse_block(b"1 1:0.5\n", &mut rows).unwrap();
        assert!(matches!(rows.values, Values::F32(_)));
        parse_block(b"1 1:0.1\n", &mut rows).unwrap();
        assert_eq!(rows.values, Values::F64(vec![1.0, 10.0, 0.5, 0.1]));
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(err("1 1:1\n\n").line, 2);
        assert_eq!(
            err("1 1:1\n2 3:1 2:1\n").error,
            LineError::Unsorted {
                previous: 3,
                index: 2
            }
        );
        assert_eq!(err("x 1:1\n").error, LineError::BadLabel("x".into()));
        assert_eq!(err("1 0:1\n").error, LineError::ZeroIndex);
        assert_eq!(err("1 a:1\n").error, LineError::BadIndex("a".into()));
        assert_eq!(err("1 -3:1\n").error, LineError::BadIndex("-3".into()));
        assert_eq!(
            err("1 3:1 134217729:1\n").error,
            LineError::IndexTooLarge(134_217_729)
        );
        assert_eq!(
            err("1 4294967295:1\n").error,
            LineError::IndexTooLarge(u32::MAX)
        );
        assert_eq!(err("1 2:z\n").error, LineError::BadValue("z".into()));
        assert_eq!(err("1 2:nan\n").error, LineError::BadValue("nan".into()));
        assert_eq!(err("1 2\n").error, LineError::BadPair("2".into()));
        assert_eq!(err("1 1:1\n1 1:1").error, LineError::Truncated);
        assert_eq!(err("1 1:1\n1 1:1").line, 2);
    }

    #[test]
    fn the_index_limit_admits_every_feature_scheme() {
        use crate::features::RelationEncoding;
        for e in [RelationEncoding::Value, RelationEncoding::OneHot] {
            assert!(e.num_features() <= MAX_INDEX as usize, "{e:?}");
        }
        let mut rows = Rows::default();
        parse_block(b"1 134217728:1\n", &mut rows).unwrap();
        assert_eq!(rows.max_index, MAX_INDEX);
    }

    #[test]
    fn a_failed_line_leaves_no_partial_row() {
        let mut rows = Rows::default();
        parse_block(b"1 1:1\n", &mut rows).unwrap();
        let before = rows.clone();
        parse_block(b"1 1:2 2:x\n", &mut rows).unwrap_err();
        assert_eq!(rows, before);
    }

    /// Every index up to 10⁷, then a spread of larger ones and each power of
    /// ten either side, reads back as `to_string` writes it.
    #[test]
    fn indices_are_written_as_decimal() {
        let mut samples: Vec<u32> = (0..10_000_000).collect();
        samples.extend((0..100_000u32).map(|i| i.wrapping_mul(2_654_435_761)));
        for p in 0..10 {
            let t = 10u32.pow(p);
            samples.extend([t - 1, t, t + 1]);
        }
        samples.push(u32::MAX);
        let mut buf = [0u8; 16];
        for n in samples {
            let len = put_index(&mut buf, n);
            assert_eq!(&buf[..len], n.to_string().as_bytes(), "{n}");
        }
    }

    #[test]
    fn rows_keep_every_value() {
        let feats: Vec<(u32, u8)> = (0..300).map(|i| (i * 7919, (i % 12) as u8)).collect();
        let mut out = Vec::new();
        write_row(&mut out, 2345, &feats);
        assert_eq!(out.last(), Some(&b'\n'));
        let mut rows = Rows::default();
        parse_block(&out, &mut rows).unwrap();
        let want: Vec<(u32, f64)> = feats.iter().map(|&(i, v)| (i + 1, f64::from(v))).collect();
        assert_eq!(rows.pairs(), [(0.2345, want)]);
    }
}

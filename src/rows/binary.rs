//! Compact binary rows (`.bin`): the rows of libsvm text, lossless, in
//! about a tenth of its bytes; what `extract --format bin` writes and
//! `train` reads beside text.
//!
//! The siblings of one position differ only in the pairs their move
//! changes, so a row is stored as its difference from the row before it:
//! the features that appear, change value or go away. A file is
//!
//! ```text
//! file    = MAGIC chunk* trailer
//! chunk   = rows:u32 bytes:u32 fnv1a:u64 payload      (rows >= 1)
//! trailer = 0:u32 16:u32 fnv1a:u64 total_rows:u64 total_nnz:u64
//! row     = label ops:varint op*                      (in a payload)
//! label   = varint of the zigzagged target in centipawns (label × 10000)
//! op      = varint of (index − previous op's index) × 2 + removed, then
//!           the new value as one byte unless removed
//! ```
//!
//! little-endian, varints LEB128. Each chunk's first row is a difference
//! from the empty row, so chunks decode on their own, in parallel, and a
//! file of any size streams in bounded memory. Indices are the 1-based
//! libsvm indices, at most [`MAX_INDEX`]; values are integers 0–255, as
//! feature files hold; labels are multiples of 1/10000, as `extract` writes
//! them. A damaged file is refused, never read in part: a checksum per
//! chunk, and the trailer, whose absence means the writer was cut off.
//!
//! ```
//! use niwatori::rows::binary::{Writer, read_file};
//! let mut w = Writer::new(Vec::new()).unwrap();
//! w.push(-150, &[(0, 3), (41, 1)]).unwrap();
//! w.push(25, &[(0, 3), (41, 2), (99, 1)]).unwrap();
//! let bytes = w.finish().unwrap();
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("rows.bin");
//! std::fs::write(&path, &bytes).unwrap();
//! let rows = read_file(&path).unwrap();
//! assert_eq!(
//!     rows.pairs(),
//!     [(-0.015, vec![(1, 3.0), (42, 1.0)]), (0.0025, vec![(1, 3.0), (42, 2.0), (100, 1.0)])]
//! );
//! ```

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::LABEL_SCALE;
use super::libsvm::{MAX_INDEX, Rows, Values};
use crate::random::{FNV_OFFSET, fnv1a};

/// The first 8 bytes of every file (format version 1).
pub const MAGIC: &[u8; 8] = b"NWROWS1\n";
/// Rows a chunk holds (the last one fewer).
pub const CHUNK_ROWS: u32 = 4096;
const HEADER: usize = 16;
const TRAILER_PAYLOAD: usize = 16;
/// A chunk's payload is refused above this, before it is allocated.
const MAX_CHUNK_BYTES: u32 = 1 << 30;

/// What was wrong with a row.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RowError {
    #[error("the chunk ends inside this row")]
    Overrun,
    #[error("a number takes more than 10 bytes")]
    LongVarint,
    #[error("index step 0 (indices must be strictly ascending)")]
    ZeroStep,
    #[error("index {0} is beyond the largest read, {MAX_INDEX}")]
    IndexTooLarge(u64),
    #[error("index {0} is removed but the row before has no such feature")]
    RemovedMissing(u32),
    #[error("label {0} centipawns is beyond ±2147483647")]
    LabelRange(i64),
    #[error("{0} bytes after the chunk's last row")]
    Leftover(usize),
}

/// An error reading a `.bin` file. Rows are counted from 1, as lines are
/// in text.
#[derive(Debug, Error)]
pub enum BinError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path}: not a niwatori rows file (it does not start with \"NWROWS1\")")]
    Magic { path: PathBuf },
    #[error("{path}: truncated at byte {offset}: no end-of-file record (the writer was cut off)")]
    Truncated { path: PathBuf, offset: u64 },
    #[error("{path}: chunk at byte {offset}: {what}")]
    Chunk {
        path: PathBuf,
        offset: u64,
        what: String,
    },
    #[error("{path}: row {row} (chunk at byte {offset}): {error}")]
    Row {
        path: PathBuf,
        row: u64,
        offset: u64,
        error: RowError,
    },
}

// Writing.

fn push_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

fn unzigzag(n: u64) -> i64 {
    (n >> 1) as i64 ^ -((n & 1) as i64)
}

/// Writes rows to `W` chunk by chunk. Call [`Writer::finish`]: a file
/// without its trailer is refused by the reader.
pub struct Writer<W: Write> {
    out: W,
    chunk: Vec<u8>,
    chunk_rows: u32,
    /// The previous row's features, 1-based.
    previous: Vec<(u32, u8)>,
    current: Vec<(u32, u8)>,
    rows: u64,
    nnz: u64,
    bytes: u64,
}

impl<W: Write> Writer<W> {
    pub fn new(mut out: W) -> io::Result<Self> {
        out.write_all(MAGIC)?;
        Ok(Self {
            out,
            chunk: Vec::new(),
            chunk_rows: 0,
            previous: Vec::new(),
            current: Vec::new(),
            rows: 0,
            nnz: 0,
            bytes: MAGIC.len() as u64,
        })
    }

    /// One row: its target in centipawns and its features as sorted
    /// 0-based indices with their values, as [`super::libsvm::write_row`]
    /// takes them.
    pub fn push(&mut self, target_cp: i32, features: &[(u32, u8)]) -> io::Result<()> {
        self.current.clear();
        self.current
            .extend(features.iter().map(|&(i, v)| (i + 1, v)));
        self.push_current(target_cp)
    }

    /// [`Writer::push`] of 1-based features.
    fn push_current(&mut self, target_cp: i32) -> io::Result<()> {
        push_varint(&mut self.chunk, zigzag(i64::from(target_cp)));
        let (prev, cur) = (&self.previous, &self.current);
        // Count the ops first: the count goes before them.
        let mut ops = 0u64;
        diff(prev, cur, |_, _, _| ops += 1);
        push_varint(&mut self.chunk, ops);
        let mut last = 0u32;
        let chunk = &mut self.chunk;
        diff(prev, cur, |index, removed, value| {
            push_varint(chunk, u64::from(index - last) << 1 | u64::from(removed));
            if !removed {
                chunk.push(value);
            }
            last = index;
        });
        std::mem::swap(&mut self.previous, &mut self.current);
        self.rows += 1;
        self.nnz += self.previous.len() as u64;
        self.chunk_rows += 1;
        if self.chunk_rows == CHUNK_ROWS {
            self.flush_chunk()?;
        }
        Ok(())
    }

    fn flush_chunk(&mut self) -> io::Result<()> {
        if self.chunk_rows > 0 {
            self.write_record(self.chunk_rows)?;
            self.chunk.clear();
            self.chunk_rows = 0;
            // The next chunk starts from the empty row.
            self.previous.clear();
        }
        Ok(())
    }

    fn write_record(&mut self, rows: u32) -> io::Result<()> {
        let len = u32::try_from(self.chunk.len())
            .ok()
            .filter(|&n| n <= MAX_CHUNK_BYTES)
            .ok_or_else(|| io::Error::other("a chunk of rows beyond 1 GiB"))?;
        let mut header = [0u8; HEADER];
        header[..4].copy_from_slice(&rows.to_le_bytes());
        header[4..8].copy_from_slice(&len.to_le_bytes());
        header[8..].copy_from_slice(&fnv1a(FNV_OFFSET, &self.chunk).to_le_bytes());
        self.out.write_all(&header)?;
        self.out.write_all(&self.chunk)?;
        self.bytes += (HEADER + self.chunk.len()) as u64;
        Ok(())
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Non-zero features written so far.
    pub fn nnz(&self) -> u64 {
        self.nnz
    }

    /// Writes the last chunk and the trailer; returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush_chunk()?;
        self.chunk.clear();
        self.chunk.extend_from_slice(&self.rows.to_le_bytes());
        self.chunk.extend_from_slice(&self.nnz.to_le_bytes());
        self.write_record(0)?;
        self.out.flush()?;
        Ok(self.out)
    }

    /// Bytes written so far (all of them after [`Writer::finish`]).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// Calls `op(index, removed, value)` for each feature that differs between
/// `prev` and `cur` (both sorted), in ascending index order.
fn diff(prev: &[(u32, u8)], cur: &[(u32, u8)], mut op: impl FnMut(u32, bool, u8)) {
    let (mut p, mut c) = (0, 0);
    while p < prev.len() || c < cur.len() {
        match (prev.get(p), cur.get(c)) {
            (Some(&(pi, pv)), Some(&(ci, cv))) if pi == ci => {
                if pv != cv {
                    op(ci, false, cv);
                }
                p += 1;
                c += 1;
            }
            (Some(&(pi, _)), Some(&(ci, _))) if pi < ci => {
                op(pi, true, 0);
                p += 1;
            }
            (Some(&(pi, _)), None) => {
                op(pi, true, 0);
                p += 1;
            }
            (_, Some(&(ci, cv))) => {
                op(ci, false, cv);
                c += 1;
            }
            (None, None) => unreachable!("the loop runs while one is left"),
        }
    }
}

/// A libsvm text row in centipawns, or why `.bin` cannot hold it.
pub fn text_label_to_cp(label: f64) -> Result<i32, String> {
    let cp = (label * f64::from(LABEL_SCALE)).round();
    if cp.abs() <= f64::from(i32::MAX) && f64::from(cp as i32) / f64::from(LABEL_SCALE) == label {
        Ok(cp as i32)
    } else {
        Err(format!(
            "label {label} is not a multiple of 1/{LABEL_SCALE} (bin rows hold labels in centipawns)"
        ))
    }
}

/// Appends `rows` (as parsed from text) to `w`; an error says which row
/// (0-based, within `rows`) `.bin` cannot hold and why.
pub fn push_rows<W: Write>(w: &mut Writer<W>, rows: &Rows) -> Result<(), (usize, String)> {
    let widened;
    let values: &[u8] = match &rows.values {
        Values::U8(v) => v,
        other => {
            // Bytes after all (a -0 widens), or the first that is not names its row.
            let mut bytes = Vec::with_capacity(other.len());
            let mut at = 0;
            for (r, &len) in rows.row_lengths.iter().enumerate() {
                for k in at..at + len as usize {
                    let v = other.get(k);
                    if !(0.0..=255.0).contains(&v) || v.fract() != 0.0 {
                        let why = format!(
                            "value {v} is not an integer 0-255 (bin rows hold feature values in bytes)"
                        );
                        return Err((r, why));
                    }
                    bytes.push(v as u8);
                }
                at += len as usize;
            }
            widened = bytes;
            &widened
        }
    };
    let mut at = 0;
    for (r, (&label, &len)) in rows.labels.iter().zip(&rows.row_lengths).enumerate() {
        let cp = text_label_to_cp(label).map_err(|e| (r, e))?;
        let end = at + len as usize;
        w.current.clear();
        w.current.extend(
            rows.indices[at..end]
                .iter()
                .copied()
                .zip(values[at..end].iter().copied()),
        );
        w.push_current(cp).map_err(|e| (r, e.to_string()))?;
        at = end;
    }
    Ok(())
}

// Reading.

/// One chunk as read from a file, not yet decoded.
pub struct Chunk {
    /// Rows of the file before this chunk.
    pub rows_before: u64,
    /// Byte offset of the chunk's header in the file.
    pub offset: u64,
    pub rows: u32,
    hash: u64,
    pub payload: Vec<u8>,
}

/// Reads a file chunk by chunk.
pub struct ChunkReader {
    path: PathBuf,
    file: io::BufReader<File>,
    offset: u64,
    rows_before: u64,
    done: bool,
}

fn read_exact_or_eof(file: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl ChunkReader {
    pub fn open(path: &Path) -> Result<Self, BinError> {
        let io_err = |source| BinError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = io::BufReader::with_capacity(1 << 20, File::open(path).map_err(io_err)?);
        let mut magic = [0u8; 8];
        let n = read_exact_or_eof(&mut file, &mut magic).map_err(io_err)?;
        if n < magic.len() || &magic != MAGIC {
            return Err(BinError::Magic {
                path: path.to_path_buf(),
            });
        }
        Ok(Self {
            path: path.to_path_buf(),
            file,
            offset: MAGIC.len() as u64,
            rows_before: 0,
            done: false,
        })
    }

    fn chunk_error(&self, what: String) -> BinError {
        BinError::Chunk {
            path: self.path.clone(),
            offset: self.offset,
            what,
        }
    }

    /// The next chunk; `Ok(None)` after the trailer, whose row count is
    /// checked against the chunks'.
    pub fn next_chunk(&mut self) -> Result<Option<Chunk>, BinError> {
        if self.done {
            return Ok(None);
        }
        let io_err = |source| BinError::Io {
            path: self.path.clone(),
            source,
        };
        let mut header = [0u8; HEADER];
        let n = read_exact_or_eof(&mut self.file, &mut header).map_err(io_err)?;
        if n < HEADER {
            return Err(BinError::Truncated {
                path: self.path.clone(),
                offset: self.offset + n as u64,
            });
        }
        let word = |a: usize| u32::from_le_bytes(header[a..a + 4].try_into().expect("4 bytes"));
        let (rows, len) = (word(0), word(4));
        let hash = u64::from_le_bytes(header[8..].try_into().expect("8 bytes"));
        if len > MAX_CHUNK_BYTES || (rows == 0 && len as usize != TRAILER_PAYLOAD) {
            return Err(self.chunk_error(format!("a chunk of {len} bytes (damaged header)")));
        }
        let mut payload = vec![0u8; len as usize];
        let got = read_exact_or_eof(&mut self.file, &mut payload).map_err(io_err)?;
        if got < payload.len() {
            return Err(BinError::Truncated {
                path: self.path.clone(),
                offset: self.offset + (HEADER + got) as u64,
            });
        }
        if rows == 0 {
            if fnv1a(FNV_OFFSET, &payload) != hash {
                return Err(self.chunk_error("checksum mismatch in the end-of-file record".into()));
            }
            let total = u64::from_le_bytes(payload[..8].try_into().expect("8 bytes"));
            let mut rest = [0u8; 1];
            if read_exact_or_eof(&mut self.file, &mut rest).map_err(io_err)? != 0 {
                return Err(self.chunk_error("bytes after the end-of-file record".into()));
            }
            if total != self.rows_before {
                return Err(self.chunk_error(format!(
                    "the end-of-file record counts {total} rows, the chunks hold {}",
                    self.rows_before
                )));
            }
            self.done = true;
            return Ok(None);
        }
        let chunk = Chunk {
            rows_before: self.rows_before,
            offset: self.offset,
            rows,
            hash,
            payload,
        };
        self.rows_before += u64::from(rows);
        self.offset += (HEADER + len as usize) as u64;
        Ok(Some(chunk))
    }

    /// Rows of the chunks returned so far.
    pub fn rows(&self) -> u64 {
        self.rows_before
    }
}

/// Rows and non-zeros a file's trailer records, read from its last bytes:
/// for sizing buffers before a load ([`ChunkReader`] checks the rows).
pub fn totals(path: &Path) -> Result<(u64, u64), BinError> {
    let io_err = |source| BinError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    let tail = (HEADER + TRAILER_PAYLOAD) as u64;
    if len < MAGIC.len() as u64 + tail {
        return Err(BinError::Truncated {
            path: path.to_path_buf(),
            offset: len,
        });
    }
    file.seek(SeekFrom::Start(len - tail)).map_err(io_err)?;
    let mut buf = [0u8; HEADER + TRAILER_PAYLOAD];
    file.read_exact(&mut buf).map_err(io_err)?;
    let word = |a: usize| u64::from_le_bytes(buf[a..a + 8].try_into().expect("8 bytes"));
    if buf[..8] != [0, 0, 0, 0, 16, 0, 0, 0] || fnv1a(FNV_OFFSET, &buf[HEADER..]) != word(8) {
        return Err(BinError::Truncated {
            path: path.to_path_buf(),
            offset: len,
        });
    }
    Ok((word(16), word(24)))
}

/// Why decoding a chunk failed.
#[derive(Debug, Clone, PartialEq)]
pub enum ChunkError {
    /// The payload is not what was written.
    Checksum,
    /// A row (0-based within the chunk) is malformed.
    Row { row: u32, error: RowError },
}

impl Chunk {
    /// The error for `path` that `e` (from [`Chunk::decode`]) stands for.
    pub fn error(&self, path: &Path, e: ChunkError) -> BinError {
        match e {
            ChunkError::Row { row, error } => BinError::Row {
                path: path.to_path_buf(),
                row: self.rows_before + u64::from(row) + 1,
                offset: self.offset,
                error,
            },
            ChunkError::Checksum => BinError::Chunk {
                path: path.to_path_buf(),
                offset: self.offset,
                what: "checksum mismatch (the file is damaged)".into(),
            },
        }
    }

    /// Decodes the chunk's rows and appends them to `rows`; returns their
    /// non-zeros. On error `rows` may hold some of the chunk's rows.
    pub fn decode(&self, rows: &mut Rows) -> Result<u64, ChunkError> {
        if fnv1a(FNV_OFFSET, &self.payload) != self.hash {
            return Err(ChunkError::Checksum);
        }
        let mut cursor = Cursor {
            bytes: &self.payload,
            at: 0,
            label: 0,
        };
        let mut previous: Vec<(u32, u8)> = Vec::with_capacity(256);
        let mut current: Vec<(u32, u8)> = Vec::with_capacity(256);
        let mut nnz = 0u64;
        for r in 0..self.rows {
            let at_row = |error| ChunkError::Row { row: r, error };
            decode_row(&mut cursor, &previous, &mut current).map_err(at_row)?;
            let cp = unzigzag(cursor.label);
            let cp = i32::try_from(cp).map_err(|_| at_row(RowError::LabelRange(cp)))?;
            rows.labels.push(f64::from(cp) / f64::from(LABEL_SCALE));
            rows.row_lengths.push(current.len() as u32);
            rows.indices.extend(current.iter().map(|&(i, _)| i));
            match &mut rows.values {
                Values::U8(v) => v.extend(current.iter().map(|&(_, x)| x)),
                other => current.iter().for_each(|&(_, x)| other.push(f64::from(x))),
            }
            if let Some(&(last, _)) = current.last() {
                rows.max_index = rows.max_index.max(last);
            }
            nnz += current.len() as u64;
            std::mem::swap(&mut previous, &mut current);
        }
        let left = self.payload.len() - cursor.at;
        if left > 0 {
            return Err(ChunkError::Row {
                row: self.rows - 1,
                error: RowError::Leftover(left),
            });
        }
        Ok(nnz)
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    label: u64,
}

impl Cursor<'_> {
    #[inline]
    fn varint(&mut self) -> Result<u64, RowError> {
        let mut n = 0u64;
        for shift in (0..70).step_by(7) {
            let &b = self.bytes.get(self.at).ok_or(RowError::Overrun)?;
            self.at += 1;
            if shift == 63 && b > 1 {
                return Err(RowError::LongVarint);
            }
            n |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(n);
            }
        }
        Err(RowError::LongVarint)
    }

    #[inline]
    fn byte(&mut self) -> Result<u8, RowError> {
        let &b = self.bytes.get(self.at).ok_or(RowError::Overrun)?;
        self.at += 1;
        Ok(b)
    }
}

/// Reads one row's label (into `cursor.label`) and its ops, applied to
/// `previous`, into `current`.
fn decode_row(
    cursor: &mut Cursor<'_>,
    previous: &[(u32, u8)],
    current: &mut Vec<(u32, u8)>,
) -> Result<(), RowError> {
    cursor.label = cursor.varint()?;
    let ops = cursor.varint()?;
    current.clear();
    let (mut p, mut index) = (0usize, 0u64);
    for _ in 0..ops {
        let code = cursor.varint()?;
        let step = code >> 1;
        if step == 0 {
            return Err(RowError::ZeroStep);
        }
        index += step;
        if index > u64::from(MAX_INDEX) {
            return Err(RowError::IndexTooLarge(index));
        }
        let i = index as u32;
        while p < previous.len() && previous[p].0 < i {
            current.push(previous[p]);
            p += 1;
        }
        let present = previous.get(p).is_some_and(|&(j, _)| j == i);
        if present {
            p += 1;
        }
        if code & 1 == 1 {
            if !present {
                return Err(RowError::RemovedMissing(i));
            }
        } else {
            current.push((i, cursor.byte()?));
        }
    }
    current.extend_from_slice(&previous[p..]);
    Ok(())
}

/// Reads a whole file (for small files and tests; `train` streams).
pub fn read_file(path: &Path) -> Result<Rows, BinError> {
    let mut reader = ChunkReader::open(path)?;
    let mut rows = Rows::default();
    while let Some(chunk) = reader.next_chunk()? {
        chunk.decode(&mut rows).map_err(|e| chunk.error(path, e))?;
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(rows: &[(i32, Vec<(u32, u8)>)]) -> Vec<u8> {
        let mut w = Writer::new(Vec::new()).unwrap();
        for (cp, f) in rows {
            w.push(*cp, f).unwrap();
        }
        w.finish().unwrap()
    }

    fn read(bytes: &[u8]) -> Result<Rows, BinError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bin");
        std::fs::write(&path, bytes).unwrap();
        read_file(&path)
    }

    fn some_rows(n: usize) -> Vec<(i32, Vec<(u32, u8)>)> {
        let mut state = 7u64;
        (0..n)
            .map(|r| {
                let mut f: Vec<(u32, u8)> = Vec::new();
                for k in 0..40u32 {
                    state = crate::random::mix(state);
                    if !state.is_multiple_of(3) {
                        f.push((k * 1000 + (state % 7) as u32, (state >> 8) as u8 % 12));
                    }
                }
                if r % 5 == 0 {
                    f.push((MAX_INDEX - 1, 255));
                }
                (((r as i32) - 500) * 37, f)
            })
            .collect()
    }

    #[test]
    fn rows_come_back_as_written_across_chunks() {
        let rows = some_rows(2 * CHUNK_ROWS as usize + 17);
        let got = read(&file(&rows)).unwrap();
        assert_eq!(got.len(), rows.len());
        let want: Vec<(f64, Vec<(u32, f64)>)> = rows
            .iter()
            .map(|(cp, f)| {
                let f = f.iter().map(|&(i, v)| (i + 1, f64::from(v))).collect();
                (f64::from(*cp) / 10000.0, f)
            })
            .collect();
        assert_eq!(got.pairs(), want);
        assert_eq!(got.max_index, MAX_INDEX);
        assert!(matches!(got.values, Values::U8(_)));
    }

    #[test]
    fn an_empty_file_and_empty_rows_round_trip() {
        assert_eq!(read(&file(&[])).unwrap().len(), 0);
        let rows = [(0, vec![]), (5, vec![(3, 1)]), (-5, vec![])];
        assert_eq!(
            read(&file(&rows)).unwrap().pairs(),
            [(0.0, vec![]), (0.0005, vec![(4, 1.0)]), (-0.0005, vec![])]
        );
    }

    #[test]
    fn damage_is_refused_with_where() {
        let good = file(&some_rows(100));
        let message = |bytes: &[u8]| read(bytes).unwrap_err().to_string();
        assert!(message(b"hello").contains("not a niwatori rows file"));
        // Cut anywhere: refused, never read in part.
        for cut in [8, 20, good.len() / 2, good.len() - 1] {
            let m = message(&good[..cut]);
            assert!(m.contains("truncated"), "cut at {cut}: {m}");
        }
        // A flipped byte in the payload fails its chunk's checksum.
        let mut bad = good.clone();
        bad[40] ^= 4;
        assert!(message(&bad).contains("chunk at byte 8: checksum mismatch"));
        let mut longer = good.clone();
        longer.push(0);
        assert!(message(&longer).contains("bytes after the end-of-file record"));
    }

    #[test]
    fn bad_rows_with_a_good_checksum_name_the_row() {
        // Hand-made payloads: row 2 removes a feature the row before lacks.
        let chunk = |rows: u32, payload: &[u8]| {
            let mut out = MAGIC.to_vec();
            out.extend_from_slice(&rows.to_le_bytes());
            out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            out.extend_from_slice(&fnv1a(FNV_OFFSET, payload).to_le_bytes());
            out.extend_from_slice(payload);
            out
        };
        // label 0, one op: index 3 set to 1; then label 0, one op: remove 5.
        let e = read(&chunk(2, &[0, 1, 6, 1, 0, 1, 11]))
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with(
                "row 2 (chunk at byte 8): index 5 is removed but the row before has no such feature"
            ),
            "{e}"
        );
        let e = read(&chunk(1, &[0, 1, 0, 1])).unwrap_err().to_string();
        assert!(e.contains("row 1 (chunk at byte 8): index step 0"), "{e}");
        let e = read(&chunk(2, &[0, 1, 6])).unwrap_err().to_string();
        assert!(
            e.contains("row 1 (chunk at byte 8): the chunk ends inside this row"),
            "{e}"
        );
    }

    #[test]
    fn text_labels_are_held_exactly_or_refused() {
        for cp in [-10000, -1, 0, 1, 15, 2345, 9999, 10000, 123_456] {
            let label = f64::from(cp) / 10000.0;
            let text: f64 = label.to_string().parse().unwrap();
            assert_eq!(text_label_to_cp(text), Ok(cp));
        }
        assert!(text_label_to_cp(0.00001).is_err());
        assert!(text_label_to_cp(1e300).is_err());
    }
}

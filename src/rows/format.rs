//! The two row formats, told apart by extension (`.svm` libsvm text,
//! `.bin` [`binary`] rows), and reading either one the same way: in blocks
//! that parse in parallel, with errors that name the file and the row.

use std::path::Path;

use thiserror::Error;

use super::binary::{self, BinError, Chunk, ChunkReader};
use super::libsvm::{self, BlockReader, LibsvmError, Rows};

/// A row file's format.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum RowFormat {
    /// libsvm text (`.svm`), as LIBLINEAR reads it.
    #[default]
    Text,
    /// niwatori's compact binary rows (`.bin`).
    Bin,
    /// Not rows but positions: YaneuraOu's PackedSfenValue (`.psv`, see
    /// [`crate::positions`]), one per expanded position, for other
    /// engines' learners; `extract` writes it, `train` does not read it.
    Psv,
    /// Positions as dlshogi's HuffmanCodedPosAndEval (`.hcpe`), as `Psv`.
    Hcpe,
}

impl RowFormat {
    /// The file extension, without the dot.
    pub const fn extension(self) -> &'static str {
        match self {
            RowFormat::Text => "svm",
            RowFormat::Bin => "bin",
            RowFormat::Psv => "psv",
            RowFormat::Hcpe => "hcpe",
        }
    }

    /// The format a file's extension names, if it names one.
    pub fn of(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()? {
            "svm" => Some(RowFormat::Text),
            "bin" => Some(RowFormat::Bin),
            "psv" => Some(RowFormat::Psv),
            "hcpe" => Some(RowFormat::Hcpe),
            _ => None,
        }
    }

    /// Whether the format holds training rows (text or bin).
    pub const fn is_rows(self) -> bool {
        matches!(self, RowFormat::Text | RowFormat::Bin)
    }

    /// Whether `path` is a rows file by its extension.
    pub fn is_rows_file(path: &Path) -> bool {
        Self::of(path).is_some_and(Self::is_rows)
    }

    pub const fn name(self) -> &'static str {
        match self {
            RowFormat::Text => "text",
            RowFormat::Bin => "bin",
            RowFormat::Psv => "psv",
            RowFormat::Hcpe => "hcpe",
        }
    }
}

/// An error reading rows in either format.
#[derive(Debug, Error)]
pub enum RowsError {
    #[error(transparent)]
    Text(#[from] LibsvmError),
    #[error(transparent)]
    Bin(#[from] BinError),
    #[error(
        "{0}: PackedSfenValue positions, not training rows (extract them: niwatori extract FILE.psv)"
    )]
    NotRows(std::path::PathBuf),
}

/// A file's blocks, in order.
pub enum RowReader {
    Text(BlockReader),
    Bin(ChunkReader),
}

/// Part of a file that parses on its own.
pub enum Block {
    /// Whole lines of text.
    Text(Vec<u8>),
    Bin(Chunk),
}

impl RowReader {
    /// Opens `path` as `.bin` rows by its extension, otherwise as text
    /// (LIBLINEAR's files have any name); text comes in blocks of about
    /// `text_block` bytes.
    pub fn open(path: &Path, text_block: usize) -> Result<Self, RowsError> {
        Ok(match RowFormat::of(path) {
            Some(RowFormat::Bin) => RowReader::Bin(ChunkReader::open(path)?),
            Some(RowFormat::Psv | RowFormat::Hcpe) => {
                return Err(RowsError::NotRows(path.to_path_buf()));
            }
            _ => RowReader::Text(BlockReader::open(path, text_block)?),
        })
    }

    pub fn next_block(&mut self) -> Result<Option<Block>, RowsError> {
        Ok(match self {
            RowReader::Text(r) => r.next_block()?.map(Block::Text),
            RowReader::Bin(r) => r.next_chunk()?.map(Block::Bin),
        })
    }
}

impl Block {
    /// Bytes of the file the block covers (a chunk's payload).
    pub fn len(&self) -> usize {
        match self {
            Block::Text(b) => b.len(),
            Block::Bin(c) => c.payload.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Parses the block, appending to `rows`; `rows_before` is the file's
    /// rows before this block (for text's line numbers; a chunk knows its
    /// own).
    pub fn parse(&self, path: &Path, rows_before: u64, rows: &mut Rows) -> Result<(), RowsError> {
        match self {
            Block::Text(b) => libsvm::parse_block(b, rows).map_err(|e| {
                RowsError::Text(LibsvmError::Line {
                    path: path.to_path_buf(),
                    line: rows_before + e.line,
                    error: e.error,
                })
            }),
            Block::Bin(c) => match c.decode(rows) {
                Ok(_) => Ok(()),
                Err(e) => Err(RowsError::Bin(c.error(path, e))),
            },
        }
    }
}

/// Reads a whole file of either format (for small files and tests).
pub fn read_rows(path: &Path) -> Result<Rows, RowsError> {
    Ok(match RowFormat::of(path) {
        Some(RowFormat::Bin) => binary::read_file(path)?,
        Some(RowFormat::Psv | RowFormat::Hcpe) => {
            return Err(RowsError::NotRows(path.to_path_buf()));
        }
        _ => libsvm::read_file(path)?,
    })
}

//! Loading training data: row files (libsvm text or `.bin` rows) and
//! directories of them, in a fixed order, into one [`Dataset`], with the
//! feature scheme from `extract.json`.
//!
//! A directory stands for every `*.svm` or every `*.bin` file below it
//! (one format a directory), recursively, in sorted path order. Files are
//! read in blocks (whole lines, or chunks) and the blocks are parsed in
//! parallel; a bad file is reported (file, line, what) and the
//! other files are still checked, so one run lists every bad file, then the
//! load fails: nothing is dropped silently.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use thiserror::Error;

use super::dataset::{ColumnMap, Dataset, DatasetError, blocks_from_groups};
use super::ranks::{Alone, Ranks, file_groups, shard_of};
use crate::progress::{Progress, Unit};
use crate::rows::RowFormat;
use crate::rows::format::{RowReader, RowsError};
use crate::rows::libsvm::{MAX_INDEX, Rows};
use crate::rows::model::FeatureScheme;

/// An error loading training data.
#[derive(Debug, Error)]
pub enum LoadError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: no *.svm or *.bin files below this directory")]
    NoFiles { path: PathBuf },
    #[error(
        "{path}: holds both .svm and .bin rows ({svm} and {bin}); one format a directory, or rows would count twice"
    )]
    MixedFormats {
        path: PathBuf,
        svm: PathBuf,
        bin: PathBuf,
    },
    #[error("{path}: {message}")]
    ExtractJson { path: PathBuf, message: String },
    #[error("{count} bad file(s); first: {first}")]
    BadFiles { count: usize, first: RowsError },
    #[error("{path}: feature index {max_index} is beyond num_features {num_features}")]
    IndexBeyondScheme {
        path: PathBuf,
        max_index: usize,
        num_features: usize,
    },
    #[error("{count} bad file(s), read by other ranks (their errors are theirs to print)")]
    OtherRanks { count: usize },
    #[error(transparent)]
    Dataset(#[from] DatasetError),
}

/// Loaded training data.
pub struct Loaded {
    pub data: Dataset,
    pub files: Vec<PathBuf>,
    pub features: Option<FeatureScheme>,
    pub max_index: usize,
    /// With [`load_compact`]: the columns that occur, and the full width.
    pub columns: Option<ColumnMap>,
    pub seconds: f64,
    /// Rows left out by [`load_compact_unclamped`].
    pub clamped_dropped: usize,
    /// This rank's files, whose rows `data` holds (indices into `files`).
    pub shard_files: std::ops::Range<usize>,
    /// Those files in groups, each the unit of the sums over rows (the
    /// blocks of [`Dataset::set_block_starts`] start where groups do).
    pub groups: Vec<std::ops::Range<usize>>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LoadError + '_ {
    move |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), LoadError> {
    for entry in fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let path = entry.path();
        let kind = entry.file_type().map_err(io(&path))?;
        if kind.is_dir() || (kind.is_symlink() && path.is_dir()) {
            walk(&path, out)?;
        } else if RowFormat::is_rows_file(&path) {
            out.push(path);
        }
    }
    Ok(())
}

/// Read the scheme from `dir/extract.json`, if that file exists.
fn read_scheme(dir: &Path) -> Result<Option<FeatureScheme>, LoadError> {
    let path = dir.join("extract.json");
    if !path.exists() {
        return Ok(None);
    }
    let text = fs::read_to_string(&path).map_err(io(&path))?;
    // The scheme's fields of `extract.json` (a `rows::Scheme` and more).
    let scheme: FeatureScheme =
        serde_json::from_str(&text).map_err(|e| LoadError::ExtractJson {
            path: path.clone(),
            message: e.to_string(),
        })?;
    // It sizes the weight vectors: no larger than any row may ask for.
    if scheme.num_features > MAX_INDEX as usize {
        return Err(LoadError::ExtractJson {
            path,
            message: format!(
                "num_features {} is beyond the largest feature index read, {MAX_INDEX}",
                scheme.num_features
            ),
        });
    }
    Ok(Some(scheme))
}

/// The `.svm` files that `paths` stand for, and the feature scheme their
/// `extract.json` files agree on (`None` if there is none).
pub fn collect(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, Option<FeatureScheme>), LoadError> {
    let mut files = Vec::new();
    let mut scheme: Option<(PathBuf, FeatureScheme)> = None;
    for path in paths {
        let meta = fs::metadata(path).map_err(io(path))?;
        let dir = if meta.is_dir() {
            let mut found = Vec::new();
            walk(path, &mut found)?;
            if found.is_empty() {
                return Err(LoadError::NoFiles { path: path.clone() });
            }
            found.sort();
            let first_of = |f: RowFormat| found.iter().find(|p| RowFormat::of(p) == Some(f));
            if let (Some(svm), Some(bin)) = (first_of(RowFormat::Text), first_of(RowFormat::Bin)) {
                return Err(LoadError::MixedFormats {
                    path: path.clone(),
                    svm: svm.clone(),
                    bin: bin.clone(),
                });
            }
            files.extend(found);
            path.clone()
        } else {
            files.push(path.clone());
            path.parent().map(Path::to_path_buf).unwrap_or_default()
        };
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        if let Some(s) = read_scheme(&dir)? {
            match &scheme {
                Some((first, f)) if *f != s => {
                    return Err(LoadError::ExtractJson {
                        path: dir.join("extract.json"),
                        message: format!(
                            "scheme {s:?} differs from {f:?} in {}",
                            first.join("extract.json").display()
                        ),
                    });
                }
                Some(_) => {}
                None => scheme = Some((dir, s)),
            }
        }
    }
    Ok((files, scheme.map(|(_, s)| s)))
}

const BLOCK: usize = 4 << 20;
const BATCH_BYTES: usize = 32 << 20;

/// Load `paths` into one data set (bias `bias`, negative for none) over
/// the full feature space.
pub fn load(paths: &[PathBuf], bias: f64, progress: bool) -> Result<Loaded, LoadError> {
    load_with(paths, bias, progress, false, false)
}

/// Load `paths` over only the features that occur in them (see
/// [`ColumnMap`]); `columns` maps back to the full space.
pub fn load_compact(paths: &[PathBuf], bias: f64, progress: bool) -> Result<Loaded, LoadError> {
    load_with(paths, bias, progress, true, false)
}

/// [`load_compact`], leaving out the rows whose label is at the clamp
/// (|label| >= 1: a mate, or a score beyond the label scale). Such a label
/// is a bound, not a value, and with a squared loss a few of them outweigh
/// everything else; the count left out is [`Loaded::clamped_dropped`].
pub fn load_compact_unclamped(
    paths: &[PathBuf],
    bias: f64,
    progress: bool,
) -> Result<Loaded, LoadError> {
    load_with(paths, bias, progress, true, true)
}

/// [`load_compact`] or [`load_compact_unclamped`] of this rank's shard of
/// the files (see [`shard_of`]): the columns, the largest index and the
/// counts are those of all the ranks' files together.
pub fn load_shard(
    paths: &[PathBuf],
    bias: f64,
    progress: bool,
    drop_clamped: bool,
    ranks: &dyn Ranks,
) -> Result<Loaded, LoadError> {
    load_on(paths, bias, progress, true, drop_clamped, ranks)
}

fn load_with(
    paths: &[PathBuf],
    bias: f64,
    progress: bool,
    compact: bool,
    drop_clamped: bool,
) -> Result<Loaded, LoadError> {
    load_on(paths, bias, progress, compact, drop_clamped, &Alone)
}

fn load_on(
    paths: &[PathBuf],
    bias: f64,
    progress: bool,
    compact: bool,
    drop_clamped: bool,
    ranks: &dyn Ranks,
) -> Result<Loaded, LoadError> {
    let start = Instant::now();
    let (files, features) = collect(paths)?;
    let sizes: Vec<u64> = files
        .iter()
        .map(|f| fs::metadata(f).map(|m| m.len()).unwrap_or(0))
        .collect();
    // Shards are whole groups of files, and groups are blocks of the sums
    // over rows: a shard's sums are some of the one-process run's.
    let groups = file_groups(&sizes);
    let group_bytes: Vec<u64> = groups
        .iter()
        .map(|g| sizes[g.clone()].iter().sum())
        .collect();
    let my_groups = &groups[shard_of(&group_bytes, ranks.rank(), ranks.size())];
    let shard = my_groups.first().map_or(0, |g| g.start)..my_groups.last().map_or(0, |g| g.end);
    let total: u64 = sizes[shard.clone()].iter().sum();
    let mine = &files[shard.clone()];
    let mut kept_rows = vec![0usize; mine.len()];
    let bar = Progress::start(
        "loading",
        total,
        Unit::Bytes,
        None,
        progress && ranks.is_root(),
    );
    let mut rows = Rows::default();
    // Reserve address space for the most non-zeros the text can hold ("1:1 "
    // is 4 bytes), or the counts a .bin file's trailer gives: untouched
    // pages cost no memory, and growing by doubling would briefly need twice
    // the final size. If refused, grow as usual.
    let (mut max_nnz, mut max_rows) = (0u64, 0u64);
    for (f, &size) in mine.iter().zip(&sizes[shard.clone()]) {
        match RowFormat::of(f) {
            Some(RowFormat::Bin) => {
                // A damaged trailer is reported when the file is read.
                let (rows, nnz) = crate::rows::binary::totals(f).unwrap_or((0, 0));
                max_rows += rows;
                max_nnz += nnz;
            }
            _ => {
                max_rows += size / 8;
                max_nnz += size / 4;
            }
        }
    }
    let _ = rows.indices.try_reserve_exact(max_nnz as usize);
    if let crate::rows::libsvm::Values::U8(v) = &mut rows.values {
        let _ = v.try_reserve_exact(max_nnz as usize);
    }
    let _ = rows.labels.try_reserve_exact(max_rows as usize);
    let _ = rows.row_lengths.try_reserve_exact(max_rows as usize);
    let mut errors: Vec<RowsError> = Vec::new();
    let mut clamped_dropped = 0;
    let mut file_rows = vec![0u64; mine.len()];
    let mut bad = vec![false; mine.len()];
    let mut next_file = 0;
    let mut reader: Option<(usize, RowReader)> = None;
    loop {
        // Gather a batch of blocks, in file order.
        let mut batch: Vec<(usize, crate::rows::format::Block)> = Vec::new();
        let mut bytes = 0;
        while bytes < BATCH_BYTES && batch.len() < 256 {
            if reader.is_none() {
                if next_file == mine.len() {
                    break;
                }
                match RowReader::open(&mine[next_file], BLOCK) {
                    Ok(r) => reader = Some((next_file, r)),
                    Err(e) => {
                        bar.println(&format!("error: {e}"));
                        errors.push(e);
                        bad[next_file] = true;
                    }
                }
                next_file += 1;
                continue;
            }
            let (k, r) = reader.as_mut().expect("checked above");
            match r.next_block() {
                Ok(Some(block)) => {
                    bytes += block.len();
                    batch.push((*k, block));
                }
                Ok(None) => reader = None,
                Err(e) => {
                    bar.println(&format!("error: {e}"));
                    errors.push(e);
                    bad[*k] = true;
                    reader = None;
                }
            }
        }
        if batch.is_empty() {
            break;
        }
        // A file's blocks before this one in the batch are parsed alongside
        // it, so a text error is numbered from the block's start, then
        // shifted by the file's rows before it (a chunk numbers its own).
        let parsed: Vec<(usize, usize, Rows, Option<RowsError>)> = batch
            .into_par_iter()
            .map(|(k, block)| {
                let mut r = Rows::default();
                let e = block.parse(&mine[k], 0, &mut r).err();
                (k, block.len(), r, e)
            })
            .collect();
        for (k, len, r, e) in parsed {
            bar.inc(len as u64, 0);
            if bad[k] {
                continue;
            }
            if let Some(e) = e {
                let err = match e {
                    RowsError::Text(crate::rows::libsvm::LibsvmError::Line {
                        path,
                        line,
                        error,
                    }) => RowsError::Text(crate::rows::libsvm::LibsvmError::Line {
                        path,
                        line: file_rows[k] + line,
                        error,
                    }),
                    other => other,
                };
                bar.println(&format!("error: {err}"));
                errors.push(err);
                bad[k] = true;
                continue;
            }
            file_rows[k] += r.len() as u64;
            if errors.is_empty() {
                let mut r = r;
                if drop_clamped {
                    clamped_dropped += r.retain_labels(|y| y.abs() < 1.0);
                }
                kept_rows[k] += r.len();
                rows.append(r);
            }
        }
    }
    bar.finish();
    // Every rank learns of every rank's errors, so that all stop together.
    let mut counts = [errors.len() as u64, clamped_dropped as u64];
    ranks.sum_counts(&mut counts);
    let [bad_files, clamped_dropped] = counts.map(|c| c as usize);
    if !errors.is_empty() {
        return Err(LoadError::BadFiles {
            count: bad_files,
            first: errors.swap_remove(0),
        });
    }
    if bad_files > 0 {
        return Err(LoadError::OtherRanks { count: bad_files });
    }
    let mut max_index = [u64::from(rows.max_index)];
    ranks.max(&mut max_index);
    let max_index = max_index[0] as usize;
    let min_features = match &features {
        Some(f) if max_index > f.num_features => {
            return Err(LoadError::IndexBeyondScheme {
                path: paths[0].clone(),
                max_index,
                num_features: f.num_features,
            });
        }
        Some(f) => f.num_features,
        None => 0,
    };
    let (mut data, columns) = if compact {
        let (data, map) =
            Dataset::from_rows_compact_on(rows, max_index.max(min_features), bias, ranks)?;
        (data, Some(map))
    } else {
        (Dataset::from_rows(rows, min_features, bias)?, None)
    };
    // Each group's first row in this shard's rows.
    let mut group_starts = Vec::new();
    let mut at = 0;
    for g in my_groups {
        group_starts.push(at);
        at += kept_rows[g.start - shard.start..g.end - shard.start]
            .iter()
            .sum::<usize>();
    }
    group_starts.dedup();
    if group_starts.last() == Some(&at) && at > 0 {
        group_starts.pop();
    }
    data.set_block_starts(blocks_from_groups(&group_starts, at));
    Ok(Loaded {
        data,
        files,
        features,
        max_index,
        columns,
        seconds: start.elapsed().as_secs_f64(),
        clamped_dropped,
        groups: my_groups.to_vec(),
        shard_files: shard,
    })
}

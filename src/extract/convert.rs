//! `niwatori convert`: an `extract` folder (or row files) from one row
//! format to the other, lossless.
//!
//! A folder is mirrored: every `.svm` (or `.bin`) below it becomes the same
//! path with the other extension below `--out`, each sidecar (`X.svm.json`)
//! follows its rows with its byte count updated, and `extract.json` is
//! copied with its layout, so the new folder trains, reports and resumes as
//! one `extract --format` would have written it. Files stream in blocks
//! (bounded memory), in parallel, each written atomically. Text written
//! from `.bin` is byte for byte what `extract` writes; text from elsewhere
//! converts when `.bin` can hold it (integer values 0–255, labels in
//! multiples of 1/10000), or the file and line that it cannot are named.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use rayon::prelude::*;

use super::output::{self, GameMeta, RunMeta};
use crate::progress::{Progress, Unit};
use crate::rows::RowFormat;
use crate::rows::binary::{self, Writer};
use crate::rows::format::RowReader;
use crate::rows::libsvm::{self, Rows};

/// Arguments of `niwatori convert`.
#[derive(clap::Args, Debug)]
pub struct ConvertArgs {
    /// Row files, or folders of them (an `extract --out` folder).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The folder to write (a folder input is mirrored below it; a file
    /// goes in it under its own name).
    #[arg(long)]
    pub out: PathBuf,
    /// The format to write.
    #[arg(long, value_enum)]
    pub to: RowFormat,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// No progress display.
    #[arg(long)]
    pub quiet: bool,
}

/// One file to convert.
struct Job {
    from: PathBuf,
    to: PathBuf,
    /// The sidecar beside `from`, if any.
    sidecar: Option<PathBuf>,
}

fn with_extension(path: &Path, format: RowFormat) -> PathBuf {
    path.with_extension(format.extension())
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in fs::read_dir(dir).with_context(|| dir.display().to_string())? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// What the run did.
#[derive(Debug, Default)]
pub struct Converted {
    pub files: usize,
    pub rows: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
}

/// Converts `paths` into `out` as `to`.
pub fn convert(paths: &[PathBuf], out: &Path, to: RowFormat, progress: bool) -> Result<Converted> {
    let from_format = match to {
        RowFormat::Text => RowFormat::Bin,
        RowFormat::Bin => RowFormat::Text,
        RowFormat::Psv | RowFormat::Hcpe => bail!(
            "{} holds positions, not rows: `niwatori extract --format {} RECORDS` writes it",
            to.name(),
            to.name()
        ),
    };
    let mut jobs = Vec::new();
    let mut metas = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found = Vec::new();
            walk(path, &mut found)?;
            found.sort();
            let mut any = false;
            for f in found {
                let rel = f.strip_prefix(path).expect("found below path");
                if RowFormat::of(&f) == Some(from_format) {
                    let side = output::sidecar_path(&f);
                    jobs.push(Job {
                        to: with_extension(&out.join(rel), to),
                        sidecar: side.is_file().then_some(side),
                        from: f,
                    });
                    any = true;
                } else if rel == Path::new("extract.json") {
                    metas.push((f.clone(), out.join(rel)));
                }
            }
            if !any {
                bail!(
                    "{}: no .{} files below this folder to convert to {}",
                    path.display(),
                    from_format.extension(),
                    to.name()
                );
            }
        } else {
            if RowFormat::of(path) == Some(to) {
                bail!("{}: already {} rows", path.display(), to.name());
            }
            let name = path.file_name().context("a file name")?;
            jobs.push(Job {
                from: path.clone(),
                to: with_extension(&out.join(name), to),
                sidecar: None,
            });
        }
    }
    let mut seen = std::collections::HashMap::new();
    for j in &jobs {
        if let Some(prev) = seen.insert(j.to.clone(), j.from.clone()) {
            bail!(
                "{} and {} would both be written to {}",
                prev.display(),
                j.from.display(),
                j.to.display()
            );
        }
    }
    let bytes_in: u64 = jobs
        .iter()
        .map(|j| fs::metadata(&j.from).map(|m| m.len()).unwrap_or(0))
        .sum();
    let bar = Progress::start("convert", bytes_in, Unit::Bytes, None, progress);
    let results: Vec<Result<(u64, u64)>> = jobs
        .par_iter()
        .map(|j| {
            let (rows, bytes) = convert_file(&j.from, &j.to, to, &|n| bar.inc(n, 0))?;
            if let Some(side) = &j.sidecar {
                let text = fs::read_to_string(side).with_context(|| side.display().to_string())?;
                let mut meta: GameMeta = serde_json::from_str(&text)
                    .with_context(|| format!("{}: not a game's sidecar", side.display()))?;
                meta.bytes = bytes;
                let mut text = serde_json::to_vec_pretty(&meta)?;
                text.push(b'\n');
                let dest = output::sidecar_path(&j.to);
                crate::atomic::write_atomic(&dest, text)
                    .with_context(|| dest.display().to_string())?;
            }
            Ok((rows, bytes))
        })
        .collect();
    bar.finish();
    let mut done = Converted {
        bytes_in,
        ..Converted::default()
    };
    for r in results {
        let (rows, bytes) = r?;
        done.files += 1;
        done.rows += rows;
        done.bytes_out += bytes;
    }
    for (from, dest) in metas {
        let text = fs::read_to_string(&from).with_context(|| from.display().to_string())?;
        let mut meta: RunMeta = serde_json::from_str(&text)
            .with_context(|| format!("{}: not an extract.json", from.display()))?;
        meta.layout = output::layout(to);
        let mut text = serde_json::to_vec_pretty(&meta)?;
        text.push(b'\n');
        crate::atomic::write_atomic(&dest, text).with_context(|| dest.display().to_string())?;
    }
    Ok(done)
}

/// Converts one file; returns its rows and the bytes written.
fn convert_file(
    from: &Path,
    to: &Path,
    format: RowFormat,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(u64, u64)> {
    if let Some(dir) = to.parent() {
        fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
    }
    enum Out {
        Text(BufWriter<fs::File>),
        Bin(Writer<BufWriter<fs::File>>),
    }
    let mut rows_read = 0u64;
    crate::atomic::replace_atomically(to, ".tmp", |tmp| -> Result<()> {
        let file = fs::File::create(tmp).with_context(|| tmp.display().to_string())?;
        let file = BufWriter::with_capacity(1 << 20, file);
        let mut out = match format {
            RowFormat::Bin => Out::Bin(Writer::new(file)?),
            RowFormat::Text => Out::Text(file),
            RowFormat::Psv | RowFormat::Hcpe => unreachable!("convert refuses positions first"),
        };
        let mut reader = RowReader::open(from, 4 << 20)?;
        let (mut line, mut feats) = (Vec::new(), Vec::new());
        while let Some(block) = reader.next_block()? {
            let mut rows = Rows::default();
            block.parse(from, rows_read, &mut rows)?;
            progress(block.len() as u64);
            match &mut out {
                Out::Bin(w) => binary::push_rows(w, &rows).map_err(|(r, why)| {
                    anyhow::anyhow!("{}:{}: {why}", from.display(), rows_read + r as u64 + 1)
                })?,
                Out::Text(w) => {
                    write_text(&rows, &mut line, &mut feats);
                    w.write_all(&line)?;
                }
            }
            rows_read += rows.len() as u64;
        }
        let file = match out {
            Out::Bin(w) => w.finish()?,
            Out::Text(w) => w,
        };
        file.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        Ok(())
    })
    .with_context(|| format!("converting {} to {}", from.display(), to.display()))?;
    let bytes = fs::metadata(to)
        .with_context(|| to.display().to_string())?
        .len();
    Ok((rows_read, bytes))
}

/// `rows` (from `.bin`: byte values, centipawn labels) as libsvm text.
fn write_text(rows: &Rows, out: &mut Vec<u8>, feats: &mut Vec<(u32, u8)>) {
    out.clear();
    let mut at = 0;
    for (&label, &len) in rows.labels.iter().zip(&rows.row_lengths) {
        let end = at + len as usize;
        feats.clear();
        feats.extend((at..end).map(|k| (rows.indices[k] - 1, rows.values.get(k) as u8)));
        let cp = binary::text_label_to_cp(label).expect("labels read from .bin are centipawns");
        libsvm::write_row(out, cp, feats);
        at = end;
    }
}

/// Runs `niwatori convert`.
pub fn run(args: ConvertArgs) -> Result<()> {
    if args.jobs == Some(0) {
        bail!("--jobs must be at least 1");
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()?;
    let start = std::time::Instant::now();
    let done = pool.install(|| convert(&args.paths, &args.out, args.to, !args.quiet))?;
    println!(
        "{} files, {} rows: {} bytes to {} bytes ({:.3}×) in {:.1} s, into {}",
        done.files,
        done.rows,
        done.bytes_in,
        done.bytes_out,
        done.bytes_out as f64 / done.bytes_in.max(1) as f64,
        start.elapsed().as_secs_f64(),
        args.out.display()
    );
    Ok(())
}

//! `niwatori train`: fit evaluation weights by L2-regularised L2-loss SVR
//! (LIBLINEAR `-s 11`) on the feature files of `niwatori extract`.
//!
//! ```text
//! load     paths and directories → one Dataset, scheme from extract.json
//! checkpoint  MODEL.ckpt after each iteration, and resuming from it
//! dataset  compact CSR (sprs, u32 indices, u8 values), parallel X·v, Xᵀ·u
//! objective  what a second-order solver needs from a loss
//! exact    sums over rows whose bits do not depend on threads or ranks
//! newton   Newton-CG with line search; knows only an Objective
//! svr      the SVR loss (and ranking's one-sided one): value, gradient, Hessian-vector product
//! pairs    ranking pairs: the game move's row against each sibling's
//! params   checked hyper-parameters (linfa ParamGuard)
//! linfa    linfa Fit / Predict on our sparse data
//! diagnose linear vs Gaussian-kernel SVR on a small sample
//! ranks    shards of rows on several processes, sums reduced across them
//! mpi      the ranks of an MPI run (cargo feature `mpi`)
//! ```
//!
//! Train programmatically with [`train_files`]; fit an in-memory data set
//! with [`fit`].

pub mod checkpoint;
pub mod cli;
pub mod dataset;
pub mod diagnose;
pub mod exact;
pub mod linfa;
pub mod load;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod newton;
pub mod objective;
pub mod pairs;
pub mod params;
pub mod ranks;
pub mod svr;
pub mod synth;

use std::path::{Path, PathBuf};
use std::time::Instant;

use thiserror::Error;

use crate::rows::model::{DataSummary, LinearModel, ModelError, ModelMetadata};
use checkpoint::{Checkpoint, CheckpointInfo};
use dataset::Dataset;
use newton::{IterInfo, NewtonParams, Resume, Solution, Stop};
use objective::Objective;
pub use params::{SvrParams, SvrValidParams};
use ranks::{Alone, Ranks};
use svr::{Loss, SvrLoss};

/// An error while training.
#[derive(Debug, Error)]
pub enum TrainError {
    #[error(transparent)]
    Load(#[from] load::LoadError),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("{path}: checkpoint does not match this run: {message}")]
    Checkpoint { path: PathBuf, message: String },
    #[error("training on several ranks: {0}")]
    Sharded(String),
    #[error("ranking pairs: {0}")]
    Pairs(#[from] pairs::PairsError),
    #[error("--loss rank: {0}")]
    Rank(String),
}

/// What the rows are fitted to (`train --loss`, `learn --loss`).
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
pub enum LossKind {
    /// Every row's label, by L2-loss SVR (LIBLINEAR `-s 11`).
    #[default]
    Svr,
    /// Each position's game move above each sibling by the margin
    /// (pairwise ranking, [`pairs`]).
    Rank,
}

impl LossKind {
    /// The name on the command line and in metadata.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Svr => "svr",
            Self::Rank => "rank",
        }
    }

    /// The default, left out of metadata so that older files are unchanged.
    pub fn is_svr(&self) -> bool {
        *self == Self::Svr
    }

    /// The loss the solver minimises, SVR's with tube width `p`.
    pub fn with_p(self, p: f64) -> Loss {
        match self {
            Self::Svr => Loss::Svr { p },
            Self::Rank => Loss::Rank,
        }
    }
}

/// What a training run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainSummary {
    pub objective: f64,
    pub gradient_norm: f64,
    pub iterations: usize,
    pub converged: bool,
    pub rows: usize,
    pub nonzeros: usize,
    pub bytes: usize,
    pub load_seconds: f64,
    pub train_seconds: f64,
}

/// Options beyond the hyper-parameters.
#[derive(Debug, Clone, Default)]
pub struct TrainOptions {
    /// Progress bar while loading and one line per Newton iteration.
    pub progress: bool,
    /// Write `MODEL.ckpt` after every iteration and resume from it.
    pub checkpoint: bool,
    /// Leave out rows whose label is at the clamp (see
    /// [`load::load_compact_unclamped`]).
    pub drop_clamped: bool,
    /// Fit the labels (SVR) or rank each position's siblings.
    pub loss: LossKind,
}

/// One line per iteration, like LIBLINEAR's.
pub fn format_iter(i: &IterInfo) -> String {
    format!(
        "iter {:3} f {:.6e} |g| {:.3e} ({:.1e} of |g0|) active {} CG {:3} step {:.2e} {:.2} s",
        i.iter,
        i.f,
        i.gnorm,
        i.gnorm / i.gnorm0.max(f64::MIN_POSITIVE),
        i.active.map_or("-".to_string(), |a| a.to_string()),
        i.cg_steps,
        i.step_size,
        i.seconds
    )
}

/// Minimise the SVR objective on `data` from `w` (updated in place), from
/// iteration 1 or, resumed, after a checkpoint's iteration.
/// `data`'s bias must be `params.bias()`.
pub fn fit<E>(
    data: &Dataset,
    params: &SvrValidParams,
    w: &mut [f64],
    resume: Option<(usize, &Resume)>,
    each_iter: impl FnMut(&IterInfo, &[f64], &SvrLoss) -> Result<(), E>,
) -> Result<Solution, E> {
    fit_on(data, params, w, resume, &Alone, each_iter)
}

/// [`fit`] with `data` this rank's shard of the rows of all `ranks`: every
/// rank must call it, with the same columns, and gets the same solution.
pub fn fit_on<E>(
    data: &Dataset,
    params: &SvrValidParams,
    w: &mut [f64],
    resume: Option<(usize, &Resume)>,
    ranks: &dyn Ranks,
    each_iter: impl FnMut(&IterInfo, &[f64], &SvrLoss) -> Result<(), E>,
) -> Result<Solution, E> {
    let loss = LossKind::Svr.with_p(params.p());
    fit_loss(data, params, loss, w, resume, ranks, each_iter)
}

/// [`fit_on`] with either loss (`params.p()` unused for ranking).
pub fn fit_loss<E>(
    data: &Dataset,
    params: &SvrValidParams,
    loss: Loss,
    w: &mut [f64],
    resume: Option<(usize, &Resume)>,
    ranks: &dyn Ranks,
    each_iter: impl FnMut(&IterInfo, &[f64], &SvrLoss) -> Result<(), E>,
) -> Result<Solution, E> {
    assert_eq!(
        data.bias(),
        params.bias(),
        "data set bias must match the parameters"
    );
    let mut loss = SvrLoss::with_loss(data, params.c(), loss, ranks);
    let np = NewtonParams {
        eps: params.eps(),
        max_iter: params.max_iter(),
        first_iter: resume.map_or(1, |(after, _)| after + 1),
        ..NewtonParams::default()
    };
    newton::minimize(&mut loss, w, &np, resume.map(|r| r.1), each_iter)
}

/// Fit `data` from zero, without reporting. Solves over the columns that
/// occur (a copy of the matrix) and returns full-space weights: the same
/// solution, much faster when the feature space is mostly unused.
pub fn fit_quiet(data: &Dataset, params: &SvrValidParams) -> (Vec<f64>, Solution) {
    let (compact, columns) = data.compacted();
    let mut w = vec![0.0; compact.dim()];
    let sol = fit(&compact, params, &mut w, None, |_, _, _| {
        Ok::<(), std::convert::Infallible>(())
    })
    .unwrap_or_else(|e| match e {});
    (columns.expand(&w, data.bias() >= 0.0), sol)
}

/// Train on libsvm files / directories and write `out` and `out.json`.
pub fn train_files(
    paths: &[PathBuf],
    params: &SvrValidParams,
    out: &Path,
    progress: bool,
) -> Result<TrainSummary, TrainError> {
    train_files_with(
        paths,
        params,
        out,
        &TrainOptions {
            progress,
            checkpoint: false,
            drop_clamped: false,
            loss: LossKind::Svr,
        },
    )
}

/// [`train_files`] with checkpointing.
pub fn train_files_with(
    paths: &[PathBuf],
    params: &SvrValidParams,
    out: &Path,
    opts: &TrainOptions,
) -> Result<TrainSummary, TrainError> {
    train_files_on(paths, params, out, opts, &Alone)
}

/// [`train_files_with`] on several processes (see [`ranks`]): each loads
/// its shard of the files, all solve together, rank 0 prints and writes
/// the model, which is that of one process up to rounding. The summary's
/// counts (and `bytes`, the matrices' memory) are of all the ranks.
pub fn train_files_on(
    paths: &[PathBuf],
    params: &SvrValidParams,
    out: &Path,
    opts: &TrainOptions,
    ranks: &dyn Ranks,
) -> Result<TrainSummary, TrainError> {
    if opts.checkpoint && ranks.size() > 1 {
        return Err(TrainError::Sharded(
            "--checkpoint is for one process: each rank's cache of X·w would need its own file"
                .into(),
        ));
    }
    let progress = opts.progress && ranks.is_root();
    let ranking = opts.loss == LossKind::Rank;
    if ranking && params.bias() >= 0.0 {
        return Err(TrainError::Rank(
            "a bias column cancels in most pairs; train without -B".into(),
        ));
    }
    // Solve over the features that occur (a few per cent of the scheme's
    // millions): every solver vector shrinks accordingly. The weights are
    // expanded to the full space only for the model file.
    // Pairs leave out clamped rows themselves: every row is needed to
    // find each position's.
    let mut loaded = load::load_shard(
        paths,
        params.bias(),
        opts.progress,
        opts.drop_clamped && !ranking,
        ranks,
    )?;
    if ranking {
        // Each rank pairs the rows of its own files: a position's rows are
        // all in one file.
        let mine = &loaded.files[loaded.shard_files.clone()];
        let groups: Vec<_> = (loaded.groups.iter())
            .map(|g| g.start - loaded.shard_files.start..g.end - loaded.shard_files.start)
            .collect();
        let (pairs, counts) = pairs::pair_rows(&loaded.data, mine, &groups)?;
        let rows_before = loaded.data.n_rows();
        let mut c = [
            counts.pairs,
            counts.positions,
            rows_before,
            counts.clamped,
            counts.identical,
        ]
        .map(|c| c as u64);
        ranks.sum_counts(&mut c);
        if progress {
            eprintln!(
                "{} pairs of {} positions from {} rows ({} with a mate's clamped label and {} of identical rows left out)",
                c[0], c[1], c[2], c[3], c[4]
            );
        }
        loaded.data = pairs;
    }
    let columns = loaded.columns.as_ref().expect("load_compact maps columns");
    let data = &loaded.data;
    let has_bias = params.bias() >= 0.0;
    let mut counts = [data.n_rows() as u64, data.nnz() as u64, data.bytes() as u64];
    ranks.sum_counts(&mut counts);
    let [rows, nonzeros, bytes] = counts.map(|c| c as usize);
    if progress {
        eprintln!(
            "loaded {} files: {} rows, {} non-zeros, {} features ({} occur), {:.1} MB{}, {:.1} s",
            loaded.files.len(),
            rows,
            nonzeros,
            columns.n_features(),
            columns.n_used(),
            data.bytes() as f64 / 1e6,
            if ranks.size() > 1 {
                format!(" on rank 0 of {}", ranks.size())
            } else {
                String::new()
            },
            loaded.seconds
        );
    }
    if opts.drop_clamped && !ranking && ranks.is_root() {
        eprintln!(
            "left out {} rows whose label is at the clamp (mates)",
            loaded.clamped_dropped
        );
    }
    let checkpoint = Checkpoint::for_model(out);
    let info = |iteration| CheckpointInfo {
        iteration,
        c: params.c(),
        p: params.p(),
        bias: params.bias(),
        rows,
        nonzeros,
        dim: columns.n_features() + usize::from(has_bias),
    };
    let mut w = vec![0.0; data.dim()];
    let mut resumed = None;
    if opts.checkpoint
        && let Some(saved) = checkpoint.resume(columns, has_bias, info)?
    {
        if progress {
            eprintln!(
                "resuming from {} after iteration {}",
                checkpoint.path().display(),
                saved.iteration
            );
        }
        w.clone_from(&saved.weights);
        resumed = Some(saved);
    }
    let start = Instant::now();
    let from = resumed.as_ref().map(|r| (r.iteration, &r.state));
    let loss = opts.loss.with_p(params.p());
    let solution = fit_loss(data, params, loss, &mut w, from, ranks, |it, w, loss| {
        if progress {
            eprintln!("{}", format_iter(it));
        }
        if opts.checkpoint {
            let state = Resume {
                f: it.f,
                cache: loss.cache(),
            };
            checkpoint.save(
                columns.expand(w, has_bias),
                params.bias(),
                &info(it.iter),
                &state,
            )?;
        }
        Ok::<(), TrainError>(())
    })?;
    let train_seconds = start.elapsed().as_secs_f64();
    let summary = TrainSummary {
        objective: solution.f,
        gradient_norm: solution.gnorm,
        iterations: solution.iterations,
        converged: solution.stop == Stop::Converged,
        rows,
        nonzeros,
        bytes,
        load_seconds: loaded.seconds,
        train_seconds,
    };
    if ranks.is_root() {
        save_model(loaded, params, opts.loss, &w, &solution, &summary, out)?;
    }
    if opts.checkpoint && summary.converged {
        // The model supersedes the checkpoint; an unfinished run keeps it,
        // so that it can be resumed with more iterations.
        checkpoint.remove();
    }
    Ok(summary)
}

/// Writes the model file (full-space weights) with its sidecar.
fn save_model(
    loaded: load::Loaded,
    params: &SvrValidParams,
    loss: LossKind,
    compact_weights: &[f64],
    solution: &Solution,
    summary: &TrainSummary,
    out: &Path,
) -> Result<(), TrainError> {
    let load::Loaded {
        data,
        columns,
        features,
        files,
        max_index,
        seconds,
        ..
    } = loaded;
    let columns = columns.expect("load_compact maps columns");
    // The matrix is no longer needed: free it before the full-space weights
    // and the model text are built, so they do not add to the peak.
    drop(data);
    let meta = ModelMetadata {
        features,
        solver: match loss {
            LossKind::Svr => "L2R_L2LOSS_SVR",
            LossKind::Rank => "L2R_L2LOSS_RANK",
        }
        .into(),
        c: params.c(),
        p: params.p(),
        e: params.eps(),
        bias: params.bias(),
        nr_feature: columns.n_features(),
        objective: solution.f,
        gradient_norm: solution.gnorm,
        iterations: solution.iterations,
        converged: summary.converged,
        data: DataSummary {
            files: files.len(),
            rows: summary.rows,
            nonzeros: summary.nonzeros,
            max_index,
            bytes: summary.bytes,
        },
        load_seconds: seconds,
        train_seconds: summary.train_seconds,
    };
    let w = columns.expand(compact_weights, params.bias() >= 0.0);
    LinearModel::new(w, params.bias(), Some(meta)).save(out)?;
    Ok(())
}

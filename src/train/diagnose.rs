//! `niwatori diagnose`: does this problem need a curved surface?
//!
//! Fits, on the same small random sample of rows, a Gaussian-kernel ε-SVR
//! (linfa-svm, which needs dense rows and an n×n kernel, hence the small
//! sample) and our linear SVR, and reports the training and held-out errors
//! of both. If the kernel model's held-out error is far below the linear
//! one, the features miss interactions a linear evaluation cannot express.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use linfa::prelude::*;
use linfa_svm::Svm;
use ndarray::{Array1, Array2};
use rand::SeedableRng;
use rand::seq::SliceRandom;

use super::dataset::Dataset;
use super::params::SolverArgs;
use crate::rows::libsvm::Rows;

/// Arguments of `niwatori diagnose`.
#[derive(Args, Debug, Clone)]
pub struct DiagnoseArgs {
    /// libsvm files or directories of *.svm files.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Rows to sample (at most 2000: the kernel matrix is N×N).
    #[arg(long, default_value_t = 1000)]
    pub sample: usize,
    /// Share of the sample held out for testing.
    #[arg(long, default_value_t = 0.2)]
    pub holdout: f64,
    /// C and p of both SVRs; e stops the linear one's solver.
    #[command(flatten)]
    pub solver: SolverArgs,
    /// Gaussian kernel width: k(x,x') = exp(−‖x−x'‖²/width); default the
    /// median squared distance between sampled rows.
    #[arg(long)]
    pub width: Option<f64>,
    /// Seed of the row sample.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Training and held-out errors of one model.
#[derive(Debug, Clone, PartialEq)]
pub struct Errors {
    pub train_rmse: f64,
    pub test_rmse: f64,
    pub train_mae: f64,
    pub test_mae: f64,
}

/// The result of a diagnosis.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnosis {
    pub train_rows: usize,
    pub test_rows: usize,
    pub used_features: usize,
    pub width: f64,
    pub linear: Errors,
    pub gaussian: Errors,
    /// Predicting the training mean: the error to beat.
    pub constant: Errors,
}

fn errors(pred_train: &[f64], y_train: &[f64], pred_test: &[f64], y_test: &[f64]) -> Errors {
    let rmse = |p: &[f64], y: &[f64]| {
        (p.iter().zip(y).map(|(a, b)| (a - b).powi(2)).sum::<f64>() / y.len().max(1) as f64).sqrt()
    };
    let mae = |p: &[f64], y: &[f64]| {
        p.iter().zip(y).map(|(a, b)| (a - b).abs()).sum::<f64>() / y.len().max(1) as f64
    };
    Errors {
        train_rmse: rmse(pred_train, y_train),
        test_rmse: rmse(pred_test, y_test),
        train_mae: mae(pred_train, y_train),
        test_mae: mae(pred_test, y_test),
    }
}

/// Rows `idx` of `data` as a sparse data set and as dense rows over the
/// columns used by the sample (dropping all-zero columns leaves Gaussian
/// kernel distances unchanged).
fn subset(data: &Dataset, idx: &[usize], cols: &[u32]) -> (Dataset, Array2<f64>, Vec<f64>) {
    let mut rows = Rows::default();
    let mut dense = Array2::zeros((idx.len(), cols.len()));
    for (r, &i) in idx.iter().enumerate() {
        let (ind, val) = data.row(i);
        rows.labels.push(data.labels()[i]);
        rows.row_lengths.push(ind.len() as u32);
        for (j, v) in ind.iter().zip(&val) {
            rows.indices.push(j + 1);
            rows.values.push(*v);
            let c = cols
                .binary_search(j)
                .expect("sample columns include every used column");
            dense[[r, c]] = *v;
        }
        rows.max_index = rows.max_index.max(ind.last().map_or(0, |j| j + 1));
    }
    let y = rows.labels.clone();
    let sparse =
        Dataset::from_rows(rows, data.n_features(), -1.0).expect("rows come from a valid data set");
    (sparse, dense, y)
}

/// Diagnose `data` as described in the module docs.
pub fn diagnose(data: &Dataset, args: &DiagnoseArgs) -> Result<Diagnosis> {
    if args.sample < 10 || args.sample > 2000 {
        bail!("--sample must be in 10..=2000, got {}", args.sample);
    }
    if !(args.holdout > 0.0 && args.holdout < 1.0) {
        bail!("--holdout must be in (0, 1), got {}", args.holdout);
    }
    let params = args.solver.params().check()?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed);
    let mut all: Vec<usize> = (0..data.n_rows()).collect();
    all.shuffle(&mut rng);
    all.truncate(args.sample);
    if all.len() < 10 {
        bail!("only {} rows: too few to diagnose", all.len());
    }
    let n_test = ((all.len() as f64 * args.holdout).round() as usize).clamp(1, all.len() - 1);
    let (test_idx, train_idx) = all.split_at(n_test);
    let mut cols: Vec<u32> = all.iter().flat_map(|&i| data.row(i).0).collect();
    cols.sort_unstable();
    cols.dedup();
    let (train_sp, train_dense, y_train) = subset(data, train_idx, &cols);
    let (test_sp, test_dense, y_test) = subset(data, test_idx, &cols);

    let linear = params.fit(&DatasetBase::new(
        train_sp.clone(),
        Array1::from(y_train.clone()),
    ))?;
    let lin = errors(
        linear.predict(&train_sp).as_slice().expect("contiguous"),
        &y_train,
        linear.predict(&test_sp).as_slice().expect("contiguous"),
        &y_test,
    );

    let width = match args.width {
        Some(w) if w > 0.0 => w,
        Some(w) => bail!("--width must be positive, got {w}"),
        None => median_sq_distance(&train_dense),
    };
    let svm = Svm::<f64, f64>::params()
        .c_svr(args.solver.c, Some(args.solver.p))
        .gaussian_kernel(width)
        .fit(&DatasetBase::new(
            train_dense.clone(),
            Array1::from(y_train.clone()),
        ))
        .context("linfa-svm failed")?;
    let gauss = errors(
        svm.predict(&train_dense).as_slice().expect("contiguous"),
        &y_train,
        svm.predict(&test_dense).as_slice().expect("contiguous"),
        &y_test,
    );
    let mean = y_train.iter().sum::<f64>() / y_train.len() as f64;
    let constant = errors(
        &vec![mean; y_train.len()],
        &y_train,
        &vec![mean; y_test.len()],
        &y_test,
    );
    Ok(Diagnosis {
        train_rows: train_idx.len(),
        test_rows: test_idx.len(),
        used_features: cols.len(),
        width,
        linear: lin,
        gaussian: gauss,
        constant,
    })
}

fn median_sq_distance(x: &Array2<f64>) -> f64 {
    let n = x.nrows();
    let mut d = Vec::new();
    for i in 0..n.min(300) {
        for j in i + 1..n.min(300) {
            let diff = &x.row(i) - &x.row(j);
            d.push(diff.dot(&diff));
        }
    }
    d.sort_by(f64::total_cmp);
    d.get(d.len() / 2)
        .copied()
        .filter(|m| *m > 0.0)
        .unwrap_or(1.0)
}

/// `niwatori diagnose`.
pub fn run(args: DiagnoseArgs) -> Result<()> {
    let start = Instant::now();
    let loaded = super::load::load(&args.paths, -1.0, true).context("loading training data")?;
    let d = diagnose(&loaded.data, &args)?;
    println!(
        "sample: {} training rows, {} held-out rows, {} features used; Gaussian width {:.4}",
        d.train_rows, d.test_rows, d.used_features, d.width
    );
    println!(
        "{:<22} {:>11} {:>11} {:>11} {:>11}",
        "model", "train RMSE", "test RMSE", "train MAE", "test MAE"
    );
    for (name, e) in [
        ("constant (mean)", &d.constant),
        ("linear SVR (ours)", &d.linear),
        ("Gaussian SVR (linfa)", &d.gaussian),
    ] {
        println!(
            "{name:<22} {:>11.5} {:>11.5} {:>11.5} {:>11.5}",
            e.train_rmse, e.test_rmse, e.train_mae, e.test_mae
        );
    }
    let verdict = if d.gaussian.test_rmse < 0.9 * d.linear.test_rmse {
        "the kernel model generalises clearly better: a linear evaluation misses structure"
    } else {
        "no clear gain from a curved surface: the linear model is adequate on this sample"
    };
    println!(
        "verdict: {verdict} ({:.1} s)",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

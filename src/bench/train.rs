//! `niwatori bench train`: wall time and peak memory of `niwatori train`
//! against `liblinear-train -s 11` on the same file, in the same run.
//!
//! Both run as child processes, alternately, `--runs` times each; peak
//! memory is the child's maximum resident set (`wait4`'s `ru_maxrss`), and
//! CPU time is reported too, as wall time suffers on a shared machine. It
//! also reports both objective values computed by our loss on the same data,
//! and the largest difference between the two models' predictions.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use linfa::ParamGuard;

use crate::rows::model::LinearModel;
use crate::train::objective::Objective;
use crate::train::params::SolverArgs;
use crate::train::svr::SvrLoss;

/// Arguments of `niwatori bench train`.
#[derive(Args, Debug, Clone)]
pub struct TrainBenchArgs {
    /// libsvm file to train on (omit with --synthetic).
    pub file: Option<PathBuf>,
    /// Generate a seeded synthetic file of this many rows instead.
    #[arg(long)]
    pub synthetic: Option<usize>,
    /// Features of the synthetic file.
    #[arg(long, default_value_t = 100_000)]
    pub features: u32,
    /// Average non-zeros per synthetic row.
    #[arg(long, default_value_t = 100)]
    pub per_row: usize,
    /// Runs of each program (medians are reported).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    #[command(flatten)]
    pub solver: SolverArgs,
    /// Directory for the synthetic file and the models.
    #[arg(long, default_value = "target/train-bench")]
    pub workdir: PathBuf,
}

/// Run `cmd`, returning (wall seconds, CPU seconds, peak RSS in bytes).
fn measure(cmd: &mut Command) -> Result<(f64, f64, u64)> {
    let start = Instant::now();
    let child = cmd.spawn().with_context(|| format!("starting {cmd:?}"))?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data, zero is a valid value; wait4 reaps our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let secs = start.elapsed().as_secs_f64();
    if r != pid {
        bail!(
            "wait4 failed for {cmd:?}: {}",
            std::io::Error::last_os_error()
        );
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        bail!("{cmd:?} failed (status {status})");
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    let cpu = tv(usage.ru_utime) + tv(usage.ru_stime);
    Ok((secs, cpu, usage.ru_maxrss as u64 * 1024))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn synthesize(args: &TrainBenchArgs, rows: usize) -> Result<PathBuf> {
    std::fs::create_dir_all(&args.workdir)?;
    let path = args.workdir.join(format!(
        "synth-{rows}-{}-{}.svm",
        args.features, args.per_row
    ));
    if !path.exists() {
        eprintln!("writing {}", path.display());
        crate::atomic::replace_atomically(&path, ".tmp", |tmp| {
            let mut f = std::io::BufWriter::new(std::fs::File::create(tmp)?);
            crate::train::synth::write_rows(&mut f, rows, args.features, args.per_row, 1)?;
            std::io::Write::flush(&mut f)
        })?;
    }
    Ok(path)
}

/// `niwatori bench train`.
pub fn run(args: TrainBenchArgs) -> Result<()> {
    let file = match (&args.file, args.synthetic) {
        (Some(f), None) => f.clone(),
        (None, Some(rows)) => synthesize(&args, rows)?,
        _ => bail!("give either FILE or --synthetic ROWS"),
    };
    let params = args.solver.params().check()?;
    std::fs::create_dir_all(&args.workdir)?;
    let ours_model = args.workdir.join("ours.model");
    let theirs_model = args.workdir.join("liblinear.model");
    let exe = std::env::current_exe()?;
    let (mut t_ours, mut t_theirs, mut m_ours, mut m_theirs) = (vec![], vec![], vec![], vec![]);
    let (mut c_ours, mut c_theirs) = (vec![], vec![]);
    let threads = rayon::current_num_threads();
    // the same -c/-p/-e for both programs
    let solver = [
        "-c".to_string(),
        args.solver.c.to_string(),
        "-p".to_string(),
        args.solver.p.to_string(),
        "-e".to_string(),
        args.solver.e.to_string(),
    ];
    for run in 1..=args.runs.max(1) {
        let (t, c, m) = measure(
            Command::new("liblinear-train")
                .args(["-s", "11", "-q"])
                .args(&solver)
                .arg(&file)
                .arg(&theirs_model)
                .stdout(std::process::Stdio::null()),
        )?;
        t_theirs.push(t);
        c_theirs.push(c);
        m_theirs.push(m as f64);
        let (t2, c2, m2) = measure(
            Command::new(&exe)
                .args(["train", "-q"])
                .args(&solver)
                .arg("--out")
                .arg(&ours_model)
                .arg(&file)
                .stdout(std::process::Stdio::null()),
        )?;
        t_ours.push(t2);
        c_ours.push(c2);
        m_ours.push(m2 as f64);
        eprintln!(
            "run {run}: liblinear {t:.2} s (CPU {c:.2} s) {:.0} MB; niwatori {t2:.2} s (CPU {c2:.2} s) {:.0} MB",
            m as f64 / 1e6,
            m2 as f64 / 1e6
        );
    }
    let (to, tt, mo, mt) = (
        median(&mut t_ours),
        median(&mut t_theirs),
        median(&mut m_ours),
        median(&mut m_theirs),
    );
    let loaded = crate::train::load::load(std::slice::from_ref(&file), -1.0, false)?;
    let data = &loaded.data;
    let ours = LinearModel::load(&ours_model)?;
    let theirs = LinearModel::load(&theirs_model)?;
    let (f_ours, f_theirs, max_diff) = compare(data, params.c(), params.p(), &ours, &theirs);
    println!(
        "file {}: {} rows, {} non-zeros, {} features; {} threads; {} runs each",
        file.display(),
        data.n_rows(),
        data.nnz(),
        data.n_features(),
        threads,
        args.runs.max(1)
    );
    let (co, ct) = (median(&mut c_ours), median(&mut c_theirs));
    println!(
        "{:<16} {:>10} {:>10} {:>12}",
        "program", "wall s", "CPU s", "peak MB"
    );
    println!(
        "{:<16} {:>10.2} {:>10.2} {:>12.1}",
        "liblinear-train",
        tt,
        ct,
        mt / 1e6
    );
    println!(
        "{:<16} {:>10.2} {:>10.2} {:>12.1}",
        "niwatori train",
        to,
        co,
        mo / 1e6
    );
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("load average at the end: {}", load.trim());
    }
    println!(
        "speed-up {:.2}x, memory ratio {:.2} (niwatori / liblinear)",
        tt / to,
        mo / mt
    );
    println!(
        "objective: niwatori {f_ours:.10e}, liblinear {f_theirs:.10e}, relative difference {:.2e}; max prediction difference {max_diff:.2e}",
        (f_ours - f_theirs).abs() / f_theirs.abs()
    );
    Ok(())
}

/// Objectives of both models on `data` and their largest prediction gap.
pub fn compare(
    data: &crate::train::dataset::Dataset,
    c: f64,
    p: f64,
    a: &LinearModel,
    b: &LinearModel,
) -> (f64, f64, f64) {
    let pad = |m: &LinearModel| {
        let mut w = m.weights().to_vec();
        w.resize(data.n_features(), 0.0);
        if data.bias() >= 0.0 {
            w.push(m.bias_weight().unwrap_or(0.0));
        }
        w
    };
    let (wa, wb) = (pad(a), pad(b));
    let mut loss = SvrLoss::new(data, c, p);
    let fa = loss.value(&wa);
    let fb = loss.value(&wb);
    let (mut pa, mut pb) = (vec![0.0; data.n_rows()], vec![0.0; data.n_rows()]);
    data.mul_vec(&wa, &mut pa);
    data.mul_vec(&wb, &mut pb);
    let max_diff = pa
        .iter()
        .zip(&pb)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    (fa, fb, max_diff)
}

/// Whether `path` is an executable program on `PATH`.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| Path::new(&d).join(program).is_file())
    })
}

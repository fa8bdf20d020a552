//! niwatori under `mpirun`. `train`: each rank loads a shard of the row
//! files, the Newton iterations reduce across ranks, rank 0 writes the
//! model, which is the one-process model, bit for bit (needs the binary
//! built with `--features mpi`). `extract`: each rank takes its shard of
//! the games (no MPI calls). Needs Open MPI's `mpirun` (scripts/setup.sh).

mod required;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use niwatori::rows::libsvm::{Rows, parse_block};
use niwatori::rows::model::LinearModel;

const NIWATORI: &str = env!("CARGO_BIN_EXE_niwatori");

/// Fails, saying how to build it, unless this test (and so the binary) was
/// built with the `mpi` feature.
fn mpi_build() {
    #[cfg(not(feature = "mpi"))]
    panic!(
        "niwatori was built without MPI: run the tests with `cargo test --release --features mpi` \
         (needs libopenmpi-dev and libclang-dev: bash scripts/setup.sh)"
    );
}

/// Row files of different sizes, some above the 64 MB of a block group
/// and some below (`train::ranks::file_groups`): four files, three groups,
/// so that two and three ranks hold different shards.
fn rows_dir(dir: &Path) -> PathBuf {
    let rows = dir.join("rows");
    std::fs::create_dir_all(&rows).unwrap();
    for (k, mb) in [80, 10, 70, 8].into_iter().enumerate() {
        let mut text = Vec::new();
        // About 170 bytes a row.
        niwatori::train::synth::write_rows(&mut text, mb * 1_000_000 / 170, 3000, 25, k as u64)
            .unwrap();
        std::fs::write(rows.join(format!("part{k}.svm")), text).unwrap();
    }
    let sizes: Vec<u64> = (0..4)
        .map(|k| {
            std::fs::metadata(rows.join(format!("part{k}.svm")))
                .unwrap()
                .len()
        })
        .collect();
    assert_eq!(
        niwatori::train::ranks::file_groups(&sizes).len(),
        3,
        "{sizes:?}"
    );
    rows
}

/// `mpirun -np K niwatori ARGS`, killed if it runs past a minute (a rank
/// left waiting in a reduction).
fn mpirun(k: usize, args: &[&str]) -> Output {
    let mpirun = required::tool("mpirun").expect("mpirun");
    let mut cmd = Command::new(mpirun);
    cmd.args(["--oversubscribe", "-np", &k.to_string(), NIWATORI])
        .args(args)
        // Open MPI refuses root unless told (CI runs as root).
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("mpirun starts");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("mpirun -np {k} {args:?} ran past 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// `mpirun -np K niwatori train -q [EXTRA] --out MODEL ROWS`.
fn train_on(k: usize, rows: &Path, model: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["train", "-q"];
    args.extend_from_slice(extra);
    args.extend(["--out", model.to_str().unwrap(), rows.to_str().unwrap()]);
    mpirun(k, &args)
}

fn train_one(rows: &Path, out: &Path) {
    let o = Command::new(NIWATORI)
        .args(["train", "-q", "--out"])
        .arg(out)
        .arg(rows)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The megabytes of rows rank 0 holds, from `train`'s "loaded" line (one
/// iteration is enough).
fn megabytes_loaded(rows: &Path, k: usize) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.model");
    let args = [
        "train",
        "--max-iter",
        "1",
        "--out",
        out.to_str().unwrap(),
        rows.to_str().unwrap(),
    ];
    let o = if k == 1 {
        Command::new(NIWATORI).args(args).output().unwrap()
    } else {
        mpirun(k, &args)
    };
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("loaded "))
        .unwrap_or_else(|| panic!("no loaded line: {err}"));
    let mb = line
        .split(", ")
        .find(|p| p.contains(" MB"))
        .and_then(|p| p.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    if k > 1 {
        assert!(line.contains(&format!("on rank 0 of {k}")), "{line}");
    }
    mb
}

fn sidecar(model: &Path) -> serde_json::Value {
    let path = format!("{}.json", model.display());
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every row of the files, for predictions.
fn all_rows(rows: &Path) -> Vec<(Vec<u32>, Vec<f32>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(rows)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let mut r = Rows::default();
        parse_block(&std::fs::read(f).unwrap(), &mut r).unwrap();
        for (_, pairs) in r.pairs() {
            out.push(pairs.iter().map(|&(j, v)| (j, v as f32)).unzip());
        }
    }
    out
}

#[test]
fn ranks_train_the_one_process_model() {
    mpi_build();
    let dir = tempfile::tempdir().unwrap();
    let rows = rows_dir(dir.path());
    let one = dir.path().join("one.model");
    train_one(&rows, &one);
    let single = LinearModel::load(&one).unwrap();
    let want = sidecar(&one);
    let examples = all_rows(&rows);
    let single_mb = megabytes_loaded(&rows, 1);
    for k in [2, 3] {
        let model = dir.path().join(format!("np{k}.model"));
        let o = train_on(k, &rows, &model, &[]);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "np {k}: {stdout}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        // One summary, from rank 0, with the reduction volume.
        assert_eq!(stdout.matches("Objective value").count(), 1, "{stdout}");
        assert!(
            stdout.contains(&format!("{k} ranks; rank 0 sent")),
            "{stdout}"
        );
        let got = sidecar(&model);
        let (f1, fk) = (
            want["objective"].as_f64().unwrap(),
            got["objective"].as_f64().unwrap(),
        );
        // Exact sums over the same blocks: the same bits, not just close.
        assert_eq!(fk.to_bits(), f1.to_bits(), "np {k}: objective {fk} vs {f1}");
        assert!(
            std::fs::read(&model).unwrap() == std::fs::read(&one).unwrap(),
            "np {k}: the model differs from one process's"
        );
        for key in [
            "iterations",
            "converged",
            "nr_feature",
            "c",
            "p",
            "e",
            "bias",
        ] {
            assert_eq!(got[key], want[key], "np {k}: {key}");
        }
        for key in ["files", "rows", "nonzeros", "max_index"] {
            assert_eq!(got["data"][key], want["data"][key], "np {k}: data.{key}");
        }
        // Rank 0 holds its shard only.
        let rank0_mb = megabytes_loaded(&rows, k);
        assert!(
            rank0_mb < single_mb * 0.75,
            "np {k}: rank 0 holds {rank0_mb} MB of {single_mb}"
        );
        let sharded = LinearModel::load(&model).unwrap();
        let worst = examples
            .iter()
            .map(|(j, v)| (sharded.predict_row(j, v) - single.predict_row(j, v)).abs())
            .fold(0.0, f64::max);
        assert_eq!(worst, 0.0, "np {k}: predictions differ by {worst:e}");
    }
}

/// A bad file in one rank's shard stops every rank (none is left waiting),
/// names the file and line, and no model is written.
#[test]
fn a_bad_file_on_one_rank_stops_them_all() {
    mpi_build();
    let dir = tempfile::tempdir().unwrap();
    let rows = rows_dir(dir.path());
    let last = rows.join("part3.svm");
    let mut text = std::fs::read_to_string(&last).unwrap();
    let bad_line = text.lines().count() + 1;
    text.push_str("0.5 7:x\n");
    std::fs::write(&last, text).unwrap();
    let model = dir.path().join("m.model");
    let o = train_on(3, &rows, &model, &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "part3.svm:{bad_line}: value \"x\" is not a finite number"
        )),
        "{stderr}"
    );
    assert!(!model.exists());
}

/// A checkpoint holds one process's cache: refused on several ranks.
#[test]
fn checkpoints_are_refused_on_several_ranks() {
    mpi_build();
    let dir = tempfile::tempdir().unwrap();
    let rows = rows_dir(dir.path());
    let model = dir.path().join("m.model");
    let o = train_on(2, &rows, &model, &["--checkpoint"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        stderr.contains("--checkpoint is for one process"),
        "{stderr}"
    );
}

/// `mpirun -np 3 niwatori extract`: the ranks take shards 0/3, 1/3, 2/3
/// into one folder, which then holds the one-process run's games, byte for
/// byte.
#[test]
fn extract_ranks_write_the_one_process_rows() {
    let dir = tempfile::tempdir().unwrap();
    let kifu = concat!(env!("CARGO_MANIFEST_DIR"), "/kifu/wcsc28");
    let games: Vec<PathBuf> = {
        let mut v: Vec<PathBuf> = std::fs::read_dir(kifu)
            .unwrap_or_else(|e| panic!("{kifu}: {e}"))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "csa"))
            .collect();
        v.sort();
        v.truncate(4);
        v
    };
    assert_eq!(games.len(), 4, "4 .csa games in {kifu}");
    let run = |out: &Path, k: usize| {
        let mut args = vec![
            "extract",
            "--quiet",
            "--sample",
            "0.05",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(games.iter().map(|g| g.to_str().unwrap()));
        let o = if k == 1 {
            Command::new(NIWATORI).args(&args).output().unwrap()
        } else {
            mpirun(k, &args)
        };
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let (one, three) = (dir.path().join("one"), dir.path().join("three"));
    run(&one, 1);
    let said = run(&three, 3);
    for i in 0..3 {
        assert!(said.contains(&format!("shard {i}/3: ")), "{said}");
    }
    let files = |d: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![d.to_path_buf()];
        while let Some(p) = stack.pop() {
            for e in std::fs::read_dir(&p).unwrap() {
                let path = e.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if !path
                    .file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("extract.")
                {
                    out.push((
                        path.strip_prefix(d).unwrap().to_path_buf(),
                        std::fs::read(&path).unwrap(),
                    ));
                }
            }
        }
        out.sort();
        out
    };
    let want = files(&one);
    assert_eq!(want.len(), 8, "a .svm and a sidecar per game");
    assert!(
        files(&three) == want,
        "the ranks' rows differ from one process's"
    );
    for i in 0..3 {
        assert!(three.join(format!("extract.shard-{i}-of-3.json")).exists());
    }
}

/// `learn --mpirun "mpirun -np 2"`: its extract and train stages on two
/// ranks give the model of a run in one process, byte for byte.
#[test]
fn learn_with_ranks_learns_the_one_process_model() {
    mpi_build();
    let dir = tempfile::tempdir().unwrap();
    let kifu = concat!(env!("CARGO_MANIFEST_DIR"), "/kifu/wcsc28");
    let learn = |name: &str, launcher: Option<String>| {
        let (models, features) = (
            dir.path().join(name).join("models"),
            dir.path().join(name).join("features"),
        );
        let mut cmd = Command::new(NIWATORI);
        cmd.args([
            "learn",
            "--iterations",
            "1",
            "--sample",
            "0.05",
            "--kifu",
            kifu,
        ])
        .arg("--out")
        .arg(&models)
        .arg("--features")
        .arg(&features)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        if let Some(l) = launcher {
            cmd.arg("--mpirun").arg(l);
        }
        let o = cmd.output().unwrap();
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        std::fs::read(models.join("iter-1.model")).unwrap()
    };
    let mpirun = required::tool("mpirun").expect("mpirun");
    let one = learn("one", None);
    let two = learn(
        "two",
        Some(format!("{} --oversubscribe -np 2", mpirun.display())),
    );
    assert!(one == two, "the model learned on two ranks differs");
}

//! Long jobs killed with SIGKILL at a random moment and run again finish
//! with the output of a run never interrupted, byte for byte (timings
//! aside): `extract --resume`, `train --checkpoint` and `learn`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn niwatori() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_niwatori"));
    c.stdout(Stdio::null()).stderr(Stdio::null());
    c
}

/// Every file under `dir` but `skip`, with its bytes.
fn files(dir: &Path, skip: &[&str]) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, skip: &[&str], out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.strip_prefix(root).unwrap().display().to_string();
            if path.is_dir() {
                walk(root, &path, skip, out);
            } else if !skip.contains(&name.as_str()) {
                out.insert(name, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, skip, &mut out);
    out
}

/// A moment in (10 %, 90 %) of `full`, from the clock (printed, so that a
/// failure can be replayed with the same delay).
fn random_moment(full: Duration) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let fraction = 0.1 + 0.8 * f64::from(nanos % 1000) / 1000.0;
    eprintln!("killing at {:.0} % of {full:?}", fraction * 100.0);
    full.mul_f64(fraction)
}

/// Runs `cmd` to the end; how long it took.
fn timed(mut cmd: Command) -> Duration {
    let start = Instant::now();
    assert!(cmd.status().unwrap().success(), "{cmd:?}");
    start.elapsed()
}

/// Starts `cmd` and kills it after `after`.
fn kill_after(mut cmd: Command, after: Duration) {
    let mut child = cmd.spawn().unwrap();
    std::thread::sleep(after);
    // Child::kill sends SIGKILL on Unix: no handler runs.
    let _ = child.kill();
    child.wait().unwrap();
}

#[test]
fn extract_killed_and_resumed_writes_what_an_uninterrupted_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let records = common::shared("kifu/wcsc28");
    let extract = |out: &Path, resume: bool| {
        let mut c = niwatori();
        c.arg("extract")
            .arg(&records)
            .args(["--sample", "0.1", "--out"]);
        c.arg(out);
        if resume {
            c.arg("--resume");
        }
        c
    };
    let whole = dir.path().join("whole");
    let full = timed(extract(&whole, false));
    let cut = dir.path().join("cut");
    kill_after(extract(&cut, false), random_moment(full));
    let resumed = extract(&cut, true).status().unwrap();
    assert!(resumed.success());
    // extract.json holds the run's timings and resume counts.
    let a = files(&whole, &["extract.json"]);
    let b = files(&cut, &["extract.json"]);
    assert!(a.len() > 100, "{} files", a.len());
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &a {
        assert!(b[name] == *bytes, "{name} differs after the resume");
    }
}

#[test]
fn train_killed_and_resumed_from_its_checkpoint_writes_the_same_model() {
    let dir = tempfile::tempdir().unwrap();
    let rows = dir.path().join("rows");
    let status = niwatori()
        .arg("extract")
        .arg(common::shared("kifu/wcsc28"))
        .args(["--sample", "0.05", "--out"])
        .arg(&rows)
        .status()
        .unwrap();
    assert!(status.success());
    let train = |out: &Path| {
        let mut c = niwatori();
        c.arg("train").arg(&rows).arg("--out").arg(out);
        c.arg("--checkpoint");
        c
    };
    let whole = dir.path().join("whole.model");
    let full = timed(train(&whole));
    let cut = dir.path().join("cut.model");
    kill_after(train(&cut), random_moment(full));
    assert!(train(&cut).status().unwrap().success());
    assert!(
        std::fs::read(&whole).unwrap() == std::fs::read(&cut).unwrap(),
        "the resumed model differs"
    );
    let sidecar = |p: &Path| {
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(p.with_extension("model.json")).unwrap())
                .unwrap();
        let m = v.as_object_mut().unwrap();
        m.remove("load_seconds");
        m.remove("train_seconds");
        v
    };
    assert_eq!(sidecar(&whole), sidecar(&cut));
    // A finished run leaves no checkpoint behind.
    assert!(!dir.path().join("cut.model.ckpt").exists());
}

/// A JSON file without its timings (any key naming seconds), the counts of
/// what a resumed run found already done, and with `root` in paths as ROOT.
fn without_timings(bytes: &[u8], root: &Path) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.retain(|k, _| {
                    !k.contains("seconds")
                        && !matches!(k.as_str(), "games_resumed" | "rows_resumed")
                });
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let mut v = serde_json::from_str(&text.replace(root.to_str().unwrap(), "ROOT")).unwrap();
    strip(&mut v);
    v
}

#[test]
fn learn_killed_and_run_again_ends_as_an_uninterrupted_run() {
    let dir = tempfile::tempdir().unwrap();
    // 30 games: two iterations in some ten seconds.
    let kifu = dir.path().join("kifu");
    std::fs::create_dir(&kifu).unwrap();
    let mut records: Vec<_> = std::fs::read_dir(common::shared("kifu/wcsc28"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    records.sort();
    for r in records.iter().take(30) {
        std::fs::copy(r, kifu.join(r.file_name().unwrap())).unwrap();
    }
    let learn = |root: &Path| {
        let mut c = niwatori();
        c.args(["learn", "--iterations", "2", "--sample", "0.1", "--kifu"]);
        c.arg(&kifu).arg("--out").arg(root.join("models"));
        c.arg("--features").arg(root.join("features"));
        c
    };
    let whole = dir.path().join("whole");
    let full = timed(learn(&whole));
    let cut = dir.path().join("cut");
    kill_after(learn(&cut), random_moment(full));
    assert!(learn(&cut).status().unwrap().success());
    let a = files(&whole, &[]);
    let b = files(&cut, &[]);
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &a {
        if name.ends_with(".json") {
            assert_eq!(
                without_timings(bytes, &whole),
                without_timings(&b[name], &cut),
                "{name}"
            );
        } else {
            assert!(b[name] == *bytes, "{name} differs after the rerun");
        }
    }
}

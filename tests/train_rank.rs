//! Pairwise ranking (`train --loss rank`): the pairs are those the
//! sidecars list, built here again from the row text, and the solution is
//! LIBLINEAR's L2-loss SVC (`liblinear-train -s 2`) on the same pairs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

mod common;
mod required;

use common::{run, shared};
use linfa::ParamGuard;
use niwatori::extract::{ExtractOptions, extract};
use niwatori::features::Blocks;
use niwatori::rows::{Base, FeaturesAt, RowFormat};
use niwatori::train::{LossKind, SvrParams, TrainOptions, train_files_with};

type Row = BTreeMap<u32, f64>;

/// Every `.svm` file below `dir`.
fn svm_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            svm_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "svm") {
            out.push(p);
        }
    }
}

/// The label and features of each line of a libsvm file.
fn read_rows(path: &Path) -> Vec<(f64, Row)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let mut it = line.split_ascii_whitespace();
            let label = it.next().unwrap().parse().unwrap();
            let row = it
                .map(|t| {
                    let (i, v) = t.split_once(':').unwrap();
                    (i.parse().unwrap(), v.parse().unwrap())
                })
                .collect();
            (label, row)
        })
        .collect()
}

/// Each position's pairs, `σ_g·x_g − σ_s·x_s` with its bound, from the
/// rows and the sidecar's `game_row`, `flipped` and `bases`.
fn pairs_of(svm: &Path, margin: f64) -> Vec<(f64, Row)> {
    let rows = read_rows(svm);
    let side: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{}.json", svm.display())).unwrap())
            .unwrap();
    let mut pairs = Vec::new();
    for p in side["positions"].as_array().unwrap() {
        let at = |k: &str| p[k].as_u64().unwrap() as usize;
        let (first, n, game) = (at("first_row"), at("num_rows"), at("game_row"));
        let flipped: Vec<f64> = p["flipped"]
            .as_str()
            .unwrap()
            .chars()
            .map(|c| if c == '1' { -1.0 } else { 1.0 })
            .collect();
        let bases: Vec<f64> = p["bases"]
            .as_str()
            .unwrap()
            .split(' ')
            .map(|b| b.parse().unwrap())
            .collect();
        assert_eq!((flipped.len(), bases.len()), (n, n));
        let k = game - first;
        let (yg, g) = &rows[game];
        for s in (0..n).filter(|&s| s != k) {
            let (ys, x) = &rows[first + s];
            if yg.abs() >= 1.0 || ys.abs() >= 1.0 {
                continue;
            }
            let mut d = Row::new();
            for (&j, &v) in g {
                *d.entry(j).or_default() += flipped[k] * v;
            }
            for (&j, &v) in x {
                *d.entry(j).or_default() -= flipped[s] * v;
            }
            d.retain(|_, v| *v != 0.0);
            if !d.is_empty() {
                pairs.push(((margin - bases[k] + bases[s]) / 10_000.0, d));
            }
        }
    }
    pairs
}

fn rows_of(games: &[&str], base: Base) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rows");
    let paths: Vec<PathBuf> = games
        .iter()
        .map(|g| shared(&format!("kifu/wcsc28/{g}")))
        .collect();
    let options = ExtractOptions {
        margin: 200,
        features: Blocks::KingPiece.with(Default::default()),
        features_at: FeaturesAt::Leaf,
        base,
        format: RowFormat::Text,
        ..Default::default()
    };
    extract(&paths, &out, &options, Arc::new(niwatori::eval::Material)).unwrap();
    (dir, out)
}

fn rank_options() -> TrainOptions {
    TrainOptions {
        loss: LossKind::Rank,
        ..Default::default()
    }
}

#[test]
fn ranking_solves_liblinear_svc_on_the_same_pairs() {
    let (train, predict) = (
        required::tool("liblinear-train"),
        required::tool("liblinear-predict"),
    );
    if train.is_none() || predict.is_none() {
        return; // skipped, and said so, with NIWATORI_ALLOW_MISSING_TOOLS
    }
    // With no base every bound is the margin, 0.02: the loss
    // C·max(0, 0.02 − wᵀd)² is 0.0004·C·max(0, 1 − wᵀ(50·d))², LIBLINEAR's
    // -s 2 with C' = 0.0004·C on rows 50·d of label +1 (half written as
    // −50·d of label −1, the same loss, so that there are two classes).
    let (dir, rows) = rows_of(
        &["utf8_WCSC28_L1_BRO_KAT_2.csa", "utf8_WCSC28_L1_CGP_PAL.csa"],
        Base::None,
    );
    let mut files = Vec::new();
    svm_files(&rows, &mut files);
    let pairs: Vec<(f64, Row)> = files.iter().flat_map(|f| pairs_of(f, 200.0)).collect();
    assert!(pairs.len() > 5_000, "{} pairs", pairs.len());
    assert!(pairs.iter().all(|(bound, _)| *bound == 0.02));

    let c = 0.1;
    let ours = dir.path().join("ours.model");
    let params = SvrParams::default().c(c).eps(1e-6).check().unwrap();
    let summary =
        train_files_with(std::slice::from_ref(&rows), &params, &ours, &rank_options()).unwrap();
    assert_eq!(summary.rows, pairs.len(), "pairs made by train");

    let text = dir.path().join("pairs.svm");
    let mut out = String::new();
    for (i, (_, d)) in pairs.iter().enumerate() {
        let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
        out.push_str(if sign > 0.0 { "+1" } else { "-1" });
        for (j, v) in d {
            out.push_str(&format!(" {j}:{}", sign * 50.0 * v));
        }
        out.push('\n');
    }
    std::fs::write(&text, out).unwrap();
    let theirs = dir.path().join("liblinear.model");
    run(Command::new(train.unwrap())
        .args(["-s", "2", "-q", "-e", "1e-6", "-c"])
        .arg((0.0004 * c).to_string())
        .arg(&text)
        .arg(&theirs));
    // their weights, one a line after "w", for the first label (+1)
    let model = std::fs::read_to_string(&theirs).unwrap();
    assert!(model.contains("label 1 -1"), "{model}");
    let w_theirs: Vec<f64> = model
        .split("\nw\n")
        .nth(1)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    let m = niwatori::rows::model::LinearModel::load(&ours).unwrap();
    let w_ours = m.weights();
    let objective = |w: &dyn Fn(u32) -> f64| {
        let mut f = 0.0;
        let mut seen = BTreeMap::new();
        for (bound, d) in &pairs {
            let wd: f64 = d.iter().map(|(&j, v)| w(j) * v).sum();
            f += c * (bound - wd).max(0.0).powi(2);
            for &j in d.keys() {
                seen.insert(j, w(j));
            }
        }
        f + seen.values().map(|v| v * v).sum::<f64>() / 2.0
    };
    let get = |w: &[f64], j: u32| w.get(j as usize - 1).copied().unwrap_or(0.0);
    let f_ours = objective(&|j| get(w_ours, j));
    let f_theirs = objective(&|j| get(&w_theirs, j));
    assert!(
        (summary.objective - f_ours).abs() <= 1e-6 * f_ours,
        "train's objective {} against the pairs' {f_ours}",
        summary.objective
    );
    let rel = (f_ours - f_theirs).abs() / f_theirs;
    assert!(rel <= 1e-5, "objective {f_ours} vs LIBLINEAR {f_theirs}");
    // the ranking the two give each pair
    let worst = pairs
        .iter()
        .map(|(_, d)| {
            d.iter()
                .map(|(&j, v)| (get(w_ours, j) - get(&w_theirs, j)) * v)
                .sum::<f64>()
                .abs()
        })
        .fold(0.0, f64::max);
    assert!(worst <= 1e-4, "pair scores differ by up to {worst}");
}

#[test]
fn ranking_pairs_carry_the_material_of_both_leaves() {
    // With the material base a pair's bound is the margin less the game
    // move's leaf material over the sibling's: a sibling that wins a piece
    // against a quiet game move asks the model for that piece and more.
    let (_dir, rows) = rows_of(&["utf8_WCSC28_L1_CGP_PAL.csa"], Base::Material);
    let mut files = Vec::new();
    svm_files(&rows, &mut files);
    let pairs = pairs_of(&files[0], 200.0);
    let bounds: Vec<f64> = pairs.iter().map(|(b, _)| *b).collect();
    assert!(bounds.iter().any(|&b| b > 0.02) && bounds.iter().any(|&b| b < 0.0));
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.model");
    let params = SvrParams::default().c(0.1).check().unwrap();
    let s = train_files_with(
        std::slice::from_ref(&rows),
        &params,
        &model,
        &rank_options(),
    )
    .unwrap();
    assert_eq!(s.rows, pairs.len());
    let meta = niwatori::rows::model::LinearModel::load(&model)
        .unwrap()
        .metadata()
        .cloned()
        .unwrap();
    assert_eq!(meta.solver, "L2R_L2LOSS_RANK");
}

#[test]
fn ranking_refuses_rows_without_pair_data() {
    // a sidecar from a build before pairs: its positions lack bases
    let (_dir, rows) = rows_of(&["utf8_WCSC28_L1_CGP_PAL.csa"], Base::None);
    let mut files = Vec::new();
    svm_files(&rows, &mut files);
    let side = format!("{}.json", files[0].display());
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    for p in meta["positions"].as_array_mut().unwrap() {
        p.as_object_mut().unwrap().remove("bases");
    }
    std::fs::write(&side, serde_json::to_string(&meta).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let params = SvrParams::default().check().unwrap();
    let err = train_files_with(
        std::slice::from_ref(&rows),
        &params,
        &dir.path().join("m.model"),
        &rank_options(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(&side) && err.contains("extract again"),
        "{err}"
    );
}

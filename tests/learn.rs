//! The learning loop's claims: a learned model beats material on the games
//! it learned from, evaluates as liblinear-predict does, the report's counts
//! add up, and iteration 2 is labelled by iteration 1's model.

mod required;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use niwatori::corpus::read_all_games;
use niwatori::eval::{Evaluator, Learned, Material};
use niwatori::extract::{ExtractOptions, PositionSample, extract};
use niwatori::features::{FeatureSet, features};
use niwatori::report::{PHASES, SiblingValue, agreement, agreement_on_sample};
use niwatori::train::{SvrParams, train_files};

fn sample_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("kifu/selfplay");
    ["0001.csa", "0002.csa", "0003.csa", "0004.csa"]
        .iter()
        .map(|f| dir.join(f))
        .collect()
}

/// Extracts and trains on the sample games; returns the model path.
fn trained_model(dir: &Path) -> PathBuf {
    trained_model_of(dir, FeatureSet::default())
}

/// The same, rows of the feature set `set`.
fn trained_model_of(dir: &Path, set: FeatureSet) -> PathBuf {
    let files = sample_files();
    let options = ExtractOptions {
        features: set,
        ..ExtractOptions::default()
    };
    extract(&files, &dir.join("rows"), &options, Arc::new(Material)).unwrap();
    let params = linfa::ParamGuard::check(SvrParams::default().c(0.1).p(0.005).eps(0.001)).unwrap();
    let model = dir.join("m.model");
    train_files(&[dir.join("rows")], &params, &model, false).unwrap();
    model
}

#[test]
fn learned_model_ranks_game_moves_better_than_material_on_its_games() {
    let tmp = tempfile::tempdir().unwrap();
    let model = Learned::load(&trained_model(tmp.path())).unwrap();
    let games = read_all_games(&sample_files());
    let learned = agreement(&games, &model, 1, SiblingValue::Static).summary(true);
    let material = agreement(&games, &Material, 1, SiblingValue::Static).summary(true);
    assert!(
        learned.top1 > material.top1 + 0.01,
        "learned {} vs material {}",
        learned.top1,
        material.top1
    );

    // The counts add up: every move of every game is one position, and the
    // phases partition them.
    let moves: usize = games.iter().map(|g| g.moves.len()).sum();
    assert_eq!(learned.positions as usize, moves);
    let by_phase: u64 = PHASES
        .iter()
        .map(|(p, _, _)| learned.by_phase[*p].positions)
        .sum();
    assert_eq!(by_phase, learned.positions);
    assert!(learned.top3.unwrap() >= learned.top1);
}

/// For the default features and for the king-piece block alone: the
/// scheme travels from the rows through the model to the evaluation.
#[test]
fn evaluation_matches_liblinear_predict() {
    let Some(predict) = required::tool("liblinear-predict") else {
        return;
    };
    let king_piece_alone = FeatureSet {
        attacks: false,
        king_piece: true,
        ..FeatureSet::default()
    };
    for set in [FeatureSet::default(), king_piece_alone] {
        evaluation_matches(&predict, set);
    }
}

fn evaluation_matches(predict: &Path, set: FeatureSet) {
    let tmp = tempfile::tempdir().unwrap();
    let model_path = trained_model_of(tmp.path(), set);
    let model = Learned::load(&model_path).unwrap();
    // Sibling positions of a game; each as a libsvm row.
    let game = &read_all_games(&sample_files()[..1])[0];
    let mut pos = game.start_position();
    let mut rows = String::new();
    let mut ours = Vec::new();
    for &mv in game.moves.iter().take(40) {
        let m32 = pos.move32_from_move(mv);
        pos.apply_move32(m32);
        rows.push('0');
        for (i, v) in features(&pos, set) {
            rows.push_str(&format!(" {}:{}", i + 1, v));
        }
        rows.push('\n');
        ours.push(model.raw(&pos));
    }
    let rows_path = tmp.path().join("rows.svm");
    std::fs::write(&rows_path, rows).unwrap();
    let out_path = tmp.path().join("pred.txt");
    let status = Command::new(predict)
        .arg(&rows_path)
        .arg(&model_path)
        .arg(&out_path)
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    let theirs: Vec<f64> = std::fs::read_to_string(&out_path)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(theirs.len(), ours.len());
    for (a, b) in ours.iter().zip(&theirs) {
        assert!((a - b).abs() < 1e-4, "ours {a} liblinear {b}");
    }
    // The engine's evaluation is that value, negated and scaled, from the side to move.
    let e = niwatori::eval::Evaluator::evaluate(&model, &pos);
    assert_eq!(
        e,
        (-ours.last().unwrap().clamp(-1.0, 1.0) * 10000.0).round() as i32
    );
}

#[test]
#[ignore = "runs two learning iterations (about a minute)"]
fn iteration_two_is_labelled_by_iteration_one() {
    let tmp = tempfile::tempdir().unwrap();
    let kifu = tmp.path().join("kifu");
    std::fs::create_dir_all(&kifu).unwrap();
    for f in sample_files() {
        std::fs::copy(&f, kifu.join(f.file_name().unwrap())).unwrap();
    }
    let out = tmp.path().join("models");
    let features = tmp.path().join("features");
    let status = Command::new(env!("CARGO_BIN_EXE_niwatori"))
        .args([
            "learn",
            "--iterations",
            "2",
            "--patience",
            "2",
            "--holdout",
            "0.25",
        ])
        .arg("--kifu")
        .arg(&kifu)
        .arg("--out")
        .arg(&out)
        .arg("--features")
        .arg(&features)
        .status()
        .unwrap();
    assert!(status.success());
    let meta = |k: u32| -> serde_json::Value {
        let text =
            std::fs::read_to_string(features.join(format!("iter-{k}/train/extract.json"))).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    assert_eq!(meta(1)["evaluator"], "material");
    // labelled by that very model: its weights' fingerprint is in the name,
    // so a resumed run never mixes rows of different models
    let labeller = Learned::load(&out.join("iter-1.model")).unwrap();
    assert_eq!(meta(2)["evaluator"], labeller.identity());
    assert!(labeller.identity().starts_with("learned:"));
    let other = Learned::load(&out.join("iter-2.model")).unwrap();
    assert_ne!(other.identity(), labeller.identity());
    // learn trains on leaf rows by default, and its model says so, so the
    // report values siblings by the depth-1 search
    assert_eq!(meta(1)["features_at"], "leaf");
    // and with the margin its sweep chose, two pawns
    assert_eq!(meta(1)["margin"], 200);
    let model_meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("iter-1.model.json")).unwrap())
            .unwrap();
    assert_eq!(model_meta["features"]["features_at"], "leaf");
    let history: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("history.json")).unwrap()).unwrap();
    assert_eq!(history[0]["report"]["siblings"], "search");
    assert_eq!(history[1]["labelled_by"], "iter-1");
    assert!(out.join("best.model").exists());
    assert!(out.join("learning-curve.png").exists());
}

#[test]
fn a_sampled_report_counts_exactly_the_sampled_positions() {
    let games = read_all_games(&sample_files());
    let full = agreement(&games, &Material, 1, SiblingValue::Static).summary(true);
    let every = agreement_on_sample(&games, &Material, 1, SiblingValue::Static, 1.0);
    assert_eq!(every.summary(true), full);
    let part = agreement_on_sample(&games, &Material, 1, SiblingValue::Static, 0.3).summary(true);
    let sampled: usize = games
        .iter()
        .map(|g| {
            let s = PositionSample::new(g, 0.3);
            (1..=g.moves.len()).filter(|&ply| s.takes(ply)).count()
        })
        .sum();
    assert_eq!(part.positions as usize, sampled);
    assert!(
        sampled > full.positions as usize / 5 && sampled < full.positions as usize * 2 / 5,
        "{sampled} of {}",
        full.positions
    );
}

fn learn_args(dir: &Path) -> niwatori::learn::LearnArgs {
    niwatori::learn::LearnArgs {
        kifu: PathBuf::from("kifu"),
        iterations: 2,
        out: dir.join("models"),
        features: dir.join("features"),
        // learn's own defaults: C 0.1, p 0.002, e 0.001.
        solver: niwatori::train::params::SolverArgs::default(),
        split: niwatori::corpus::SplitArgs::default(),
        patience: 1,
        keep_clamped: false,
        features_at: niwatori::rows::FeaturesAt::Leaf,
        sample: 1.0,
        margin: 200,
        mpirun: None,
        format: niwatori::rows::RowFormat::Bin,
        min_rating: None,
        labels: niwatori::rows::Labels::Siblings,
        base: niwatori::rows::Base::Material,
        blocks: niwatori::features::Blocks::KingPiece,
        loss: niwatori::train::LossKind::Svr,
    }
}

/// A resumed `learn` must ask for what the folder was made with: each
/// setting that shapes the rows or the models, changed alone, is refused
/// with its name and both values; iterations and patience may change.
#[test]
fn learn_refuses_to_resume_a_run_of_other_settings() {
    use niwatori::learn::{LearnSettings, check_settings};
    let tmp = tempfile::tempdir().unwrap();
    let base = learn_args(tmp.path());
    let dir = tmp.path().join("models");
    std::fs::create_dir_all(&dir).unwrap();
    check_settings(&dir, &LearnSettings::of(&base)).unwrap();
    assert!(dir.join("learn.json").exists());
    let mut same = base.clone();
    same.iterations = 5;
    same.patience = 3;
    check_settings(&dir, &LearnSettings::of(&same)).unwrap();

    type Change = fn(&mut niwatori::learn::LearnArgs);
    let changes: [(&str, Change); 18] = [
        ("kifu", |a| a.kifu = PathBuf::from("other")),
        ("c", |a| a.solver.c = 0.03),
        ("p", |a| a.solver.p = 0.005),
        ("e", |a| a.solver.e = 0.01),
        ("holdout", |a| a.split.holdout = 0.2),
        ("seed", |a| a.split.seed = 2),
        ("keep_clamped", |a| a.keep_clamped = true),
        ("features_at", |a| {
            a.features_at = niwatori::rows::FeaturesAt::Sibling
        }),
        ("sample", |a| a.sample = 0.3),
        ("margin", |a| a.margin = 100),
        ("format", |a| a.format = niwatori::rows::RowFormat::Text),
        ("min_rating", |a| a.min_rating = Some(3000.0)),
        ("split_opening", |a| a.split.split_opening = Some(12)),
        ("labels", |a| a.labels = niwatori::rows::Labels::Record),
        ("base", |a| a.base = niwatori::rows::Base::None),
        ("king_piece", |a| {
            a.blocks = niwatori::features::Blocks::Attacks
        }),
        ("attacks", |a| {
            a.blocks = niwatori::features::Blocks::AttacksKingPiece
        }),
        ("loss", |a| a.loss = niwatori::train::LossKind::Rank),
    ];
    for (name, change) in changes {
        let mut asked = base.clone();
        change(&mut asked);
        let err = check_settings(&dir, &LearnSettings::of(&asked))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("learn.json") && err.contains(&format!("{name}: ")),
            "{name}: {err}"
        );
    }

    // Iterations from before settings were recorded are not resumed blindly.
    let old = tmp.path().join("old");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::write(old.join("history.json"), "[]").unwrap();
    let err = check_settings(&old, &LearnSettings::of(&base))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("history.json") && err.contains("not recorded"),
        "{err}"
    );
}

#[test]
fn learn_cli_names_the_changed_setting() {
    let tmp = tempfile::tempdir().unwrap();
    let args = learn_args(tmp.path());
    for dir in [&args.out, &args.features] {
        std::fs::create_dir_all(dir).unwrap();
        niwatori::learn::check_settings(dir, &niwatori::learn::LearnSettings::of(&args)).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_niwatori"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["learn", "-c", "0.5", "--out"])
        .arg(&args.out)
        .arg("--features")
        .arg(&args.features)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("c: 0.1 → 0.5"), "{err}");
}

//! The model file: LIBLINEAR's format byte for byte, and the JSON sidecar.

// The constants are the model file's text, digit for digit.
#![allow(clippy::excessive_precision)]

use std::path::PathBuf;

use linfa::ParamGuard;
use niwatori::rows::model::{LinearModel, ModelError};
use niwatori::train::{SvrParams, train_files};

/// Written by `liblinear-train -s 11 -B 1` (LIBLINEAR 2.3.0) on
/// "0.5 1:1 3:2 / -0.25 2:1 3:1 / 0.1 1:3".
const LIBLINEAR_MODEL: &str = "solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 3\nbias 1\nw\n0.083116351088367638 \n-0.16752802798446795 \n0.13895881554339709 \n-0.037660144791469591 \n";

#[test]
fn a_liblinear_model_round_trips_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ll.model");
    std::fs::write(&path, LIBLINEAR_MODEL).unwrap();
    let m = LinearModel::load(&path).unwrap();
    assert_eq!(
        m.weights(),
        &[
            0.083116351088367638,
            -0.16752802798446795,
            0.13895881554339709
        ]
    );
    assert_eq!(m.bias_weight(), Some(-0.037660144791469591));
    assert!(m.metadata().is_none());
    let again = dir.path().join("again.model");
    m.save(&again).unwrap();
    assert_eq!(std::fs::read_to_string(&again).unwrap(), LIBLINEAR_MODEL);
    // Row 1 of the training file: 1:1 3:2, plus the bias feature.
    let want = 0.083116351088367638 + 2.0 * 0.13895881554339709 - 0.037660144791469591;
    assert_eq!(m.predict_row(&[1, 3], &[1.0, 2.0]), want);
}

#[test]
fn our_model_and_sidecar_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.svm");
    std::fs::write(&data, "0.5 1:1 3:2\n-0.25 2:1 3:1\n0.1 1:3\n0.3 7:1\n").unwrap();
    let out = dir.path().join("m.model");
    let params = SvrParams::default().check().unwrap();
    train_files(&[data], &params, &out, false).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let json = std::fs::read(dir.path().join("m.model.json")).unwrap();
    let m = LinearModel::load(&out).unwrap();
    assert_eq!(m.nr_feature(), 7);
    let meta = m.metadata().unwrap().clone();
    assert_eq!(meta.features, None);
    assert_eq!(meta.data.rows, 4);
    assert_eq!(meta.data.nonzeros, 6);
    let out2 = dir.path().join("m2.model");
    m.save(&out2).unwrap();
    assert_eq!(std::fs::read(&out2).unwrap(), bytes);
    assert_eq!(
        std::fs::read(dir.path().join("m2.model.json")).unwrap(),
        json
    );
    assert_eq!(LinearModel::load(&out2).unwrap().metadata(), Some(&meta));
    // Features 4..=6 never occur: their weights stay exactly zero.
    assert_eq!(&m.weights()[3..6], &[0.0, 0.0, 0.0]);
    assert!(!dir.path().join("m.model.tmp").exists());
}

fn load_err(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("bad.model");
    std::fs::write(&path, text).unwrap();
    let e: ModelError = LinearModel::load(&path).unwrap_err();
    e.to_string()
}

#[test]
fn malformed_models_are_rejected_with_the_line() {
    let e = load_err("solver_type L2R_LR\nnr_class 2\nnr_feature 1\nbias -1\nw\n1 \n");
    assert!(e.contains("bad.model:1:") && e.contains("L2R_LR"), "{e}");
    let e = load_err("solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 2\nbias -1\nw\n1 \nx \n");
    assert!(
        e.contains("bad.model:7:") && e.contains("bad weight"),
        "{e}"
    );
    let e = load_err("solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 3\nbias -1\nw\n1 \n");
    assert!(e.contains("1 weights, expected 3"), "{e}");
    // A size field is checked against the file before it sizes anything:
    // this header once made the engine try to allocate 800 GB and abort.
    let e = load_err(
        "solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 99999999999\nbias -1\nw\n1 \n",
    );
    assert!(
        e.contains("bad.model:5:") && e.contains("nr_feature 99999999999"),
        "{e}"
    );
    let e = load_err(&format!(
        "solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature {}\nbias 1\nw\n1 \n",
        usize::MAX
    ));
    assert!(e.contains("hold at most"), "{e}");
}

#[test]
fn the_sidecar_must_match_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.svm");
    std::fs::write(&data, "0.5 1:1 3:2\n").unwrap();
    let out = dir.path().join("m.model");
    train_files(&[data], &SvrParams::default().check().unwrap(), &out, false).unwrap();
    let side = dir.path().join("m.model.json");
    let json = std::fs::read_to_string(&side)
        .unwrap()
        .replace("\"nr_feature\": 3", "\"nr_feature\": 4");
    std::fs::write(&side, json).unwrap();
    let e = LinearModel::load(&out).unwrap_err().to_string();
    assert!(e.contains("nr_feature 4 but the model has 3"), "{e}");
}

//! Agreement with LIBLINEAR (`liblinear-train -s 11`), when it is installed
//! (Debian's `liblinear-tools`; `.ci/run` installs it).

use std::process::Command;

mod common;
mod required;

use common::{predictions, run};
use linfa::ParamGuard;
use niwatori::bench::train::compare;
use niwatori::rows::model::LinearModel;
use niwatori::train::{SvrParams, load, train_files};

fn liblinear() -> bool {
    required::tool("liblinear-train").is_some() && required::tool("liblinear-predict").is_some()
}

fn agree_with_liblinear(bias: f64) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rows.svm");
    let mut text = Vec::new();
    niwatori::train::synth::write_rows(&mut text, 3000, 400, 30, 11).unwrap();
    std::fs::write(&file, &text).unwrap();
    let theirs = dir.path().join("liblinear.model");
    let ours = dir.path().join("ours.model");
    let b = bias.to_string();
    run(Command::new("liblinear-train")
        .args(["-s", "11", "-q", "-B", &b])
        .arg(&file)
        .arg(&theirs));
    let params = SvrParams::default().bias(bias).check().unwrap();
    let summary = train_files(std::slice::from_ref(&file), &params, &ours, false).unwrap();

    // Objectives, both computed by our loss on the same rows.
    let data = load::load(std::slice::from_ref(&file), bias, false)
        .unwrap()
        .data;
    let m_ours = LinearModel::load(&ours).unwrap();
    let m_theirs = LinearModel::load(&theirs).unwrap();
    let (f_ours, f_theirs, _) = compare(&data, 1.0, 0.1, &m_ours, &m_theirs);
    assert!((summary.objective - f_ours).abs() <= 1e-9 * f_ours.abs());
    let rel = (f_ours - f_theirs).abs() / f_theirs.abs();
    assert!(
        rel <= 1e-4,
        "objective {f_ours} vs LIBLINEAR {f_theirs}: {rel:e}"
    );

    // Predictions on the training rows, each model read by liblinear-predict.
    let (p_ours, p_theirs) = (dir.path().join("p_ours"), dir.path().join("p_theirs"));
    run(Command::new("liblinear-predict")
        .arg(&file)
        .arg(&ours)
        .arg(&p_ours));
    run(Command::new("liblinear-predict")
        .arg(&file)
        .arg(&theirs)
        .arg(&p_theirs));
    let (a, b) = (predictions(&p_ours), predictions(&p_theirs));
    assert_eq!(a.len(), 3000);
    let worst = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(worst <= 1e-3, "predictions differ by up to {worst}");

    // Loading LIBLINEAR's model predicts exactly what liblinear-predict does.
    let rows = niwatori::rows::libsvm::read_file(&file).unwrap();
    let mut start = 0;
    for (i, len) in rows.row_lengths.iter().enumerate() {
        let end = start + *len as usize;
        let values: Vec<f32> = (start..end).map(|k| rows.values.get(k) as f32).collect();
        let ours_pred = m_theirs.predict_row(&rows.indices[start..end], &values);
        assert_eq!(ours_pred, b[i], "row {}", i + 1);
        start = end;
    }
}

#[test]
fn agrees_with_liblinear_without_bias() {
    if liblinear() {
        agree_with_liblinear(-1.0);
    }
}

#[test]
fn agrees_with_liblinear_with_bias() {
    if liblinear() {
        agree_with_liblinear(1.0);
    }
}

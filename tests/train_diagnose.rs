//! `diagnose`: linear vs Gaussian-kernel SVR on a small sample.

use std::path::PathBuf;

use niwatori::train::diagnose::{DiagnoseArgs, diagnose};
use niwatori::train::load;
use niwatori::train::params::SolverArgs;

fn args(sample: usize) -> DiagnoseArgs {
    DiagnoseArgs {
        paths: vec![PathBuf::new()],
        sample,
        holdout: 0.25,
        solver: SolverArgs {
            p: 0.01,
            ..SolverArgs::default()
        },
        width: None,
        seed: 3,
    }
}

#[test]
fn on_linear_data_the_linear_model_beats_the_mean_and_is_not_beaten() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rows.svm");
    let mut text = Vec::new();
    niwatori::train::synth::write_rows(&mut text, 3000, 60, 15, 9).unwrap();
    std::fs::write(&file, &text).unwrap();
    let data = load::load(&[file], -1.0, false).unwrap().data;
    let d = diagnose(&data, &args(800)).unwrap();
    assert_eq!((d.train_rows, d.test_rows), (600, 200));
    assert!(d.linear.test_rmse < 0.8 * d.constant.test_rmse, "{d:?}");
    // The data follow a linear rule: a curved surface gains nothing much.
    assert!(d.gaussian.test_rmse > 0.9 * d.linear.test_rmse, "{d:?}");
}

#[test]
fn the_sample_size_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rows.svm");
    std::fs::write(&file, "1 1:1\n").unwrap();
    let data = load::load(&[file], -1.0, false).unwrap().data;
    let e = diagnose(&data, &args(5000)).unwrap_err().to_string();
    assert!(e.contains("--sample must be in 10..=2000"), "{e}");
}

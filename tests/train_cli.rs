//! `niwatori train` from the command line.

use std::process::Command;

fn niwatori() -> Command {
    Command::new(env!("CARGO_BIN_EXE_niwatori"))
}

#[test]
fn train_prints_the_objective_and_writes_model_and_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.svm");
    std::fs::write(&data, "0.5 1:1 3:2\n-0.25 2:1 3:1\n0.1 1:3\n").unwrap();
    let model = dir.path().join("m.model");
    let out = niwatori()
        .args([
            "train", "-q", "-c", "2", "-p", "0.05", "-e", "0.001", "-B", "-1", "--out",
        ])
        .arg(&model)
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let objective: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Objective value = "))
        .expect("objective line")
        .parse()
        .unwrap();
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("m.model.json")).unwrap())
            .unwrap();
    let saved = meta["objective"].as_f64().unwrap();
    assert!((saved - objective).abs() <= 1e-9 * saved.abs());
    assert_eq!(
        (meta["c"].as_f64(), meta["p"].as_f64(), meta["e"].as_f64()),
        (Some(2.0), Some(0.05), Some(0.001))
    );
    assert!(meta["features"].is_null());
}

#[test]
fn bad_parameters_and_bad_files_fail_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.svm");
    std::fs::write(&data, "0.5 1:1\n0.5 1:q\n").unwrap();
    let model = dir.path().join("m.model");
    let out = niwatori()
        .args(["train", "-c", "0", "--out"])
        .arg(&model)
        .arg(&data)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("C must be positive"));
    let out = niwatori()
        .args(["train", "-q", "--out"])
        .arg(&model)
        .arg(&data)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("d.svm:2: value \"q\" is not a finite number"),
        "{err}"
    );
    assert!(!model.exists());
}

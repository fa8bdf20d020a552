//! The plot module writes real PNG files of the documented size, atomically, and
//! reports bad paths and bad data as errors.

use niwatori::plot::{
    AGREEMENT_SIZE, CURVE_SIZE, CurvePoint, PhaseSeries, PlotError, agreement_by_phase,
    learning_curve,
};
use std::path::Path;

const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

/// Checks the signature and reads width and height from the IHDR chunk.
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(bytes[..8], PNG_SIGNATURE, "{} is not a PNG", path.display());
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

fn only_file(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn series() -> Vec<PhaseSeries> {
    let phases = ["1-30", "31-80", "81+", "all"];
    let make = |name: &str, vals: [f64; 4]| PhaseSeries {
        name: name.into(),
        values: phases.iter().map(|p| p.to_string()).zip(vals).collect(),
    };
    vec![
        make("material", [0.21, 0.17, 0.24, 0.19]),
        make("learned", [0.35, 0.29, 0.33, 0.31]),
    ]
}

fn curve(n: u32) -> Vec<CurvePoint> {
    (1..=n)
        .map(|i| {
            let t = f64::from(i) / f64::from(n);
            CurvePoint {
                iteration: i,
                top1_heldout: 0.20 + 0.12 * t,
                top1_train: 0.22 + 0.16 * t,
                top1_material: 0.19,
                rmse: 0.48 - 0.1 * t,
            }
        })
        .collect()
}

#[test]
fn agreement_chart_is_a_png_of_the_right_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agreement.png");
    agreement_by_phase(&path, "Top-1 agreement with pro moves", &series()).unwrap();
    assert_eq!(png_size(&path), AGREEMENT_SIZE);
    assert_eq!(
        only_file(dir.path()),
        ["agreement.png"],
        "temp file left behind"
    );
}

#[test]
fn learning_curve_is_a_png_of_the_right_size() {
    let dir = tempfile::tempdir().unwrap();
    for n in [1, 12] {
        let path = dir.path().join(format!("curve{n}.png"));
        learning_curve(&path, &curve(n)).unwrap();
        assert_eq!(png_size(&path), CURVE_SIZE);
    }
    assert_eq!(only_file(dir.path()), ["curve1.png", "curve12.png"]);
}

#[test]
fn overwrites_an_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.png");
    std::fs::write(&path, b"old").unwrap();
    learning_curve(&path, &curve(3)).unwrap();
    assert_eq!(png_size(&path), CURVE_SIZE);
}

#[test]
fn missing_parent_directory_is_an_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no/such/dir/agreement.png");
    let err = agreement_by_phase(&path, "t", &series()).unwrap_err();
    assert!(matches!(err, PlotError::Draw { .. }), "{err}");
    assert!(
        err.to_string().contains("no/such/dir/agreement.png"),
        "{err}"
    );
    let err = learning_curve(&path, &curve(3)).unwrap_err();
    assert!(
        err.to_string().contains("no/such/dir/agreement.png"),
        "{err}"
    );
    assert!(!path.exists());
}

#[test]
fn empty_or_non_finite_data_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.png");
    let err = learning_curve(&path, &[]).unwrap_err();
    assert!(matches!(err, PlotError::NoData { .. }), "{err}");
    let err = agreement_by_phase(&path, "t", &[]).unwrap_err();
    assert!(matches!(err, PlotError::NoData { .. }), "{err}");
    let mut bad = series();
    bad[1].values[2].1 = f64::NAN;
    let err = agreement_by_phase(&path, "t", &bad).unwrap_err();
    assert!(err.to_string().contains("NaN"), "{err}");
    assert!(!path.exists());
}

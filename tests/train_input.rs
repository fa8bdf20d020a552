//! Reading training data: malformed input, directories, extract.json,
//! checkpoints and resumption.

use std::path::{Path, PathBuf};

use linfa::ParamGuard;
use niwatori::rows::model::LinearModel;
use niwatori::train::{SvrParams, TrainOptions, load, train_files, train_files_with};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn load_error(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.svm");
    write(&path, text);
    let e = load::load(std::slice::from_ref(&path), -1.0, false)
        .err()
        .expect("malformed input must fail");
    e.to_string()
}

#[test]
fn malformed_input_names_file_line_and_fault() {
    let cases = [
        (
            "1 1:1\nabc 1:1\n",
            ":2: label \"abc\" is not a finite number",
        ),
        ("1 1:1\n1 1:x\n", ":2: value \"x\" is not a finite number"),
        (
            "1 1:1 2:1\n1 3:1 2:1\n",
            ":2: index 2 after 3: indices must be strictly ascending",
        ),
        (
            "1 2:1 2:1\n",
            ":1: index 2 after 2: indices must be strictly ascending",
        ),
        ("1 0:1\n", ":1: index 0 (indices are 1-based)"),
        (
            "1 1:1\n1 1:1\n1 2:1",
            ":3: truncated last line (no newline at the end of the file)",
        ),
        ("1 1:1\n\n", ":2: empty line"),
        ("1 x:1\n", ":1: index \"x\" is not an integer"),
        ("1 1-1\n", ":1: \"1-1\" is not of the form index:value"),
        (
            "1 1:1\n1 4294967295:1\n",
            ":2: index 4294967295 is beyond the largest read, 134217728",
        ),
    ];
    for (text, want) in cases {
        let e = load_error(text);
        assert!(e.contains("x.svm") && e.contains(want), "{text:?}: got {e}");
    }
}

#[test]
fn every_bad_file_is_reported_and_nothing_is_trained() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("a.svm"), "1 1:1\n");
    write(&dir.path().join("b.svm"), "1 1:1\n1 0:1\n");
    write(&dir.path().join("sub/c.svm"), "1 1:1");
    let out = dir.path().join("m.model");
    let params = SvrParams::default().check().unwrap();
    let e = train_files(&[dir.path().to_path_buf()], &params, &out, false).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("2 bad file(s)") && msg.contains("b.svm:2:"),
        "{msg}"
    );
    assert!(!out.exists());
}

#[test]
fn a_line_split_across_read_blocks_keeps_its_number() {
    // Larger than one 4 MiB read block, error on the last line.
    let mut text = String::new();
    let mut n = 0;
    while text.len() < 5 << 20 {
        text.push_str("0.123456 1:1 17:2 345:1 9999:3\n");
        n += 1;
    }
    text.push_str("0.5 3:1 2:1\n");
    let e = load_error(&text);
    assert!(e.contains(&format!("x.svm:{}:", n + 1)), "{e}");
}

#[test]
fn directories_are_read_recursively_in_sorted_order_with_the_scheme() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("features");
    write(&root.join("b/2.svm"), "0.2 2:1\n");
    write(&root.join("a.svm"), "0.1 1:1\n");
    write(&root.join("b/1.svm"), "0.3 3:2\n");
    write(&root.join("b/1.json"), "{}");
    write(
        &root.join("extract.json"),
        r#"{"scheme":"kpp-attack","scheme_version":3,"num_features":50,"label_scale":10000.0,"games":2}"#,
    );
    let loaded = load::load(std::slice::from_ref(&root), -1.0, false).unwrap();
    let names: Vec<PathBuf> = loaded
        .files
        .iter()
        .map(|f| f.strip_prefix(&root).unwrap().to_path_buf())
        .collect();
    assert_eq!(
        names,
        [PathBuf::from("a.svm"), "b/1.svm".into(), "b/2.svm".into()]
    );
    assert_eq!(loaded.data.labels(), &[0.1, 0.3, 0.2]);
    assert_eq!(loaded.data.n_features(), 50);

    let out = dir.path().join("m.model");
    train_files(&[root], &SvrParams::default().check().unwrap(), &out, false).unwrap();
    let m = LinearModel::load(&out).unwrap();
    assert_eq!(m.nr_feature(), 50);
    let f = m.metadata().unwrap().features.as_ref().unwrap();
    assert_eq!(
        (
            f.scheme.as_str(),
            f.scheme_version,
            f.num_features,
            f.label_scale
        ),
        ("kpp-attack", 3, 50, 10000.0)
    );
    assert!(m.check_scheme("kpp-attack", 3).is_ok());
    assert!(m.check_scheme("kpp-attack", 4).is_err());
}

#[test]
fn indices_beyond_the_scheme_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("a.svm"), "0.1 60:1\n");
    write(
        &dir.path().join("extract.json"),
        r#"{"scheme":"s","scheme_version":1,"num_features":50,"label_scale":10000.0}"#,
    );
    let e = load::load(&[dir.path().to_path_buf()], -1.0, false)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("feature index 60 is beyond num_features 50"),
        "{e}"
    );
}

/// `extract.json` is read as the typed scheme: which position the rows
/// describe comes through to the model, and a value the scheme does not
/// know, or a missing field, is an error naming the file.
#[test]
fn the_scheme_of_extract_json_is_typed() {
    let scheme = |extra: &str| {
        format!(
            r#"{{"scheme":"s","scheme_version":1,"num_features":50,"label_scale":10000.0{extra}}}"#
        )
    };
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("a.svm"), "0.1 2:1\n");
    write(
        &dir.path().join("extract.json"),
        &scheme(r#","features_at":"leaf""#),
    );
    let out = dir.path().join("m.model");
    let roots = [dir.path().to_path_buf()];
    train_files(&roots, &SvrParams::default().check().unwrap(), &out, false).unwrap();
    let m = LinearModel::load(&out).unwrap();
    let f = m.metadata().unwrap().features.as_ref().unwrap();
    assert_eq!(f.features_at, niwatori::rows::FeaturesAt::Leaf);
    let sidecar = std::fs::read_to_string(dir.path().join("m.model.json")).unwrap();
    assert!(sidecar.contains(r#""features_at": "leaf""#), "{sidecar}");

    for (text, fault) in [
        (
            scheme(r#","features_at":"middle""#),
            "unknown variant `middle`",
        ),
        (
            r#"{"scheme":"s","num_features":50,"label_scale":1.0}"#.to_string(),
            "missing field `scheme_version`",
        ),
        // A size that would size every weight vector, beyond any row's.
        (
            r#"{"scheme":"s","scheme_version":1,"num_features":99999999999,"label_scale":1.0}"#
                .to_string(),
            "num_features 99999999999 is beyond the largest feature index read, 134217728",
        ),
    ] {
        write(&dir.path().join("extract.json"), &text);
        let e = load::load(&roots, -1.0, false).err().unwrap().to_string();
        assert!(e.contains("extract.json: ") && e.contains(fault), "{e}");
    }
}

#[test]
fn an_interrupted_run_resumes_from_its_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rows.svm");
    let mut text = Vec::new();
    niwatori::train::synth::write_rows(&mut text, 2000, 300, 20, 5).unwrap();
    std::fs::write(&file, &text).unwrap();
    let files = [file];
    let opts = TrainOptions {
        progress: false,
        checkpoint: true,
        drop_clamped: false,
        loss: Default::default(),
    };
    let full_out = dir.path().join("full.model");
    let full = train_files(
        &files,
        &SvrParams::default().check().unwrap(),
        &full_out,
        false,
    )
    .unwrap();
    assert!(full.converged && full.iterations > 3);

    // Stop after 2 iterations (as if interrupted): the checkpoint stays.
    let out = dir.path().join("m.model");
    let short = SvrParams::default().max_iter(2).check().unwrap();
    let first = train_files_with(&files, &short, &out, &opts).unwrap();
    assert_eq!(first.iterations, 2);
    assert!(dir.path().join("m.model.ckpt").exists());

    let resumed =
        train_files_with(&files, &SvrParams::default().check().unwrap(), &out, &opts).unwrap();
    // The resumed run is the uninterrupted one, to the last bit.
    assert_eq!(resumed.iterations, full.iterations);
    assert_eq!(resumed.objective, full.objective);
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&full_out).unwrap());
    for leftover in [
        "m.model.ckpt",
        "m.model.ckpt-cache",
        "m.model.ckpt-state.json",
    ] {
        assert!(!dir.path().join(leftover).exists(), "{leftover}");
    }

    // A checkpoint from other parameters is refused.
    train_files_with(&files, &short, &out, &opts).unwrap();
    let other = SvrParams::default().c(2.0).check().unwrap();
    let e = train_files_with(&files, &other, &out, &opts)
        .unwrap_err()
        .to_string();
    assert!(e.contains("checkpoint does not match"), "{e}");

    // A damaged checkpoint is an error naming its file, not a panic.
    let state = dir.path().join("m.model.ckpt-state.json");
    let text = std::fs::read_to_string(&state).unwrap();
    let at = text.find("\"cache_len\"").expect("cache_len in the state");
    let end = at + text[at..].find([',', '}']).unwrap();
    std::fs::write(
        &state,
        format!("{}\"cache_len\": 5{}", &text[..at], &text[end..]),
    )
    .unwrap();
    std::fs::write(dir.path().join("m.model.ckpt-cache"), [0u8; 40]).unwrap();
    let e = train_files_with(&files, &short, &out, &opts)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("m.model.ckpt-state.json") && e.contains("cache_len 5 for 2000 rows"),
        "{e}"
    );
}

#[test]
fn clamped_rows_can_be_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = Vec::new();
    niwatori::train::synth::write_rows(&mut text, 600, 80, 10, 3).unwrap();
    let text = String::from_utf8(text).unwrap();
    // every 7th row becomes a mate label (at the clamp, either sign)
    let mut with_mates = String::new();
    let mut without = String::new();
    for (i, line) in text.lines().enumerate() {
        let (_, features) = line.split_once(' ').unwrap();
        if i % 7 == 0 {
            let label = if i % 2 == 0 { "1" } else { "-1" };
            with_mates.push_str(&format!("{label} {features}\n"));
        } else {
            with_mates.push_str(line);
            with_mates.push('\n');
            without.push_str(line);
            without.push('\n');
        }
    }
    let (a, b) = (dir.path().join("a/rows.svm"), dir.path().join("b/rows.svm"));
    write(&a, &with_mates);
    write(&b, &without);
    let params = SvrParams::default().check().unwrap();
    let opts = |drop_clamped| TrainOptions {
        progress: false,
        checkpoint: false,
        drop_clamped,
        loss: Default::default(),
    };
    let (ma, mb, mc) = (
        dir.path().join("a.model"),
        dir.path().join("b.model"),
        dir.path().join("c.model"),
    );
    let dropped = train_files_with(std::slice::from_ref(&a), &params, &ma, &opts(true)).unwrap();
    let plain = train_files_with(std::slice::from_ref(&b), &params, &mb, &opts(false)).unwrap();
    assert_eq!(dropped.rows, plain.rows);
    assert_eq!(dropped.objective, plain.objective);
    let weights = |p: &Path| LinearModel::load(p).unwrap().weights().to_vec();
    assert_eq!(weights(&ma), weights(&mb));
    // kept, the mate rows change the solution
    let kept = train_files_with(std::slice::from_ref(&a), &params, &mc, &opts(false)).unwrap();
    assert_eq!(kept.rows, dropped.rows + 600_usize.div_ceil(7));
    assert_ne!(weights(&mc), weights(&mb));
}

/// Sums over rows are exact sums of block sums: 1, 2 or 3 threads solve to
/// the same bits (LIBLINEAR's and our earlier sums varied with the split).
#[test]
fn the_solution_does_not_depend_on_the_number_of_threads() {
    use niwatori::rows::libsvm::{Rows, parse_block};
    use niwatori::train::dataset::{BLOCK_ROWS, Dataset};
    let mut text = Vec::new();
    niwatori::train::synth::write_rows(&mut text, 3 * BLOCK_ROWS + 500, 2000, 12, 9).unwrap();
    let mut rows = Rows::default();
    parse_block(&text, &mut rows).unwrap();
    let data = Dataset::from_rows(rows, 0, 1.0).unwrap();
    assert_eq!(data.block_starts().len(), 4);
    let params = SvrParams::default().bias(1.0).check().unwrap();
    let solve = |threads| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| niwatori::train::fit_quiet(&data, &params))
    };
    let (w1, s1) = solve(1);
    for threads in [2, 3] {
        let (w, s) = solve(threads);
        assert_eq!(s.f.to_bits(), s1.f.to_bits(), "{threads} threads");
        assert_eq!(s.iterations, s1.iterations);
        assert!(
            w.iter().zip(&w1).all(|(a, b)| a.to_bits() == b.to_bits()),
            "{threads} threads"
        );
    }
}

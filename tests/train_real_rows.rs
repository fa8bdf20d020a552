//! Training on real rows from `extract`: solving over only the features that
//! occur gives exactly the full-space solution, and the optimum agrees with
//! LIBLINEAR's (`liblinear-train -s 11`, run when installed).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

mod common;
mod required;

use common::{predictions, run};
use linfa::ParamGuard;
use niwatori::bench::train::compare;
use niwatori::eval::Material;
use niwatori::extract::{ExtractOptions, extract};
use niwatori::rows::libsvm::{Rows, parse_block};
use niwatori::rows::model::LinearModel;
use niwatori::train::dataset::Dataset;
use niwatori::train::{SvrParams, fit, fit_quiet, load, train_files};

/// The project's training settings (`niwatori learn`), where LIBLINEAR
/// converges on real rows; with the default p = 0.1 its trust region
/// stalls for 1,000 iterations.
const C: f64 = 0.1;
const P: f64 = 0.005;
/// Tight, so that both solvers end near the optimum, not merely near 0.
const EPS: f64 = 1e-6;

/// Extract one real game (about 6,500 rows) into `dir`; returns its `.svm`.
fn extract_game(dir: &Path) -> PathBuf {
    let game =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("kifu/wcsc28/utf8_WCSC28_L1_BRO_KAT_2.csa");
    extract(&[game], dir, &ExtractOptions::default(), Arc::new(Material)).unwrap();
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "svm") {
                found.push(p);
            }
        }
    }
    assert_eq!(found.len(), 1, "{found:?}");
    found.pop().unwrap()
}

/// The same rows with the features that occur renumbered 1..m in order,
/// written to `out` (no `extract.json` beside it). LIBLINEAR sizes its
/// vectors by the largest index, so on the raw file (5,164,760 features)
/// it takes minutes; the problem is the same up to a renumbering of w.
fn renumber(svm: &Path, out: &Path) -> Vec<u32> {
    let text = std::fs::read_to_string(svm).unwrap();
    let mut used: Vec<u32> = text
        .lines()
        .flat_map(|l| l.split(' ').skip(1))
        .map(|t| t.split_once(':').unwrap().0.parse().unwrap())
        .collect();
    used.sort_unstable();
    used.dedup();
    let mut w = String::new();
    for line in text.lines() {
        let mut toks = line.split(' ');
        w.push_str(toks.next().unwrap());
        for t in toks {
            let (i, v) = t.split_once(':').unwrap();
            let k = used.binary_search(&i.parse().unwrap()).unwrap() + 1;
            w.push_str(&format!(" {k}:{v}"));
        }
        w.push('\n');
    }
    std::fs::write(out, w).unwrap();
    used
}

#[test]
fn real_rows_compact_solution_and_liblinear_agreement() {
    let tmp = tempfile::tempdir().unwrap();
    let extracted = tmp.path().join("features");
    let svm = extract_game(&extracted);
    let flat = tmp.path().join("flat");
    std::fs::create_dir(&flat).unwrap();
    let renumbered = flat.join("rows.svm");
    let used = renumber(&svm, &renumbered);
    let params = SvrParams::default().c(C).p(P).eps(EPS).check().unwrap();

    // On the extracted directory (every feature of the scheme) and on
    // the renumbered file: the same solution, bit for bit, and the model of
    // the former has weight 0 for every feature that never occurs.
    let full_model = tmp.path().join("full.model");
    let flat_model = tmp.path().join("flat.model");
    let s_full = train_files(
        std::slice::from_ref(&extracted),
        &params,
        &full_model,
        false,
    )
    .unwrap();
    let s_flat = train_files(
        std::slice::from_ref(&renumbered),
        &params,
        &flat_model,
        false,
    )
    .unwrap();
    assert!(s_full.converged && s_flat.converged);
    assert_eq!(s_full.objective.to_bits(), s_flat.objective.to_bits());
    let m_full = LinearModel::load(&full_model).unwrap();
    let m_flat = LinearModel::load(&flat_model).unwrap();
    assert_eq!(m_full.nr_feature(), niwatori::features::NUM_FEATURES);
    assert_eq!(m_flat.nr_feature(), used.len());
    let mut k = 0;
    for (j, &w) in m_full.weights().iter().enumerate() {
        if k < used.len() && used[k] as usize == j + 1 {
            assert_eq!(
                w.to_bits(),
                m_flat.weights()[k].to_bits(),
                "feature {}",
                j + 1
            );
            k += 1;
        } else {
            assert_eq!(w, 0.0, "feature {} never occurs", j + 1);
        }
    }
    assert_eq!(k, used.len());

    if required::tool("liblinear-train").is_none() || required::tool("liblinear-predict").is_none()
    {
        return;
    }
    let theirs = tmp.path().join("liblinear.model");
    run(Command::new("liblinear-train")
        .args(["-s", "11", "-q"])
        .args(["-c", &C.to_string(), "-p", &P.to_string()])
        .args(["-e", &EPS.to_string()])
        .arg(&renumbered)
        .arg(&theirs));
    let m_theirs = LinearModel::load(&theirs).unwrap();
    let data = load::load(std::slice::from_ref(&renumbered), -1.0, false)
        .unwrap()
        .data;
    // Both objectives computed by our loss from both weight vectors.
    let (f_ours, f_theirs, max_diff) = compare(&data, C, P, &m_flat, &m_theirs);
    let rel = (f_ours - f_theirs).abs() / f_theirs.abs();
    eprintln!(
        "{} rows: objective ours {f_ours:.12e}, LIBLINEAR {f_theirs:.12e}, relative {rel:.2e}; max prediction difference {max_diff:.2e}",
        data.n_rows()
    );
    assert!((s_flat.objective - f_ours).abs() <= 1e-9 * f_ours.abs());
    assert!(
        rel <= 1e-4,
        "objective {f_ours} vs LIBLINEAR {f_theirs}: {rel:e}"
    );
    assert!(max_diff <= 1e-3, "predictions differ by up to {max_diff}");

    // The model trained on the extracted directory, read by
    // liblinear-predict on the extracted file, against LIBLINEAR's model.
    let (p_ours, p_theirs) = (tmp.path().join("p_ours"), tmp.path().join("p_theirs"));
    run(Command::new("liblinear-predict")
        .arg(&svm)
        .arg(&full_model)
        .arg(&p_ours));
    run(Command::new("liblinear-predict")
        .arg(&renumbered)
        .arg(&theirs)
        .arg(&p_theirs));
    let (a, b) = (predictions(&p_ours), predictions(&p_theirs));
    assert_eq!(a.len(), data.n_rows());
    let worst = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(
        worst <= 1e-3,
        "liblinear-predict outputs differ by up to {worst}"
    );
}

/// Rows of `n` features spread over a space 1,000 times wider, most
/// columns never used.
fn spread_rows() -> (Rows, usize) {
    let mut text = Vec::new();
    niwatori::train::synth::write_rows(&mut text, 2000, 300, 20, 5).unwrap();
    let mut spread = String::new();
    for line in String::from_utf8(text).unwrap().lines() {
        let mut toks = line.split(' ');
        spread.push_str(toks.next().unwrap());
        for t in toks {
            let (i, v) = t.split_once(':').unwrap();
            let i: usize = i.parse().unwrap();
            spread.push_str(&format!(" {}:{v}", i * 1000 + 7));
        }
        spread.push('\n');
    }
    let mut rows = Rows::default();
    parse_block(spread.as_bytes(), &mut rows).unwrap();
    (rows, 300 * 1000 + 5000)
}

#[test]
fn compact_columns_give_the_full_space_solution_bit_for_bit() {
    for bias in [-1.0, 1.0] {
        let (rows, width) = spread_rows();
        let full = Dataset::from_rows(rows.clone(), width, bias).unwrap();
        let (compact, map) = Dataset::from_rows_compact(rows, width, bias).unwrap();
        assert_eq!(map.n_features(), width);
        assert!(map.n_used() <= 300 && compact.n_features() == map.n_used());
        let params = SvrParams::default().bias(bias).check().unwrap();
        // The reference solves over the full width, as before compaction.
        let mut w_full = vec![0.0; full.dim()];
        let s_full = fit(&full, &params, &mut w_full, None, |_, _, _| {
            Ok::<(), std::convert::Infallible>(())
        })
        .unwrap();
        let (w_compact, s_compact) = fit_quiet(&compact, &params);
        assert_eq!(s_full.f.to_bits(), s_compact.f.to_bits());
        assert_eq!(s_full.iterations, s_compact.iterations);
        let expanded = map.expand(&w_compact, bias >= 0.0);
        assert_eq!(expanded.len(), w_full.len());
        for (j, (a, b)) in expanded.iter().zip(&w_full).enumerate() {
            assert_eq!(a.to_bits(), b.to_bits(), "weight {j}");
        }
        assert_eq!(map.compress(&w_full, bias >= 0.0), Ok(w_compact));
        // fit_quiet compacts a full-width data set itself.
        let (w_quiet, s_quiet) = fit_quiet(&full, &params);
        assert_eq!(s_quiet.f.to_bits(), s_full.f.to_bits());
        assert!(
            w_quiet
                .iter()
                .zip(&w_full)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
        let mut wrong = w_full.clone();
        wrong[3] = 1.0; // column 3 never occurs (indices are 7 mod 1000)
        assert_eq!(map.compress(&wrong, bias >= 0.0), Err(3));
    }
}

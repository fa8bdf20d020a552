//! On a problem whose active set never changes the SVR objective is a plain
//! quadratic, solved in closed form: with p = 0 every row with a non-zero
//! residual is active, and `w = (I + 2C XᵀX)⁻¹ 2C Xᵀy`.

use linfa::ParamGuard;
use niwatori::rows::libsvm::{Rows, parse_block};
use niwatori::train::dataset::Dataset;
use niwatori::train::{SvrParams, fit_quiet};

/// Solve `a·x = b` by Gaussian elimination with partial pivoting.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for k in 0..n {
        let p = (k..n)
            .max_by(|&i, &j| a[i][k].abs().total_cmp(&a[j][k].abs()))
            .unwrap();
        a.swap(k, p);
        b.swap(k, p);
        let pivot = a[k].clone();
        for i in k + 1..n {
            let f = a[i][k] / pivot[k];
            for (aij, pj) in a[i].iter_mut().zip(&pivot).skip(k) {
                *aij -= f * pj;
            }
            b[i] -= f * b[k];
        }
    }
    let mut x = vec![0.0; n];
    for k in (0..n).rev() {
        let s: f64 = (k + 1..n).map(|j| a[k][j] * x[j]).sum();
        x[k] = (b[k] - s) / a[k][k];
    }
    x
}

fn check(text: &str, c: f64, bias: f64) {
    let mut rows = Rows::default();
    parse_block(text.as_bytes(), &mut rows).unwrap();
    let data = Dataset::from_rows(rows, 0, bias).unwrap();
    let n = data.dim();
    let x: Vec<Vec<f64>> = (0..data.n_rows())
        .map(|i| {
            let mut r = vec![0.0; n];
            let (idx, val) = data.row(i);
            for (j, v) in idx.iter().zip(val) {
                r[*j as usize] = v;
            }
            if bias >= 0.0 {
                r[n - 1] = bias;
            }
            r
        })
        .collect();
    let y = data.labels();
    let mut a = vec![vec![0.0; n]; n];
    let mut b = vec![0.0; n];
    for j in 0..n {
        a[j][j] = 1.0;
        for (xi, yi) in x.iter().zip(y) {
            b[j] += 2.0 * c * xi[j] * yi;
            for k in 0..n {
                a[j][k] += 2.0 * c * xi[j] * xi[k];
            }
        }
    }
    let want = solve(a, b);
    let params = SvrParams::default()
        .c(c)
        .p(0.0)
        .eps(1e-10)
        .bias(bias)
        .check()
        .unwrap();
    let (w, sol) = fit_quiet(&data, &params);
    for (g, e) in w.iter().zip(&want) {
        assert!((g - e).abs() <= 1e-6, "weights {w:?}, closed form {want:?}");
    }
    // Every residual is non-zero, so the active set was all rows throughout.
    for (xi, yi) in x.iter().zip(y) {
        let r: f64 = xi.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() - yi;
        assert!(r.abs() > 1e-4);
    }
    assert!(sol.iterations >= 1);
}

#[test]
fn weights_match_the_closed_form() {
    let text = "0.5 1:1 3:2\n-0.25 2:1 3:1\n0.1 1:3\n0.8 1:1 2:2 4:1\n-0.6 2:3 4:2\n0.3 3:1 4:1\n";
    check(text, 1.0, -1.0);
    check(text, 0.3, 1.0);
    check(text, 10.0, 2.0);
}

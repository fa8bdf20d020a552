//! Training rows in memory: a compact CSR matrix and its parallel products.
//!
//! Indices are `u32` and values take the narrowest exact type ([`Values`]):
//! one byte for the small integers of feature files, so a non-zero costs
//! 5 bytes (LIBLINEAR spends 16). The matrix is a [`sprs::CsMatI`]; an
//! optional bias column (LIBLINEAR's `-B`) is virtual, a constant added to
//! every row without being stored.
//!
//! `X·v` runs in parallel over rows; `Xᵀ·u` and `XᵀX·s` over the rows of an
//! active set run with one accumulator per thread, summed at the end.
//!
//! ```
//! use niwatori::train::dataset::Dataset;
//! use niwatori::train::libsvm::{parse_block, Rows};
//! let mut rows = Rows::default();
//! parse_block(b"1 1:2\n-1 2:1 3:1\n", &mut rows).unwrap();
//! let data = Dataset::from_rows(rows, 0, -1.0).unwrap();
//! let mut xv = vec![0.0; 2];
//! data.mul_vec(&[1.0, 10.0, 100.0], &mut xv);
//! assert_eq!(xv, vec![2.0, 110.0]);
//! ```

use std::ops::Range;

use rayon::prelude::*;
use sprs::CsMatI;
use thiserror::Error;

use super::libsvm::{Rows, Values};

/// An error building a data set.
#[derive(Debug, Error)]
pub enum DatasetError {
    #[error("invalid CSR structure: {0}")]
    Structure(String),
    #[error("too many non-zeros for this platform")]
    TooLarge,
}

/// The stored matrix, by value type.
#[derive(Debug, Clone)]
pub enum Matrix {
    U8(CsMatI<u8, u32, usize>),
    F32(CsMatI<f32, u32, usize>),
    F64(CsMatI<f64, u32, usize>),
}

/// A stored value that converts to `f64` exactly.
pub trait Value: Copy + Send + Sync {
    fn f(self) -> f64;
}
impl Value for u8 {
    #[inline(always)]
    fn f(self) -> f64 {
        f64::from(self)
    }
}
impl Value for f32 {
    #[inline(always)]
    fn f(self) -> f64 {
        f64::from(self)
    }
}
impl Value for f64 {
    #[inline(always)]
    fn f(self) -> f64 {
        self
    }
}

/// Raw CSR slices, for the kernels.
struct Csr<'a, V> {
    indptr: std::borrow::Cow<'a, [usize]>,
    indices: &'a [u32],
    data: &'a [V],
}

impl<V: Value> Csr<'_, V> {
    #[inline(always)]
    fn row(&self, i: usize) -> (&[u32], &[V]) {
        let r = self.indptr[i]..self.indptr[i + 1];
        (&self.indices[r.clone()], &self.data[r])
    }

    /// `xᵢ·v`. Callers assert `v.len() >= cols`.
    #[inline(always)]
    fn dot(&self, i: usize, v: &[f64]) -> f64 {
        let (idx, val) = self.row(i);
        idx.iter()
            .zip(val)
            // SAFETY: sprs checked every index < cols at construction and
            // the public kernels assert that `v` has at least cols entries.
            .map(|(&j, &x)| x.f() * unsafe { *v.get_unchecked(j as usize) })
            .sum()
    }

    /// `out += a·xᵢ`. Callers assert `out.len() >= cols`.
    #[inline(always)]
    fn axpy(&self, i: usize, a: f64, out: &mut [f64]) {
        let (idx, val) = self.row(i);
        for (&j, &x) in idx.iter().zip(val) {
            // SAFETY: as in `dot`.
            unsafe { *out.get_unchecked_mut(j as usize) += a * x.f() };
        }
    }
}

fn csr<V>(m: &CsMatI<V, u32, usize>) -> Csr<'_, V> {
    Csr {
        indptr: m.proper_indptr(),
        indices: m.indices(),
        data: m.data(),
    }
}

macro_rules! with_csr {
    ($m:expr, $c:ident => $body:expr) => {
        match $m {
            Matrix::U8(m) => {
                let $c = csr(m);
                $body
            }
            Matrix::F32(m) => {
                let $c = csr(m);
                $body
            }
            Matrix::F64(m) => {
                let $c = csr(m);
                $body
            }
        }
    };
}

/// Labelled rows for training.
#[derive(Debug, Clone)]
pub struct Dataset {
    x: Matrix,
    y: Vec<f64>,
    /// Bias value `B` (LIBLINEAR `-B`); negative means no bias column.
    bias: f64,
}

/// Split `0..n` into `parts` contiguous ranges.
fn split(n: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1);
    (0..parts)
        .map(|k| n * k / parts..n * (k + 1) / parts)
        .filter(|r| !r.is_empty())
        .collect()
}

/// Sum, over `ranges` in parallel, what `f` accumulates into a zeroed vector
/// of length `dim`. The first range accumulates into `out` itself, each
/// other into its own vector (the feature space can be millions wide, so
/// one fewer vector matters); they are added in a fixed order so results do
/// not depend on scheduling.
fn accumulate<F>(ranges: Vec<Range<usize>>, dim: usize, out: &mut [f64], f: F)
where
    F: Fn(Range<usize>, &mut [f64]) + Sync,
{
    out.fill(0.0);
    let mut ranges = ranges.into_iter();
    let Some(first) = ranges.next() else {
        return;
    };
    let rest: Vec<Range<usize>> = ranges.collect();
    let (_, accs) = rayon::join(
        || f(first, out),
        || {
            rest.into_par_iter()
                .map(|r| {
                    let mut acc = vec![0.0; dim];
                    f(r, &mut acc);
                    acc
                })
                .collect::<Vec<_>>()
        },
    );
    for acc in &accs {
        out.par_iter_mut()
            .zip(acc.par_iter())
            .for_each(|(o, a)| *o += a);
    }
}

impl Dataset {
    /// Build from parsed rows. `min_features` widens the feature space
    /// (e.g. to the extractor's `num_features`); `bias < 0` means no bias.
    pub fn from_rows(rows: Rows, min_features: usize, bias: f64) -> Result<Self, DatasetError> {
        let n_rows = rows.labels.len();
        let n_cols = (rows.max_index as usize).max(min_features);
        let mut indptr = Vec::with_capacity(n_rows + 1);
        let mut acc = 0usize;
        indptr.push(0);
        for len in &rows.row_lengths {
            acc = acc
                .checked_add(*len as usize)
                .ok_or(DatasetError::TooLarge)?;
            indptr.push(acc);
        }
        // Indices are 1-based in the file, 0-based in the matrix.
        let mut indices = rows.indices;
        indices.par_iter_mut().for_each(|j| *j -= 1);
        let shape = (n_rows, n_cols);
        let err = |e: sprs::errors::StructureError| DatasetError::Structure(e.to_string());
        let x = match rows.values {
            Values::U8(v) => Matrix::U8(
                CsMatI::try_new(shape, indptr, indices, v).map_err(|(_, _, _, e)| err(e))?,
            ),
            Values::F32(v) => Matrix::F32(
                CsMatI::try_new(shape, indptr, indices, v).map_err(|(_, _, _, e)| err(e))?,
            ),
            Values::F64(v) => Matrix::F64(
                CsMatI::try_new(shape, indptr, indices, v).map_err(|(_, _, _, e)| err(e))?,
            ),
        };
        Ok(Dataset {
            x,
            y: rows.labels,
            bias,
        })
    }

    /// The same rows with other labels and bias (copies the matrix).
    pub fn with_labels(&self, y: Vec<f64>, bias: f64) -> Dataset {
        assert_eq!(y.len(), self.n_rows());
        Dataset {
            x: self.x.clone(),
            y,
            bias,
        }
    }

    /// Use bias `b` (LIBLINEAR `-B b`); negative removes it.
    pub fn set_bias(&mut self, b: f64) {
        self.bias = b;
    }

    pub fn bias(&self) -> f64 {
        self.bias
    }

    pub fn matrix(&self) -> &Matrix {
        &self.x
    }

    pub fn labels(&self) -> &[f64] {
        &self.y
    }

    pub fn n_rows(&self) -> usize {
        self.y.len()
    }

    /// Columns stored in the matrix (features, without the bias).
    pub fn n_features(&self) -> usize {
        match &self.x {
            Matrix::U8(m) => m.cols(),
            Matrix::F32(m) => m.cols(),
            Matrix::F64(m) => m.cols(),
        }
    }

    /// Number of weights: features plus one if there is a bias column.
    pub fn dim(&self) -> usize {
        self.n_features() + usize::from(self.bias >= 0.0)
    }

    pub fn nnz(&self) -> usize {
        match &self.x {
            Matrix::U8(m) => m.nnz(),
            Matrix::F32(m) => m.nnz(),
            Matrix::F64(m) => m.nnz(),
        }
    }

    /// Bytes per stored value (1, 4 or 8).
    pub fn value_width(&self) -> usize {
        match &self.x {
            Matrix::U8(_) => 1,
            Matrix::F32(_) => 4,
            Matrix::F64(_) => 8,
        }
    }

    /// Bytes held by the matrix and the labels.
    pub fn bytes(&self) -> usize {
        self.nnz() * (4 + self.value_width()) + (self.n_rows() + 1) * 8 + self.n_rows() * 8
    }

    /// Row `i` as (0-based indices, values), without the bias.
    pub fn row(&self, i: usize) -> (Vec<u32>, Vec<f64>) {
        with_csr!(&self.x, c => {
            let (idx, val) = c.row(i);
            (idx.to_vec(), val.iter().map(|v| v.f()).collect())
        })
    }

    /// The bias weight's share of row products: `B·v[n]` or 0.
    fn bias_term(&self, v: &[f64]) -> f64 {
        if self.bias >= 0.0 {
            self.bias * v[self.n_features()]
        } else {
            0.0
        }
    }

    /// `out = X·v` (all rows, in parallel). `v.len() == dim()`.
    pub fn mul_vec(&self, v: &[f64], out: &mut [f64]) {
        assert_eq!(v.len(), self.dim());
        assert_eq!(out.len(), self.n_rows());
        let b = self.bias_term(v);
        with_csr!(&self.x, c => {
            out.par_chunks_mut(4096).enumerate().for_each(|(k, chunk)| {
                let base = k * 4096;
                for (o, i) in chunk.iter_mut().zip(base..) {
                    *o = c.dot(i, v) + b;
                }
            })
        });
    }

    /// `out = Σₖ u[k]·x_{rows[k]}` (`Xᵀ·u` over a subset of rows).
    pub fn tmul_rows(&self, rows: &[u32], u: &[f64], out: &mut [f64]) {
        assert_eq!(rows.len(), u.len());
        assert_eq!(out.len(), self.dim());
        let n = self.n_features();
        let dim = self.dim();
        let ranges = split(rows.len(), rayon::current_num_threads());
        with_csr!(&self.x, c => accumulate(ranges, dim, out, |r, acc| {
            for k in r {
                c.axpy(rows[k] as usize, u[k], acc);
                if self.bias >= 0.0 {
                    acc[n] += u[k] * self.bias;
                }
            }
        }));
    }

    /// `out = Σ_{i ∈ rows} (xᵢ·s)·xᵢ` (`X_Iᵀ X_I s`), one pass over the rows.
    pub fn gram_vec(&self, rows: &[u32], s: &[f64], out: &mut [f64]) {
        assert_eq!(s.len(), self.dim());
        assert_eq!(out.len(), self.dim());
        let n = self.n_features();
        let dim = self.dim();
        let b = self.bias;
        let ranges = split(rows.len(), rayon::current_num_threads());
        with_csr!(&self.x, c => accumulate(ranges, dim, out, |r, acc| {
            for &i in &rows[r] {
                let i = i as usize;
                let t = c.dot(i, s) + self.bias_term(s);
                c.axpy(i, t, acc);
                if b >= 0.0 {
                    acc[n] += t * b;
                }
            }
        }));
    }

    /// `out[j] = Σ_{i ∈ rows} x_ij²` (the diagonal of `X_Iᵀ X_I`).
    pub fn sq_col_sums(&self, rows: &[u32], out: &mut [f64]) {
        assert_eq!(out.len(), self.dim());
        let n = self.n_features();
        let dim = self.dim();
        let b = self.bias;
        let ranges = split(rows.len(), rayon::current_num_threads());
        with_csr!(&self.x, c => accumulate(ranges, dim, out, |r, acc| {
            for &i in &rows[r] {
                let (idx, val) = c.row(i as usize);
                for (&j, &x) in idx.iter().zip(val) {
                    acc[j as usize] += x.f() * x.f();
                }
                if b >= 0.0 {
                    acc[n] += b * b;
                }
            }
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::libsvm::parse_block;

    fn data(text: &str, bias: f64) -> Dataset {
        let mut rows = Rows::default();
        parse_block(text.as_bytes(), &mut rows).unwrap();
        Dataset::from_rows(rows, 0, bias).unwrap()
    }

    /// Dense reference products.
    fn dense(d: &Dataset) -> Vec<Vec<f64>> {
        (0..d.n_rows())
            .map(|i| {
                let mut r = vec![0.0; d.dim()];
                let (idx, val) = d.row(i);
                for (j, v) in idx.iter().zip(val) {
                    r[*j as usize] = v;
                }
                if d.bias() >= 0.0 {
                    r[d.n_features()] = d.bias();
                }
                r
            })
            .collect()
    }

    #[test]
    fn products_match_dense_arithmetic() {
        for bias in [-1.0, 2.0] {
            let d = data("1 1:2 4:1\n-1 2:1 3:3\n0.5 1:1 2:1 3:1 4:1\n", bias);
            let x = dense(&d);
            let v: Vec<f64> = (0..d.dim()).map(|j| 0.5 + j as f64).collect();
            let mut xv = vec![0.0; 3];
            d.mul_vec(&v, &mut xv);
            for i in 0..3 {
                let want: f64 = x[i].iter().zip(&v).map(|(a, b)| a * b).sum();
                assert_eq!(xv[i], want);
            }
            let rows = [0u32, 2];
            let u = [3.0, -1.0];
            let mut g = vec![0.0; d.dim()];
            d.tmul_rows(&rows, &u, &mut g);
            let mut h = vec![0.0; d.dim()];
            d.gram_vec(&rows, &v, &mut h);
            let mut q = vec![0.0; d.dim()];
            d.sq_col_sums(&rows, &mut q);
            for j in 0..d.dim() {
                assert_eq!(g[j], 3.0 * x[0][j] - x[2][j]);
                assert_eq!(h[j], xv[0] * x[0][j] + xv[2] * x[2][j]);
                assert_eq!(q[j], x[0][j].powi(2) + x[2][j].powi(2));
            }
        }
    }

    #[test]
    fn feature_files_cost_five_bytes_per_nonzero() {
        let d = data("1 1:2 4:1\n-1 2:1 3:3\n", -1.0);
        assert_eq!(d.value_width(), 1);
        assert_eq!(d.nnz(), 4);
        assert_eq!(d.n_features(), 4);
    }
}

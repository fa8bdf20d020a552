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
//! use niwatori::rows::libsvm::{parse_block, Rows};
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

use super::exact::{ExactSum, MAX_BLOCKS};
use super::ranks::{Alone, Ranks};
use crate::rows::libsvm::{Rows, Values};

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

/// `m` over the columns that occur in it.
fn compact_matrix<V: Clone>(
    m: &CsMatI<V, u32, usize>,
    n_cols: usize,
) -> (CsMatI<V, u32, usize>, ColumnMap) {
    let mut indices = m.indices().to_vec();
    let map = ColumnMap::compact(&mut indices, n_cols);
    let shape = (m.rows(), map.n_used());
    let x = CsMatI::new(
        shape,
        m.proper_indptr().into_owned(),
        indices,
        m.data().to_vec(),
    );
    (x, map)
}

/// Labelled rows for training.
#[derive(Debug, Clone)]
pub struct Dataset {
    x: Matrix,
    y: Vec<f64>,
    /// Bias value `B` (LIBLINEAR `-B`); negative means no bias column.
    bias: f64,
    /// First row of each block, ascending from 0: the unit of every sum
    /// over rows (see [`crate::train::exact`]).
    block_starts: Vec<usize>,
}

/// Rows per block, unless the loader sets the blocks from the files.
pub const BLOCK_ROWS: usize = 1 << 16;

/// Blocks of at most [`BLOCK_ROWS`] rows from each of `starts` (group
/// starts, ascending from 0) to the next, the last group ending at `n`.
pub fn blocks_from_groups(starts: &[usize], n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for (k, &a) in starts.iter().enumerate() {
        let b = starts.get(k + 1).copied().unwrap_or(n);
        out.extend((a..b).step_by(BLOCK_ROWS));
    }
    if out.is_empty() {
        out.push(0);
    }
    out
}

/// Sums over the rows in `rows` (ascending row numbers) block by block:
/// `f(k_range, acc)` accumulates the rows `rows[k_range]` of one block into
/// a zeroed `acc`, in order; the block sums are added exactly. Threads take
/// contiguous runs of blocks, one accumulator each; the result does not
/// depend on how many.
fn accumulate_blocks<F>(starts: &[usize], rows: &[u32], dim: usize, f: F) -> ExactSum
where
    F: Fn(Range<usize>, &mut [f64]) + Sync,
{
    // Each block's slice of `rows`.
    let cuts: Vec<usize> = starts
        .iter()
        .map(|&a| rows.partition_point(|&i| (i as usize) < a))
        .chain(std::iter::once(rows.len()))
        .collect();
    let spans: Vec<Range<usize>> = cuts
        .windows(2)
        .map(|w| w[0]..w[1])
        .filter(|r| !r.is_empty())
        .collect();
    let threads = rayon::current_num_threads().max(1);
    let runs: Vec<&[Range<usize>]> = (0..threads)
        .map(|t| &spans[spans.len() * t / threads..spans.len() * (t + 1) / threads])
        .filter(|r| !r.is_empty())
        .collect();
    runs.into_par_iter()
        .map(|run| {
            let mut acc = vec![0.0; dim];
            let mut sum = ExactSum::zeros(dim);
            for span in run {
                f(span.clone(), &mut acc);
                sum.add_and_clear(&mut acc);
            }
            sum
        })
        .reduce(
            || ExactSum::zeros(dim),
            |mut a, b| {
                a.merge(&b);
                a
            },
        )
}

/// The feature columns that occur in a data set, numbered `0..m` in
/// ascending order ("compact" columns), and the width of the full space.
///
/// A file of 50 games uses about 74,000 of the scheme's 5,164,760 features;
/// solving over the compact columns makes every solver vector 70 times
/// smaller. Weights of features that never occur are zero at the optimum
/// (their gradient is their own weight), so [`ColumnMap::expand`] restores
/// the full-space solution exactly.
///
/// ```
/// use niwatori::train::dataset::Dataset;
/// use niwatori::rows::libsvm::{parse_block, Rows};
/// let mut rows = Rows::default();
/// parse_block(b"1 2:1 9:3\n-1 5:1\n", &mut rows).unwrap();
/// let (data, map) = Dataset::from_rows_compact(rows, 10, -1.0).unwrap();
/// assert_eq!((data.n_features(), map.n_features()), (3, 10));
/// assert_eq!(map.used(), &[1, 4, 8]);
/// let full = map.expand(&[0.5, -1.0, 2.0], false);
/// assert_eq!(full, vec![0.0, 0.5, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 2.0, 0.0]);
/// assert_eq!(map.compress(&full, false), Ok(vec![0.5, -1.0, 2.0]));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnMap {
    /// Full-space (0-based) column of each compact column, ascending.
    used: Vec<u32>,
    n_features: usize,
}

impl ColumnMap {
    /// Renumber 0-based `indices` (below `n_cols`) to compact columns, in
    /// place; the renumbering keeps their order, so sorted rows stay sorted.
    /// Uses a bitset with per-word ranks: `n_cols / 8 · 1.5` bytes.
    fn compact(indices: &mut [u32], n_cols: usize) -> ColumnMap {
        Self::compact_on(indices, n_cols, &Alone)
    }

    /// [`compact`](Self::compact) over the columns that occur on any rank.
    fn compact_on(indices: &mut [u32], n_cols: usize, ranks: &dyn Ranks) -> ColumnMap {
        use std::sync::atomic::{AtomicU64, Ordering};
        let words = n_cols.div_ceil(64);
        let seen: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(0)).collect();
        indices.par_chunks(1 << 16).for_each(|chunk| {
            for &j in chunk {
                seen[j as usize >> 6].fetch_or(1 << (j & 63), Ordering::Relaxed);
            }
        });
        let mut seen: Vec<u64> = seen.into_iter().map(AtomicU64::into_inner).collect();
        ranks.or(&mut seen);
        let mut rank = Vec::with_capacity(words);
        let mut used = Vec::new();
        for (k, &bits) in seen.iter().enumerate() {
            rank.push(used.len() as u32);
            let mut b = bits;
            while b != 0 {
                used.push((k * 64) as u32 + b.trailing_zeros());
                b &= b - 1;
            }
        }
        indices.par_iter_mut().for_each(|j| {
            let (k, bit) = (*j as usize >> 6, *j & 63);
            *j = rank[k] + (seen[k] & ((1u64 << bit) - 1)).count_ones();
        });
        ColumnMap {
            used,
            n_features: n_cols,
        }
    }

    /// Features of the full space (LIBLINEAR's `nr_feature`).
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// Features that occur in the data (the compact space's width).
    pub fn n_used(&self) -> usize {
        self.used.len()
    }

    /// Full-space 0-based column of each compact column.
    pub fn used(&self) -> &[u32] {
        &self.used
    }

    /// Full-space weights (features, then the bias weight if `bias`) from
    /// compact ones; features that never occur get weight 0.
    pub fn expand(&self, w: &[f64], bias: bool) -> Vec<f64> {
        assert_eq!(w.len(), self.n_used() + usize::from(bias));
        let mut full = vec![0.0; self.n_features + usize::from(bias)];
        for (&j, &x) in self.used.iter().zip(w) {
            full[j as usize] = x;
        }
        if bias {
            full[self.n_features] = w[self.n_used()];
        }
        full
    }

    /// Compact weights from full-space ones (as [`expand`](Self::expand)
    /// wrote them). `Err(j)`: feature column `j` does not occur in the data
    /// but has a non-zero weight, so the weights do not belong to this data.
    pub fn compress(&self, full: &[f64], bias: bool) -> Result<Vec<f64>, usize> {
        assert_eq!(full.len(), self.n_features + usize::from(bias));
        let mut next = self.used.iter().peekable();
        for (j, &x) in full[..self.n_features].iter().enumerate() {
            if next.peek().is_some_and(|&&u| u as usize == j) {
                next.next();
            } else if x != 0.0 {
                return Err(j);
            }
        }
        let mut w: Vec<f64> = self.used.iter().map(|&j| full[j as usize]).collect();
        if bias {
            w.push(full[self.n_features]);
        }
        Ok(w)
    }
}

impl Dataset {
    /// Build from parsed rows. `min_features` widens the feature space
    /// (e.g. to the extractor's `num_features`); `bias < 0` means no bias.
    pub fn from_rows(rows: Rows, min_features: usize, bias: f64) -> Result<Self, DatasetError> {
        let n_cols = (rows.max_index as usize).max(min_features);
        let mut rows = rows;
        // Indices are 1-based in the file, 0-based in the matrix.
        rows.indices.par_iter_mut().for_each(|j| *j -= 1);
        Self::from_zero_based(rows, n_cols, bias)
    }

    /// Build from parsed rows over only the columns that occur in them
    /// (see [`ColumnMap`]): the solver's vectors then have one entry per
    /// feature seen, not per feature of the scheme. Products in the compact
    /// space are the same sums, in the same order, as in the full space.
    pub fn from_rows_compact(
        rows: Rows,
        min_features: usize,
        bias: f64,
    ) -> Result<(Self, ColumnMap), DatasetError> {
        let n_cols = (rows.max_index as usize).max(min_features);
        Self::from_rows_compact_on(rows, n_cols, bias, &Alone)
    }

    /// This rank's rows over the columns that occur on any rank, `n_cols`
    /// wide in the full space (the largest index of all ranks, or more):
    /// every rank gets the same [`ColumnMap`].
    pub fn from_rows_compact_on(
        rows: Rows,
        n_cols: usize,
        bias: f64,
        ranks: &dyn Ranks,
    ) -> Result<(Self, ColumnMap), DatasetError> {
        assert!(rows.max_index as usize <= n_cols);
        let mut rows = rows;
        rows.indices.par_iter_mut().for_each(|j| *j -= 1);
        let map = ColumnMap::compact_on(&mut rows.indices, n_cols, ranks);
        let data = Self::from_zero_based(rows, map.n_used(), bias)?;
        Ok((data, map))
    }

    /// A copy over only the columns that occur (see [`ColumnMap`]).
    pub fn compacted(&self) -> (Dataset, ColumnMap) {
        let n = self.n_features();
        let (x, map) = match &self.x {
            Matrix::U8(m) => {
                let (m, map) = compact_matrix(m, n);
                (Matrix::U8(m), map)
            }
            Matrix::F32(m) => {
                let (m, map) = compact_matrix(m, n);
                (Matrix::F32(m), map)
            }
            Matrix::F64(m) => {
                let (m, map) = compact_matrix(m, n);
                (Matrix::F64(m), map)
            }
        };
        let data = Dataset {
            x,
            y: self.y.clone(),
            bias: self.bias,
            block_starts: self.block_starts.clone(),
        };
        (data, map)
    }

    fn from_zero_based(rows: Rows, n_cols: usize, bias: f64) -> Result<Self, DatasetError> {
        let n_rows = rows.labels.len();
        let mut indptr = Vec::with_capacity(n_rows + 1);
        let mut acc = 0usize;
        indptr.push(0);
        for len in &rows.row_lengths {
            acc = acc
                .checked_add(*len as usize)
                .ok_or(DatasetError::TooLarge)?;
            indptr.push(acc);
        }
        let indices = rows.indices;
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
            block_starts: blocks_from_groups(&[0], n_rows),
        })
    }

    /// The same rows with other labels and bias (copies the matrix).
    pub fn with_labels(&self, y: Vec<f64>, bias: f64) -> Dataset {
        assert_eq!(y.len(), self.n_rows());
        Dataset {
            x: self.x.clone(),
            y,
            bias,
            block_starts: self.block_starts.clone(),
        }
    }

    /// Sums over rows go by these blocks (first rows, ascending from 0):
    /// the loader's, cut where the files are, so that every shard of an
    /// MPI run holds whole blocks.
    pub fn set_block_starts(&mut self, starts: Vec<usize>) {
        assert!(
            starts.first() == Some(&0) && starts.windows(2).all(|w| w[0] < w[1]),
            "block starts must ascend from 0"
        );
        assert!(starts.len() <= MAX_BLOCKS, "more than {MAX_BLOCKS} blocks");
        self.block_starts = starts;
    }

    /// First row of each block.
    pub fn block_starts(&self) -> &[usize] {
        &self.block_starts
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

    /// `out = Σₖ u[k]·x_{rows[k]}` (`Xᵀ·u` over a subset of rows, in
    /// ascending order).
    pub fn tmul_rows(&self, rows: &[u32], u: &[f64], out: &mut [f64]) {
        self.tmul_rows_exact(rows, u).write_f64(out);
    }

    /// [`tmul_rows`](Self::tmul_rows), summed exactly over blocks.
    pub fn tmul_rows_exact(&self, rows: &[u32], u: &[f64]) -> ExactSum {
        assert_eq!(rows.len(), u.len());
        let n = self.n_features();
        let b = self.bias;
        with_csr!(&self.x, c => accumulate_blocks(&self.block_starts, rows, self.dim(), |r, acc| {
            for k in r {
                c.axpy(rows[k] as usize, u[k], acc);
                if b >= 0.0 {
                    acc[n] += u[k] * b;
                }
            }
        }))
    }

    /// `out = Σ_{i ∈ rows} (xᵢ·s)·xᵢ` (`X_Iᵀ X_I s`), one pass over the rows.
    pub fn gram_vec(&self, rows: &[u32], s: &[f64], out: &mut [f64]) {
        self.gram_vec_exact(rows, s).write_f64(out);
    }

    /// [`gram_vec`](Self::gram_vec), summed exactly over blocks.
    pub fn gram_vec_exact(&self, rows: &[u32], s: &[f64]) -> ExactSum {
        assert_eq!(s.len(), self.dim());
        let n = self.n_features();
        let b = self.bias;
        with_csr!(&self.x, c => accumulate_blocks(&self.block_starts, rows, self.dim(), |r, acc| {
            for &i in &rows[r] {
                let i = i as usize;
                let t = c.dot(i, s) + self.bias_term(s);
                c.axpy(i, t, acc);
                if b >= 0.0 {
                    acc[n] += t * b;
                }
            }
        }))
    }

    /// `out[j] = Σ_{i ∈ rows} x_ij²` (the diagonal of `X_Iᵀ X_I`).
    pub fn sq_col_sums(&self, rows: &[u32], out: &mut [f64]) {
        self.sq_col_sums_exact(rows).write_f64(out);
    }

    /// [`sq_col_sums`](Self::sq_col_sums), summed exactly over blocks.
    pub fn sq_col_sums_exact(&self, rows: &[u32]) -> ExactSum {
        let n = self.n_features();
        let b = self.bias;
        with_csr!(&self.x, c => accumulate_blocks(&self.block_starts, rows, self.dim(), |r, acc| {
            for &i in &rows[r] {
                let (idx, val) = c.row(i as usize);
                for (&j, &x) in idx.iter().zip(val) {
                    acc[j as usize] += x.f() * x.f();
                }
                if b >= 0.0 {
                    acc[n] += b * b;
                }
            }
        }))
    }

    /// `Σᵢ f(i)` over every row, summed exactly over blocks.
    pub fn sum_rows_exact(&self, f: impl Fn(usize) -> f64 + Sync) -> ExactSum {
        let n = self.n_rows();
        let starts = &self.block_starts;
        let sums: Vec<ExactSum> = (0..starts.len())
            .into_par_iter()
            .map(|k| {
                let end = starts.get(k + 1).copied().unwrap_or(n);
                let mut one = ExactSum::zeros(1);
                one.add(&[(starts[k]..end).map(&f).sum::<f64>()]);
                one
            })
            .collect();
        let mut total = ExactSum::zeros(1);
        for s in &sums {
            total.merge(s);
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::libsvm::parse_block;

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

//! Sums whose bits do not depend on how the work was split.
//!
//! Every sum over rows in training (the loss, the gradient, Hessian-vector
//! products) is taken block by block: each block of rows is summed in row
//! order in `f64`, and the block sums are added in fixed point, exactly, so
//! the order in which threads or MPI ranks add them cannot change a bit.
//! A run on one thread, on 32, or on 16 machines takes the same Newton
//! steps and writes the same model.
//!
//! The fixed point is an `i128` counting 2⁻⁶⁰: block sums are rounded to
//! 8.7·10⁻¹⁹ and may reach ±2⁴⁶ (7·10¹³) in magnitude, so that 2²⁰ of
//! them (a million blocks of rows) cannot overflow; a block sum beyond that
//! is refused.
//!
//! ```
//! use niwatori::train::exact::ExactSum;
//! let mut a = ExactSum::zeros(1);
//! let mut b = ExactSum::zeros(1);
//! for x in [1e-3, 1e6, -1e6, 2.5] {
//!     a.add(&[x]);
//! }
//! for x in [2.5, -1e6, 1e-3, 1e6] {
//!     b.add(&[x]);
//! }
//! assert_eq!(a.to_f64(), b.to_f64());
//! assert_eq!(a.to_f64(), [2.501]);
//! ```

/// 2⁶⁰: one unit of the fixed point is 2⁻⁶⁰.
const SCALE: f64 = 1_152_921_504_606_846_976.0;
/// The largest block sum taken: 2⁴⁶, so that [`MAX_BLOCKS`] of them fit
/// in 2¹²⁶ units.
pub const LIMIT: f64 = 70_368_744_177_664.0;
/// The most blocks a sum may add.
pub const MAX_BLOCKS: usize = 1 << 20;

/// `x·2⁶⁰` rounded to the nearest integer (halves away from zero), from
/// the bits: `as i128` on a float is a library call, and this runs once
/// per feature per block.
#[inline]
fn to_fixed(x: f64) -> i128 {
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        return 0; // zero, or below 2⁻¹⁰²² (far below one unit)
    }
    let mant = i128::from((bits & ((1 << 52) - 1)) | (1 << 52));
    // x = mant·2^(exp − 1075), so x·2⁶⁰ = mant·2^(exp − 1015).
    let shift = exp - 1015;
    let v = if shift >= 0 {
        mant << shift
    } else if shift > -64 {
        (mant + (1 << (-shift - 1))) >> -shift
    } else {
        0
    };
    if bits >> 63 == 1 { -v } else { v }
}

/// Fixed-point sums of vectors of `f64`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExactSum(pub Vec<i128>);

impl ExactSum {
    pub fn zeros(n: usize) -> Self {
        ExactSum(vec![0; n])
    }

    /// Adds `v` (one block's sums), rounded to the fixed point.
    ///
    /// # Panics
    /// If an element is not finite or beyond [`LIMIT`]: a training sum
    /// that large means the data or the parameters are beyond use.
    pub fn add(&mut self, v: &[f64]) {
        self.add_and_clear(&mut v.to_vec());
    }

    /// Adds another sum.
    pub fn merge(&mut self, other: &ExactSum) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a += b;
        }
    }

    /// [`add`](Self::add), leaving `v` zeroed for the next block (one
    /// pass over it instead of two).
    pub fn add_and_clear(&mut self, v: &mut [f64]) {
        assert_eq!(v.len(), self.0.len());
        let mut within = true;
        for (s, x) in self.0.iter_mut().zip(v) {
            let x = std::mem::take(x);
            within &= x.abs() < LIMIT; // false for NaN too
            *s += to_fixed(x);
        }
        assert!(
            within,
            "a sum over rows is not finite or beyond the exact summation's ±{LIMIT:e}"
        );
    }

    /// The sums as `f64` (rounded once).
    pub fn to_f64(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.0.len()];
        self.write_f64(&mut out);
        out
    }

    /// The sums as `f64` into `out`.
    pub fn write_f64(&self, out: &mut [f64]) {
        for (o, &s) in out.iter_mut().zip(&self.0) {
            *o = s as f64 / SCALE;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Any order, any grouping, the same bits.
    #[test]
    fn the_order_of_additions_changes_nothing() {
        let xs: Vec<f64> = (0..1000)
            .map(|i| ((i * 7919 % 1000) as f64 - 500.0) * 1.37e-3 * (1 + i % 7) as f64)
            .collect();
        let sum = |order: &mut dyn Iterator<Item = f64>| {
            let mut s = ExactSum::zeros(1);
            for x in order {
                s.add(&[x]);
            }
            s
        };
        let forward = sum(&mut xs.iter().copied());
        let backward = sum(&mut xs.iter().rev().copied());
        assert_eq!(forward, backward);
        let mut halves = sum(&mut xs[..333].iter().copied());
        halves.merge(&sum(&mut xs[333..].iter().copied()));
        assert_eq!(halves, forward);
        // Close to the f64 sum.
        let plain: f64 = xs.iter().sum();
        assert!((forward.to_f64()[0] - plain).abs() < 1e-12);
    }

    /// The bit-level rounding is `round(x·2⁶⁰)`, halves away from zero.
    #[test]
    fn fixed_point_is_the_rounded_product() {
        let unit = 1.0 / SCALE;
        for x in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            -2.5e-7,
            3.0e13,
            -7.0e13,
            unit,
            0.5 * unit,
            0.49 * unit,
            -1.5 * unit,
            1e-300,
            123_456.789,
        ] {
            let want = (x * SCALE).round() as i128;
            assert_eq!(to_fixed(x), want, "{x:e}");
        }
    }

    #[test]
    #[should_panic(expected = "beyond the exact summation")]
    fn sums_beyond_the_limit_are_refused() {
        ExactSum::zeros(1).add(&[1e14]);
    }

    #[test]
    #[should_panic(expected = "not finite")]
    fn a_nan_among_the_sums_is_refused() {
        ExactSum::zeros(3).add(&[1.0, f64::NAN, 2.0]);
    }
}

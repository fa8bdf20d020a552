//! Training on several processes (ranks, as MPI calls them), each holding
//! a shard of the row files: MPI-LIBLINEAR's scheme. Every rank keeps the
//! whole weight vector and runs the same Newton-CG; only the sums over rows
//! (the loss, the gradient, Hessian-vector products, the preconditioner)
//! are reduced across ranks. They are exact sums of block sums
//! ([`crate::train::exact`]), so every rank gets the bits one process
//! would have: the same steps, the same model.
//!
//! [`Alone`] is the one-process case (every reduction is the identity);
//! `mpi::MpiRanks` (cargo feature `mpi`) is the distributed one.
//!
//! ```
//! use niwatori::train::exact::ExactSum;
//! use niwatori::train::ranks::{Alone, Ranks, shard_of};
//! let mut v = ExactSum::zeros(2);
//! v.add(&[1.5, -2.0]);
//! Alone.sum(&mut v);
//! assert_eq!(v.to_f64(), [1.5, -2.0]);
//! // Files of 10, 10, 30 and 50 bytes over two ranks: the last file's
//! // middle byte is past half the total.
//! assert_eq!(shard_of(&[10, 10, 30, 50], 0, 2), 0..3);
//! assert_eq!(shard_of(&[10, 10, 30, 50], 1, 2), 3..4);
//! ```

use std::ops::Range;

use super::exact::ExactSum;

/// The reductions a sharded training run needs. Every rank must call each
/// one at the same point, as MPI collectives.
pub trait Ranks: Sync {
    /// This process's rank, `0..size()`.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Element-wise sum over ranks (exact: any order gives the same bits).
    fn sum(&self, v: &mut ExactSum);
    /// Element-wise sum of counts.
    fn sum_counts(&self, v: &mut [u64]);
    /// Element-wise maximum.
    fn max(&self, v: &mut [u64]);
    /// Element-wise bitwise or (sets of columns).
    fn or(&self, v: &mut [u64]);
    /// Bytes this rank has sent in reductions so far.
    fn bytes_sent(&self) -> u64;

    /// Rank 0 writes the model and prints the progress.
    fn is_root(&self) -> bool {
        self.rank() == 0
    }
}

/// One process: every reduction is the identity.
#[derive(Debug, Clone, Copy, Default)]
pub struct Alone;

impl Ranks for Alone {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn sum(&self, _: &mut ExactSum) {}
    fn sum_counts(&self, _: &mut [u64]) {}
    fn max(&self, _: &mut [u64]) {}
    fn or(&self, _: &mut [u64]) {}
    fn bytes_sent(&self) -> u64 {
        0
    }
}

/// The files (a range of `sizes`, in order) that rank `rank` of `size`
/// loads: contiguous, each file going to the rank its middle byte falls in
/// when the total is cut in `size` equal parts, so that shards hold about
/// equal bytes and their concatenation in rank order is every file once,
/// in order.
pub fn shard_of(sizes: &[u64], rank: usize, size: usize) -> Range<usize> {
    assert!(rank < size, "rank {rank} of {size}");
    let total: u128 = sizes.iter().map(|&s| u128::from(s)).sum();
    let owner = |before: u128, s: u128| {
        if total == 0 {
            0
        } else {
            (((2 * before + s) * size as u128) / (2 * total)).min(size as u128 - 1) as usize
        }
    };
    let mut before = 0u128;
    let (mut start, mut end) = (None, 0);
    for (i, &s) in sizes.iter().enumerate() {
        let r = owner(before, u128::from(s));
        if r == rank && start.is_none() {
            start = Some(i);
        }
        if r <= rank {
            end = i + 1;
        }
        before += u128::from(s);
    }
    start.unwrap_or(end)..end
}

/// Bytes of row files per group (see [`file_groups`]).
pub const GROUP_BYTES: u64 = 64 << 20;

/// Consecutive files of about [`GROUP_BYTES`] together (a file larger
/// than that alone): groups are the blocks of the sums over rows
/// ([`crate::train::exact`]) and shards are whole groups, so that the
/// blocks are the same whatever the number of ranks.
pub fn file_groups(sizes: &[u64]) -> Vec<Range<usize>> {
    let mut groups = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, &s) in sizes.iter().enumerate() {
        bytes += s;
        if bytes >= GROUP_BYTES {
            groups.push(start..i + 1);
            (start, bytes) = (i + 1, 0);
        }
    }
    if start < sizes.len() {
        groups.push(start..sizes.len());
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file lands in exactly one shard, in order, for any number of
    /// ranks, including more ranks than files and empty files.
    #[test]
    fn shards_cover_every_file_once_in_order() {
        let cases: [&[u64]; 5] = [&[], &[7], &[0, 0, 0], &[5, 1, 1, 1, 9, 2], &[100, 1, 1]];
        for sizes in cases {
            for size in 1..=7 {
                let mut next = 0;
                for rank in 0..size {
                    let r = shard_of(sizes, rank, size);
                    assert_eq!(r.start, next, "{sizes:?} {rank}/{size}");
                    next = r.end;
                }
                assert_eq!(next, sizes.len(), "{sizes:?} over {size}");
            }
        }
        assert_eq!(shard_of(&[5, 1, 1, 1, 9, 2], 0, 2), 0..4);
        assert_eq!(shard_of(&[5, 1, 1, 1, 9, 2], 1, 2), 4..6);
        assert_eq!(shard_of(&[100, 1, 1], 0, 3), 0..0);
        assert_eq!(shard_of(&[100, 1, 1], 2, 3), 1..3);
    }

    #[test]
    fn groups_gather_small_files_and_leave_large_ones_alone() {
        let mb = 1 << 20;
        assert_eq!(file_groups(&[]), Vec::<Range<usize>>::new());
        assert_eq!(file_groups(&[mb]), vec![(0..1)]);
        assert_eq!(
            file_groups(&[40 * mb, 40 * mb, 100 * mb, mb, mb]),
            [0..2, 2..3, 3..5]
        );
    }
}

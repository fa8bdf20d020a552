//! The [`Ranks`] of an MPI run (cargo feature `mpi`, rsmpi over Open MPI):
//! `mpirun -np K niwatori train …`.
//!
//! The exact sums of [`crate::train::exact`] (i128, which MPI has no type
//! for) go up a binomial tree to rank 0 and back down; the integer
//! reductions (counts, the largest index, the columns that occur) are
//! `MPI_Allreduce`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::exact::ExactSum;
use super::ranks::Ranks;

/// An i128 from its low and high u64 words.
fn join(w: &[u64]) -> i128 {
    (i128::from(w[1] as i64) << 64) | i128::from(w[0])
}

/// The world communicator, initialised at `MPI_THREAD_SERIALIZED` (see
/// [`initialize`]): any thread may call MPI, one at a time, which the
/// mutex around it ensures.
struct World(SimpleCommunicator);

// SAFETY: a communicator is a handle to state of the MPI library; at
// MPI_THREAD_SERIALIZED it may be used from any thread as long as no two
// calls overlap, and it is only reached through a `Mutex`.
unsafe impl Send for World {}

/// Starts MPI for a run in which any thread may reduce (one at a time).
pub fn initialize() -> Option<mpi::environment::Universe> {
    let (universe, level) = mpi::initialize_with_threading(mpi::Threading::Serialized)?;
    (level >= mpi::Threading::Serialized).then_some(universe)
}

/// The world communicator of `mpirun`.
pub struct MpiRanks {
    world: Mutex<World>,
    rank: usize,
    size: usize,
    sent: AtomicU64,
}

impl MpiRanks {
    /// The ranks of `universe.world()`, from [`initialize`].
    pub fn new(universe: &mpi::environment::Universe) -> Self {
        let world = universe.world();
        let (rank, size) = (world.rank() as usize, world.size() as usize);
        MpiRanks {
            world: Mutex::new(World(world)),
            rank,
            size,
            sent: AtomicU64::new(0),
        }
    }

    /// Ends every rank's process (after an error on one, so that the others
    /// do not wait for it in a reduction).
    pub fn abort(&self, code: i32) -> ! {
        self.world.lock().expect("no panic holds it").0.abort(code)
    }

    fn count(&self, bytes: usize) {
        self.sent.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    fn all_reduce(&self, v: &mut [u64], op: SystemOperation) {
        if self.size == 1 {
            return;
        }
        let world = &self.world.lock().expect("no panic holds it").0;
        let send = v.to_vec();
        world.all_reduce_into(&send[..], v, op);
        self.count(std::mem::size_of_val(v));
    }
}

impl Ranks for MpiRanks {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    /// Up a binomial tree to rank 0 and back down: at step `k` (1, 2, 4,
    /// …) a rank that is a multiple of `2k` adds what rank `+k` holds, the
    /// other rank of the pair sends and is done. The sums are exact, so the
    /// order is only for the messages.
    fn sum(&self, v: &mut ExactSum) {
        let (r, n) = (self.rank, self.size);
        if n == 1 {
            return;
        }
        let world = &self.world.lock().expect("no panic holds it").0;
        // i128 as pairs of u64 words, low first.
        let mut words: Vec<u64> =
            v.0.iter()
                .flat_map(|&x| [x as u64, (x >> 64) as u64])
                .collect();
        let bytes = std::mem::size_of_val(&words[..]);
        let mut buf = vec![0u64; words.len()];
        let mut step = 1;
        while step < n {
            if r % (2 * step) == step {
                world.process_at_rank((r - step) as i32).send(&words[..]);
                self.count(bytes);
                break;
            }
            if r + step < n {
                world
                    .process_at_rank((r + step) as i32)
                    .receive_into(&mut buf[..]);
                for (a, b) in words.chunks_exact_mut(2).zip(buf.chunks_exact(2)) {
                    let sum = join(a) + join(b);
                    a.copy_from_slice(&[sum as u64, (sum >> 64) as u64]);
                }
            }
            step *= 2;
        }
        // Down the same tree: a rank gets the sum from the rank it sent to
        // and passes it to the ranks it received from, largest step first.
        let mut step = n.next_power_of_two() / 2;
        let mut have = r == 0;
        while step >= 1 {
            if have {
                if r % (2 * step) == 0 && r + step < n {
                    world.process_at_rank((r + step) as i32).send(&words[..]);
                    self.count(bytes);
                }
            } else if r % (2 * step) == step {
                world
                    .process_at_rank((r - step) as i32)
                    .receive_into(&mut words[..]);
                have = true;
            }
            step /= 2;
        }
        for (x, w) in v.0.iter_mut().zip(words.chunks_exact(2)) {
            *x = join(w);
        }
    }

    fn sum_counts(&self, v: &mut [u64]) {
        self.all_reduce(v, SystemOperation::sum());
    }

    fn max(&self, v: &mut [u64]) {
        self.all_reduce(v, SystemOperation::max());
    }

    fn or(&self, v: &mut [u64]) {
        self.all_reduce(v, SystemOperation::bitwise_or());
    }

    fn bytes_sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}

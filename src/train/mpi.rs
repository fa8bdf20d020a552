//! The [`Ranks`] of an MPI run (cargo feature `mpi`, rsmpi over Open MPI):
//! `mpirun -np K niwatori train …`.
//!
//! Sums of floating-point vectors go up a binomial tree to rank 0 and back
//! down, in an order fixed by the ranks, rather than through
//! `MPI_Allreduce`, whose order (and so whose last bits) the library may
//! choose by message size and rank count: every rank must get the same
//! bits, or their Newton iterations would part. Integer reductions, exact
//! in any order, are `MPI_Allreduce`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::ranks::Ranks;

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

    /// Up the tree: at step `k` (1, 2, 4, …) a rank that is a multiple of
    /// `2k` adds what rank `+k` holds after its own values, the other ranks
    /// of the pair send and are done. Then rank 0's sum goes back down.
    fn sum(&self, v: &mut [f64]) {
        let (r, n) = (self.rank, self.size);
        if n == 1 {
            return;
        }
        let world = &self.world.lock().expect("no panic holds it").0;
        let bytes = std::mem::size_of_val(v);
        let mut buf = vec![0.0; v.len()];
        let mut step = 1;
        while step < n {
            if r % (2 * step) == step {
                world.process_at_rank((r - step) as i32).send(&v[..]);
                self.count(bytes);
                break;
            }
            if r + step < n {
                world
                    .process_at_rank((r + step) as i32)
                    .receive_into(&mut buf[..]);
                for (a, b) in v.iter_mut().zip(&buf) {
                    *a += b;
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
                    world.process_at_rank((r + step) as i32).send(&v[..]);
                    self.count(bytes);
                }
            } else if r % (2 * step) == step {
                world
                    .process_at_rank((r - step) as i32)
                    .receive_into(&mut v[..]);
                have = true;
            }
            step /= 2;
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

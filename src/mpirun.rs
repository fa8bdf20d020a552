//! What `mpirun` tells the processes it starts, through their environment
//! (Open MPI's, MPICH's and PMIx's variables): this process's rank and the
//! number of ranks. Extraction needs no more than that to take its shard;
//! training also reduces across the ranks (`train::ranks`).

/// This process's rank and the number of ranks, when started by `mpirun`
/// with more than one.
pub fn rank_and_size() -> Option<(usize, usize)> {
    let read = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| std::env::var(k).ok()?.parse::<usize>().ok())
    };
    let size = read(&["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"])?;
    let rank = read(&["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"])?;
    (size > 1 && rank < size).then_some((rank, size))
}

//! The MPI transport (feature `mpi`): Open MPI through rsmpi. Only byte
//! buffers cross it; every message is encoded by [`super::protocol`].

use anyhow::{Context, Result};
use mpi::collective::{CommunicatorCollectives, Root};
use mpi::datatype::PartitionMut;
use mpi::environment::Threading;
use mpi::environment::Universe;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Count;

/// `MPI_COMM_WORLD`; MPI is finalized when this is dropped.
pub struct World {
    world: SimpleCommunicator,
    _universe: Universe,
}

impl World {
    /// Initialises MPI. Workloads run threads of their own, but only the
    /// main thread calls MPI, so `Funneled` is all storlab asks for.
    pub fn init() -> Result<World> {
        let (universe, _) = mpi::initialize_with_threading(Threading::Funneled)
            .context("initialising MPI (MPI_Init_thread) failed or was already done")?;
        let world = universe.world();
        if let Some(n) = super::launcher_size() {
            super::check_size(n, world.size() as usize)?;
        }
        Ok(World {
            world,
            _universe: universe,
        })
    }

    pub fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    pub fn size(&self) -> usize {
        self.world.size() as usize
    }

    pub fn barrier(&self) {
        self.world.barrier();
    }

    /// Rank 0's length first, then its bytes.
    pub fn broadcast(&self, data: Vec<u8>) -> Vec<u8> {
        let root = self.world.process_at_rank(0);
        let mut len = data.len() as u64;
        root.broadcast_into(&mut len);
        let mut buf = if self.rank() == 0 {
            data
        } else {
            vec![0u8; len as usize]
        };
        root.broadcast_into(&mut buf[..]);
        buf
    }

    /// Every rank's length to rank 0, then the bytes with `MPI_Gatherv`.
    pub fn gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let root = self.world.process_at_rank(0);
        let len = mine.len() as Count;
        if self.rank() != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(mine);
            return Vec::new();
        }
        let mut counts = vec![0 as Count; self.size()];
        root.gather_into_root(&len, &mut counts[..]);
        let displs: Vec<Count> = counts
            .iter()
            .scan(0, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        let total: Count = counts.iter().sum();
        let mut all = vec![0u8; total as usize];
        {
            let mut part = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(mine, &mut part);
        }
        counts
            .iter()
            .zip(&displs)
            .map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec())
            .collect()
    }
}

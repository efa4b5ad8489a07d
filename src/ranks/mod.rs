//! Multi-client runs: the ranks of an MPI job (`mpirun -n N storlab run …`)
//! and what they say to each other.
//!
//! [`Ranks`] is the one seam to the transport: rank, size, barrier,
//! broadcast and gather of byte buffers. It is a single process unless
//! storlab was built with the `mpi` feature *and* started by a launcher with
//! more than one rank, so a plain `storlab run` behaves exactly as it always
//! did. On top of it: the wire messages ([`protocol`]), the start-up
//! handshake ([`team`]), one run on every rank ([`turn`]), the loop the
//! ranks other than 0 follow ([`follow`]), the client mounts of a host
//! other than rank 0's ([`host_mounts`]), and the pure merge of the ranks'
//! outputs into one run ([`merge`]).

pub mod follow;
pub mod host_mounts;
pub mod merge;
#[cfg(feature = "mpi")]
mod mpi_world;
pub mod protocol;
pub mod team;
pub mod turn;

use anyhow::{bail, Result};

pub use team::Team;

/// The processes of a run and the collectives between them.
pub struct Ranks {
    rank: usize,
    size: usize,
    #[cfg(feature = "mpi")]
    world: Option<mpi_world::World>,
}

impl Ranks {
    /// One process: what storlab is without a launcher.
    pub fn single() -> Ranks {
        Ranks {
            rank: 0,
            size: 1,
            #[cfg(feature = "mpi")]
            world: None,
        }
    }

    /// MPI when a launcher started this process as one of several ranks,
    /// otherwise a single process.
    pub fn from_launcher() -> Result<Ranks> {
        match launcher_size() {
            Some(n) if n > 1 => Ranks::join_world(n),
            _ => Ok(Ranks::single()),
        }
    }

    #[cfg(feature = "mpi")]
    fn join_world(_n: usize) -> Result<Ranks> {
        let world = mpi_world::World::init()?;
        Ok(Ranks {
            rank: world.rank(),
            size: world.size(),
            world: Some(world),
        })
    }

    #[cfg(not(feature = "mpi"))]
    fn join_world(n: usize) -> Result<Ranks> {
        bail!(
            "started by an MPI launcher as one of {n} ranks, but this storlab was built without MPI; \
             rebuild it with `cargo build --release --features mpi` (Open MPI and libclang installed), \
             or run it without mpirun"
        )
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn size(&self) -> usize {
        self.size
    }

    pub fn is_root(&self) -> bool {
        self.rank == 0
    }

    /// Every rank waits here until all have arrived.
    pub fn barrier(&self) {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            w.barrier();
        }
    }

    /// Rank 0's `data` on every rank (what the others pass is ignored).
    pub fn broadcast(&self, data: Vec<u8>) -> Vec<u8> {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            return w.broadcast(data);
        }
        data
    }

    /// On rank 0, every rank's `mine` in rank order; elsewhere nothing.
    pub fn gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            return w.gather(mine);
        }
        vec![mine.to_vec()]
    }
}

/// The job size a launcher announces in the environment: Open MPI's
/// `OMPI_COMM_WORLD_SIZE`, else PMI's `PMI_SIZE` (MPICH, Slurm).
fn launcher_size() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
}

/// Refuses a size the launcher announced but MPI did not deliver.
#[cfg(feature = "mpi")]
fn check_size(announced: usize, got: usize) -> Result<()> {
    if announced != got {
        bail!("the launcher announced {announced} ranks but MPI reports {got}; is this storlab linked against the MPI library of that mpirun?");
    }
    Ok(())
}

//! I/O engines, modelled on fio's `ioengines.h`: each engine states its
//! capabilities, and the synchronous ones (psync, mmap) implement one small
//! trait so that a single job loop, monomorphised per engine, drives them.
//! io_uring keeps many operations in flight and has its own loop
//! (`engine_uring.rs`).

use anyhow::Result;

use crate::params::choices;

choices! {
    /// Which engine a job uses, with fio's names.
    pub enum EngineKind {
        /// pread/pwrite, one operation at a time.
        Psync = "psync",
        /// io_uring, `iodepth` operations in flight, registered buffers and file.
        IoUring = "io_uring",
        /// The file mapped into memory; reads and writes are memcpy.
        Mmap = "mmap",
    }
}

/// What an engine can do; validation and the job loop consult these.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    /// Keeps more than one operation in flight (`iodepth` > 1 is meaningful).
    pub queued: bool,
    /// `direct = true` needs a DAX filesystem (the data path is the page cache otherwise).
    pub direct_needs_dax: bool,
}

impl EngineKind {
    pub fn caps(self) -> Caps {
        match self {
            EngineKind::Psync => Caps {
                queued: false,
                direct_needs_dax: false,
            },
            EngineKind::IoUring => Caps {
                queued: true,
                direct_needs_dax: false,
            },
            EngineKind::Mmap => Caps {
                queued: false,
                direct_needs_dax: true,
            },
        }
    }
}

/// An engine that completes each operation before returning. Errors name
/// the file and offset; a short transfer is an error.
pub trait SyncEngine {
    fn read(&mut self, buf: &mut [u8], off: u64) -> Result<()>;
    fn write(&mut self, buf: &[u8], off: u64) -> Result<()>;
    /// Makes written data durable (fsync, msync).
    fn sync(&mut self) -> Result<()>;
    /// Drops `len` bytes from `off` of the file from the page cache
    /// (fio's `invalidate`).
    fn invalidate(&mut self, off: u64, len: u64) -> Result<()>;
}

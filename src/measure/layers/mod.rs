//! Where a run's reads came from: the layers of a target's stack that a
//! read passes through on its way down — the page cache of the target's
//! mount, Gluster's client translators, the bricks' page cache, ZFS's ARC,
//! QEMU, the page cache under a loop image, the device — each with a
//! counter of the bytes asked of it, read from the layer's own figures
//! just before and just after a run ([`Stack::snapshot`]). What a layer
//! served itself is what it was asked less what the layer below was
//! asked ([`figures`]); the bottom serves all it is asked. Nothing is
//! estimated: a boundary whose counter cannot be read is said to be "not
//! measured", and the layers on either side of it are served together.
//!
//! The workload says what it read (its `read_bytes`), or, with a cache of
//! its own (PostgreSQL's shared buffers), what it asked of that cache and
//! what the cache missed; the top of the target's stack is asked what the
//! workload passed down.
//!
//! The counters: [`sources::Devices`] (/proc/diskstats),
//! [`gluster::ClientStats`] (the FUSE client's io-stats, dumped with the
//! `trusted.io-stats-dump` xattr), [`gluster::Bricks`] (`gluster volume
//! profile`, each brick's reads), [`sources::Delivered`] (what a FUSE
//! daemon wrote, less what it wrote to storage: /proc/PID/io). Each
//! target kind builds its stack from them (`crate::targets::Target::layers`).

pub mod figures;
pub mod gluster;
pub mod sources;

use std::fmt::Debug;
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;

use super::telemetry::Chain;
use crate::metric::layer::Layer;

pub use self::figures::conclude;

/// One part of a layer, when it has several (the bricks of a volume, the
/// devices at the bottom).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Part {
    Brick(String),
    Device(String),
}

/// What a counter says at one instant: the bytes (and requests) asked of
/// its layer so far, in all and per part.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Count {
    pub bytes: f64,
    pub requests: Option<f64>,
    pub parts: Vec<(Part, f64)>,
}

impl Count {
    /// What was asked between `before` and this reading; an error when a
    /// counter went backwards (the process that kept it restarted).
    pub fn since(&self, before: &Count) -> Result<Count, String> {
        if self.bytes + 0.5 < before.bytes {
            return Err(format!(
                "its counter went back from {} to {} bytes during the run (the process keeping it restarted)",
                before.bytes, self.bytes
            ));
        }
        let parts = self
            .parts
            .iter()
            .map(|(p, b)| {
                let was = before
                    .parts
                    .iter()
                    .find(|(q, _)| q == p)
                    .map_or(0.0, |x| x.1);
                (p.clone(), (b - was).max(0.0))
            })
            .collect();
        Ok(Count {
            bytes: self.bytes - before.bytes,
            requests: self
                .requests
                .zip(before.requests)
                .map(|(a, b)| (a - b).max(0.0)),
            parts,
        })
    }
}

/// A counter of the bytes asked of one layer, read on demand.
pub trait Source: Send + Sync + Debug {
    /// The counter now (cumulative: a run's figure is the difference of
    /// two readings).
    fn read(&self) -> Result<Count>;
    /// Where its figures come from, for the run's facts.
    fn describe(&self) -> String;
    /// Why reading it takes long enough to change what is measured when
    /// read between tests that follow one another (a command through a
    /// daemon: `gluster volume profile`, ~100 ms), if it does.
    fn slow(&self) -> Option<String> {
        None
    }
}

/// What a layer was asked, and how storlab knows it.
#[derive(Debug, Clone)]
pub enum Asked {
    /// What the layer above passed down: the top of a target's stack,
    /// asked what the workload did not serve itself.
    Above,
    /// A counter of the layer's own.
    Counter(Arc<dyn Source>),
    /// Nothing can say: why.
    Unknown(String),
}

/// One layer of a stack and what tells what it was asked.
#[derive(Debug, Clone)]
pub struct Level {
    pub layer: Layer,
    pub asked: Asked,
}

impl Level {
    pub fn counted(layer: Layer, source: impl Source + 'static) -> Level {
        Level {
            layer,
            asked: Asked::Counter(Arc::new(source)),
        }
    }

    pub fn unknown(layer: Layer, why: impl Into<String>) -> Level {
        Level {
            layer,
            asked: Asked::Unknown(why.into()),
        }
    }
}

/// A target's layers, top to bottom.
#[derive(Debug, Clone, Default)]
pub struct Stack {
    pub levels: Vec<Level>,
}

/// Each level's counter at one instant (in [`Stack::levels`]' order):
/// `Ok` with nothing for [`Asked::Above`], an error saying why for a level
/// whose counter could not be read.
pub type Snapshot = Vec<Result<Count, String>>;

/// A stack's counters before and after a run.
#[derive(Debug, Clone)]
pub struct Readings {
    pub stack: Arc<Stack>,
    pub before: Snapshot,
    pub after: Snapshot,
}

impl Stack {
    /// The page cache of a mount on `chain` (a block device's filesystem,
    /// a loop image's) and what lies under it; the page cache alone (a
    /// tmpfs, which holds its files in it) without a device.
    pub fn of_chain(chain: &Chain) -> Stack {
        let mut levels = vec![Level {
            layer: Layer::PageCache,
            asked: Asked::Above,
        }];
        levels.extend(below_cache(chain));
        Stack { levels }
    }

    /// The stack of a filesystem mounted at `root`, from its device chain:
    /// a block device's ([`Stack::of_chain`]); a tmpfs's page cache alone
    /// (its files live there); over anything else (NFS, FUSE, overlay),
    /// the page cache and a bottom whose reads nothing here counts.
    pub fn of_mount(root: &Path) -> Stack {
        let chain = Chain::of_paths(&[root.to_path_buf()]);
        let fs = fs_type(root).unwrap_or_else(|| "unknown".into());
        if !chain.is_empty() || matches!(fs.as_str(), "tmpfs" | "ramfs") {
            return Stack::of_chain(&chain);
        }
        Stack::of_chain(&chain).then([Level::unknown(
            Layer::Device,
            format!(
                "{} is a {fs} filesystem: what its page cache passes down is not counted",
                root.display()
            ),
        )])
    }

    /// This stack with `levels` under it.
    pub fn then(mut self, levels: impl IntoIterator<Item = Level>) -> Stack {
        self.levels.extend(levels);
        self
    }

    /// This stack with none of its counters read, for `why` (ranks on
    /// several hosts, each reading through its own page cache).
    pub fn not_measured(self, why: &str) -> Stack {
        Stack {
            levels: (self.levels.into_iter())
                .map(|l| Level::unknown(l.layer, why))
                .collect(),
        }
    }

    /// This stack as read between tests that follow one another on the
    /// same file (a matrix cell's: iozone runs them back to back): a slow
    /// counter is not read there, and says why; the run's figures still
    /// read it, before and after the whole run. Read between a cell's
    /// tests, Gluster's counters (a ~100 ms command through glusterd, a
    /// dump that wakes the FUSE client) changed what they measured: a
    /// matrix's reads on a volume read so gave 2.0 GiB/s where the same
    /// volume unread gave 6.4 GiB/s.
    pub fn between_tests(&self) -> Stack {
        let levels = self.levels.iter().map(|l| match &l.asked {
            Asked::Counter(source) => match source.slow() {
                Some(why) => {
                    Level::unknown(l.layer, format!("not read between a cell's tests: {why}"))
                }
                None => l.clone(),
            },
            _ => l.clone(),
        });
        Stack {
            levels: levels.collect(),
        }
    }

    /// Every counter, read now.
    pub fn snapshot(&self) -> Snapshot {
        self.levels
            .iter()
            .map(|l| match &l.asked {
                Asked::Above => Ok(Count::default()),
                Asked::Counter(s) => s.read().map_err(|e| format!("{e:#}")),
                Asked::Unknown(why) => Err(why.clone()),
            })
            .collect()
    }

    /// The counters read before a run, to be read again after it.
    pub fn begin(self: &Arc<Stack>) -> Begun {
        Begun {
            stack: self.clone(),
            before: self.snapshot(),
        }
    }

    /// `page_cache: what the workload passed down; device: /proc/diskstats
    /// of vda`, for the run's facts.
    pub fn describe(&self) -> String {
        self.levels
            .iter()
            .map(|l| {
                let how = match &l.asked {
                    Asked::Above => "asked what the layer above passed down".to_string(),
                    Asked::Counter(s) => s.describe(),
                    Asked::Unknown(why) => format!("not measured: {why}"),
                };
                format!("{}: {how}", l.layer.name())
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// A stack's counters read before a run.
#[derive(Debug, Clone)]
pub struct Begun {
    stack: Arc<Stack>,
    before: Snapshot,
}

impl Begun {
    /// The counters read again, now the run is over.
    pub fn end(self) -> Readings {
        Readings {
            after: self.stack.snapshot(),
            stack: self.stack,
            before: self.before,
        }
    }
}

/// The levels under the page cache of a filesystem on `chain`: the page
/// cache of the image under each loop device (asked what the loop devices
/// read), then the devices at the bottom (asked what they read). Between
/// a device-mapper or md device and its members, or a partition and its
/// disk, nothing caches: those levels are passed over. Empty without a
/// device (tmpfs, FUSE, NFS).
pub fn below_cache(chain: &Chain) -> Vec<Level> {
    let levels = chain.levels();
    let Some(last) = levels.len().checked_sub(1) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, names) in levels.iter().enumerate() {
        let looped = names.iter().all(|n| n.starts_with("loop") && !dio(n));
        if i < last && looped {
            out.push(Level::counted(
                Layer::ImagePageCache,
                sources::Devices::of_names(chain, names),
            ));
        }
    }
    let bottom: Vec<&str> = chain.bottom().map(|d| d.name.as_str()).collect();
    out.push(Level::counted(
        Layer::Device,
        sources::Devices::of_names(chain, &bottom),
    ));
    out
}

/// The type of the filesystem holding `path` (mountinfo's, the longest
/// mount point above it).
fn fs_type(path: &Path) -> Option<String> {
    let canonical = path.canonicalize().ok()?;
    let mounts = procfs::process::Process::myself().ok()?.mountinfo().ok()?;
    mounts
        .into_iter()
        .filter(|m| canonical.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.as_os_str().len())
        .map(|m| m.fs_type)
}

/// Whether a loop device reads its image with direct I/O (no page cache
/// between it and the image's device).
fn dio(loop_name: &str) -> bool {
    std::fs::read_to_string(format!("/sys/block/{loop_name}/loop/dio"))
        .is_ok_and(|t| t.trim() == "1")
}

#[cfg(test)]
mod tests;

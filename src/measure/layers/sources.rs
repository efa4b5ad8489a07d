//! Counters any target kind's stack can use: block devices' reads
//! (/proc/diskstats) and what a FUSE daemon delivered (its /proc/PID/io).

use anyhow::{bail, Context, Result};

use super::{Count, Part, Source};
use crate::measure::telemetry::procs::Served;
use crate::measure::telemetry::{sample, Chain};

/// Bytes and reads the devices completed (/proc/diskstats' sectors read ×
/// 512, reads completed), in all and per device. A device the target
/// shares with the host (the disk under an image) also counts other
/// processes' reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Devices {
    /// Kernel name, major, minor.
    devices: Vec<(String, u32, u32)>,
}

impl Devices {
    /// The devices of `chain` named `names`.
    pub fn of_names(chain: &Chain, names: &[&str]) -> Devices {
        Devices {
            devices: chain
                .devices
                .iter()
                .filter(|d| names.contains(&d.name.as_str()))
                .map(|d| (d.name.clone(), d.major, d.minor))
                .collect(),
        }
    }
}

impl Source for Devices {
    fn read(&self) -> Result<Count> {
        let numbers: Vec<(u32, u32)> = self.devices.iter().map(|d| (d.1, d.2)).collect();
        let stats = sample::disks(&numbers);
        let mut count = Count {
            requests: Some(0.0),
            ..Count::default()
        };
        for (name, major, minor) in &self.devices {
            let d = stats
                .get(&(*major, *minor))
                .with_context(|| format!("{name} is not in /proc/diskstats"))?;
            let bytes = d.read_sectors as f64 * 512.0;
            count.bytes += bytes;
            count.requests = count.requests.map(|r| r + d.reads as f64);
            count.parts.push((Part::Device(name.clone()), bytes));
        }
        Ok(count)
    }

    fn describe(&self) -> String {
        let names: Vec<&str> = self.devices.iter().map(|d| d.0.as_str()).collect();
        format!("/proc/diskstats of {}", names.join(", "))
    }
}

/// What a FUSE daemon delivered to the kernel: the bytes it wrote
/// (`wchar` of /proc/PID/io: its replies on /dev/fuse, which carry the
/// data of every read) less what it wrote towards storage (`write_bytes`:
/// its writes to the files under it). It cannot tell its replies from its
/// writes to a file on a filesystem that does not count them (tmpfs), nor
/// the headers of its replies (16 bytes each, and the attributes of
/// lookups) from their data.
#[derive(Debug, Clone)]
pub struct Delivered {
    pub daemon: Served,
}

impl Source for Delivered {
    fn read(&self) -> Result<Count> {
        let found = self
            .daemon
            .locate()
            .with_context(|| format!("{} is not running", self.daemon.label))?;
        let io = procfs::process::Process::new(found.pid as i32)
            .and_then(|p| p.io())
            .with_context(|| format!("reading /proc/{}/io of {}", found.pid, found.label))?;
        if io.wchar < io.write_bytes {
            bail!(
                "{} wrote fewer bytes ({}) than it sent to storage ({})",
                found.label,
                io.wchar,
                io.write_bytes
            );
        }
        Ok(Count {
            bytes: (io.wchar - io.write_bytes) as f64,
            requests: None,
            parts: Vec::new(),
        })
    }

    fn describe(&self) -> String {
        format!(
            "what {} delivered to FUSE (/proc/PID/io: wchar less write_bytes)",
            self.daemon.label
        )
    }
}

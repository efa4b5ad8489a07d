//! What a campaign takes from the host at once, summed before anything is
//! provisioned, so that `check` refuses what `run` would only find out
//! half-way (an io_uring job asking for 64 GiB of buffers, a tmpfs holding
//! more than the memory there is, a hundred preallocated images filling
//! their filesystem at the fourth):
//!
//! - memory: what the tmpfs targets hold (the most the workloads write
//!   into each, at most its size) and the largest run's own memory (the
//!   io engine's buffers, `bs × iodepth × numjobs` per rank; a PostgreSQL
//!   server's `shared_buffers`), against the host's available memory and
//!   free swap;
//! - space: every image storlab makes in a directory of the host (loop,
//!   zfs and vm-disk images at their full size, thin or preallocated, a
//!   qcow2's metadata included), summed per filesystem, against its free
//!   space.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Error};

use crate::experiment::Experiment;
use crate::params::units::format_bytes;

/// Every reason the host cannot hold `exp`: `writers` ranks write into
/// the targets, `here` of them on this host.
pub(super) fn refusals(exp: &Experiment, writers: u64, here: u64) -> Vec<Error> {
    let mut out: Vec<Error> = memory(exp, writers, here).into_iter().collect();
    out.extend(space(exp));
    out
}

/// Bytes written into target `target` at once: the largest workload
/// that removes its files after each run, plus those that keep theirs
/// until the campaign ends (counted once per set of kept files), per
/// writing rank; and the kept part alone.
pub(super) fn written_at_once(exp: &Experiment, target: usize, writers: u64) -> (u64, u64) {
    let spec = &exp.targets[target];
    let kept: u64 = (0..exp.workloads.len())
        .filter(|&i| exp.files_of(i) == i)
        .map(|i| &exp.workloads[i])
        .filter(|w| w.runs_on(spec) && w.config.keeps_its_files())
        .fold(0u64, |a, w| a.saturating_add(w.config.bytes_needed()));
    let largest = exp
        .workloads
        .iter()
        .filter(|w| w.runs_on(spec) && !w.config.keeps_its_files())
        .map(|w| w.config.bytes_needed())
        .max()
        .unwrap_or(0);
    let w = writers.max(1);
    (
        largest.saturating_add(kept).saturating_mul(w),
        kept.saturating_mul(w),
    )
}

/// The memory the campaign holds at once, against what the host has.
fn memory(exp: &Experiment, writers: u64, here: u64) -> Option<Error> {
    let mut parts = Vec::new();
    let mut total = 0u64;
    for (i, t) in exp.targets.iter().enumerate() {
        let Some(size) = t.config.footprint().memory else {
            continue;
        };
        let held = written_at_once(exp, i, writers).0.min(size);
        if held > 0 {
            total = total.saturating_add(held);
            parts.push(format!(
                "tmpfs `{}` holds up to {}",
                t.name,
                format_bytes(held as f64)
            ));
        }
    }
    let run = exp
        .workloads
        .iter()
        .map(|w| (w, w.config.memory_needed().saturating_mul(here.max(1))))
        .max_by_key(|(_, m)| *m)
        .filter(|(_, m)| *m > 0);
    if let Some((w, m)) = run {
        total = total.saturating_add(m);
        parts.push(format!(
            "a run of `{}` holds {} of its own (io buffers: bs × iodepth × numjobs; or a server's shared_buffers{})",
            w.name,
            format_bytes(m as f64),
            if here > 1 { ", every rank on this host" } else { "" }
        ));
    }
    let (available, swap) = host_memory()?;
    (total > available.saturating_add(swap)).then(|| {
        anyhow!(
            "the campaign needs {} of memory at once ({}) but this host has {} available and {} of swap free; lower the io workloads' `bs`, `iodepth` or `numjobs`, the tmpfs `size` or what is written into it, or `shared_buffers`",
            format_bytes(total as f64),
            parts.join("; "),
            format_bytes(available as f64),
            format_bytes(swap as f64)
        )
    })
}

/// The images storlab makes in directories of the host, summed per
/// filesystem, against each one's free space.
fn space(exp: &Experiment) -> Vec<Error> {
    let mut by_fs: BTreeMap<u64, (PathBuf, u64, Vec<String>)> = BTreeMap::new();
    for t in &exp.targets {
        let Some((dir, bytes)) = t.config.footprint().image else {
            continue;
        };
        let Ok(meta) = std::fs::metadata(&dir) else {
            // A directory that is missing is the target's own refusal.
            continue;
        };
        let e = by_fs
            .entry(meta.dev())
            .or_insert_with(|| (dir.clone(), 0, Vec::new()));
        e.1 = e.1.saturating_add(bytes);
        e.2.push(format!("`{}` {}", t.name, format_bytes(bytes as f64)));
    }
    by_fs
        .into_values()
        .filter_map(|(dir, needed, images)| {
            let (_, free) = crate::provision::facts::space(&dir)?;
            (needed > free).then(|| {
                anyhow!(
                    "the images in {} need {} together ({}) but its filesystem has {} free; {} is missing (lower `size`, choose another `dir`, or make room)",
                    dir.display(),
                    format_bytes(needed as f64),
                    images.join(", "),
                    format_bytes(free as f64),
                    format_bytes((needed - free) as f64)
                )
            })
        })
        .collect()
}

/// The host's available memory and free swap, in bytes (/proc/meminfo).
fn host_memory() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(Path::new("/proc/meminfo")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib.saturating_mul(1024))
    };
    Some((field("MemAvailable:")?, field("SwapFree:").unwrap_or(0)))
}

//! Validity checks: small pure functions over a run's figures (the
//! workload's and its telemetry's) that say, with their evidence, when a
//! run measured something other than what it meant to — memory instead of
//! the device, a cache that holds the whole working set, writes that never
//! reached the device, a CPU instead of storage, a busy host. Each returns
//! at most one warning; [`checks`] runs them all.
//!
//! Where the block requests were traced ([`super::blocktrace`]) the checks
//! use exact counts: a read workload whose device was sent no read request
//! measured memory; a syncing workload whose device with a write cache
//! was sent no flush did not measure durability.
//!
//! Where the run read its layers ([`crate::measure::layers`]), the page
//! cache and working-set checks are readings of that table: the device
//! served under 10% of the reads; the page cache (or the ARC) served half
//! of a working set read at least twice over; shared buffers served 90%
//! of PostgreSQL's blocks. Without them they judge from the devices and
//! sizes as before.
//!
//! Thresholds are stated here and in the warnings, so that a reader can
//! judge them: a device read ratio under 10% is "the page cache"; a thread
//! at 90% of a core or more is "CPU-bound"; other processes over 10% of the
//! host's CPU, or steal over 5%, are "a noisy neighbour"; syncs with no
//! flush completed by some level of the device chain are "durability not
//! measured".

use super::chain::Chain;
use crate::measure::RunOutput;
use crate::metric::catalogue as m;
use crate::metric::labels::{DEVICE, LAYER, OP, PROCESS};
use crate::metric::layer::{shares, split, Layer};
use crate::metric::{Labels, MetricDef};
use crate::params::units::format_bytes;
use crate::warning::{Warning, WarningKind};

pub use crate::warning::{CPU_BOUND_PCT, NOISY_OTHERS_PCT, NOISY_STEAL_PCT, PAGE_CACHE_RATIO};
/// The share of the reads a cache (the page cache of a working set read
/// over and over, the ARC) must serve to hold the working set.
pub const WORKING_SET_SHARE: f64 = 0.5;
/// The share of the blocks read that shared buffers must serve for the
/// database to be in them.
pub const SHARED_BUFFERS_SHARE: f64 = 0.9;
/// Amounts under this are too small to judge.
const MIN_BYTES: f64 = (1 << 20) as f64;
/// PostgreSQL's built-in shared_buffers (128MB).
const PG_DEFAULT_SHARED_BUFFERS: f64 = (128u64 << 20) as f64;
/// What one pgbench scale unit takes on disk, roughly (the pgbench
/// documentation's 15 MB per 100,000 accounts).
pub const PGBENCH_BYTES_PER_SCALE: f64 = 15e6;

/// Every check's warning for one run on the device chain `chain`, over
/// which the host's cores counted `host_ticks` clock ticks.
pub fn checks(out: &RunOutput, chain: &Chain, host_ticks: u64) -> Vec<Warning> {
    [
        (WarningKind::PageCache, page_cache(out, chain)),
        (WarningKind::WorkingSetInRam, fits_in_memory(out, chain)),
        (WarningKind::WorkingSetInArc, fits_in_arc(out)),
        (
            WarningKind::DatabaseInSharedBuffers,
            fits_in_shared_buffers(out),
        ),
        (WarningKind::UnflushedWrites, unflushed(out)),
        (WarningKind::DurabilityNotMeasured, durability(out, chain)),
        (WarningKind::CpuBound, cpu_bound(out)),
        (WarningKind::NoisyHost, noisy(out, host_ticks)),
        (WarningKind::SyncFlushedOthers, sync_flushed_others(out)),
    ]
    .into_iter()
    .filter_map(|(kind, text)| text.map(|t| Warning::new(kind, t)))
    .collect()
}

fn get(out: &RunOutput, def: &MetricDef) -> Option<f64> {
    out.metric(def)
}

fn fact<'a>(out: &'a RunOutput, name: &str) -> Option<&'a str> {
    out.facts
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn pct(x: f64) -> String {
    if x < 0.1 && x > 0.0 {
        format!("{x:.2}%")
    } else {
        format!("{x:.1}%")
    }
}

/// Reads the device did not deliver: a device read ratio under
/// [`PAGE_CACHE_RATIO`], from the read requests where they were traced
/// (none at all, or a few of the filesystem's own metadata reads), from
/// /proc/diskstats otherwise.
pub fn page_cache(out: &RunOutput, chain: &Chain) -> Option<String> {
    let read = get(out, &m::READ_BYTES).filter(|r| *r >= MIN_BYTES)?;
    let advice = "this measured the page cache, not the device (drop caches before the run, read more than memory holds, or use direct = true)";
    let layers = reading(out);
    if !layers.is_empty() {
        return from_layers(&layers, read, advice);
    }
    let traced = fewest_requests(out, chain, &read_requests);
    if let Some((who, n)) = traced {
        let bytes: f64 = who.split(" + ").map(|d| read_request_bytes(out, d)).sum();
        let ratio = bytes / read;
        return match n {
            0.0 => Some(format!(
                "page cache: {who} was sent no read request during the run (block tracepoints) for the {} the workload read: {advice}",
                format_bytes(read)
            )),
            _ if ratio < PAGE_CACHE_RATIO => Some(format!(
                "page cache: {who} was sent {n} read requests ({}) during the run (block tracepoints) for the {} the workload read ({}): {advice}",
                format_bytes(bytes),
                format_bytes(read),
                pct(100.0 * ratio)
            )),
            _ => None,
        };
    }
    let (who, dev) = least_read(out, chain)?;
    let ratio = dev / read;
    (ratio < PAGE_CACHE_RATIO).then(|| {
        format!(
            "page cache: {who} delivered {} of the {} read ({}): {advice}",
            format_bytes(dev),
            format_bytes(read),
            pct(100.0 * ratio)
        )
    })
}

/// One entry of a run's waterfall: a layer (or layers served together),
/// what it was asked and served, and its share of what the workload read
/// ([`crate::metric::layer::shares`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Served {
    pub layers: Vec<Layer>,
    pub asked: f64,
    pub served: f64,
    pub share: f64,
}

/// A run's waterfall, from the layer figures in its output (whole-run
/// ones: labelled `layer` alone), top to bottom; empty without them.
pub fn reading(out: &RunOutput) -> Vec<Served> {
    let mut groups: Vec<Served> = (out.metrics.iter())
        .filter(|x| std::ptr::eq(x.def, &m::LAYER_SERVED_BYTES) && x.labels.iter().count() == 1)
        .filter_map(|x| {
            let layers = split(x.labels.get(&LAYER)?)?;
            let asked = out.labelled(
                &m::LAYER_READ_BYTES,
                &Labels::new().with(&LAYER, layers[0].name()),
            )?;
            Some(Served {
                layers,
                asked,
                served: x.value,
                share: 0.0,
            })
        })
        .collect();
    groups.sort_by_key(|g| g.layers[0]);
    let asked: Vec<f64> = groups.iter().map(|g| g.asked).collect();
    for (g, s) in groups.iter_mut().zip(shares(&asked)) {
        g.share = s;
    }
    groups
}

/// The page cache warning as a reading of the run's layers: the device
/// served under [`PAGE_CACHE_RATIO`] of the workload's reads. Not said of
/// a stack without a device (tmpfs), nor where the device was served
/// together with a cache above it (its boundary not measured).
fn from_layers(layers: &[Served], read: f64, advice: &str) -> Option<String> {
    let device = layers.iter().find(|g| g.layers.contains(&Layer::Device))?;
    if device.layers.len() > 1 || device.share >= PAGE_CACHE_RATIO {
        return None;
    }
    let largest = layers.iter().max_by(|a, b| a.share.total_cmp(&b.share))?;
    Some(format!(
        "page cache: {} served {} of the {} read, the device {}: {advice}",
        words(largest),
        pct(100.0 * largest.share),
        format_bytes(read),
        pct(100.0 * device.share)
    ))
}

/// The share `layer` served in a run's reading, and with what it was
/// served (alone: itself); `None` when the run's layers do not have it.
fn share_of(layers: &[Served], layer: Layer) -> Option<&Served> {
    layers.iter().find(|g| g.layers.contains(&layer))
}

/// "the page cache", "ZFS's ARC and the image's page cache".
fn words(g: &Served) -> String {
    let each: Vec<&str> = g.layers.iter().map(|l| l.words()).collect();
    each.join(" and ")
}

/// The level of the device chain that read least during the run, and
/// what it read: each level's devices together (the bottom's sum, without
/// a label: "the device"). A device the target shares with the rest of
/// the host (the disk under a loop image) also counts other processes'
/// reads, never fewer than the target's: the level that read least says
/// how far down the workload's reads went. `None` without device figures.
fn least_read(out: &RunOutput, chain: &Chain) -> Option<(String, f64)> {
    let labelled = |name: &str| {
        out.metrics
            .iter()
            .find(|x| {
                std::ptr::eq(x.def, &m::DEV_READ_BYTES) && x.labels.get(&DEVICE) == Some(name)
            })
            .map(|x| x.value)
    };
    let mut levels: Vec<(String, f64)> = get(out, &m::DEV_READ_BYTES)
        .map(|b| ("the device".to_string(), b))
        .into_iter()
        .collect();
    for names in chain.levels() {
        let bytes: Option<f64> = names.iter().map(|n| labelled(n)).sum();
        if let Some(b) = bytes {
            levels.push((names.join(" + "), b));
        }
    }
    levels.into_iter().min_by(|a, b| a.1.total_cmp(&b.1))
}

/// A device's read requests, where they were traced.
fn read_requests(out: &RunOutput, device: &str) -> Option<f64> {
    let l = Labels::new().with(&DEVICE, device).with(&OP, "read");
    out.labelled(&m::DEV_REQUESTS, &l)
}

/// The bytes of a device's read requests, where they were traced.
fn read_request_bytes(out: &RunOutput, device: &str) -> f64 {
    let l = Labels::new().with(&DEVICE, device).with(&OP, "read");
    let n = out.labelled(&m::DEV_REQUESTS, &l).unwrap_or(0.0);
    n * out.labelled(&m::DEV_REQUEST_BYTES, &l).unwrap_or(0.0)
}

/// The level of the chain whose devices were sent the fewest requests
/// `count` gives, and how many (a level's devices together). A device the
/// target shares with the host (the disk under a loop image) also takes
/// other processes' requests: the level with the fewest says how far the
/// workload's went. `None` where the requests were not traced.
fn fewest_requests(
    out: &RunOutput,
    chain: &Chain,
    count: &dyn Fn(&RunOutput, &str) -> Option<f64>,
) -> Option<(String, f64)> {
    chain
        .levels()
        .into_iter()
        .filter_map(|names| {
            let n: Option<f64> = names.iter().map(|d| count(out, d)).sum();
            Some((names.join(" + "), n?))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// A working set the page cache holds, read more than once over. Not said
/// of a target without a device (tmpfs): its data lives in memory by design.
pub fn fits_in_memory(out: &RunOutput, chain: &Chain) -> Option<String> {
    if chain.devices.is_empty() {
        return None;
    }
    let ws = get(out, &m::WORKING_SET_BYTES).filter(|w| *w > 0.0)?;
    let read = get(out, &m::READ_BYTES)?;
    let passes = read / ws;
    let layers = reading(out);
    if let Some(pc) = share_of(&layers, Layer::PageCache) {
        return (pc.layers.len() == 1 && passes >= 2.0 && pc.share >= WORKING_SET_SHARE).then(|| {
            format!(
                "working set in RAM: the working set ({}) was read {passes:.1} times over and the page cache served {} of it: after the first pass, reads came from memory",
                format_bytes(ws),
                pct(100.0 * pc.share)
            )
        });
    }
    let avail = get(out, &m::MEM_AVAILABLE_BYTES)?;
    let device_read_it = get(out, &m::DEV_READ_RATIO).is_some_and(|r| r >= 0.9);
    (ws <= avail && passes >= 2.0 && !device_read_it).then(|| {
        format!(
            "working set in RAM: the working set ({}) fits in the page cache ({} available) and was read {passes:.1} times over: after the first pass, reads come from memory",
            format_bytes(ws),
            format_bytes(avail)
        )
    })
}

/// A working set the ZFS ARC holds.
pub fn fits_in_arc(out: &RunOutput) -> Option<String> {
    let ws = get(out, &m::WORKING_SET_BYTES).filter(|w| *w > 0.0)?;
    if let Some(arc) = share_of(&reading(out), Layer::ZfsArc) {
        return (arc.share >= WORKING_SET_SHARE).then(|| {
            format!(
                "working set in the ARC: {} served {} of what the workload read (its working set is {})",
                words(arc),
                pct(100.0 * arc.share),
                format_bytes(ws)
            )
        });
    }
    let c_max = get(out, &m::ARC_MAX_BYTES)?;
    let hits = get(out, &m::ARC_HITS).unwrap_or(0.0);
    let misses = get(out, &m::ARC_MISSES).unwrap_or(0.0);
    (ws <= c_max && hits + misses > 0.0).then(|| {
        format!(
            "working set in the ARC: the working set ({}) fits in the ZFS ARC (up to {}); {} of {} ARC lookups during the run were hits",
            format_bytes(ws),
            format_bytes(c_max),
            hits,
            hits + misses
        )
    })
}

/// A pgbench database that fits in shared_buffers.
pub fn fits_in_shared_buffers(out: &RunOutput) -> Option<String> {
    fact(out, "pg_server_version")?;
    if let Some(sb) = share_of(&reading(out), Layer::SharedBuffers) {
        return (sb.share >= SHARED_BUFFERS_SHARE).then(|| {
            format!(
                "database in shared_buffers: PostgreSQL's shared buffers served {} of the {} of blocks its backends read; the storage saw the rest",
                pct(100.0 * sb.share),
                format_bytes(sb.asked)
            )
        });
    }
    let db = get(out, &m::WORKING_SET_BYTES)?;
    let sb = match fact(out, "pg_setting.shared_buffers") {
        Some(text) => pg_size(text)?,
        None => PG_DEFAULT_SHARED_BUFFERS,
    };
    (db <= sb).then(|| {
        format!(
            "database in shared_buffers: the database (about {}) fits in shared_buffers ({}): its reads never leave PostgreSQL's own cache",
            format_bytes(db),
            format_bytes(sb)
        )
    })
}

/// A PostgreSQL size as `SHOW` prints it: `256MB`, `1GB`, `8kB`, or a
/// bare number of 8 kB pages.
pub fn pg_size(text: &str) -> Option<f64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult = match unit.trim() {
        "" => 8192.0,
        "B" => 1.0,
        "kB" => 1024.0,
        "MB" => (1u64 << 20) as f64,
        "GB" => (1u64 << 30) as f64,
        "TB" => (1u64 << 40) as f64,
        _ => return None,
    };
    Some(n * mult)
}

/// Writes still dirty in memory when the run ended.
pub fn unflushed(out: &RunOutput) -> Option<String> {
    let written = get(out, &m::WRITE_BYTES).filter(|w| *w >= MIN_BYTES)?;
    let dev = get(out, &m::DEV_WRITE_BYTES)?;
    let start = get(out, &m::MEM_DIRTY_START_BYTES)?;
    let end = get(out, &m::MEM_DIRTY_END_BYTES)?;
    let left = end - start;
    (dev < 0.5 * written && left >= 0.25 * written).then(|| {
        format!(
            "unflushed writes: of the {} written, the device wrote {} and dirty memory grew by {} during the run: the writes had not reached the device when it ended (fsync or end_fsync = true includes them)",
            format_bytes(written),
            format_bytes(dev),
            format_bytes(left)
        )
    })
}

/// One device's flush requests during a run, as [`durability_of`] reads
/// them: from /proc/diskstats now; exact counts (block-layer tracing) can
/// be handed in the same way.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceFlushes {
    pub name: String,
    /// Its level in the target's chain (0: what the filesystem sits on).
    pub depth: usize,
    /// Only a device with a volatile write cache needs (and counts) flushes.
    pub volatile_cache: bool,
    pub flushes: f64,
}

/// Syncs that no flush carried to a device: `syncs` the workload made and
/// the flushes each device of the target's chain completed meanwhile. Every
/// level of the chain that caches writes volatilely must have completed a
/// flush (a neighbour's flushes on a shared disk below do not make up for
/// a loop device that saw none); a target without a device (tmpfs) has
/// nothing that could have made the data durable. Silent with no syncs,
/// and when every device writes through (no flush needed).
pub fn durability_of(syncs: f64, devices: &[DeviceFlushes]) -> Option<String> {
    if syncs < 1.0 {
        return None;
    }
    let head = format!("durability not measured: {syncs:.0} syncs, no flush reached a device");
    if devices.is_empty() {
        return Some(format!(
            "{head} (the target has no block device storlab can see: tmpfs, or a network or FUSE filesystem): the syncs made nothing durable here"
        ));
    }
    let deepest = devices.iter().map(|d| d.depth).max().unwrap_or(0);
    let none_at = (0..=deepest).find_map(|depth| {
        let level: Vec<&DeviceFlushes> = devices
            .iter()
            .filter(|d| d.depth == depth && d.volatile_cache)
            .collect();
        let flushed: f64 = level.iter().map(|d| d.flushes).sum();
        (!level.is_empty() && flushed < 1.0).then(|| {
            level
                .iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(" + ")
        })
    })?;
    Some(format!(
        "{head} ({none_at} completed none during the run): the syncs returned without the device's cache being flushed (barrier=0 or nobarrier, ZFS sync=disabled, or a cache that absorbed them), so the run did not measure durable writes"
    ))
}

/// [`durability_of`] a run: its syncs (`syncs`, or a database's WAL and
/// data-file syncs) and its chain's `dev_flushes`. Silent when the kernel
/// does not count flushes.
pub fn durability(out: &RunOutput, chain: &Chain) -> Option<String> {
    let syncs = get(out, &m::SYNCS).or_else(|| {
        let wal = get(out, &m::WAL_SYNCS);
        let data = get(out, &m::DATA_FSYNCS);
        (wal.is_some() || data.is_some()).then(|| wal.unwrap_or(0.0) + data.unwrap_or(0.0))
    })?;
    let flushes = |name: &str| {
        out.metrics
            .iter()
            .find(|x| std::ptr::eq(x.def, &m::DEV_FLUSHES) && x.labels.get(&DEVICE) == Some(name))
            .map(|x| x.value)
    };
    let mut devices = Vec::new();
    for d in &chain.devices {
        devices.push(DeviceFlushes {
            name: d.name.clone(),
            depth: d.depth,
            volatile_cache: d.volatile_cache,
            flushes: flushes(&d.name)?,
        });
    }
    durability_of(syncs, &devices)
}

/// A thread at the limit of its core.
pub fn cpu_bound(out: &RunOutput) -> Option<String> {
    let busy: Vec<String> = out
        .metrics
        .iter()
        .filter(|x| std::ptr::eq(x.def, &m::PROC_BUSIEST_THREAD_PCT) && x.value >= CPU_BOUND_PCT)
        .map(|x| {
            format!(
                "a thread of {} at {}",
                x.labels.get(&PROCESS).unwrap_or("?"),
                pct(x.value)
            )
        })
        .collect();
    (!busy.is_empty()).then(|| {
        format!(
            "CPU-bound: {} of a core: the run may have measured a CPU rather than storage",
            busy.join(", ")
        )
    })
}

/// Other processes or the hypervisor taking the host's CPU: a share of
/// the host's `ticks` (its cores' clock ticks over the run, each charged
/// to the task it interrupted) over the threshold with 95% confidence
/// (the lower end of its one-sided Wilson interval). A run of a few
/// tenths of a second holds a few dozen ticks, where one burst of another
/// process reads as a large share: it must be larger to count.
pub fn noisy(out: &RunOutput, ticks: u64) -> Option<String> {
    let others = get(out, &m::CPU_OTHERS_PCT).unwrap_or(0.0);
    let steal = get(out, &m::CPU_STEAL_PCT).unwrap_or(0.0);
    let over = |pct: f64, threshold: f64| share_lower_bound(pct / 100.0, ticks) * 100.0 > threshold;
    (over(others, NOISY_OTHERS_PCT) || over(steal, NOISY_STEAL_PCT)).then(|| {
        format!(
            "noisy host: other processes used {} of the host's CPU during the run and the hypervisor took {} (steal): they may have slowed it",
            pct(others),
            pct(steal)
        )
    })
}

/// The lower end of the one-sided 95% Wilson score interval of a share
/// `p` observed over `n` samples (`p` itself when `n` is unknown, 0).
pub fn share_lower_bound(p: f64, n: u64) -> f64 {
    if n == 0 {
        return p;
    }
    const Z: f64 = 1.645;
    let n = n as f64;
    let z2 = Z * Z;
    let centre = p + z2 / (2.0 * n);
    let spread = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - spread) / (1.0 + z2 / n)).max(0.0)
}

/// sync(2) flushing what other processes left dirty.
pub fn sync_flushed_others(out: &RunOutput) -> Option<String> {
    (fact(out, "sync") == Some("sync")).then_some(())?;
    let before = get(out, &m::MEM_DIRTY_START_BYTES).filter(|b| *b >= MIN_BYTES)?;
    Some(format!(
        "sync(2) flushed others' data: the host held {} of dirty data when the run started, which its sync(2) wrote too: the sync time includes other processes' writes (sync = \"fsync\" times this file alone)",
        format_bytes(before)
    ))
}

#[cfg(test)]
mod tests;

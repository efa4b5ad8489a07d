//! One sample of what the system is doing: the watched devices' counters
//! (/proc/diskstats), host CPU (/proc/stat), the CPU of watched processes
//! and of their threads (/proc/PID/stat, /proc/PID/task), memory
//! (/proc/meminfo) and pressure stall information (/proc/pressure), all
//! read with the `procfs` crate. Counters are kept raw (ticks, sectors,
//! microseconds): [`super::figures`] turns differences into figures.

use std::collections::BTreeMap;

use procfs::process::Process;
use procfs::{Current, CurrentSI};

use super::kernel::KernelThread;
use super::procs::{Located, STORLAB};

/// A device's cumulative counters (see the kernel's iostats.rst).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Disk {
    pub reads: u64,
    pub writes: u64,
    pub read_sectors: u64,
    pub write_sectors: u64,
    /// Milliseconds spent on reads and on writes.
    pub read_ms: u64,
    pub write_ms: u64,
    /// Milliseconds the device had requests in flight.
    pub io_ticks_ms: u64,
    /// Milliseconds of requests in flight, weighted by their number.
    pub queue_ms: u64,
    /// Flush requests completed (kernels before 5.5 do not count them).
    pub flushes: Option<u64>,
    /// Discard requests completed and their sectors (kernels before 4.18
    /// do not count them).
    pub discards: Option<u64>,
    pub discard_sectors: Option<u64>,
}

/// Host CPU time in clock ticks, over all cores.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostCpu {
    /// user, nice, system, irq and softirq.
    pub busy: u64,
    /// irq and softirq: interrupts, which no process asked for by name.
    pub irq: u64,
    pub iowait: u64,
    pub steal: u64,
    /// Everything, idle included.
    pub total: u64,
}

/// Memory figures in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Mem {
    pub cached: u64,
    pub dirty: u64,
    pub writeback: u64,
    pub available: u64,
}

/// Pressure stall totals in microseconds since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Psi {
    pub io_some_us: u64,
    pub io_full_us: u64,
    pub memory_some_us: u64,
    pub memory_full_us: u64,
    pub cpu_some_us: u64,
}

/// The CPU of one process (and what it reaped and still runs beneath it),
/// in ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcCpu {
    /// The process's label (`postgres`, `glusterfsd`, `fio`).
    pub label: String,
    pub pid: u32,
    pub ticks: u64,
    /// Clock ticks after boot when the process started.
    pub start_ticks: u64,
    /// A child of storlab: when it ends, what it used moves to storlab's
    /// reaped ticks ([`Sample::reaped`]).
    pub child: bool,
}

/// The CPU of one thread of a watched process, in ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadCpu {
    pub label: String,
    pub tid: u32,
    pub ticks: u64,
    /// Nanoseconds it waited on a run queue for a CPU (schedstat's
    /// run_delay), where the kernel keeps it.
    pub waited_ns: Option<u64>,
}

/// Everything read at one instant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    /// Seconds since the recording started.
    pub t: f64,
    /// Per watched device (major, minor): its counters, if it was there.
    pub disks: BTreeMap<(u32, u32), Disk>,
    pub cpu: Option<HostCpu>,
    pub procs: Vec<ProcCpu>,
    pub threads: Vec<ThreadCpu>,
    pub mem: Option<Mem>,
    pub psi: Option<Psi>,
    /// What storlab's children that ended used (its cutime + cstime).
    pub reaped: u64,
    /// The kernel's threads (children of kthreadd), with their names now.
    pub kernel: Vec<KernelThread>,
}

/// Reads the counters of `devices` (major, minor).
pub fn disks(devices: &[(u32, u32)]) -> BTreeMap<(u32, u32), Disk> {
    let mut out = BTreeMap::new();
    if devices.is_empty() {
        return out;
    }
    for d in procfs::diskstats().unwrap_or_default() {
        let key = (d.major as u32, d.minor as u32);
        if devices.contains(&key) {
            out.insert(
                key,
                Disk {
                    reads: d.reads,
                    writes: d.writes,
                    read_sectors: d.sectors_read,
                    write_sectors: d.sectors_written,
                    read_ms: d.time_reading,
                    write_ms: d.time_writing,
                    io_ticks_ms: d.time_in_progress,
                    queue_ms: d.weighted_time_in_progress,
                    flushes: d.flushes,
                    discards: d.discards,
                    discard_sectors: d.sectors_discarded,
                },
            );
        }
    }
    out
}

pub fn host_cpu() -> Option<HostCpu> {
    let k = procfs::KernelStats::current().ok()?.total;
    let opt = |v: Option<u64>| v.unwrap_or(0);
    let busy = k.user + k.nice + k.system + opt(k.irq) + opt(k.softirq);
    let (iowait, steal) = (opt(k.iowait), opt(k.steal));
    Some(HostCpu {
        busy,
        irq: opt(k.irq) + opt(k.softirq),
        iowait,
        steal,
        total: busy + iowait + steal + k.idle,
    })
}

pub fn mem() -> Option<Mem> {
    let m = procfs::Meminfo::current().ok()?;
    Some(Mem {
        cached: m.cached,
        dirty: m.dirty,
        writeback: m.writeback,
        available: m.mem_available.unwrap_or(m.mem_free),
    })
}

/// PSI totals, where the kernel has them (4.20+, with CONFIG_PSI).
pub fn psi() -> Option<Psi> {
    let io = procfs::IoPressure::current().ok()?;
    let memory = procfs::MemoryPressure::current().ok()?;
    let cpu = procfs::CpuPressure::current().ok()?;
    Some(Psi {
        io_some_us: io.some.total,
        io_full_us: io.full.total,
        memory_some_us: memory.some.total,
        memory_full_us: memory.full.total,
        cpu_some_us: cpu.some.total,
    })
}

/// A stat's CPU ticks: its own, and what it reaped when `reaped`.
fn stat_ticks(s: &procfs::process::Stat, reaped: bool) -> u64 {
    let own = s.utime + s.stime;
    if reaped {
        own + (s.cutime.max(0) + s.cstime.max(0)) as u64
    } else {
        own
    }
}

/// The children of every thread of `pid`.
fn children(p: &Process) -> Vec<u32> {
    let mut out = Vec::new();
    for t in p.tasks().into_iter().flatten().flatten() {
        out.extend(t.children().unwrap_or_default());
    }
    out
}

/// The CPU ticks of `pid` with what it reaped and every live descendant,
/// leaving out the subtrees of `exclude` (watched on their own).
fn tree_ticks(pid: u32, exclude: &[u32], depth: u32) -> Option<(u64, u64, String)> {
    let p = Process::new(pid as i32).ok()?;
    // The parent first: a child reaped after this read is then counted at
    // most once (missing from this sample, in the parent's next).
    let s = p.stat().ok()?;
    let mut ticks = stat_ticks(&s, true);
    if depth < 8 {
        for c in children(&p) {
            if !exclude.contains(&c) {
                ticks += tree_ticks(c, exclude, depth + 1).map_or(0, |t| t.0);
            }
        }
    }
    Some((ticks, s.starttime, s.comm))
}

/// The threads of `pid`, labelled `label`.
fn threads(pid: u32, label: &str, out: &mut Vec<ThreadCpu>) {
    let Ok(p) = Process::new(pid as i32) else {
        return;
    };
    for t in p.tasks().into_iter().flatten().flatten() {
        if let Ok(s) = t.stat() {
            out.push(ThreadCpu {
                label: label.to_string(),
                tid: t.tid as u32,
                ticks: stat_ticks(&s, false),
                waited_ns: t.schedstat().ok().map(|x| x.run_delay),
            });
        }
    }
}

/// The CPU of storlab itself, of each program it runs (its children not
/// watched as serving processes, labelled by their name), of the serving
/// processes found now (each with its descendants); returns what
/// storlab's children that ended used (its reaped ticks).
pub fn processes(serving: &[Located], procs: &mut Vec<ProcCpu>, thr: &mut Vec<ThreadCpu>) -> u64 {
    let me = std::process::id();
    let roots: Vec<u32> = serving.iter().map(|l| l.pid).collect();
    let mut reaped = 0;
    let mut kids = Vec::new();
    if let Ok(p) = Process::new(me as i32) {
        if let Ok(s) = p.stat() {
            procs.push(ProcCpu {
                label: STORLAB.into(),
                pid: me,
                // storlab's own threads only: what it reaped is counted
                // apart, less what was seen of those children alive.
                ticks: stat_ticks(&s, false),
                start_ticks: s.starttime,
                child: false,
            });
            reaped = stat_ticks(&s, true) - stat_ticks(&s, false);
        }
        threads(me, STORLAB, thr);
        kids = children(&p);
        for &c in kids.iter().filter(|c| !roots.contains(c)) {
            if let Some((ticks, start_ticks, comm)) = tree_ticks(c, &roots, 0) {
                procs.push(ProcCpu {
                    label: comm,
                    pid: c,
                    ticks,
                    start_ticks,
                    child: true,
                });
            }
        }
    }
    for l in serving {
        if let Some((ticks, start_ticks, _)) = tree_ticks(l.pid, &roots, 0) {
            procs.push(ProcCpu {
                label: l.label.clone(),
                pid: l.pid,
                ticks,
                start_ticks,
                // A server storlab started without detaching it.
                child: kids.contains(&l.pid),
            });
            threads(l.pid, &l.label, thr);
        }
    }
    reaped
}

/// Clock ticks since boot now, to tell processes born during a run.
pub fn uptime_ticks() -> u64 {
    let up = std::fs::read_to_string("/proc/uptime")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or(0.0);
    (up * procfs::ticks_per_second() as f64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_host() {
        let cpu = host_cpu().expect("/proc/stat");
        assert!(cpu.total >= cpu.busy && cpu.total > 0);
        let m = mem().expect("/proc/meminfo");
        assert!(m.available > 0);
        let (mut procs, mut thr) = (Vec::new(), Vec::new());
        processes(&[], &mut procs, &mut thr);
        assert_eq!(procs[0].label, STORLAB);
        assert_eq!(procs[0].pid, std::process::id());
        assert!(thr.iter().any(|t| t.tid == std::process::id()));
    }

    #[test]
    fn a_child_and_its_cpu_are_seen() {
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 5",
            ])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(700));
        let (mut procs, mut thr) = (Vec::new(), Vec::new());
        processes(&[], &mut procs, &mut thr);
        let _ = child.kill();
        let _ = child.wait();
        let sh = procs
            .iter()
            .find(|p| p.pid == child.id())
            .expect("the child");
        assert_eq!(sh.label, "sh");
        assert!(sh.ticks > 0, "{sh:?}");
    }
}

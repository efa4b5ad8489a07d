//! The kernel's own threads (the children of kthreadd) and which of them
//! work for a campaign: a loop device's workers (`kworker/u8:1-loop0`),
//! the writeback of a device or a FUSE mount (`kworker/u8:3+flush-7:0`,
//! `flush-0:52`), a filesystem's journal and log threads (`jbd2/loop0-8`,
//! `xfsaild/loop0`, `kworker/0:2-xfs-conv/loop0`), direct I/O completion
//! (`dio/loop0`). A worker's name says the work queue of what it does or
//! last did, so a worker is counted for the campaign over a sampling
//! interval when its name at either end names one of the campaign's
//! devices; other kernel threads (kblockd, events, RCU, reclaim) are the
//! kernel's, neither the campaign's nor another process's. ksoftirqd runs
//! interrupts' bottom halves, which /proc/stat counts as softirq already.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use procfs::process::Process;

use super::chain::Chain;

/// kthreadd, the parent of every kernel thread.
const KTHREADD: i32 = 2;

/// One kernel thread at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelThread {
    pub pid: u32,
    /// Its name now (a worker's changes with its work).
    pub name: String,
    /// Its CPU (user + system) in clock ticks.
    pub ticks: u64,
    /// Clock ticks after boot when it started.
    pub start_ticks: u64,
}

/// The kernel's threads now.
pub fn threads() -> Vec<KernelThread> {
    let Ok(kthreadd) = Process::new(KTHREADD) else {
        return Vec::new();
    };
    let Ok(main) = kthreadd.task_main_thread() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for pid in main.children().unwrap_or_default() {
        let Ok(s) = Process::new(pid as i32).and_then(|p| p.stat()) else {
            continue;
        };
        out.push(KernelThread {
            pid,
            name: s.comm,
            ticks: s.utime + s.stime,
            start_ticks: s.starttime,
        });
    }
    out
}

/// Whether a kernel thread runs interrupts' bottom halves, whose time
/// /proc/stat counts as softirq.
pub fn runs_interrupts(name: &str) -> bool {
    name.starts_with("ksoftirqd/")
}

/// The names under which the kernel's threads work for a campaign's
/// devices and filesystems: each device's kernel name (`loop0`, `vda1`,
/// `dm-0`), and `flush-MAJ:MIN` for the writeback of each device's disk
/// and of each filesystem the campaign's paths lie on (a FUSE mount's
/// anonymous device, `flush-0:52`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelWork {
    names: Vec<String>,
}

impl KernelWork {
    /// The work for `chain` and the filesystems of `paths`.
    pub fn of(chain: &Chain, paths: &[PathBuf]) -> KernelWork {
        let mut w = KernelWork::default();
        for d in &chain.devices {
            w.add(d.name.clone());
            let (major, minor) = disk_of(d.major, d.minor);
            w.add(format!("flush-{major}:{minor}"));
        }
        for p in paths {
            if let Ok(meta) = std::fs::metadata(p) {
                let dev = meta.dev();
                w.add(format!("flush-{}:{}", libc::major(dev), libc::minor(dev)));
            }
        }
        w
    }

    /// The work named so (`loop0`, `flush-7:0`).
    pub fn of_names<S: Into<String>>(names: impl IntoIterator<Item = S>) -> KernelWork {
        let mut w = KernelWork::default();
        for n in names {
            w.add(n.into());
        }
        w
    }

    /// The names of this work and `other`'s.
    pub fn merge(&mut self, other: &KernelWork) {
        for n in &other.names {
            self.add(n.clone());
        }
    }

    fn add(&mut self, name: String) {
        if !name.is_empty() && !self.names.contains(&name) {
            self.names.push(name);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Whether a kernel thread called `thread` works for these devices:
    /// its name holds one of theirs as a whole word (`loop1` is not
    /// `loop10`, `flush-7:1` not `flush-7:10`).
    pub fn does(&self, thread: &str) -> bool {
        self.names.iter().any(|n| names_word(thread, n))
    }
}

/// Whether `text` holds `word` with no letter, digit or colon on either
/// side.
fn names_word(text: &str, word: &str) -> bool {
    let joins = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == ':');
    text.match_indices(word).any(|(at, _)| {
        !joins(text[..at].chars().next_back()) && !joins(text[at + word.len()..].chars().next())
    })
}

/// The disk a device numbered (major, minor) belongs to: itself, or for
/// a partition the disk holding it (whose writeback it shares).
fn disk_of(major: u32, minor: u32) -> (u32, u32) {
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    if !sys.join("partition").exists() {
        return (major, minor);
    }
    std::fs::read_to_string(sys.join("../dev"))
        .ok()
        .and_then(|t| super::chain::parse_dev(&t))
        .unwrap_or((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(names: &[&str]) -> KernelWork {
        KernelWork::of_names(names.iter().copied())
    }

    #[test]
    fn a_thread_works_for_a_device_its_name_holds_as_a_word() {
        let w = work(&["loop1", "flush-7:1", "flush-0:52"]);
        for yes in [
            "kworker/u8:1-loop1",
            "kworker/u8:3+flush-7:1",
            "kworker/u8:0-flush-0:52",
            "jbd2/loop1-8",
            "xfsaild/loop1",
            "kworker/0:2-xfs-conv/loop1",
            "kworker/R-dio/loop1",
            "loop1",
        ] {
            assert!(w.does(yes), "{yes}");
        }
        for no in [
            "kworker/u8:1-loop10",
            "kworker/u8:3+flush-7:10",
            "kworker/u8:3+flush-7:1:2",
            "jbd2/loop11-8",
            "kworker/1:2H-kblockd",
            "kworker/u8:0-events_unbound",
            "ksoftirqd/0",
        ] {
            assert!(!w.does(no), "{no}");
        }
        assert!(!KernelWork::default().does("loop1"));
    }

    #[test]
    fn this_hosts_kernel_threads_are_read() {
        let t = threads();
        // Every Linux host has a ksoftirqd per CPU, unless /proc hides
        // kthreadd (a container's pid namespace).
        if !t.is_empty() {
            assert!(t.iter().any(|k| runs_interrupts(&k.name)), "{t:?}");
        }
    }

    #[test]
    fn merged_work_has_each_name_once() {
        let mut a = work(&["loop0"]);
        a.merge(&work(&["loop0", "flush-7:0"]));
        assert_eq!(a, work(&["loop0", "flush-7:0"]));
    }
}

//! The estimate where the store has no past run to learn from: each
//! workload's own estimate of its run ([`WorkloadConfig::estimate`]), the
//! part of it that moves with the storage ([`WorkloadConfig::estimate_io`])
//! slowed down by what the target kind puts in the way (a FUSE client, a
//! userspace ZFS), and what storlab does around every run (a remount, a
//! cache drop) and around the campaign (provisioning, teardown), per kind.
//!
//! The constants around the runs were measured on the development machine
//! (2 cores, a busy host: load average 20 from other builds and tests) with
//! a `mock` workload sleeping 1 s, three runs with `remount =
//! "between-runs"` and `drop_caches`, on each kind: provisioning took 1.0 s
//! (loop, ext4 512M), 3.2 s (zfs-fuse), 9.5–25 s (Gluster, 2–4 bricks);
//! teardown 0.9, 6.5, 14–18 s; a run 3.5–5.6 s more than its sleep with a
//! remount and a cache drop (1.4–6 s through Gluster). The learned estimate
//! replaces them after a first campaign.
//!
//! [`WorkloadConfig::estimate`]: crate::workload::WorkloadConfig::estimate
//! [`WorkloadConfig::estimate_io`]: crate::workload::WorkloadConfig::estimate_io

use std::time::Duration;

use crate::experiment::{Experiment, Remount};
use crate::params::Value;
use crate::targets::TargetKind;
use crate::workload::WorkloadKind;

/// What storlab does around every run besides the workload: the working
/// directory, telemetry, recording the run.
const RUN_FIXED_S: f64 = 0.3;
/// `echo 3 > /proc/sys/vm/drop_caches` with a sync before it.
const DROP_CACHES_S: f64 = 0.6;

/// How much slower than its own estimate a workload's storage-bound part
/// runs on a target kind.
fn slowdown(target: TargetKind, workload: WorkloadKind) -> f64 {
    use TargetKind as T;
    use WorkloadKind as W;
    match (target, workload) {
        // Seed 002's 64-byte writes then sync: 20–22 s a run of 8 MiB
        // at load 8–15 (40× said 5 s).
        (T::Gluster, W::Tinywrites) => 100.0,
        (T::Gluster, W::Matrix) => 9.5,
        (T::Gluster, W::Smallfiles) => 30.0,
        // Commits through FUSE (a VM disk on the volume: 92–120 tx/s
        // and pgbench -i at scale 10 in 19–26 s, load average 6–9).
        (T::Gluster, W::Pgbench) => 5.0,
        (T::Gluster, _) => 4.0,
        (T::Zfs, W::Tinywrites | W::Smallfiles) => 8.0,
        (T::Zfs, _) => 3.0,
        (T::Nfs, _) => 4.0,
        (T::Tmpfs, _) => 0.7,
        (T::VmDisk, _) => 2.5,
        // iozone's cells on the local disk run from the page cache: seed
        // 003's took 1.1 s a run quiet, 3.5–5 s busy.
        (T::Dir | T::Loop | T::Block, W::Matrix) => 1.0,
        (T::Dir | T::Loop | T::Block, _) => 1.5,
    }
}

/// What each call to the storage costs beyond its bytes on a target of
/// this kind ([`WorkloadConfig::estimate_calls`]): through Gluster's FUSE
/// client, a round trip through the client and the brick daemons. Fitted
/// with the Gluster matrix's byte slowdown (9.5) to seeds 003 and 004 as
/// recorded here: 003's matrix (180 000 calls, 4.4 s of bytes by its own
/// estimate) took 34–36 s a run on a quiet host and 56–71 s at load
/// 4–15, 004's (14 900 calls, 4.2 s) 25–47 s at load 7–15; 0.6 ms a call
/// and 4× the bytes had 003 at 1.5× and 004 at 0.5× of the same load.
/// Other kinds: no per-call cost measured (zfs-fuse is FUSE too).
///
/// [`WorkloadConfig::estimate_calls`]: crate::workload::WorkloadConfig::estimate_calls
fn per_call_s(kind: TargetKind) -> f64 {
    match kind {
        TargetKind::Gluster => 250e-6,
        _ => 0.0,
    }
}

/// Unmounting and mounting a target of this kind again.
fn remount_s(kind: TargetKind) -> f64 {
    match kind {
        TargetKind::Gluster => 2.5,
        TargetKind::Zfs => 3.0,
        TargetKind::Loop | TargetKind::VmDisk => 3.0,
        TargetKind::Tmpfs | TargetKind::Nfs => 0.3,
        TargetKind::Dir | TargetKind::Block => 0.0,
    }
}

/// Provisioning a target of this kind, without its image.
fn provision_s(kind: TargetKind) -> f64 {
    match kind {
        TargetKind::Gluster => 15.0,
        TargetKind::Zfs => 3.5,
        TargetKind::Loop => 1.5,
        // qemu-img, the daemon, its export, the loop device, mkfs.xfs:
        // 60 s for a replica-3 volume and two 2 GiB disks on it, one
        // preallocated, at load average 6.
        TargetKind::VmDisk => 8.0,
        TargetKind::Tmpfs | TargetKind::Nfs => 0.3,
        TargetKind::Dir | TargetKind::Block => 0.1,
    }
}

/// Tearing a target of this kind down.
fn teardown_s(kind: TargetKind) -> f64 {
    match kind {
        TargetKind::Gluster => 15.0,
        TargetKind::Zfs => 6.0,
        TargetKind::Loop => 1.0,
        TargetKind::VmDisk => 3.0,
        TargetKind::Tmpfs | TargetKind::Nfs => 0.2,
        TargetKind::Dir | TargetKind::Block => 0.0,
    }
}

/// Writing an image file out (a preallocated loop or zfs image), per byte.
const IMAGE_BYTES_PER_S: f64 = 1e9;
/// The same through a Gluster volume's FUSE mount (replica 3 on one host
/// writes every byte three times).
const IMAGE_ON_GLUSTER_BYTES_PER_S: f64 = 1e8;

fn secs(s: f64) -> Duration {
    crate::params::units::saturating_secs(s.max(0.0))
}

/// One run of workload `w` on target `t`, what storlab does around it
/// included; `root`: whether caches are dropped; `pace`: the host's
/// against the reference ([`Load::pace`]).
///
/// [`Load::pace`]: crate::estimate::Load::pace
pub fn run(exp: &Experiment, t: usize, w: usize, root: bool, pace: f64) -> Duration {
    let (tg, wl) = (&exp.targets[t], &exp.workloads[w]);
    let whole = wl.config.estimate();
    let io = wl.config.estimate_io().min(whole);
    let kind = stack_kind(exp, t);
    let calls = wl.config.estimate_calls() as f64 * per_call_s(kind);
    let storage = io.as_secs_f64() * slowdown(kind, wl.kind) + calls;
    let mut around = RUN_FIXED_S;
    if exp.plan.drop_caches && root {
        around += DROP_CACHES_S;
    }
    if exp.plan.remount == Remount::BetweenRuns {
        around += remount_s(bottom_kind(exp, t));
    }
    let _ = tg;
    // A cluster kept from run to run is made in the first run on it: once
    // per target and set of kept files, spread over the pair's runs.
    let runs = f64::from((exp.plan.repetitions.min() + exp.plan.warmup).max(1));
    let made = first_extra(exp, t, w, pace).as_secs_f64() / runs;
    (whole - io).saturating_add(secs((storage + around) * pace + made))
}

/// What the first run of pair (`t`, `w`) takes beyond the others: making
/// the files kept from run to run (a PostgreSQL cluster and its `pgbench
/// -i`) when the pair's workload is the one whose directory they are in.
pub fn first_extra(exp: &Experiment, t: usize, w: usize, pace: f64) -> Duration {
    let wl = &exp.workloads[w];
    let config = &wl.config;
    if config.kept_files().is_none() || exp.files_of(w) != w {
        return Duration::ZERO;
    }
    let once = config.estimate_once();
    let once_io = config.estimate_once_io().min(once);
    secs(
        (once - once_io).as_secs_f64()
            + once_io.as_secs_f64() * slowdown(stack_kind(exp, t), wl.kind) * pace,
    )
}

/// What a remount or a cache drop adds to a run (for a recorded run
/// that had one where the plan has none, or the other way round).
pub fn remount(exp: &Experiment, t: usize) -> Duration {
    secs(remount_s(bottom_kind(exp, t)))
}

pub fn drop_caches() -> Duration {
    secs(DROP_CACHES_S)
}

/// Provisioning every target.
pub fn setup(exp: &Experiment, pace: f64) -> Duration {
    let s: f64 = exp
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let written = match (
                t.kind,
                t.params.get("allocation"),
                t.params.get("preallocation"),
            ) {
                (TargetKind::Loop | TargetKind::Zfs, Some(Value::Str(a)), _) => a == "preallocated",
                (TargetKind::VmDisk, _, Some(Value::Str(a))) => a == "full",
                _ => false,
            };
            let rate = match stack_kind(exp, i) {
                TargetKind::Gluster => IMAGE_ON_GLUSTER_BYTES_PER_S,
                _ => IMAGE_BYTES_PER_S,
            };
            let image = if written {
                size_of(&t.params) as f64 / rate
            } else {
                0.0
            };
            provision_s(t.kind) + image
        })
        .sum();
    secs(s * pace)
}

/// Tearing every target down.
pub fn teardown(exp: &Experiment, pace: f64) -> Duration {
    secs(exp.targets.iter().map(|t| teardown_s(t.kind)).sum::<f64>() * pace)
}

fn size_of(p: &crate::params::Params) -> u64 {
    match p.get("size") {
        Some(Value::Size(b)) => *b,
        _ => 0,
    }
}

/// The kind whose storage a target's runs reach: a loop image standing on
/// a Gluster volume writes through Gluster.
fn stack_kind(exp: &Experiment, t: usize) -> TargetKind {
    let mut kind = exp.targets[t].kind;
    let mut at = t;
    while let Some(below) = exp.targets[at].on {
        if exp.targets[below].kind == TargetKind::Gluster {
            kind = TargetKind::Gluster;
        }
        at = below;
    }
    kind
}

/// The kind remounted for a target: the bottom of its stack.
fn bottom_kind(exp: &Experiment, t: usize) -> TargetKind {
    let mut at = t;
    while let Some(below) = exp.targets[at].on {
        at = below;
    }
    exp.targets[at].kind
}

/// Building a Debian root of `software` with debootstrap (minbase and its
/// packages: about 90 MB downloaded, 330–600 MB unpacked), at the
/// reference load: 2m56s for Gluster's, 2m25s for PostgreSQL's, measured
/// at load 6 on 2 cores. Its download does not slow with the load; its
/// unpacking and configuring do.
pub fn root_build(software: crate::provision::root::Software, pace: f64) -> Duration {
    use crate::provision::root::Software;
    let (download_s, work_s) = match software {
        Software::Gluster => (40.0, 136.0),
        Software::Postgres => (35.0, 110.0),
    };
    secs(download_s + work_s * pace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::Load;
    use crate::experiment::parse_experiment;

    fn exp(reinit: &str) -> Experiment {
        let src = format!(
            "name = \"e\"\n[plan]\nrepetitions = 3\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"/tmp\"\n\
             [[workload]]\nname = \"pg\"\nkind = \"pgbench\"\nscale = 10\nreinit = \"{reinit}\"\n\
             sweep = {{ transactions = [10, 20] }}\n"
        );
        parse_experiment("e.toml", &src).unwrap()
    }

    #[test]
    fn a_cluster_kept_across_a_sweep_is_made_once_per_target() {
        let e = exp("once");
        let config = &e.workloads[0].config;
        let made = config.estimate_once_io().as_secs_f64()
            * slowdown(TargetKind::Dir, WorkloadKind::Pgbench)
            + (config.estimate_once() - config.estimate_once_io()).as_secs_f64();
        assert!(made > 5.0, "{made}");
        assert!((first_extra(&e, 0, 0, 1.0).as_secs_f64() - made).abs() < 1e-3);
        assert_eq!(first_extra(&e, 0, 1, 1.0), Duration::ZERO);
        // The first variant's runs carry it, spread over its three runs;
        // the second variant runs on the same cluster.
        let first = run(&e, 0, 0, false, 1.0).as_secs_f64();
        let second = run(&e, 0, 1, false, 1.0).as_secs_f64();
        let txs = |w: usize| e.workloads[w].config.estimate().as_secs_f64();
        let extra = (first - txs(0)) - (second - txs(1));
        assert!(
            (extra - made / 3.0).abs() < 0.01,
            "{extra} vs {}",
            made / 3.0
        );
    }

    #[test]
    fn a_fresh_cluster_every_run_is_made_in_every_run() {
        let e = exp("each-run");
        let config = &e.workloads[0].config;
        assert!(config.estimate() > config.estimate_once());
        let (a, b) = (run(&e, 0, 0, false, 1.0), run(&e, 0, 1, false, 1.0));
        assert!(a < b, "more transactions take longer: {a:?} {b:?}");
        assert!(a > config.estimate_once(), "{a:?}");
    }

    // Seed 003's example as this host ran it: what its six runs took,
    // summed, at the load each campaign ran at; the model's runs at that
    // load are within 0.67–1.5× of it (replay.rs holds every example's
    // recorded campaigns). Two campaigns of 2026-11-26 took 432 s at
    // load 5.5 and 438 s at load 9 (progress.rs' ETA test replays them):
    // the model says 0.52–0.53× of them since it was fitted to the newer
    // ones, where the same runs took 182 s at load 3.9–6.9 and 224 s at
    // load 9–15.
    #[test]
    fn seed_003s_modelled_runs_hold_at_the_load_they_ran_at() {
        let src = include_str!("../../examples/003-iozone-gluster-vs-nfs.toml");
        let exp = crate::experiment::parse_experiment("003.toml", src).unwrap();
        for (average, took) in [(0.7, 108.3), (5.5, 237.5), (3.9, 182.1), (11.6, 224.0)] {
            let load = Load {
                average,
                cores: 2.0,
            };
            let e = crate::estimate::Estimate::of(&exp, &[], true, load);
            let ratio = e.runs().as_secs_f64() / took;
            assert!(
                (0.67..=1.5).contains(&ratio),
                "at load {average}: modelled {:.0} s, took {took} s (×{ratio:.2})",
                e.runs().as_secs_f64()
            );
        }
    }
}

//! fio's access patterns, write data and verification in the io engine,
//! and latency over time, through the real binary: verify catching a block
//! corrupted behind a run's back, regions and block-size mixes moving the
//! bytes they should, per-second latency percentiles that place a stall in
//! its second, and compressible data stored compressed on ZFS.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::provision::daemons;
use crate::util::{metric, runs, series_of, Lab};

fn experiment(data: &Path, workloads: &str) -> String {
    format!(
        "name = \"patterns\"\n[plan]\nrepetitions = 1\ndrop_caches = false\n\
         [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n{workloads}",
        data.display()
    )
}

fn data_dir(lab: &Lab) -> PathBuf {
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    data
}

/// Waits until `path` exists with `len` bytes (its layout is written).
fn wait_for_layout(path: &Path, len: u64) {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(60) {
        if std::fs::metadata(path).is_ok_and(|m| m.len() == len) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("the run never laid out {}", path.display());
}

fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: kill has no memory preconditions; pid is our own child.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, sig) }, 0);
}

/// A campaign in the background, killed if the test fails before it ends.
struct Background(std::process::Child);

impl Background {
    fn start(lab: &Lab, file: &Path) -> Background {
        let child = lab
            .cmd()
            .args(["run", "--quiet", file.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start storlab");
        Background(child)
    }

    fn id(&self) -> u32 {
        self.0.id()
    }

    fn wait(mut self) -> std::process::ExitStatus {
        self.0.wait().unwrap()
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

#[test]
fn verify_catches_a_block_corrupted_behind_the_runs_back() {
    let lab = Lab::new();
    let data = data_dir(&lab);
    let w = "[[workload]]\nname = \"check\"\nkind = \"io\"\nrw = \"randread\"\nbs = \"4k\"\n\
             size = \"4M\"\nruntime = \"4s\"\nverify = \"crc32c\"\n";
    let file = lab.file("verify.toml", &experiment(&data, w));
    let run = Background::start(&lab, &file);
    let job = data.join("storlab-work-d/check/job0.dat");
    wait_for_layout(&job, 4 << 20);
    // The layout's final fsync, then a block overwritten from outside.
    std::thread::sleep(Duration::from_millis(500));
    let f = std::fs::OpenOptions::new().write(true).open(&job).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, &[0x5a; 4096], 40960).unwrap();
    drop(f);
    run.wait();
    let export = lab.export_json();
    let r = &runs(&export)[0];
    assert_eq!(r["status"], "failed", "{r}");
    let error = r["error"].as_str().unwrap();
    assert!(error.contains("offset 40960"), "{error}");
    assert!(error.contains("crc32c"), "{error}");
}

#[test]
fn verified_writes_read_back_clean_with_every_engine_and_a_bssplit() {
    let lab = Lab::new();
    let data = data_dir(&lab);
    let common = "kind = \"io\"\nverify = \"crc32c\"\nverify_fatal = true\nsize = \"4M\"\n";
    let w = format!(
        "[[workload]]\nname = \"seq\"\n{common}rw = \"write\"\nbssplit = \"4k/50:16k/50\"\n\n\
         [[workload]]\nname = \"rand\"\n{common}rw = \"randwrite\"\nioengine = \"io_uring\"\niodepth = 8\nbssplit = \"4k/30:64k/70\"\n\n\
         [[workload]]\nname = \"mixed\"\n{common}rw = \"randrw\"\nruntime = \"1s\"\nioengine = \"mmap\"\nbs = \"8k\"\n\n\
         [[workload]]\nname = \"compressible\"\n{common}rw = \"randrw\"\nruntime = \"1s\"\nbuffer_compress_percentage = 60\ndedupe_percentage = 20\n"
    );
    let file = lab.file("clean.toml", &experiment(&data, &w));
    let out = lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    assert!(out.contains("4 of 4 planned runs ok"), "{out}");
    let export = lab.export_json();
    // A size-based pass moves exactly `size`, whatever the block-size mix.
    assert_eq!(metric(&export, "seq", "d", "bytes"), vec![4.0 * 1048576.0]);
    assert_eq!(metric(&export, "rand", "d", "bytes"), vec![4.0 * 1048576.0]);
}

#[test]
fn offset_and_size_bound_the_region_of_each_job() {
    let lab = Lab::new();
    let data = data_dir(&lab);
    let w = "[[workload]]\nname = \"region\"\nkind = \"io\"\nrw = \"randwrite\"\nbs = \"4k\"\n\
             offset = \"1M\"\nsize = \"2M\"\nnumjobs = 2\nend_fsync = true\n";
    let file = lab.file("region.toml", &experiment(&data, w));
    let run = Background::start(&lab, &file);
    let job = data.join("storlab-work-d/region/job1.dat");
    // The file is offset + size long, laid out before the run.
    wait_for_layout(&job, 3 << 20);
    assert!(run.wait().success());
    let export = lab.export_json();
    assert_eq!(
        metric(&export, "region", "d", "bytes"),
        vec![2.0 * 2.0 * 1048576.0]
    );
}

/// The Done-when test: per-second percentile series exist, and a 200 ms
/// SIGSTOP shows in the second it happened. The run is open loop (1000
/// operations a second), so the stall delays about 200 operations by up to
/// 200 ms: a fifth of that second's operations, far above its p99.
#[test]
fn latency_percentiles_per_second_place_a_stall_in_its_second() {
    // A stall of the host (noisy_host's CPU hog) would be one too.
    let _alone = crate::util::measuring_alone();
    let lab = Lab::new();
    let data = data_dir(&lab);
    let w = "[[workload]]\nname = \"paced\"\nkind = \"io\"\nrw = \"randread\"\nsize = \"1M\"\n\
             rate_iops = 1000\nruntime = \"4s\"\n";
    let file = lab.file("stall.toml", &experiment(&data, w));
    let run = Background::start(&lab, &file);
    wait_for_layout(&data.join("storlab-work-d/paced/job0.dat"), 1 << 20);
    // The run starts right after its layout: stop it 1.5 s in, in second 1.
    std::thread::sleep(Duration::from_millis(1500));
    signal(run.id(), libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(200));
    signal(run.id(), libc::SIGCONT);
    assert!(run.wait().success());
    let export = lab.export_json();
    let r = &runs(&export)[0];
    let seconds = |name: &str| -> Vec<f64> {
        series_of(r, name)
            .iter()
            .map(|v| v.as_f64().unwrap_or(f64::NAN))
            .collect()
    };
    let bw = seconds("bw_bytes_per_s");
    let p50 = seconds("lat_p50_ns");
    let p99 = seconds("lat_p99_ns");
    let p999 = seconds("lat_p999_ns");
    assert_eq!(bw.len(), 4, "{bw:?}");
    for s in [&p50, &p99, &p999] {
        assert_eq!(s.len(), bw.len(), "one value a second: {s:?}");
    }
    for i in 0..4 {
        assert!(
            p50[i] <= p99[i] && p99[i] <= p999[i],
            "second {i}: {p50:?} {p99:?} {p999:?}"
        );
    }
    assert!(p99[1] >= 100e6, "the stall's second: p99 {:?}", p99);
    for i in [0, 2, 3] {
        assert!(
            p99[i] < p99[1] / 2.0,
            "second {i} has p99 {} ns, the stall's {} ns",
            p99[i],
            p99[1]
        );
    }
}

/// `zfs list` of one dataset: (used bytes, compressratio).
fn zfs_usage(dataset: &str) -> Option<(u64, f64)> {
    let out = Command::new("zfs")
        .args(["get", "-Hp", "-o", "value", "used,compressratio", dataset])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut v = text.lines();
    let used = v.next()?.trim().parse().ok()?;
    let ratio = v.next()?.trim().trim_end_matches('x').parse().ok()?;
    Some((used, ratio))
}

/// Runs a time-based 64 MiB write with `extra` options on two zfs-fuse
/// datasets, `compression = on` (lzjb) and `gzip`, and samples each
/// dataset's compressratio while its run writes (the campaign removes the
/// file afterwards): the ratio once most of the file is on disk.
fn compressratios(lab: &Lab, extra: &str) -> (f64, f64) {
    let dir = lab.path();
    let text = format!(
        "name = \"compress\"\n[plan]\nrepetitions = 1\ndrop_caches = false\n\
         [[target]]\nname = \"zon\"\nkind = \"zfs\"\nsize = \"400M\"\ndir = \"{d}\"\nproperties = {{ compression = \"on\" }}\n\
         [[target]]\nname = \"zgz\"\nkind = \"zfs\"\nsize = \"400M\"\ndir = \"{d}\"\nproperties = {{ compression = \"gzip\" }}\n\
         [[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nbs = \"64k\"\nsize = \"64M\"\nruntime = \"16s\"\n{extra}\n",
        d = dir.display()
    );
    let file = lab.file("compress.toml", &text);
    let _guard = crate::provision::Guard::new(lab);
    let mut run = Background::start(lab, &file);
    let pid = run.id();
    let mut best = [(0u64, f64::NAN); 2];
    let t0 = Instant::now();
    while run.0.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(300) {
        for (i, t) in ["zon", "zgz"].iter().enumerate() {
            if let Some((used, ratio)) = zfs_usage(&format!("storlab_{pid}_{t}/data")) {
                if used > best[i].0 {
                    best[i] = (used, ratio);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(run.wait().success(), "the campaign failed");
    for (i, t) in ["zon", "zgz"].iter().enumerate() {
        assert!(best[i].0 >= 24 << 20, "{t}: only {} bytes seen", best[i].0);
    }
    (best[0].1, best[1].1)
}

/// The Done-when test: data at `buffer_compress_percentage = 50` is stored
/// in about half the space, random data in all of it. gzip reaches 2.0;
/// zfs-fuse's `compression = on` is lzjb, whose literals cost 9 bits a
/// byte, so half-random data stores at about 1.7 there — fio's own data
/// measured 1.71 on it as storlab's does.
#[test]
#[ignore = "needs root"]
fn compressible_data_is_stored_compressed_on_zfs() {
    require_root!();
    require_program!("zfs");
    let _d = daemons();
    let lab = Lab::new();
    let (on, gzip) = compressratios(&lab, "buffer_compress_percentage = 50");
    assert!((gzip / 2.0 - 1.0).abs() <= 0.10, "gzip ratio {gzip}");
    assert!((1.6..=2.2).contains(&on), "lzjb ratio {on}");
    let lab = Lab::new();
    let (on, gzip) = compressratios(&lab, "");
    assert!((on - 1.0).abs() <= 0.05, "random data, lzjb ratio {on}");
    assert!((gzip - 1.0).abs() <= 0.05, "random data, gzip ratio {gzip}");
}

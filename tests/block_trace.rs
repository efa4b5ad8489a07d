//! The block layer's own view of runs — bpftrace on the kernel's block
//! tracepoints — against what the workloads saw: direct reads through a
//! loop target and the disk under its image, a re-read the page cache
//! served, fsyncs on ext4 with and without barriers.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::telemetry::{campaign, loop_name, loop_target, warnings};
use crate::util::{labelled, labelled_value, metric, runs, Lab};

/// A disk of the test's own: ext4 on a loop device over an image, mounted
/// in the lab, so that no other process's requests reach it (the host's
/// disk takes every test's and build's). Unmounted and detached on drop.
struct PrivateDisk {
    image: PathBuf,
    mnt: PathBuf,
    dev: String,
}

impl PrivateDisk {
    fn new(dir: &Path) -> PrivateDisk {
        let image = dir.join("disk.img");
        storlab::provision::loopdev::create_image(&image, 512 << 20, false).unwrap();
        let dev = storlab::provision::loopdev::attach(&image).unwrap();
        let mnt = dir.join("disk");
        let disk = PrivateDisk {
            image,
            mnt: mnt.clone(),
            dev: dev.file_name().unwrap().to_string_lossy().into_owned(),
        };
        std::fs::create_dir_all(&mnt).unwrap();
        let ok = |cmd: &mut Command| assert!(cmd.status().unwrap().success(), "{cmd:?}");
        ok(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&dev));
        ok(Command::new("mount").arg(&dev).arg(&mnt));
        disk
    }
}

impl Drop for PrivateDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
        let _ = storlab::provision::loopdev::detach_all(&self.image);
    }
}

/// The run's fact saying how device latency was measured.
fn block_trace(export: &Value) -> String {
    runs(export)[0]["facts"]["block_trace"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// The device under `top` in the run's chain (`loop2, vda (under loop2)`).
fn under(export: &Value, top: &str) -> String {
    let chain = runs(export)[0]["facts"]["telemetry_devices"]
        .as_str()
        .unwrap_or("")
        .to_string();
    chain
        .split(", ")
        .find_map(|d| d.strip_suffix(&format!(" (under {top})")))
        .unwrap_or_else(|| panic!("nothing under {top} in {chain}"))
        .to_string()
}

fn device(
    export: &Value,
    workload: &str,
    target: &str,
    name: &str,
    dev: &str,
    op: Option<&str>,
) -> f64 {
    let mut labels = vec![("device", dev)];
    labels.extend(op.map(|o| ("op", o)));
    let v = labelled(export, workload, target, name, &labels)[0];
    assert!(
        !v.is_nan(),
        "no {name} for {dev} {op:?}: {}",
        block_trace(export)
    );
    v
}

#[test]
#[ignore = "needs root"]
fn direct_random_reads_on_a_loop_target_are_timed_at_the_loop_device_and_the_disk_under_it() {
    require_root!();
    require_program!("bpftrace");
    // Where the latency went is judged from timings: not beside another
    // timed test (noisy_host's CPU hog made the workload wait for a core
    // here without its run being flagged).
    let _alone = crate::util::measuring_alone();
    let lab = Lab::new();
    let disk = PrivateDisk::new(lab.path());
    // Traced at any rate: on a quiet host the loop device completes more
    // than the default block_trace_max_rate (127k requests/s seen), which
    // stops tracing, as block_trace::a_device_faster_than_the_max_rate…
    // tests; this test is about the timing at both devices.
    let export = campaign(
        &lab,
        "block_trace_max_rate = 0",
        &loop_target().replace("@DIR@", &disk.mnt.display().to_string()),
        "[[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"randread\"\nbs = \"4k\"\nsize = \"64M\"\ndirect = true\nruntime = \"3s\"\n",
    );
    let fact = block_trace(&export);
    assert!(fact.starts_with("bpftrace v"), "{fact}");
    let lo = loop_name(&export);
    assert_eq!(under(&export, &lo), disk.dev);
    let p99 = metric(&export, "r", "ext4", "lat_p99_ns")[0];
    for dev in [&lo, &disk.dev] {
        let dev_p99 = device(&export, "r", "ext4", "dev_lat_p99_ns", dev, Some("read"));
        eprintln!("p99: workload {p99:.0} ns, {dev} {dev_p99:.0} ns");
        assert!(dev_p99 > 0.0, "{dev}: no read latency");
        // The loop device takes the workload's own requests: their p99 is
        // within the workload's, to the resolution of both histograms (the
        // trace's buckets 0.2%, HDR 0.1% each: 8.155 ms against 8.131 ms
        // was one such tie). The disk under the image does not: the loop
        // driver reads its backing file through that filesystem's page
        // cache, whose readahead sends larger requests the workload never
        // waits for (1.76 ms at loop0 against 0.55 ms at the workload).
        // Where the device was fast enough for its requests to be sampled
        // (block_trace's fact says so), its p99 is a sample's, within
        // ±0.25 percentile here: under the workload's p99.9.
        if dev == &lo {
            let p999 = metric(&export, "r", "ext4", "lat_p999_ns")[0];
            let bound = if fact.contains("1 in ") {
                p999
            } else {
                p99 * 1.005
            };
            assert!(dev_p99 <= bound, "{dev}: {dev_p99} > {bound}: {fact}");
        }
    }
    // Each 4 KiB direct read is one request to the loop device. bpftrace
    // reads its maps when its user space takes the sampler's mark, a
    // moment after it: on a loaded host (load 12 on 2 cores) the first
    // dump came ~0.2 s into the 3 s run and 1273 requests were counted
    // for 1379 reads, before a run waited for that first dump to start.
    let ops = metric(&export, "r", "ext4", "ops")[0];
    let requests = device(&export, "r", "ext4", "dev_requests", &lo, Some("read"));
    assert!(
        requests >= 0.85 * ops && requests <= 1.02 * ops + 64.0,
        "{requests} requests for {ops} reads"
    );
    let size = device(&export, "r", "ext4", "dev_request_bytes", &lo, Some("read"));
    assert!((size - 4096.0).abs() < 41.0, "{size}");
    // The stored histogram, and the percentiles per second beside the workload's.
    let run = &runs(&export)[0];
    let hist = run["histograms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| {
            h["name"] == "dev_lat"
                && h["labels"]["device"] == lo.as_str()
                && h["labels"]["op"] == "read"
        })
        .expect("the loop device's histogram");
    // Requests are counted by diskstats at completion, timed at issue and
    // completion: those in flight when the run started or ended make a
    // difference; and where the device was fast enough to be sampled (1 in
    // 2^shift, each timed request weighing 2^shift), the histogram's count
    // is an estimate, within four binomial standard deviations here.
    let estimated = hist["count"].as_f64().unwrap();
    let weight = fact
        .split("1 in ")
        .skip(1)
        .filter_map(|x| {
            x.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse::<f64>()
                .ok()
        })
        .fold(1.0, f64::max);
    let spread = 4.0 * (requests * (weight - 1.0)).sqrt();
    eprintln!("{estimated} estimated, {requests} counted, at most 1 in {weight} timed: {fact}");
    assert!(
        (estimated - requests).abs() <= 64.0 + spread,
        "{estimated} estimated, {requests} counted: {fact}"
    );
    let series = run["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["name"] == "dev_lat_p99_ns"
                && s["labels"]["device"] == lo.as_str()
                && s["labels"]["op"] == "read"
        })
        .expect("the loop device's p99 per second");
    assert!(series["values"].as_array().unwrap().len() >= 3, "{series}");
    // The report puts the workload's p99 beside the loop device's and
    // says the device took the time.
    let md = lab.ok(&["report", "--format", "md"]);
    let sentence = attribution(&md, "ext4");
    eprintln!("{sentence}");
    // On a host whose other processes kept both cores busy (load 14 here)
    // the workload's thread waits for a core after each completion: the
    // report says so instead (38 ms at the workload, 19 ms at loop2).
    let noisy = runs(&export)[0]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "noisy_host");
    assert!(
        sentence.contains(&format!(" at {lo}: the device"))
            || (noisy && sentence.contains("other processes used")),
        "{sentence}"
    );
    assert!(md.contains(&format!("| ext4 | {lo} | read |")), "{md}");
}

/// The sentence the report's "Where the latency went" gives `target`.
fn attribution(md: &str, target: &str) -> String {
    let section = md
        .split("### Where the latency went")
        .nth(1)
        .unwrap_or_else(|| panic!("no attribution section in\n{md}"));
    section
        .lines()
        .find_map(|l| {
            l.strip_prefix("- ")
                .and_then(|l| l.split_once(&format!(" on {target}: ")))
                .map(|(_, rest)| rest)
        })
        .unwrap_or_else(|| panic!("no sentence for {target} in\n{section}"))
        .to_string()
}

/// Buffered writes that fit the dirty limits stay in memory for the run:
/// no data request reaches a device, and the report says the page cache.
#[test]
#[ignore = "needs root"]
fn buffered_writes_that_stay_dirty_are_the_page_caches() {
    require_root!();
    require_program!("bpftrace");
    let lab = Lab::new();
    let export = campaign(
        &lab,
        "",
        loop_target(),
        "[[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"randwrite\"\nbs = \"4k\"\nsize = \"8M\"\nruntime = \"2s\"\n",
    );
    let lo = loop_name(&export);
    let writes = device(&export, "w", "ext4", "dev_requests", &lo, Some("write"));
    let md = lab.ok(&["report", "--format", "md"]);
    let sentence = attribution(&md, "ext4");
    eprintln!("{writes} write requests to {lo}: {sentence}");
    if writes == 0.0 {
        assert_eq!(sentence, "no device requests: the page cache");
    } else {
        // ext4's journal commit (every 5 s) can write during the run:
        // those requests took longer than the 4 KiB copies waited.
        assert!(sentence.contains(": not the device"), "{sentence}");
    }
}

/// `invalidate = false`: the io engine otherwise drops the file's pages when
/// the job opens it, as fio does. Other processes on this host drop the
/// page cache host-wide (campaigns with `drop_caches = true`): each run's
/// traced read bytes are checked
/// against /proc/diskstats', and the runs the cache served — diskstats says
/// the loop device read nothing — against the exact warning.
#[test]
#[ignore = "needs root"]
fn a_cached_reread_sends_no_read_request_and_says_page_cache() {
    require_root!();
    require_program!("bpftrace");
    let export = campaign(
        &Lab::new(),
        "drop_caches = false\nrepetitions = 3",
        loop_target(),
        "[[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"read\"\nbs = \"1M\"\nsize = \"64M\"\ninvalidate = false\n",
    );
    let lo = loop_name(&export);
    let mut cached = 0;
    for run in runs(&export) {
        let get = |name: &str, op: Option<&str>| {
            let mut l = vec![("device", lo.as_str())];
            l.extend(op.map(|o| ("op", o)));
            labelled_value(run, name, &l).unwrap_or(0.0)
        };
        let requests = get("dev_requests", Some("read"));
        let traced = requests * get("dev_request_bytes", Some("read"));
        let diskstats = get("dev_read_bytes", None);
        eprintln!(
            "run {}: {requests} read requests, {traced} bytes traced, {diskstats} in diskstats",
            run["id"]
        );
        assert!((traced - diskstats).abs() <= (1 << 20) as f64 + 0.05 * diskstats);
        if diskstats == 0.0 {
            cached += 1;
            assert_eq!(requests, 0.0);
            let w: Vec<&Value> = run["warnings"].as_array().unwrap().iter().collect();
            // Said from the layers' counters (#42), which the trace agrees with.
            let expected = "page cache: the page cache served 100.0% of the";
            assert!(
                w.iter().any(|w| w["kind"] == "page_cache"
                    && w["text"].as_str().unwrap_or("").starts_with(expected)),
                "{w:?}"
            );
        }
    }
    assert!(
        cached > 0,
        "another process dropped the page cache under every run: {:?}",
        warnings(&export, "r")
    );
}

#[test]
#[ignore = "needs root"]
fn fsyncs_on_ext4_flush_the_device_and_with_barrier_0_do_not() {
    require_root!();
    require_program!("bpftrace");
    let lab = Lab::new();
    let targets = format!(
        "{}\n{}",
        loop_target(),
        loop_target()
            .replace("name = \"ext4\"", "name = \"nobarrier\"")
            .replace(
                "size = \"256M\"",
                "size = \"256M\"\nmount_options = [\"barrier=0\"]"
            )
    );
    let export = campaign(
        &lab,
        "",
        &targets,
        "[[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"randwrite\"\nbs = \"4k\"\nsize = \"8M\"\nfsync = 1\nruntime = \"2s\"\n",
    );
    let loops: Vec<String> = (0..2)
        .map(|i| {
            export["targets"][i]["facts"]["loop_device"]
                .as_str()
                .unwrap()
                .trim_start_matches("/dev/")
                .to_string()
        })
        .collect();
    let fsyncs = metric(&export, "w", "ext4", "ops")[0];
    let with = device(&export, "w", "ext4", "dev_flush_requests", &loops[0], None);
    let without = device(
        &export,
        "w",
        "nobarrier",
        "dev_flush_requests",
        &loops[1],
        None,
    );
    eprintln!(
        "{fsyncs} writes, each fsynced: {with} flushes with barriers, {without} with barrier=0"
    );
    assert!(with >= 0.5 * fsyncs, "{with} flushes for {fsyncs} fsyncs");
    assert_eq!(without, 0.0);
    let durability = |target: &str| {
        runs(&export)
            .iter()
            .filter(|r| r["target"] == target)
            .flat_map(|r| r["warnings"].as_array().cloned().unwrap_or_default())
            .any(|w| w["kind"] == "durability_not_measured")
    };
    assert!(durability("nobarrier"));
    assert!(!durability("ext4"));
}

#[test]
#[ignore = "needs root"]
fn without_block_tracing_the_run_says_so_and_keeps_the_diskstats_average() {
    require_root!();
    let export = campaign(
        &Lab::new(),
        "block_trace = false",
        loop_target(),
        "[[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"randread\"\nbs = \"4k\"\nsize = \"16M\"\ndirect = true\nruntime = \"1s\"\n",
    );
    let fact = block_trace(&export);
    assert!(
        fact.starts_with("off ([plan] block_trace = false)"),
        "{fact}"
    );
    let lo = loop_name(&export);
    assert!(labelled(&export, "r", "ext4", "dev_await_ns", &[("device", &lo)])[0] > 0.0);
    assert!(labelled(
        &export,
        "r",
        "ext4",
        "dev_lat_p99_ns",
        &[("device", &lo), ("op", "read")]
    )[0]
    .is_nan());
}

/// Devices faster than `block_trace_max_rate` together are not traced
/// (the loop device and the disk under it both count): tracing stops early in the first run and stays off for the campaign, and both
/// runs say why in their block_trace fact and a "requested setting"
/// warning (here the limit is 100 requests a second, which direct 4 KiB
/// reads of a loop device pass many times over).
#[test]
#[ignore = "needs root"]
fn a_device_faster_than_the_max_rate_is_not_traced_and_the_runs_say_why() {
    require_root!();
    require_program!("bpftrace");
    let export = campaign(
        &Lab::new(),
        "repetitions = 2\nblock_trace_max_rate = 100",
        loop_target(),
        "[[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"randread\"\nbs = \"4k\"\nsize = \"16M\"\ndirect = true\nruntime = \"2s\"\n",
    );
    let runs = runs(&export);
    assert_eq!(runs.len(), 2);
    for run in runs {
        let fact = run["facts"]["block_trace"].as_str().unwrap_or("");
        assert!(
            (fact.starts_with("not traced: device ")
                || fact.starts_with("not traced: the traced devices completed "))
                && fact.contains("requests a second")
                && fact.contains("more than [plan] block_trace_max_rate = 100")
                && fact.contains("stopped tracing"),
            "run {}: {fact}",
            run["id"]
        );
        let setting: Vec<&Value> = run["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|w| w["kind"] == "setting")
            .collect();
        assert!(
            setting.iter().any(|w| w["text"]
                .as_str()
                .is_some_and(|t| t.contains("block_trace_max_rate = 100"))),
            "run {}: {:?}",
            run["id"],
            run["warnings"]
        );
    }
    let lo = loop_name(&export);
    assert!(labelled(&export, "r", "ext4", "dev_await_ns", &[("device", &lo)])[1] > 0.0);
}

/// One bpftrace for the whole campaign — attached once after provisioning,
/// not before every run — and still each run's figures are that run's
/// requests alone: every one of three runs reading its 16 MiB file once
/// with direct I/O shows 16 MiB read at the loop device, not the
/// campaign's running total, nor the files' layout between runs (buffered
/// writes the run's end_fsync-free layout leaves to writeback).
#[test]
#[ignore = "needs root"]
fn one_tracer_serves_the_campaign_and_each_run_counts_only_its_own_requests() {
    require_root!();
    require_program!("bpftrace");
    let lab = Lab::new();
    let text = format!(
        "name = \"shared\"\n[plan]\nrepetitions = 3\n\n{}\n[[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"read\"\nbs = \"1M\"\nsize = \"16M\"\ndirect = true\n",
        loop_target().replace("@DIR@", &lab.path().display().to_string())
    );
    let file = lab.file("exp.toml", &text);
    let out = lab.run(&["-v", "run", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let attaches = stderr
        .lines()
        .filter(|l| l.contains("bpftrace -f json"))
        .count();
    assert_eq!(attaches, 1, "bpftrace started {attaches} times:\n{stderr}");
    let export = lab.export_json();
    assert!(block_trace(&export).starts_with("bpftrace v"));
    let lo = loop_name(&export);
    let runs = runs(&export);
    assert_eq!(runs.len(), 3);
    for run in runs {
        let get = |name: &str| {
            labelled_value(run, name, &[("device", lo.as_str()), ("op", "read")]).unwrap_or(0.0)
        };
        let read = get("dev_requests") * get("dev_request_bytes");
        eprintln!("run {}: {read} bytes read at {lo}", run["id"]);
        // 16 MiB, and at most a few metadata blocks (drop_caches).
        assert!(
            (16.0 * 1048576.0..17.0 * 1048576.0).contains(&read),
            "run {}: {read} bytes read at {lo}",
            run["id"]
        );
    }
}

/// A dispersed Gluster volume (2 + 1 erasure coding) — the FUSE client,
/// its translators and three brick daemons between the workload and the
/// disk — on a disk of the test's own whose image lives in memory (a
/// tmpfs): the device's time is the loop driver's copy, and its worker's
/// wait for a core. The workload's direct random reads wait several times
/// longer (17-18 ms against 3.2-3.9 ms at p99, load 8-10 on 2 cores), and
/// the report says the time went above the device. (With 2 distributed
/// bricks the factor was 2.5 at load 8: too near the rule's 2 to hold.)
#[test]
#[ignore = "needs root"]
fn a_gluster_target_puts_the_latency_above_the_device() {
    require_root!();
    require_program!("bpftrace");
    require_program!("glusterd");
    let _d = crate::provision::daemons();
    let lab = Lab::new();
    let memory = crate::util::TestMount::new(lab.path().join("memory"), "700M");
    let disk = PrivateDisk::new(&memory.0);
    // Declared last: it undoes a campaign's leftovers before the disk goes.
    let _guard = crate::provision::Guard::new(&lab);
    let export = campaign(
        &lab,
        "",
        &format!(
            "[[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 3\ndisperse = 3\ndir = \"{}\"\n",
            disk.mnt.display()
        ),
        "[[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"randread\"\nbs = \"4k\"\nsize = \"64M\"\ndirect = true\nruntime = \"3s\"\n",
    );
    let fact = block_trace(&export);
    assert!(fact.starts_with("bpftrace v"), "{fact}");
    assert!(fact.contains(&disk.dev), "{fact}");
    let p99 = metric(&export, "r", "gl", "lat_p99_ns")[0];
    let dev_p99 = device(
        &export,
        "r",
        "gl",
        "dev_lat_p99_ns",
        &disk.dev,
        Some("read"),
    );
    let md = lab.ok(&["report", "--format", "md"]);
    let sentence = attribution(&md, "gl");
    eprintln!(
        "p99: workload {p99:.0} ns, {} {dev_p99:.0} ns: {sentence}",
        disk.dev
    );
    // The report's rule: the device's p99 below half the workload's.
    assert!(
        p99 > 2.0 * dev_p99,
        "workload p99 {p99} ns, {} {dev_p99} ns",
        disk.dev
    );
    assert!(
        sentence.contains(&format!(" at {}: above the device", disk.dev)),
        "{sentence}"
    );
}

//! Telemetry against ground truth: bytes a loop device wrote, a read
//! throttled by a cgroup, the page-cache warning on a cached re-read and
//! not on a cold read, the CPU of a Gluster volume's daemons.

use std::process::Command;

use serde_json::Value;

use crate::provision::daemons;
use crate::throttle::{numbers, run_throttled, Limit, LoopDev, Throttle};
use crate::util::{labelled, labelled_value, metric, runs, value_of, Lab};

const MIB: f64 = (1u64 << 20) as f64;

pub fn campaign(lab: &Lab, plan: &str, target: &str, workloads: &str) -> Value {
    // One run, unless the plan says how many.
    let once = if plan.contains("repetitions") {
        ""
    } else {
        "repetitions = 1\n"
    };
    let text = format!(
        "name = \"telemetry\"\n[plan]\n{once}{plan}\n\n{}\n{workloads}",
        target.replace("@DIR@", &lab.path().display().to_string())
    );
    let file = lab.file("exp.toml", &text);
    lab.ok(&["run", file.to_str().unwrap(), "--quiet"]);
    lab.export_json()
}

pub fn loop_target() -> &'static str {
    "[[target]]\nname = \"ext4\"\nkind = \"loop\"\nfs = \"ext4\"\nsize = \"256M\"\ndir = \"@DIR@\"\n"
}

/// The kernel name of a loop target's device (`loop3`), from its facts.
pub fn loop_name(export: &Value) -> String {
    let dev = export["targets"][0]["facts"]["loop_device"]
        .as_str()
        .expect("the loop device in the facts");
    dev.trim_start_matches("/dev/").to_string()
}

pub fn warnings(export: &Value, workload: &str) -> Vec<String> {
    runs(export)
        .iter()
        .filter(|r| r["workload"] == workload)
        .flat_map(|r| r["warnings"].as_array().cloned().unwrap_or_default())
        .map(|w| w["text"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
#[ignore = "needs root"]
fn a_loop_device_written_64_mib_with_end_fsync_wrote_them() {
    require_root!();
    let lab = Lab::new();
    let export = campaign(
        &lab,
        "",
        loop_target(),
        "[[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nbs = \"1M\"\nsize = \"64M\"\nend_fsync = true\n",
    );
    let dev = loop_name(&export);
    let written = labelled(&export, "w", "ext4", "dev_write_bytes", &[("device", &dev)]);
    assert!(written[0] >= 64.0 * MIB, "{dev} wrote {written:?}");
    let wa = labelled(
        &export,
        "w",
        "ext4",
        "write_amplification",
        &[("device", &dev)],
    );
    assert!(wa[0] >= 1.0 && wa[0] < 1.5, "{wa:?}");
    // The loop device stands on the device holding its image.
    let facts = &runs(&export)[0]["facts"];
    let chain = facts["telemetry_devices"].as_str().unwrap_or("");
    assert!(chain.contains(&format!("(under {dev})")), "{facts}");
    assert!(metric(&export, "w", "ext4", "dev_write_bytes")[0] > 0.0);
    let own = labelled(
        &export,
        "w",
        "ext4",
        "proc_cpu_s",
        &[("process", "storlab")],
    );
    assert!(own[0] > 0.0, "{own:?}");
    let cost = metric(&export, "w", "ext4", "telemetry_cpu_pct");
    assert!(cost[0] < 5.0, "{cost:?}");
    let series = &runs(&export)[0]["series"];
    assert!(
        series
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "dev_write_bw_bytes_per_s"
                && s["labels"]["device"] == dev.as_str()),
        "{series}"
    );
}

/// The kernel numbers loop devices as they are attached: with another loop
/// device attached between two campaigns, the target's image gets another
/// number, and comparing the campaigns still pairs its device's metrics.
#[test]
#[ignore = "needs root"]
fn a_loop_targets_device_is_compared_across_campaigns_under_another_number() {
    require_root!();
    let lab = Lab::new();
    let workload = "[[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nbs = \"1M\"\nsize = \"16M\"\nend_fsync = true\n";
    let first = loop_name(&campaign(&lab, "", loop_target(), workload));
    let other = LoopDev::new(lab.path());
    let second = loop_name(&campaign(&lab, "", loop_target(), workload));
    drop(other);
    assert_ne!(
        first, second,
        "the second campaign's loop device kept its number"
    );
    let json: Value = serde_json::from_str(&lab.ok(&[
        "compare",
        "1",
        "2",
        "--metric",
        "dev_write_bytes",
        "--format",
        "json",
    ]))
    .expect("compare's JSON");
    let metrics: Vec<&str> = json["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["metric"].as_str())
        .collect();
    let paired = format!("({second} in campaign 2)");
    assert!(
        metrics
            .iter()
            .any(|m| m.contains(&first) && m.ends_with(&paired)),
        "{first} paired with {second} not in {metrics:?}"
    );
}

#[test]
#[ignore = "needs root"]
fn telemetry_off_records_none_of_it() {
    require_root!();
    let lab = Lab::new();
    let export = campaign(
        &lab,
        "telemetry = false",
        loop_target(),
        "[[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nbs = \"1M\"\nsize = \"8M\"\n",
    );
    let names: Vec<&str> = runs(&export)[0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["name"].as_str())
        .collect();
    assert!(names.contains(&"write_bytes"), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("dev_") || n.starts_with("cpu_busy")),
        "{names:?}"
    );
}

#[test]
#[ignore = "needs root"]
fn a_cached_reread_measured_the_page_cache_and_a_cold_read_did_not() {
    require_root!();
    let read =
        "[[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"read\"\nbs = \"1M\"\nsize = \"64M\"\n";
    // A re-read of the file it just laid out, kept in the page cache:
    // `invalidate` (fio's default, and storlab's) would drop it first.
    let cached = format!("{read}invalidate = false\n");
    let warm = campaign(&Lab::new(), "drop_caches = false", loop_target(), &cached);
    let w = warnings(&warm, "r");
    assert!(w.iter().any(|w| w.starts_with("page cache:")), "{w:?}");
    // The loop device is the target's own; the disk under its image is
    // the host's, which other processes read from too.
    let dev = loop_name(&warm);
    let ratio = labelled(&warm, "r", "ext4", "dev_read_ratio", &[("device", &dev)]);
    assert!(ratio[0] < 0.1, "{ratio:?}");
    let cold = campaign(&Lab::new(), "drop_caches = true", loop_target(), read);
    let w = warnings(&cold, "r");
    assert!(!w.iter().any(|w| w.starts_with("page cache:")), "{w:?}");
    let dev = loop_name(&cold);
    let ratio = labelled(&cold, "r", "ext4", "dev_read_ratio", &[("device", &dev)]);
    assert!(ratio[0] >= 0.9, "{ratio:?}");
    let ratio = metric(&cold, "r", "ext4", "dev_read_ratio");
    assert!(ratio[0] >= 0.9, "the disk under the image: {ratio:?}");
}

#[test]
#[ignore = "needs root"]
fn a_gluster_run_counts_the_cpu_of_its_daemons() {
    require_root!();
    let _d = daemons();
    let lab = Lab::new();
    let export = campaign(
        &lab,
        "",
        "[[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 2\ndir = \"@DIR@\"\n",
        "[[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nbs = \"64k\"\nsize = \"32M\"\nend_fsync = true\n",
    );
    for process in ["glusterfs", "glusterfsd"] {
        let cpu = labelled(&export, "w", "gl", "proc_cpu_s", &[("process", process)]);
        assert!(cpu[0] > 0.0, "{process}: {cpu:?}");
    }
    let facts = &runs(&export)[0]["facts"];
    let client = facts["telemetry_process.glusterfs"].as_str().unwrap_or("");
    assert!(client.contains("mount point"), "{facts}");
    // The bricks' directories are on a block device: it wrote the data.
    assert!(metric(&export, "w", "gl", "dev_write_bytes")[0] >= 32.0 * MIB);
}

#[test]
#[ignore = "needs root"]
fn a_read_throttled_to_20_mib_per_second_shows_20_mib_per_second_on_the_device() {
    use storlab::measure::telemetry::figures::figures;
    use storlab::measure::telemetry::{Chain, Recorder, Watch, INTERVAL};
    use storlab::metric::catalogue::DEV_READ_BW_BYTES_PER_S;
    use storlab::metric::labels::DEVICE;
    use storlab::metric::Labels;
    require_root!();
    let lab = Lab::new();
    let lo = LoopDev::new(lab.path());
    let name = lo.dev.file_name().unwrap().to_string_lossy().into_owned();
    let numbers = std::fs::read_to_string(format!("/sys/block/{name}/dev")).unwrap();
    let (major, minor) = numbers.trim().split_once(':').unwrap();
    let (major, minor): (u32, u32) = (major.parse().unwrap(), minor.parse().unwrap());
    let rate = 20u64 << 20;
    let Some(throttle) = Throttle::new(major, minor, Limit::ReadBytes, rate) else {
        eprintln!("SKIPPED: no blkio or io cgroup controller on this host");
        return;
    };
    let watch = Watch {
        chain: Chain::of_devices(&[(major, minor)]),
        serving: Vec::new(),
        campaign: Vec::new(),
        kernel: Default::default(),
        arc: false,
        block: storlab::measure::telemetry::blocktrace::Source::Off,
        trace_max_rate: 0,
        interval: INTERVAL,
    };
    let rec = Recorder::start(watch);
    let st = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {} && exec dd if={} of=/dev/null bs=1M count=80 iflag=direct status=none",
            throttle.procs.display(),
            lo.dev.display()
        ))
        .status()
        .unwrap();
    let rec = rec.stop();
    assert!(st.success());
    let f = figures(&rec);
    let labels = Labels::new().with(&DEVICE, &name);
    let bw = f
        .metrics
        .iter()
        .find(|m| m.is(&DEV_READ_BW_BYTES_PER_S, &labels))
        .unwrap()
        .value;
    let ratio = bw / rate as f64;
    eprintln!(
        "device read {:.2} MiB/s under a 20 MiB/s limit ({:.3})",
        bw / MIB,
        ratio
    );
    assert!((0.95..=1.05).contains(&ratio), "{:.2} MiB/s", bw / MIB);
    drop(throttle);
}

/// fsyncs on ext4 with barriers make the loop device flush (about one or
/// two flushes per fsync); with `barrier=0` they make none, and the run
/// says its durability was not measured.
#[test]
#[ignore = "needs root"]
fn fsyncs_flush_the_loop_device_with_barriers_and_are_warned_about_without() {
    require_root!();
    let lab = Lab::new();
    let target = |name: &str, options: &str| {
        format!(
            "[[target]]\nname = \"{name}\"\nkind = \"loop\"\nfs = \"ext4\"\nsize = \"128M\"\ndir = \"@DIR@\"\nmount_options = [{options}]\n"
        )
    };
    let targets = format!(
        "{}{}",
        target("barrier", "\"noatime\""),
        target("nobarrier", "\"noatime\", \"barrier=0\"")
    );
    let export = campaign(
        &lab,
        "",
        &targets,
        "[[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nbs = \"8k\"\nsize = \"2M\"\nfsync = 1\n",
    );
    for (i, name) in ["barrier", "nobarrier"].iter().enumerate() {
        let dev = export["targets"][i]["facts"]["loop_device"]
            .as_str()
            .unwrap()
            .trim_start_matches("/dev/")
            .to_string();
        let syncs = metric(&export, "w", name, "syncs")[0];
        assert_eq!(syncs, 256.0, "{name}");
        let flushes = labelled(&export, "w", name, "dev_flushes", &[("device", &dev)])[0];
        let w = warnings(&export, "w");
        let said = w.iter().any(|w| {
            w.starts_with("durability not measured: 256 syncs, no flush reached a device")
        });
        eprintln!("{name}: {syncs} fsyncs, {flushes} flushes on {dev}");
        if *name == "barrier" {
            assert!(
                flushes >= syncs,
                "{name}: {flushes} flushes for {syncs} fsyncs"
            );
        } else {
            assert_eq!(flushes, 0.0, "{name}");
            assert!(said, "{w:?}");
        }
    }
    // Only the barrier=0 run is warned about.
    let warned: Vec<&Value> = runs(&export)
        .iter()
        .filter(|r| {
            r["warnings"]
                .to_string()
                .contains("durability not measured")
        })
        .collect();
    assert_eq!(warned.len(), 1);
    assert_eq!(warned[0]["target"], "nobarrier");
}

/// Ground truth: a 48 MiB loop device throttled to 8 MiB/s in one
/// direction, run through by two io workloads over the whole device (so
/// that readahead cannot read past what the workload reads); storlab's
/// bw_bytes_per_s of each must be the limit to ±5%.
fn throttled_ratios(direction: &str, workloads: &str) -> Vec<(String, f64)> {
    let lab = Lab::new();
    let lo = LoopDev::sized(lab.path(), 48 << 20);
    let (major, minor) = numbers(&lo.dev);
    let rate = 8u64 << 20;
    let limit = match direction {
        "read" => Limit::ReadBytes,
        _ => Limit::WriteBytes,
    };
    let Some(throttle) = Throttle::new(major, minor, limit, rate) else {
        eprintln!("SKIPPED: no blkio or io cgroup controller on this host");
        return Vec::new();
    };
    let file = lab.file(
        "throttled.toml",
        &format!(
            "[plan]\nrepetitions = 1\n[[target]]\nname = \"thr\"\nkind = \"block\"\ndevice = \"{}\"\nallow_destroy = true\n{workloads}",
            lo.dev.display()
        ),
    );
    run_throttled(&lab, &throttle, &file);
    let export = lab.export_json();
    let name = lo.dev.file_name().unwrap().to_string_lossy().into_owned();
    let device_bw = format!("dev_{direction}_bw_bytes_per_s");
    let mut ratios: Vec<(String, f64)> = Vec::new();
    for r in runs(&export) {
        assert_eq!(r["status"], "ok", "{}", r["error"]);
        let w = r["workload"].as_str().unwrap().to_string();
        let bw = crate::util::value_of(r, "bw_bytes_per_s").unwrap();
        ratios.push((w.clone(), bw / rate as f64));
        // The block target's device is watched: what it did, per second.
        let dev = crate::util::labelled_value(r, &device_bw, &[("device", &name)])
            .unwrap_or_else(|| panic!("no {device_bw} of {name}: {}", r["metrics"]));
        ratios.push((format!("{w} ({name} itself)"), dev / rate as f64));
    }
    for (w, ratio) in &ratios {
        eprintln!(
            "{w}: {:.2} MiB/s under an 8 MiB/s {direction} limit ({ratio:.3})",
            ratio * 8.0
        );
    }
    drop(throttle);
    ratios
}

#[test]
#[ignore = "needs root"]
fn reads_throttled_to_8_mib_per_second_are_measured_at_8_mib_per_second() {
    require_root!();
    let ratios = throttled_ratios(
        "read",
        "[[workload]]\nname = \"direct\"\nkind = \"io\"\nrw = \"read\"\nbs = \"1M\"\nsize = \"48M\"\ndirect = true\n\
         [[workload]]\nname = \"buffered\"\nkind = \"io\"\nrw = \"read\"\nbs = \"1M\"\nsize = \"48M\"\n",
    );
    for (w, ratio) in ratios {
        assert!(
            (0.95..=1.05).contains(&ratio),
            "{w}: {ratio:.3} of the limit"
        );
    }
}

#[test]
#[ignore = "needs root"]
fn writes_throttled_to_8_mib_per_second_are_measured_at_8_mib_per_second() {
    require_root!();
    let ratios = throttled_ratios(
        "write",
        "[[workload]]\nname = \"direct\"\nkind = \"io\"\nrw = \"write\"\nbs = \"1M\"\nsize = \"48M\"\ndirect = true\n\
         [[workload]]\nname = \"buffered-fsync\"\nkind = \"io\"\nrw = \"write\"\nbs = \"1M\"\nsize = \"48M\"\nfsync = 1\n",
    );
    for (w, ratio) in ratios {
        assert!(
            (0.95..=1.05).contains(&ratio),
            "{w}: {ratio:.3} of the limit"
        );
    }
}

/// A matrix's headline says how many of its read cells came from memory,
/// counted from the cells' layers (the share the device served) — a
/// reading of where each cell's reads came from.
#[test]
#[ignore = "needs root"]
fn a_matrix_headline_says_how_many_read_cells_came_from_memory() {
    require_root!();
    let lab = Lab::new();
    let matrix = "[[workload]]\nname = \"iozone\"\nkind = \"matrix\"\nmax_file_size = \"256k\"\nmax_record_size = \"64k\"\ntests = [\"write\", \"read\", \"reread\"]\n";
    campaign(&lab, "drop_caches = true", loop_target(), matrix);
    // The cells' waterfalls: the share of each cell's reads that reached
    // the device (the disk under the loop image, through the loop device).
    let store = storlab::store::Store::open(&lab.db()).unwrap();
    let c = store.load_campaign(1).unwrap();
    let a = storlab::analysis::analyse(&c, &Default::default()).unwrap();
    let device: Vec<f64> = (a.reads.cells_of("iozone", "ext4"))
        .map(|w| w.share_of(storlab::metric::layer::Layer::Device))
        .collect();
    // read and reread: 3 file sizes × 5 records from 4k to 64k.
    assert_eq!(device.len(), 2 * 15, "{device:?}");
    let memory = device.iter().filter(|&&r| r < 0.1).count();
    let said = format!("{memory} of 30 read cells on ext4 came from memory");
    let md = lab.ok(&["report", "--format", "md"]);
    // Under the verdicts, as a note: what the verdicts rest on.
    let headline: Vec<&str> = md.lines().filter(|l| l.starts_with("iozone: ")).collect();
    assert!(
        headline.iter().any(|l| l.contains(&said)),
        "{said} in {headline:?}"
    );
    let shown = lab.ok(&["show"]);
    assert!(shown.contains(&said), "{said} in {shown}");
}

/// fio's `fadvise_hint` (default 1): a random pattern tells the kernel
/// POSIX_FADV_RANDOM, which turns read-ahead off, so a buffered 4k random
/// read sends the device 4k requests and reads what the workload read.
/// Without it (storlab before, or `fadvise_hint = "0"`) the kernel's
/// context read-ahead read 7–12% more than the workload, in requests of
/// 4.4–4.6 KiB on average (two 3 s runs on a loop device).
#[test]
#[ignore = "needs root"]
fn a_buffered_random_read_is_advised_random_as_fio_and_reads_what_it_asked() {
    require_root!();
    let lab = Lab::new();
    let export = campaign(
        &lab,
        "block_trace = false",
        loop_target(),
        "[[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"randread\"\nbs = \"4k\"\nsize = \"128M\"\nruntime = \"3s\"\n",
    );
    let lo = loop_name(&export);
    let run = &runs(&export)[0];
    let at = |name: &str| labelled_value(run, name, &[("device", lo.as_str())]).unwrap();
    let (bytes, requests) = (at("dev_read_bytes"), at("dev_reads"));
    let read = value_of(run, "read_bytes").unwrap();
    eprintln!("read {read} B; {lo}: {bytes} B in {requests} requests");
    assert!(requests > 1000.0, "the device served the reads: {requests}");
    assert!(
        bytes / requests <= 4096.0 * 1.02,
        "read-ahead: {lo}'s read requests averaged {} B for 4k reads",
        bytes / requests
    );
    assert!(
        bytes <= read * 1.02 + (1 << 20) as f64,
        "{bytes} B at {lo} for {read} B read"
    );
}

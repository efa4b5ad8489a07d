use super::*;
use crate::measure::telemetry::chain::Device;
use crate::metric::Labels;

const MIB: f64 = (1u64 << 20) as f64;

fn run(metrics: &[(&'static MetricDef, f64)]) -> RunOutput {
    RunOutput {
        metrics: metrics.iter().map(|(d, v)| d.value(*v)).collect(),
        ..Default::default()
    }
}

#[test]
fn a_cached_reread_measured_the_page_cache_and_a_cold_read_did_not() {
    let none = Chain::default();
    let warm = run(&[
        (&m::READ_BYTES, 256.0 * MIB),
        (&m::DEV_READ_BYTES, 2.0 * MIB),
    ]);
    let w = page_cache(&warm, &none).unwrap();
    assert!(
        w.contains("the device delivered 2.0 MiB of the 256.0 MiB read (0.8%)"),
        "{w}"
    );
    let cold = run(&[
        (&m::READ_BYTES, 256.0 * MIB),
        (&m::DEV_READ_BYTES, 250.0 * MIB),
    ]);
    assert_eq!(page_cache(&cold, &none), None);
    // No device to ask (tmpfs), or too little read to judge: no warning.
    assert_eq!(
        page_cache(&run(&[(&m::READ_BYTES, 256.0 * MIB)]), &none),
        None
    );
    let tiny = run(&[(&m::READ_BYTES, 4096.0), (&m::DEV_READ_BYTES, 0.0)]);
    assert_eq!(page_cache(&tiny, &none), None);
}

/// loop0 on vda: the chain of a loop target whose image lies on vda.
fn loop_chain() -> Chain {
    let device = |name: &str, depth, under: Option<&str>, bottom| Device {
        name: name.into(),
        major: 7,
        minor: depth as u32,
        depth,
        under: under.map(String::from),
        bottom,
        volatile_cache: true,
    };
    Chain {
        devices: vec![
            device("loop0", 0, None, false),
            device("vda", 1, Some("loop0"), true),
        ],
    }
}

fn device_read(mut out: RunOutput, device: &str, bytes: f64) -> RunOutput {
    out.metrics.push(m::DEV_READ_BYTES.labelled(
        Labels::new().with(&crate::metric::labels::DEVICE, device),
        bytes,
    ));
    out
}

#[test]
fn a_neighbour_reading_the_shared_disk_does_not_hide_the_page_cache() {
    // The file was in the loop target's page cache (loop0 read nothing),
    // while other processes read 100 MiB from the host's disk.
    let base = run(&[
        (&m::READ_BYTES, 64.0 * MIB),
        (&m::DEV_READ_BYTES, 100.0 * MIB),
    ]);
    let warm = device_read(device_read(base.clone(), "loop0", 0.0), "vda", 100.0 * MIB);
    let w = page_cache(&warm, &loop_chain()).unwrap();
    assert!(
        w.contains("loop0 delivered 0 B of the 64.0 MiB read (0.0%)"),
        "{w}"
    );
    // The image's pages were in the host's cache: loop0 read it all, vda
    // (the bottom, without a label) almost nothing.
    let mut image_cached = device_read(device_read(base.clone(), "loop0", 64.0 * MIB), "vda", MIB);
    image_cached.metrics[1].value = MIB;
    let w = page_cache(&image_cached, &loop_chain()).unwrap();
    assert!(w.contains("the device delivered 1.0 MiB"), "{w}");
    let cold = device_read(device_read(base, "loop0", 64.0 * MIB), "vda", 100.0 * MIB);
    assert_eq!(page_cache(&cold, &loop_chain()), None);
}

#[test]
fn a_working_set_read_over_and_over_from_ram() {
    let mut r = run(&[
        (&m::WORKING_SET_BYTES, 256.0 * MIB),
        (&m::READ_BYTES, 1024.0 * MIB),
        (&m::MEM_AVAILABLE_BYTES, 8192.0 * MIB),
    ]);
    let w = fits_in_memory(&r, &loop_chain()).unwrap();
    assert!(
        w.contains(
            "(256.0 MiB) fits in the page cache (8.0 GiB available) and was read 4.0 times over"
        ),
        "{w}"
    );
    r.metrics.push(m::DEV_READ_RATIO.value(0.98)); // direct I/O: the device read it all
    assert_eq!(fits_in_memory(&r, &loop_chain()), None);
    r.metrics.pop();
    let tmpfs = Chain { devices: vec![] }; // memory by design: nothing to warn of
    assert_eq!(fits_in_memory(&r, &tmpfs), None);
    let once = run(&[
        (&m::WORKING_SET_BYTES, 256.0 * MIB),
        (&m::READ_BYTES, 256.0 * MIB),
        (&m::MEM_AVAILABLE_BYTES, 8192.0 * MIB),
    ]);
    assert_eq!(fits_in_memory(&once, &loop_chain()), None);
}

#[test]
fn a_working_set_in_the_arc() {
    let r = run(&[
        (&m::WORKING_SET_BYTES, 64.0 * MIB),
        (&m::ARC_MAX_BYTES, 100.0 * MIB),
        (&m::ARC_HITS, 990.0),
        (&m::ARC_MISSES, 10.0),
    ]);
    let w = fits_in_arc(&r).unwrap();
    assert!(w.contains("990 of 1000 ARC lookups"), "{w}");
    let big = run(&[
        (&m::WORKING_SET_BYTES, 1024.0 * MIB),
        (&m::ARC_MAX_BYTES, 100.0 * MIB),
        (&m::ARC_HITS, 1.0),
    ]);
    assert_eq!(fits_in_arc(&big), None);
}

#[test]
fn a_small_pgbench_database_in_shared_buffers() {
    let mut r = run(&[(&m::WORKING_SET_BYTES, 2.0 * PGBENCH_BYTES_PER_SCALE)]);
    assert_eq!(fits_in_shared_buffers(&r), None, "not PostgreSQL");
    r.facts.push(("pg_server_version".into(), "15.8".into()));
    r.facts
        .push(("pg_setting.shared_buffers".into(), "256MB".into()));
    let w = fits_in_shared_buffers(&r).unwrap();
    assert!(
        w.contains("(about 28.6 MiB) fits in shared_buffers (256.0 MiB)"),
        "{w}"
    );
    r.facts.pop(); // the default, 128MB
    assert!(fits_in_shared_buffers(&r).is_some());
    let big = RunOutput {
        facts: r.facts.clone(),
        ..run(&[(&m::WORKING_SET_BYTES, 100.0 * PGBENCH_BYTES_PER_SCALE)])
    };
    assert_eq!(fits_in_shared_buffers(&big), None);
    assert_eq!(pg_size("16384"), Some(128.0 * MIB));
    assert_eq!(pg_size("1GB"), Some(1024.0 * MIB));
    assert_eq!(pg_size("8kB"), Some(8192.0));
    assert_eq!(pg_size("lots"), None);
}

#[test]
fn writes_left_dirty_did_not_reach_the_device() {
    let r = run(&[
        (&m::WRITE_BYTES, 64.0 * MIB),
        (&m::DEV_WRITE_BYTES, 1.0 * MIB),
        (&m::MEM_DIRTY_START_BYTES, 2.0 * MIB),
        (&m::MEM_DIRTY_END_BYTES, 60.0 * MIB),
    ]);
    let w = unflushed(&r).unwrap();
    assert!(
        w.contains("the device wrote 1.0 MiB and dirty memory grew by 58.0 MiB"),
        "{w}"
    );
    let synced = run(&[
        (&m::WRITE_BYTES, 64.0 * MIB),
        (&m::DEV_WRITE_BYTES, 66.0 * MIB),
        (&m::MEM_DIRTY_START_BYTES, 2.0 * MIB),
        (&m::MEM_DIRTY_END_BYTES, 3.0 * MIB),
    ]);
    assert_eq!(unflushed(&synced), None);
}

#[test]
fn a_busy_thread_and_a_busy_host() {
    let mut r = RunOutput::default();
    let l = |p: &str| Labels::new().with(&PROCESS, p);
    r.metrics
        .push(m::PROC_BUSIEST_THREAD_PCT.labelled(l("storlab"), 99.0));
    r.metrics
        .push(m::PROC_BUSIEST_THREAD_PCT.labelled(l("glusterfs"), 40.0));
    let w = cpu_bound(&r).unwrap();
    assert!(
        w.contains("a thread of storlab at 99.0%") && !w.contains("glusterfs"),
        "{w}"
    );
    assert_eq!(cpu_bound(&RunOutput::default()), None);
    // Five seconds on two cores at 100 Hz: 1,000 ticks.
    assert!(noisy(&run(&[(&m::CPU_OTHERS_PCT, 35.0)]), 1000)
        .unwrap()
        .contains("35.0%"));
    assert!(noisy(&run(&[(&m::CPU_STEAL_PCT, 8.0)]), 1000).is_some());
    assert_eq!(
        noisy(
            &run(&[(&m::CPU_OTHERS_PCT, 3.0), (&m::CPU_STEAL_PCT, 0.0)]),
            1000
        ),
        None
    );
}

#[test]
fn a_short_run_needs_a_larger_share_to_be_called_noisy() {
    let others = |pct: f64| run(&[(&m::CPU_OTHERS_PCT, pct)]);
    // One busy tick of six sampled ones is 16.7%; over a 0.2 s run on two
    // cores (40 ticks) that is not evidence of more than 10%, over 3 s
    // (600 ticks) it is.
    assert_eq!(noisy(&others(16.7), 40), None);
    assert!(noisy(&others(16.7), 600).is_some());
    // A hog on one of two cores is half the host, even over 0.2 s.
    assert!(noisy(&others(50.0), 40).is_some());
    // The bound: below the share, approaching it with samples.
    let b = |n| share_lower_bound(0.2, n);
    assert!(b(10) < b(100) && b(100) < b(10_000) && b(10_000) < 0.2);
    assert!((b(1_000_000) - 0.2).abs() < 0.001);
    assert_eq!(share_lower_bound(0.0, 100), 0.0);
}

#[test]
fn sync_flushes_what_others_left_dirty() {
    let mut r = run(&[(&m::MEM_DIRTY_START_BYTES, 40.0 * MIB)]);
    assert_eq!(sync_flushed_others(&r), None, "fsync: the file alone");
    r.facts.push(("sync".into(), "sync".into()));
    assert!(sync_flushed_others(&r)
        .unwrap()
        .contains("40.0 MiB of dirty data"));
    let clean = RunOutput {
        facts: r.facts.clone(),
        ..run(&[(&m::MEM_DIRTY_START_BYTES, 4096.0)])
    };
    assert_eq!(sync_flushed_others(&clean), None);
    assert_eq!(
        checks(&clean, &Chain::default(), 1000),
        Vec::<Warning>::new()
    );
}

/// A device's traced figure: `def` labelled with the device (and `op`).
fn traced(
    mut out: RunOutput,
    def: &'static MetricDef,
    device: &str,
    op: Option<&str>,
    v: f64,
) -> RunOutput {
    let mut l = Labels::new().with(&DEVICE, device);
    if let Some(op) = op {
        l = l.with(&OP, op);
    }
    out.metrics.push(def.labelled(l, v));
    out
}

#[test]
fn traced_requests_say_exactly_whether_a_read_reached_the_device() {
    // The ratio alone would pass (vda read 100 MiB for others), and a
    // loop device that read a few pages of metadata is not "no read".
    let base = run(&[
        (&m::READ_BYTES, 64.0 * MIB),
        (&m::DEV_READ_BYTES, 100.0 * MIB),
    ]);
    let warm = traced(
        traced(base.clone(), &m::DEV_REQUESTS, "loop0", Some("read"), 0.0),
        &m::DEV_REQUESTS,
        "vda",
        Some("read"),
        25_000.0,
    );
    let w = page_cache(&warm, &loop_chain()).unwrap();
    assert!(
        w.starts_with("page cache: loop0 was sent no read request during the run (block tracepoints) for the 64.0 MiB the workload read"),
        "{w}"
    );
    // Ten reads of ext4's own metadata (its block bitmaps, prefetched in
    // the background) while the workload read from the page cache.
    let metadata = traced(
        traced(base.clone(), &m::DEV_REQUESTS, "loop0", Some("read"), 10.0),
        &m::DEV_REQUEST_BYTES,
        "loop0",
        Some("read"),
        4096.0,
    );
    let w = page_cache(&metadata, &loop_chain()).unwrap();
    assert!(
        w.starts_with("page cache: loop0 was sent 10 read requests (40.0 KiB) during the run (block tracepoints) for the 64.0 MiB the workload read (0.06%)"),
        "{w}"
    );
    let cold = traced(
        traced(base, &m::DEV_REQUESTS, "loop0", Some("read"), 16_384.0),
        &m::DEV_REQUEST_BYTES,
        "loop0",
        Some("read"),
        4096.0,
    );
    assert_eq!(page_cache(&cold, &loop_chain()), None);
}

fn flushes(name: &str, depth: usize, n: f64) -> DeviceFlushes {
    DeviceFlushes {
        name: name.into(),
        depth,
        volatile_cache: true,
        flushes: n,
    }
}

#[test]
fn syncs_that_no_flush_carried_to_a_device_are_said() {
    // ext4 with barrier=0 on loop0: its fsyncs never flushed loop0, while
    // a neighbour's flushes reached the disk under it.
    let w = durability_of(512.0, &[flushes("loop0", 0, 0.0), flushes("vda", 1, 40.0)]).unwrap();
    assert!(
        w.starts_with(
            "durability not measured: 512 syncs, no flush reached a device (loop0 completed none"
        ),
        "{w}"
    );
    // With barriers: about two flushes per fsync, all the way down.
    let ok = [flushes("loop0", 0, 1030.0), flushes("vda", 1, 1050.0)];
    assert_eq!(durability_of(512.0, &ok), None);
    // tmpfs: no device at all.
    let w = durability_of(3.0, &[]).unwrap();
    assert!(
        w.contains("3 syncs") && w.contains("no block device"),
        "{w}"
    );
    // No syncs: nothing to say; a write-through device needs no flush.
    assert_eq!(durability_of(0.0, &[flushes("loop0", 0, 0.0)]), None);
    let mut through = flushes("nvme0n1", 0, 0.0);
    through.volatile_cache = false;
    assert_eq!(durability_of(100.0, &[through]), None);
}

#[test]
fn a_database_run_counts_its_wal_syncs_and_a_kernel_without_flush_counts_stays_silent() {
    let chain = loop_chain();
    let mut out = run(&[(&m::WAL_SYNCS, 900.0), (&m::DATA_FSYNCS, 12.0)]);
    for (dev, n) in [("loop0", 0.0), ("vda", 7.0)] {
        out.metrics.push(
            m::DEV_FLUSHES.labelled(Labels::new().with(&crate::metric::labels::DEVICE, dev), n),
        );
    }
    let w = durability(&out, &chain).unwrap();
    assert!(w.contains("912 syncs"), "{w}");
    let unknown = run(&[(&m::SYNCS, 10.0)]);
    assert_eq!(durability(&unknown, &chain), None);
}

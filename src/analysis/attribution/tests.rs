use super::*;
use crate::metric::Labels;
use hdrhistogram::serialization::Serializer;

use crate::store::HistData;
use crate::testdata::runs::{self, value};
use crate::warning::Warning;

/// A histogram of `n` values spread evenly from `lo` to `hi` ns.
fn hist(n: u64, lo: u64, hi: u64) -> HistData {
    let mut h = new_histogram();
    for i in 0..n {
        h.record(lo + (hi - lo) * i / n.max(2).saturating_sub(1).max(1))
            .unwrap();
    }
    let mut hdr_v2 = Vec::new();
    hdrhistogram::serialization::V2Serializer::new()
        .serialize(&h, &mut hdr_v2)
        .unwrap();
    HistData { count: n, hdr_v2 }
}

fn dev_key(def: &str, dev: &str, op: &str) -> MetricKey {
    MetricKey::new(def, Labels::new().with(&DEVICE, dev).with(&OP, op))
}

/// A traced run of `w` on `t` over the chain `loop0, vda (under loop0)`:
/// the workload's latency `wl` (n, lo, hi), and per device its read
/// requests and their times.
fn run(id: i64, wl: (u64, u64, u64), devices: &[(&str, u64, u64, u64)]) -> RunData {
    let mut r = runs::ok(id, "t", "w");
    r.histograms
        .insert(MetricKey::plain(LAT.name), hist(wl.0, wl.1, wl.2));
    r.facts
        .insert(facts::TELEMETRY_DEVICES.name, "loop0, vda (under loop0)");
    for &(dev, n, lo, hi) in devices {
        for op in OPS {
            let count = if *op == "read" { n as f64 } else { 0.0 };
            r.metrics.insert(
                dev_key(m::DEV_REQUESTS.name, dev, op),
                value(&m::DEV_REQUESTS, count),
            );
        }
        if n > 0 {
            r.histograms
                .insert(dev_key(DEV_LAT.name, dev, "read"), hist(n, lo, hi));
        }
    }
    r
}

#[test]
fn direct_reads_whose_time_the_loop_device_took_are_the_devices() {
    // The workload waited 100-200 µs; loop0 took 90-190 µs of it, vda less.
    let runs = vec![
        run(
            1,
            (1000, 100_000, 200_000),
            &[
                ("vda", 1000, 50_000, 150_000),
                ("loop0", 1000, 90_000, 190_000),
            ],
        ),
        run(
            2,
            (1000, 100_000, 200_000),
            &[
                ("vda", 1000, 50_000, 150_000),
                ("loop0", 1000, 90_000, 190_000),
            ],
        ),
    ];
    let a = attribution(&runs, "w", "t").unwrap().unwrap();
    assert_eq!(a.place(), Place::Device);
    assert_eq!(a.at_workload.count, 2000);
    // Chain order: loop0 (the top) before vda, whatever the label order.
    let order: Vec<&str> = a.devices.iter().map(|d| d.device.as_str()).collect();
    assert_eq!(order, ["loop0", "vda"]);
    assert_eq!(a.devices[0].requests, 2000.0);
    let Finding::Device { top } = &a.finding else {
        panic!("{:?}", a.finding)
    };
    assert_eq!(top.device, "loop0");
    assert!(
        a.at_workload.p99 > 199e3 && a.at_workload.p99 < 200e3,
        "{a:?}"
    );
}

#[test]
fn a_device_far_faster_than_the_workload_puts_the_time_above_it() {
    let mut r = run(
        1,
        (500, 30_000_000, 40_000_000),
        &[("vda", 500, 1_000_000, 2_000_000)],
    );
    r.facts.insert(facts::TELEMETRY_DEVICES.name, "vda");
    for (p, pct) in [("storlab", 20.0), ("glusterfs", 96.0)] {
        r.metrics.insert(
            MetricKey::new(m::PROC_CPU_PCT.name, Labels::new().with(&PROCESS, p)),
            value(&m::PROC_CPU_PCT, pct),
        );
    }
    let a = attribution(&[r], "w", "t").unwrap().unwrap();
    assert_eq!(a.place(), Place::AboveDevice);
    let Finding::AboveDevice { top, why } = &a.finding else {
        panic!("{:?}", a.finding)
    };
    assert_eq!(top.device, "vda");
    assert_eq!(
        why,
        &Some(Why::Busy {
            process: "glusterfs".into(),
            pct: 96.0
        })
    );
}

#[test]
fn no_data_request_at_any_device_is_the_page_cache() {
    let runs = vec![run(
        1,
        (100, 1_000, 2_000),
        &[("loop0", 0, 0, 0), ("vda", 0, 0, 0)],
    )];
    let a = attribution(&runs, "w", "t").unwrap().unwrap();
    assert_eq!(a.finding, Finding::NoDeviceRequests);
    // The traced devices are listed with their zero.
    assert_eq!(a.devices.len(), 2);
    assert!(a.devices.iter().all(|d| d.requests == 0.0));
}

#[test]
fn a_few_requests_under_a_page_cache_warning_are_still_the_page_cache() {
    let mut r = run(1, (100, 1_000, 2_000), &[("loop0", 4, 500_000, 900_000)]);
    r.warnings
        .push(Warning::new(WarningKind::PageCache, "page cache: …"));
    let a = attribution(&[r], "w", "t").unwrap().unwrap();
    let Finding::CachedReads { top } = &a.finding else {
        panic!("{:?}", a.finding)
    };
    assert_eq!((top.device.as_str(), top.requests), ("loop0", 4.0));
    assert_eq!(a.place(), Place::PageCache);
}

#[test]
fn device_requests_slower_than_anything_the_workload_waited_were_off_its_path() {
    // Buffered writes: 5 µs each; write-back's requests took milliseconds.
    let r = run(
        1,
        (1000, 2_000, 5_000),
        &[("loop0", 50, 1_000_000, 3_000_000)],
    );
    let a = attribution(&[r], "w", "t").unwrap().unwrap();
    assert_eq!(a.place(), Place::OffPath);
}

#[test]
fn without_a_trace_or_a_latency_histogram_there_is_nothing_to_attribute() {
    let mut r = run(1, (100, 1_000, 2_000), &[]);
    assert_eq!(attribution(&[r.clone()], "w", "t").unwrap(), None);
    r.histograms = Default::default();
    r.metrics.insert(
        dev_key(m::DEV_REQUESTS.name, "loop0", "read"),
        value(&m::DEV_REQUESTS, 5.0),
    );
    assert_eq!(attribution(&[r], "w", "t").unwrap(), None);
    // Warm-up runs are not counted.
    let mut w = run(1, (100, 1_000, 2_000), &[("loop0", 0, 0, 0)]);
    w.warmup = true;
    assert_eq!(attribution(&[w], "w", "t").unwrap(), None);
}

/// Percentiles whose p99 is `p99` (ns).
fn pct(p99: f64) -> Percentiles {
    Percentiles::with_p99(p99)
}

#[test]
fn the_rules_in_order_at_their_thresholds() {
    let top = |p99: f64| Top {
        device: "loop0".into(),
        requests: 10.0,
        latency: pct(p99),
    };
    let at = |dev: f64, busiest: Option<(String, f64)>| {
        let t = top(dev);
        finding(&Evidence {
            at_workload: pct(1000.0),
            top: Some(&t),
            every_run_cached: false,
            synced: None,
            busiest,
            others_cpu: None,
        })
        .place()
    };
    assert_eq!(at(500.0, None), Place::Device);
    assert_eq!(at(1500.0, None), Place::Device);
    assert_eq!(at(1501.0, None), Place::OffPath);
    assert_eq!(at(499.0, None), Place::AboveDevice);
    // A busy process is named only from BUSY_PCT up.
    let t = top(100.0);
    let why = |p: f64, others_cpu: Option<f64>| match finding(&Evidence {
        at_workload: pct(1000.0),
        top: Some(&t),
        every_run_cached: false,
        synced: None,
        busiest: Some(("zfs-fuse".into(), p)),
        others_cpu,
    }) {
        Finding::AboveDevice { why, .. } => why,
        f => panic!("{f:?}"),
    };
    let busy = Why::Busy {
        process: "zfs-fuse".into(),
        pct: 50.0,
    };
    assert_eq!(why(50.0, Some(80.0)), Some(busy));
    assert_eq!(why(49.0, None), None);
    // A busy host (a noisy-host warning) is the reason when no process is.
    assert_eq!(why(49.0, Some(87.4)), Some(Why::OthersCpu { pct: 87.4 }));
}

#[test]
fn fsyncs_that_flushed_the_device_waited_for_it_whatever_the_writes_took() {
    // The built-in campaign's randwrite-4k-fsync on cwd: writes of 55 µs
    // (the page cache) against vda's 6.45 ms read as "off its path"
    // before; the fsyncs (28.7 ms) were what waited for vda.
    let t = Top {
        device: "vda".into(),
        requests: 1735.0,
        latency: pct(6.45e6),
    };
    let e = |synced| Evidence {
        at_workload: pct(55e3),
        top: Some(&t),
        every_run_cached: false,
        synced,
        busiest: None,
        others_cpu: None,
    };
    assert_eq!(finding(&e(None)).place(), Place::OffPath);
    let synced = Synced {
        at_workload: pct(28.7e6),
        flushes: 1146.0,
        runs: 1,
        flush_p99: Some(1.97e6),
    };
    let f = finding(&e(Some(synced)));
    assert_eq!(f.place(), Place::Device);
    assert_eq!(
        f,
        Finding::FsyncsWaited {
            top: t.clone(),
            synced
        }
    );
}

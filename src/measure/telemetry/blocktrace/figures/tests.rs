use super::*;
use crate::measure::telemetry::blocktrace::buckets::bucket;
use crate::measure::telemetry::blocktrace::dump::Dump;
use crate::measure::telemetry::blocktrace::trace::Builder;
use crate::measure::telemetry::chain::Device;

fn chain() -> Chain {
    let dev = |name: &str, major, depth, under: Option<&str>, bottom| Device {
        name: name.into(),
        major,
        minor: 0,
        depth,
        under: under.map(String::from),
        bottom,
        volatile_cache: true,
    };
    Chain {
        devices: vec![
            dev("loop0", 7, 0, None, false),
            dev("vda", 254, 1, Some("loop0"), true),
        ],
    }
}

const LOOP0: u64 = 7 << 20;
const VDA: u64 = 254 << 20;

/// Over two seconds loop0 reads 1000 requests of 4 KiB at 100 µs, every
/// one timed; vda the same at 80 µs (10 of them 5 ms), one in 2 timed,
/// and takes 2 flushes, one FUA write.
fn trace() -> Trace {
    let mut b = Builder::default();
    b.add(Dump {
        seq: 0,
        ns: 0,
        ..Dump::default()
    });
    let mut d = Dump {
        seq: 1,
        ns: 1_000_000_000,
        ..Dump::default()
    };
    let time = |d: &mut Dump, dev: u64, op: u8, ns: u64, n: u64| {
        let (s, m) = bucket(ns);
        let w = u32::from(dev == VDA && op == 0);
        *d.latency.entry((dev, op, w, s, m)).or_insert(0) += n >> w;
    };
    time(&mut d, LOOP0, 0, 100_000, 500);
    time(&mut d, VDA, 0, 80_000, 500);
    b.add(d.clone());
    time(&mut d, LOOP0, 0, 100_000, 500);
    time(&mut d, VDA, 0, 80_000, 490);
    time(&mut d, VDA, 0, 5_000_000, 10);
    time(&mut d, VDA, 2, 1_000_000, 2);
    d.flushes.insert(VDA, 2);
    d.fua.insert(VDA, 1);
    d.seq = 2;
    d.ns = 2_000_000_000;
    b.add(d);
    b.build("bpftrace v0.17.0").unwrap()
}

/// What /proc/diskstats counted over the two seconds.
fn counts() -> BTreeMap<(u32, u32), Disk> {
    let disk = |reads: u64, flushes| Disk {
        reads,
        read_sectors: reads * 8,
        flushes: Some(flushes),
        discards: Some(0),
        discard_sectors: Some(0),
        ..Disk::default()
    };
    BTreeMap::from([((7, 0), disk(1000, 0)), ((254, 0), disk(1000, 2))])
}

fn get(out: &RunOutput, def: &crate::metric::MetricDef, device: &str, op: Option<&str>) -> f64 {
    let mut l = Labels::new().with(&DEVICE, device);
    if let Some(op) = op {
        l = l.with(&OP, op);
    }
    out.labelled(def, &l)
        .unwrap_or_else(|| panic!("{} {l:?} in {:?}", def.name, out.metrics))
}

#[test]
fn a_trace_gives_each_device_and_operation_its_figures() {
    let caches = vec![
        Cache {
            major: 7,
            minor: 0,
            write_back: true,
        },
        Cache {
            major: 254,
            minor: 0,
            write_back: true,
        },
    ];
    let out = figures(
        &Outcome::Traced(Box::new(trace()), caches),
        &chain(),
        &counts(),
        1.0,
    );
    let p50 = get(&out, &m::DEV_LAT_P50_NS, "loop0", Some("read"));
    assert!((p50 / 100_000.0 - 1.0).abs() < 0.003, "{p50}");
    let p99 = get(&out, &m::DEV_LAT_P99_NS, "vda", Some("read"));
    assert!((p99 / 80_000.0 - 1.0).abs() < 0.003, "{p99}");
    let max = get(&out, &m::DEV_LAT_MAX_NS, "vda", Some("read"));
    assert!((max / 5e6 - 1.0).abs() < 0.003, "{max}");
    assert_eq!(get(&out, &m::DEV_REQUESTS, "loop0", Some("read")), 1000.0);
    // No write or flush request is a figure: 0.
    assert_eq!(get(&out, &m::DEV_REQUESTS, "loop0", Some("write")), 0.0);
    assert_eq!(get(&out, &m::DEV_REQUESTS, "loop0", Some("flush")), 0.0);
    assert_eq!(get(&out, &m::DEV_REQUESTS, "vda", Some("flush")), 2.0);
    assert_eq!(get(&out, &m::DEV_FLUSH_REQUESTS, "loop0", None), 0.0);
    assert_eq!(get(&out, &m::DEV_FLUSH_REQUESTS, "vda", None), 2.0);
    assert_eq!(get(&out, &m::DEV_FUA_REQUESTS, "vda", None), 1.0);
    assert_eq!(
        get(&out, &m::DEV_REQUEST_BYTES, "vda", Some("read")),
        4096.0
    );
    assert_eq!(get(&out, &m::DEV_WRITE_CACHE, "vda", None), 1.0);
    // loop0: 1000 requests of 100 µs over 2 s: 0.05 in flight.
    let inflight = get(&out, &m::DEV_INFLIGHT, "loop0", None);
    assert!((inflight / 0.05 - 1.0).abs() < 0.002, "{inflight}");
    let hists: Vec<String> = out
        .histograms
        .iter()
        .map(|h| format!("{} {}", h.def.name, h.labels.to_json_text()))
        .collect();
    assert!(
        hists.contains(&r#"dev_lat {"device":"vda","op":"flush"}"#.to_string()),
        "{hists:?}"
    );
    assert_eq!(
        out.histograms.len(),
        3,
        "no queue histogram without inserts"
    );
    // Per second: vda's read p99.9 is 80 µs in the first, 5 ms in the second.
    let s = out
        .series
        .iter()
        .find(|s| {
            std::ptr::eq(s.def, &m::DEV_LAT_P999_NS)
                && s.labels.get(&DEVICE) == Some("vda")
                && s.labels.get(&OP) == Some("read")
        })
        .expect("vda's p99.9 series");
    assert_eq!(s.values.len(), 2);
    assert!(
        (s.values[0] / 80_000.0 - 1.0).abs() < 0.003,
        "{:?}",
        s.values
    );
    assert!((s.values[1] / 5e6 - 1.0).abs() < 0.003, "{:?}", s.values);
    // The flush series has no value in the first second.
    let f = out
        .series
        .iter()
        .find(|s| std::ptr::eq(s.def, &m::DEV_LAT_P50_NS) && s.labels.get(&OP) == Some("flush"))
        .expect("the flush series");
    assert!(f.values[0].is_nan() && f.values[1] > 0.0, "{:?}", f.values);
    let fact = &out.facts[0];
    assert_eq!(fact.0, FACT);
    assert!(
        fact.1
            .starts_with("bpftrace v0.17.0 on the block tracepoints of loop0, vda"),
        "{}",
        fact.1
    );
    assert!(fact.1.contains("within 0.2%"), "{}", fact.1);
    assert!(
        fact.1.contains("vda 1 in 2 or every request (502 timed: p99 within p98.13–p99.87, p99.9 within p99.624–p100)"),
        "{}",
        fact.1
    );
    // The sample stands for the requests: vda's 500 timed reads weigh 1000.
    let h = out
        .histograms
        .iter()
        .find(|h| h.labels.get(&DEVICE) == Some("vda") && h.labels.get(&OP) == Some("read"))
        .unwrap();
    assert_eq!(h.hist.len(), 1000);
}

#[test]
fn without_a_trace_the_fact_says_why_and_nothing_else_is_made() {
    let out = figures(
        &Outcome::Failed("bpftrace is not installed (apt-get install bpftrace)".into()),
        &chain(),
        &counts(),
        1.0,
    );
    assert!(out.metrics.is_empty() && out.histograms.is_empty() && out.series.is_empty());
    assert_eq!(
        out.facts,
        [(
            FACT.to_string(),
            "not traced: bpftrace is not installed (apt-get install bpftrace); device latency is /proc/diskstats' average per request (dev_await_ns)".to_string()
        )]
    );
    let off = figures(
        &Outcome::Off(Some("[plan] block_trace = false".into())),
        &chain(),
        &counts(),
        1.0,
    );
    assert!(off.facts[0]
        .1
        .starts_with("off ([plan] block_trace = false)"));
    assert!(
        figures(&Outcome::Off(None), &Chain::default(), &counts(), 1.0)
            .facts
            .is_empty()
    );
}

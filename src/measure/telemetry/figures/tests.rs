use super::*;
use crate::measure::telemetry::chain::Chain;
use crate::measure::telemetry::sample::{HostCpu, Mem, ProcCpu, Psi, ThreadCpu};

fn dev(name: &str, minor: u32, depth: usize, under: Option<&str>, bottom: bool) -> Device {
    Device {
        name: name.into(),
        major: 7,
        minor,
        depth,
        under: under.map(String::from),
        bottom,
        volatile_cache: true,
    }
}

fn disk(read_mib: u64, write_mib: u64, ops: u64, busy_ms: u64) -> Disk {
    Disk {
        reads: ops,
        writes: ops,
        read_sectors: read_mib * 2048,
        write_sectors: write_mib * 2048,
        read_ms: ops,
        write_ms: ops,
        io_ticks_ms: busy_ms,
        queue_ms: 2 * busy_ms,
        flushes: Some(ops / 2),
        discards: Some(0),
        discard_sectors: Some(0),
    }
}

fn proc_(label: &str, pid: u32, ticks: u64, start: u64) -> ProcCpu {
    ProcCpu {
        label: label.into(),
        pid,
        ticks,
        start_ticks: start,
        child: false,
    }
}

/// Two seconds: a loop device over vda; the loop device reads 64 MiB,
/// vda 32 MiB; storlab uses 50 ticks, a postgres started during the run
/// 30, a host busy 200 of 400 ticks.
fn recording() -> Recording {
    let chain = Chain {
        devices: vec![
            dev("loop0", 0, 0, None, false),
            dev("vda", 1, 1, Some("loop0"), true),
        ],
    };
    let sample = |t: f64, k: u64| Sample {
        t,
        disks: [
            ((7, 0), disk(32 * k, 0, 10 * k, 500 * k)),
            ((7, 1), disk(16 * k, 8 * k, 5 * k, 250 * k)),
        ]
        .into_iter()
        .collect(),
        cpu: Some(HostCpu {
            busy: 100 * k,
            irq: 0,
            iowait: 10 * k,
            steal: 0,
            total: 200 * k,
        }),
        procs: {
            let mut p = vec![proc_("storlab", 1, 1000 + 25 * k, 5)];
            if k > 0 {
                p.push(proc_("postgres", 2, 15 * k, 2000));
            }
            p
        },
        threads: vec![ThreadCpu {
            label: "storlab".into(),
            tid: 3,
            ticks: 90 * k,
            // 0.05 s of each second waiting for a CPU.
            waited_ns: Some(50_000_000 * k),
        }],
        mem: Some(Mem {
            cached: 1 << 30,
            dirty: (k + 1) << 20,
            writeback: 0,
            available: 8 << 30,
        }),
        psi: Some(Psi {
            io_some_us: 500_000 * k,
            ..Default::default()
        }),
        reaped: 0,
        kernel: Vec::new(),
    };
    Recording {
        chain,
        samples: vec![sample(0.0, 0), sample(1.0, 1), sample(2.0, 2)],
        arc: None,
        start_ticks: 1000,
        ticks_per_s: 100,
        cores: 2,
        sampler_cpu_s: 0.002,
        serving: vec![("postgres".into(), "postmaster.pid".into())],
        block: Default::default(),
        last_mark: 0,
        kernel: Default::default(),
        trace_given_up: None,
    }
}

fn get(f: &Figures, def: &MetricDef, labels: &Labels) -> f64 {
    f.metrics
        .iter()
        .find(|x| x.is(def, labels))
        .unwrap_or_else(|| panic!("{} {labels:?} in {:?}", def.name, f.metrics))
        .value
}

#[test]
fn devices_are_labelled_and_the_bottom_is_the_total() {
    let f = figures(&recording());
    let loop0 = Labels::new().with(&DEVICE, "loop0");
    assert_eq!(get(&f, &m::DEV_READ_BYTES, &loop0), (64u64 << 20) as f64);
    assert_eq!(
        get(&f, &m::DEV_READ_BW_BYTES_PER_S, &loop0),
        (32u64 << 20) as f64
    );
    assert_eq!(get(&f, &m::DEV_UTIL_PCT, &loop0), 50.0);
    assert_eq!(get(&f, &m::DEV_QUEUE_DEPTH, &loop0), 1.0);
    // 20 ms over 40 operations.
    assert_eq!(get(&f, &m::DEV_AWAIT_NS, &loop0), 1e6);
    let none = Labels::new();
    assert_eq!(get(&f, &m::DEV_READ_BYTES, &none), (32u64 << 20) as f64);
    assert_eq!(get(&f, &m::DEV_WRITE_BYTES, &none), (16u64 << 20) as f64);
    let s = f
        .series
        .iter()
        .find(|s| std::ptr::eq(s.def, &m::DEV_READ_BW_BYTES_PER_S) && s.labels == loop0)
        .unwrap();
    assert_eq!(s.values, vec![(32u64 << 20) as f64; 2]);
    assert_eq!(s.interval_s, 1.0);
    assert!(f
        .facts
        .iter()
        .any(|(k, v)| k == "telemetry_devices" && v.contains("vda (under loop0)")));
}

#[test]
fn processes_born_during_the_run_count_whole() {
    let f = figures(&recording());
    let pg = Labels::new().with(&PROCESS, "postgres");
    // 30 ticks at 100 Hz, born after the recording started.
    assert!((get(&f, &m::PROC_CPU_S, &pg) - 0.30).abs() < 1e-9);
    let me = Labels::new().with(&PROCESS, "storlab");
    assert!((get(&f, &m::PROC_CPU_S, &me) - 0.50).abs() < 1e-9);
    assert!((get(&f, &m::PROC_CPU_PCT, &me) - 25.0).abs() < 1e-9);
    assert!((get(&f, &m::PROC_BUSIEST_THREAD_PCT, &me) - 90.0).abs() < 1e-9);
    // It ran 90% and waited for a CPU 5% of each second.
    assert!((get(&f, &m::PROC_BUSIEST_THREAD_WANTED_PCT, &me) - 95.0).abs() < 1e-9);
    // Host: 200 busy ticks of 400, of which 80 were ours.
    let none = Labels::new();
    assert_eq!(get(&f, &m::CPU_BUSY_PCT, &none), 50.0);
    assert_eq!(get(&f, &m::CPU_OTHERS_PCT, &none), 30.0);
    assert_eq!(get(&f, &m::CPU_IOWAIT_PCT, &none), 5.0);
    let pg_series = f
        .series
        .iter()
        .find(|s| std::ptr::eq(s.def, &m::PROC_CPU_PCT) && s.labels == pg)
        .unwrap();
    assert_eq!(pg_series.values, vec![15.0, 15.0]);
}

#[test]
fn memory_pressure_and_cost() {
    let f = figures(&recording());
    let none = Labels::new();
    assert_eq!(get(&f, &m::MEM_DIRTY_MAX_BYTES, &none), (3u64 << 20) as f64);
    assert_eq!(
        get(&f, &m::MEM_DIRTY_START_BYTES, &none),
        (1u64 << 20) as f64
    );
    assert_eq!(get(&f, &m::MEM_DIRTY_END_BYTES, &none), (3u64 << 20) as f64);
    assert_eq!(get(&f, &m::PSI_IO_SOME_AVG_PCT, &none), 50.0);
    assert!((get(&f, &m::TELEMETRY_CPU_PCT, &none) - 0.1).abs() < 1e-9);
}

#[test]
fn a_recording_without_two_samples_has_no_figures() {
    let mut r = recording();
    r.samples.truncate(1);
    let f = figures(&r);
    assert!(
        f.metrics.is_empty()
            && f.series.is_empty()
            && f.histograms.is_empty()
            && f.facts.is_empty()
    );
}

#[test]
fn ratios_set_the_device_against_the_workload() {
    let mut out = RunOutput::default();
    figures(&recording()).add_to(&mut out);
    out.metrics.push(m::READ_BYTES.value((64u64 << 20) as f64));
    out.metrics.push(m::WRITE_BYTES.value((8u64 << 20) as f64));
    out.metrics.push(m::TRANSACTIONS.value(1024.0));
    let d = derived(&out);
    let find = |def: &MetricDef, l: &Labels| d.iter().find(|x| x.is(def, l)).unwrap().value;
    let none = Labels::new();
    assert_eq!(find(&m::DEV_READ_RATIO, &none), 0.5);
    assert_eq!(
        find(&m::DEV_READ_RATIO, &Labels::new().with(&DEVICE, "loop0")),
        1.0
    );
    assert_eq!(find(&m::WRITE_AMPLIFICATION, &none), 2.0);
    assert_eq!(find(&m::DEV_WRITE_BYTES_PER_TX, &none), 16384.0);
    // Per device as well: each device's bytes written over the same count.
    let per_device: Vec<_> = out
        .metrics
        .iter()
        .filter(|x| std::ptr::eq(x.def, &m::DEV_WRITE_BYTES) && x.labels.get(&DEVICE).is_some())
        .collect();
    for x in &per_device {
        let per_tx = find(&m::DEV_WRITE_BYTES_PER_TX, &x.labels);
        assert_eq!(per_tx, x.value / 1024.0, "{:?}", x.labels);
    }
    assert_eq!(
        per_device.len(),
        2,
        "the recording has a chain of two devices"
    );
    assert!(derived(&RunOutput::default()).is_empty());
}

/// A trace that timed `timed` requests (of 100 µs) per device and operation.
fn traced(timed: &[((u32, u32, u8), u64)]) -> blocktrace::Outcome {
    let (s, m) = blocktrace::buckets::bucket(100_000);
    let total = blocktrace::dump::Dump {
        latency: (timed.iter())
            .map(|&((major, minor, op), n)| {
                (
                    (blocktrace::script::kernel_dev(major, minor), op, 0, s, m),
                    n,
                )
            })
            .collect(),
        ..Default::default()
    };
    let trace = blocktrace::trace::Trace {
        version: "bpftrace v0.17.0".into(),
        total,
        seconds: 2.0,
        windows: Vec::new(),
    };
    blocktrace::Outcome::Traced(Box::new(trace), Vec::new())
}

fn block_fact(f: &Figures) -> &str {
    (f.facts.iter())
        .find(|(k, _)| k == blocktrace::figures::FACT)
        .map_or("", |(_, v)| v.as_str())
}

#[test]
fn a_trace_that_diskstats_contradicts_is_refused_where_it_becomes_figures() {
    // The release build whose mark and reset probes shared one address:
    // a run's trace counted no request on vda while /proc/diskstats
    // counted it reading 439 MB. Recorded, it read "no device requests:
    // the page cache"; refused, the run has diskstats' figures and says why.
    let mut rec = recording();
    rec.block = traced(&[]);
    let f = figures(&rec);
    let why = block_fact(&f);
    assert!(why.starts_with("not traced: the trace timed no request on loop0 while /proc/diskstats counted it moving 64.0 MiB"), "{why}");
    assert!(
        !f.metrics
            .iter()
            .any(|x| std::ptr::eq(x.def, &m::DEV_REQUESTS)),
        "no traced figure is kept"
    );
    assert_eq!(
        get(&f, &m::DEV_READ_BYTES, &Labels::new()),
        32.0 * 1048576.0
    );

    // A device of the chain timed (loop0 bio-based, say): the trace stands,
    // its requests counted by diskstats.
    rec.block = traced(&[((7, 1, 0), 5), ((7, 1, 1), 2)]);
    let f = figures(&rec);
    assert!(
        !block_fact(&f).starts_with("not traced"),
        "{}",
        block_fact(&f)
    );
    let vda = Labels::new()
        .with(&DEVICE, "vda")
        .with(&crate::metric::labels::OP, "read");
    assert_eq!(get(&f, &m::DEV_REQUESTS, &vda), 10.0);
}

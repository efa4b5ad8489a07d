use crate::analysis::attribution::{Attribution, Finding, Percentiles, Synced, Top, Why};
use crate::report::verdict::{words, Form};

/// Percentiles whose p99 is `p99` (ns).
fn pct(p99: f64) -> Percentiles {
    Percentiles::with_p99(p99)
}

fn top(device: &str, requests: f64, p99: f64) -> Top {
    Top {
        device: device.into(),
        requests,
        latency: pct(p99),
    }
}

/// `w` on `t`, whose p99 at the workload is `p99` ns, found so.
fn found(p99: f64, finding: Finding) -> Attribution {
    Attribution {
        workload: "w".into(),
        target: "t".into(),
        at_workload: pct(p99),
        devices: Vec::new(),
        finding,
        course: None,
    }
}

/// The sentence and its conclusion.
fn said(p99: f64, finding: Finding) -> (String, String) {
    let a = found(p99, finding);
    (words(&a, Form::Headline), words(&a, Form::Bare))
}

#[test]
fn each_finding_reads_as_evidence_conclusion_and_why() {
    let above = |why| Finding::AboveDevice {
        top: top("vda", 500.0, 1.99e6),
        why,
    };
    let busy = |process: &str, pct: f64| {
        Some(Why::Busy {
            process: process.into(),
            pct,
        })
    };
    for (p99, finding, sentence, conclusion) in [
        (
            39.91e6,
            above(busy("glusterfs", 96.0)),
            "p99 39.91 ms at the workload, 1.99 ms at vda: above the device (glusterfs's CPU was 96% of a core)",
            "above the device",
        ),
        (
            39.91e6,
            above(busy("kernel threads", 50.0)),
            "p99 39.91 ms at the workload, 1.99 ms at vda: above the device (kernel threads' CPU was 50% of a core)",
            "above the device",
        ),
        (
            39.91e6,
            above(Some(Why::OthersCpu { pct: 87.4 })),
            "p99 39.91 ms at the workload, 1.99 ms at vda: above the device (other processes used 87% of the host's CPU: the workload waited for a core)",
            "above the device",
        ),
        (
            39.91e6,
            above(None),
            "p99 39.91 ms at the workload, 1.99 ms at vda: above the device",
            "above the device",
        ),
        (
            1.80e6,
            Finding::Device {
                top: top("loop0", 10.0, 1.70e6),
            },
            "p99 1.80 ms at the workload, 1.70 ms at loop0: the device",
            "the device",
        ),
        (
            5e3,
            Finding::OffPath {
                top: top("loop0", 50.0, 3e6),
            },
            "p99 5.0 µs at the workload, 3.00 ms at loop0: not the device — its requests took longer than the workload waited, so they were off its path (write-back, read-ahead or other processes' I/O)",
            "not the device — its requests took longer than the workload waited, so they were off its path",
        ),
        (
            2e3,
            Finding::NoDeviceRequests,
            "no device requests: the page cache",
            "the page cache",
        ),
        (
            2e3,
            Finding::CachedReads {
                top: top("loop0", 4.0, 9e5),
            },
            "p99 2.0 µs at the workload; loop0 was sent only 4 data requests: the page cache",
            "the page cache",
        ),
        (
            2e3,
            Finding::CachedReads {
                top: top("loop0", 1.0, 9e5),
            },
            "p99 2.0 µs at the workload; loop0 was sent only 1 data request: the page cache",
            "the page cache",
        ),
        (
            55e3,
            Finding::FsyncsWaited {
                top: top("vda", 1735.0, 6.45e6),
                synced: Synced {
                    at_workload: pct(28.7e6),
                    flushes: 1146.0,
                    runs: 1,
                    flush_p99: Some(1.97e6),
                },
            },
            "p99 55.0 µs per operation at the workload, 28.70 ms per fsync; 6.45 ms at vda, its flushes 1.97 ms (1146 flushes in 1 run): the writes went to the page cache, the fsyncs waited for vda",
            "the writes went to the page cache, the fsyncs waited for vda",
        ),
    ] {
        let (s, c) = said(p99, finding);
        assert_eq!((s.as_str(), c.as_str()), (sentence, conclusion));
    }
}

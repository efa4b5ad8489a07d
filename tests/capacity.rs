//! Capacity searches against ground truth: a loop device throttled by a
//! cgroup to a known rate, the mock workload's M/M/1 queue of known
//! capacity, a tmpfs whose knee is its CPU; resumed searches, `check`'s
//! estimate and the file's refusals.

use serde_json::Value;

use crate::throttle::{numbers, run_throttled, Limit, LoopDev, Throttle};
use crate::util::{runs, Lab};

/// The capacities of the latest campaign, as `show --format json` has them.
fn capacities(lab: &Lab) -> Value {
    let out = lab.ok(&["show", "--format", "json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    v["capacities"].clone()
}

/// Target `target`'s capacity in search `workload`: (estimate, low, high).
fn capacity(caps: &Value, workload: &str, target: &str) -> (f64, f64, f64) {
    let search = caps
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["workload"] == workload)
        .unwrap_or_else(|| panic!("no search of {workload}: {caps}"));
    let t = search["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["target"] == target)
        .unwrap_or_else(|| panic!("no {target} in {search}"));
    let k = &t["knee"];
    let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    (
        f(&k["estimate"]),
        f(&k["interval"]["low"]),
        f(&k["interval"]["high"]),
    )
}

/// Ground truth: a loop device whose reads a cgroup throttles to 200 per
/// second. Random 4k direct reads (io_uring, up to 32 in flight, so that
/// one late read does not hold up the next) offered faster than it serves
/// them queue up, their latency counted from when each was due: within
/// p99 ≤ 200 ms (a loaded host's scheduling delays alone reach tens of
/// milliseconds) the capacity is the throttle's, to ±10%.
#[test]
#[ignore = "needs root"]
fn a_device_throttled_to_200_reads_per_second_sustains_200() {
    require_root!();
    // Its p99 is the host's scheduling too: not beside noisy_host's CPU hog.
    let _alone = crate::util::measuring_alone();
    let lab = Lab::new();
    let lo = LoopDev::sized(lab.path(), 64 << 20);
    let (major, minor) = numbers(&lo.dev);
    let Some(throttle) = Throttle::new(major, minor, Limit::ReadOps, 200) else {
        eprintln!("SKIPPED: no blkio or io cgroup controller on this host");
        return;
    };
    let file = lab.file(
        "throttled.toml",
        &format!(
            "name = \"throttled\"\n[plan]\nrepetitions = 3\ntelemetry = false\n\
             [[target]]\nname = \"thr\"\nkind = \"block\"\ndevice = \"{}\"\nallow_destroy = true\n\
             [[workload]]\nname = \"reads\"\nkind = \"io\"\nrw = \"randread\"\nbs = \"4k\"\nsize = \"48M\"\n\
             direct = true\nioengine = \"io_uring\"\niodepth = 32\nruntime = \"5s\"\n\
             capacity = {{ latency = \"p99\", max = \"200ms\", start = 100, max_rate = 1000 }}\n",
            lo.dev.display()
        ),
    );
    run_throttled(&lab, &throttle, &file);
    drop(throttle);
    let caps = capacities(&lab);
    let (found, low, high) = capacity(&caps, "reads", "thr");
    eprintln!("capacity under a 200/s throttle: {found:.0} [{low:.0}, {high:.0}]");
    assert!(
        (found / 200.0 - 1.0).abs() <= 0.10,
        "{found} is not within 10% of 200: {caps}"
    );
    assert!(low <= found && found <= high);
    // Each probe is an ordinary run of a variant of the workload.
    let export = lab.export_json();
    let probes: Vec<&str> = runs(&export)
        .iter()
        .map(|r| r["workload"].as_str().unwrap())
        .collect();
    assert!(
        probes.iter().all(|w| w.starts_with("reads[rate_iops=")),
        "{probes:?}"
    );
    assert!(probes.len() >= 3 * 5, "{probes:?}");
}

/// Two M/M/1 queues served at 1000/s and 1800/s (the mock workload with
/// `rate`, 2% noise): within p99 ≤ 50 ms they sustain μ − ln(100)/0.05,
/// 908 and 1708 per second. Each search finds its own within its
/// interval, the headline compares them, and the probes are ordinary
/// runs and workloads of the store.
fn mock_experiment(name: &str) -> String {
    format!(
        "name = \"{name}\"\n[plan]\nrepetitions = 3\ndrop_caches = false\ntelemetry = false\n\
         [[target]]\nname = \"slow\"\nkind = \"dir\"\npath = \".\"\n\
         [[target]]\nname = \"fast\"\nkind = \"dir\"\npath = \".\"\n\
         [[workload]]\nname = \"q\"\nkind = \"mock\"\nvalue = 1000\nnoise = 0.02\nfactor = {{ fast = 1.8 }}\n\
         capacity = {{ latency = \"p99\", max = \"50ms\", start = 500 }}\n"
    )
}

#[test]
fn two_queues_sustain_their_known_capacities_and_the_headline_compares_them() {
    let lab = Lab::new();
    let file = lab.file("q.toml", &mock_experiment("queues"));
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let caps = capacities(&lab);
    for (target, truth) in [("slow", 907.9), ("fast", 1707.9)] {
        let (found, low, high) = capacity(&caps, "q", target);
        eprintln!("{target}: {found:.1} [{low:.1}, {high:.1}], truth {truth}");
        assert!((found / truth - 1.0).abs() < 0.05, "{target}: {found}");
        assert!(low < found && found < high, "{target}");
    }
    let report = lab.ok(&["report", "--format", "md"]);
    let headline = report
        .lines()
        .find(|l| l.starts_with("- q: fast sustains"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(headline.contains("within p99 ≤ 50.00 ms ["), "{headline}");
    assert!(headline.contains("; slow "), "{headline}");
    assert!(headline.contains("<0.001)"), "{headline}");
    // The probes are variants q[rate=…] of the store, with their runs.
    let export = lab.export_json();
    let workloads: Vec<&str> = export["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert!(workloads.contains(&"q[rate=500]"), "{workloads:?}");
    assert!(
        workloads
            .iter()
            .filter(|w| w.starts_with("q[rate="))
            .count()
            >= 6
    );
    // The terminal's table of probes.
    let show = lab.ok(&["show"]);
    assert!(show.contains("Capacity: q (p99 ≤ 50.00 ms)"), "{show}");
    assert!(
        show.contains("- fast: 1.69k ops/s [1.62k, 1.78k] (resolved)"),
        "{show}"
    );
    assert!(show.contains("slow      943 ops/s    943 ops/s"), "{show}");
}

/// A search killed twice and resumed replays its probes from the store:
/// it ends with the probes and the capacity of one that ran through.
#[test]
fn a_resumed_search_ends_as_one_that_ran_through() {
    let lab = Lab::new();
    let file = lab.file(
        "q.toml",
        &mock_experiment("resumed").replace("noise = 0.02", "noise = 0.02\nduration = \"100ms\""),
    );
    let status = lab.kill_and_resume(
        &file,
        "resumed",
        &[4, 13],
        std::time::Duration::from_secs(120),
    );
    assert!(status.success());
    let resumed = capacities(&lab);
    let whole = Lab::new();
    let file = whole.file(
        "q.toml",
        &mock_experiment("resumed").replace("noise = 0.02", "noise = 0.02\nduration = \"100ms\""),
    );
    whole.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let through = capacities(&whole);
    for target in ["slow", "fast"] {
        assert_eq!(
            capacity(&resumed, "q", target),
            capacity(&through, "q", target),
            "{target}"
        );
    }
}

/// `check` says how many probes each search may take and what they cost,
/// and the whole campaign's estimate as a range.
#[test]
fn check_says_the_probes_and_their_cost() {
    let lab = Lab::new();
    let file = lab.file(
        "q.toml",
        &mock_experiment("checked").replace("noise = 0.02", "noise = 0.02\nduration = \"2s\""),
    );
    let out = lab.ok(&["check", file.to_str().unwrap()]);
    assert!(out.contains("capacity searches"), "{out}");
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("q on slow:"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("p99 ≤ 50 ms from 500 ops/s, 5% apart: 6 to 15 probes of 3 runs"),
        "{line}"
    );
    assert!(
        out.contains("at most 90 runs (90 of them probes), estimated "),
        "{out}"
    );
}

/// What the file may not ask: a kind without a rate, no `max`, the rate
/// swept beside the search, a resolution out of range.
#[test]
fn capacity_refusals_name_the_place_and_the_fix() {
    let lab = Lab::new();
    let refused = |workload: &str| {
        let file = lab.file(
            "e.toml",
            &format!(
                "[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \".\"\n[[workload]]\nname = \"w\"\n{workload}"
            ),
        );
        let out = lab.run(&["check", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{workload}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = refused("kind = \"smallfiles\"\ncapacity = { latency = \"p99\", max = \"10ms\" }\n");
    assert!(e.contains("e.toml:8:12: workload `w`: capacity: a capacity search sets the offered rate, and this workload has none to set"), "{e}");
    let e = refused("kind = \"io\"\nrate_iops = 100\ncapacity = { latency = \"p99\" }\n");
    assert!(e.contains("needs `max`"), "{e}");
    let e = refused("kind = \"io\"\ncapacity = { max = \"10ms\" }\n");
    assert!(
        e.contains("set the workload's `rate_iops` or capacity's `start`"),
        "{e}"
    );
    let e = refused(
        "kind = \"io\"\nsweep = { rate_iops = [100, 200] }\ncapacity = { max = \"10ms\" }\n",
    );
    assert!(e.contains("the search sets `rate_iops` itself"), "{e}");
    let e = refused(
        "kind = \"mock\"\nrate = 10\ncapacity = { max = \"1ms\", resolution = \"0.1%\" }\n",
    );
    assert!(e.contains("resolution must be between 1% and 50%"), "{e}");
    let e = refused("kind = \"mock\"\nrate = 10\ncapacity = { max = \"1ms\", latncy = \"p99\" }\n");
    assert!(
        e.contains("unknown key `latncy`") && e.contains("latency"),
        "{e}"
    );
    let e = refused(
        "kind = \"pgbench\"\nrate = 10\ntransaction_log = false\ncapacity = { max = \"1ms\" }\n",
    );
    assert!(e.contains("set transaction_log = true"), "{e}");
}

/// A tmpfs has no device to wait for: reading it offered faster than
/// storlab's one job can issue, the knee is the CPU's, and is named so
/// (its thread ran, or on a busy host waited for a core, all the run).
#[test]
#[ignore = "needs root"]
fn a_tmpfs_knee_is_named_cpu_bound() {
    require_root!();
    let lab = Lab::new();
    let file = lab.file(
        "ram.toml",
        "name = \"ram\"\n[plan]\nrepetitions = 2\ndrop_caches = false\n\
         [[target]]\nname = \"ram\"\nkind = \"tmpfs\"\nsize = \"128M\"\n\
         [[workload]]\nname = \"reads\"\nkind = \"io\"\nrw = \"randread\"\nbs = \"4k\"\nsize = \"64M\"\nruntime = \"3s\"\n\
         capacity = { latency = \"p99\", max = \"50ms\", start = 50000, max_rate = 10000000 }\n",
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let caps = capacities(&lab);
    let (found, low, high) = capacity(&caps, "reads", "ram");
    let limit = &caps[0]["targets"][0]["limit"];
    eprintln!("tmpfs: {found:.0} [{low:.0}, {high:.0}] {limit}");
    assert_eq!(limit["kind"], "cpu_bound", "{caps}");
    assert_eq!(limit["process"], "storlab", "{caps}");
    let show = lab.ok(&["show"]);
    assert!(
        show.contains("the knee is CPU-bound: a thread of storlab"),
        "{show}"
    );
}

/// History tracks a configuration's capacity across campaigns: two
/// searches of the same queues that tried other rates (from 500 and from
/// 600) are one series, the capacity of each target per campaign with its
/// interval, the second judged against the first.
#[test]
fn history_tracks_each_targets_capacity_across_campaigns() {
    let lab = Lab::new();
    let first = lab.file("q.toml", &mock_experiment("queues"));
    lab.ok(&["run", "--quiet", first.to_str().unwrap()]);
    let second = lab.file(
        "q2.toml",
        &mock_experiment("queues").replace("start = 500", "start = 600"),
    );
    lab.ok(&["run", "--quiet", second.to_str().unwrap()]);
    let json: Value =
        serde_json::from_str(&lab.ok(&["history", "queues", "--format", "json"])).unwrap();
    assert_eq!(json["left_out"], serde_json::json!([]), "{json}");
    let series = json["series"].as_array().unwrap();
    assert_eq!(series.len(), 2, "one per target: {json}");
    for (s, truth) in series.iter().zip([907.9, 1707.9]) {
        assert_eq!(s["metric"], "capacity", "{s}");
        let entries = s["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 2, "{s}");
        for e in entries {
            let found = e["stats"]["values"][0].as_f64().unwrap();
            assert!((found / truth - 1.0).abs() < 0.05, "{s}");
            assert!(e["stats"]["ci"]["low"].as_f64().unwrap() < found, "{s}");
        }
        let change = &entries[1]["stats"]["comparison"];
        assert!(change["p_value"].as_f64().unwrap() > 0.05, "{s}");
    }
    let text = lab.ok(&["history", "queues"]);
    eprintln!("{text}");
    // A capacity is the knee with its interval (on the log scale, not
    // symmetric): no mean ± half-width.
    assert!(text.contains("capacity [95% CI]"), "{text}");
    assert!(!text.contains('±'), "{text}");
}

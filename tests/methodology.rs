use std::time::{Duration, Instant};

use crate::util::{dir_target, stops, targets_in_order, Lab};

#[test]
fn adaptive_repetitions_stop_quiet_pairs_at_min_and_keep_noisy_ones_going() {
    let lab = Lab::new();
    let file = lab.file(
        "adaptive.toml",
        &format!(
            "[plan]\nrepetitions = {{ min = 3, max = 12, until_ci = \"2%\" }}\n{}\
             [[workload]]\nname = \"quiet\"\nkind = \"mock\"\nnoise = 0.001\n\
             [[workload]]\nname = \"noisy\"\nkind = \"mock\"\nnoise = 0.3\n",
            dir_target(&lab, "d")
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    let s = stops(&export);
    assert!(s.contains(&("quiet".into(), "width".into(), 3)), "{s:?}");
    assert!(s.contains(&("noisy".into(), "max".into(), 12)), "{s:?}");
    let runs = export["runs"].as_array().unwrap();
    assert_eq!(runs.iter().filter(|r| r["workload"] == "quiet").count(), 3);
    assert_eq!(runs.iter().filter(|r| r["workload"] == "noisy").count(), 12);
    let md = lab.ok(&["report", "--format", "md"]);
    assert!(
        md.contains("interval narrow enough") && md.contains("maximum repetitions"),
        "{md}"
    );
}

#[test]
fn max_time_bounds_the_campaign() {
    // With block tracing at its default (on): bpftrace attaches once,
    // after provisioning, before max_time's clock starts. Attached before
    // each run (2.5 s here), it left room for one 200 ms run in 1.5 s.
    // The wall-clock bound only catches a campaign that ran on: the
    // attach itself took 5.5 s at load 8 on 2 cores.
    let _alone = crate::util::measuring_alone();
    let lab = Lab::new();
    let file = lab.file(
        "timed.toml",
        &format!(
            "[plan]\nrepetitions = {{ min = 3, max = 100, until_ci = \"1%\" }}\nmax_time = \"1500ms\"\ndrop_caches = false\n{}\
             [[workload]]\nname = \"slow\"\nkind = \"mock\"\nnoise = 0.5\nduration = \"200ms\"\n",
            dir_target(&lab, "d")
        ),
    );
    let t0 = Instant::now();
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    assert!(
        t0.elapsed() < Duration::from_secs(30),
        "took {:?}",
        t0.elapsed()
    );
    let export = lab.export_json();
    let n = export["runs"].as_array().unwrap().len();
    assert!((4..=8).contains(&n), "{n} runs of 200 ms in 1.5 s");
    // Traced, where the lab's filesystem has a block device to trace.
    let traced = crate::util::is_root()
        && crate::util::root_device().starts_with("/dev/")
        && crate::util::installed("bpftrace");
    if traced {
        let fact = export["runs"][0]["facts"]["block_trace"]
            .as_str()
            .unwrap_or("");
        assert!(fact.starts_with("bpftrace v"), "{fact}");
    }
    assert_eq!(
        stops(&export),
        vec![("slow".to_string(), "time".to_string(), n as u64)]
    );
}

#[test]
fn a_campaign_killed_at_several_points_and_resumed_ends_with_exactly_the_planned_runs() {
    let lab = Lab::new();
    let file = lab.file(
        "resume.toml",
        &format!(
            "name = \"resumable\"\n[plan]\nrepetitions = 6\norder = \"randomized\"\nwarmup = 1\n{}{}\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nnoise = 0.1\nduration = \"100ms\"\n",
            dir_target(&lab, "a"),
            dir_target(&lab, "b")
        ),
    );
    assert!(lab
        .kill_and_resume(&file, "resumable", &[3, 7, 11], Duration::from_secs(60))
        .success());
    let export = lab.export_json();
    assert_eq!(export["campaign"]["status"], "finished");
    let runs = export["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 14, "2 targets × (1 warm-up + 6 measured)");
    let mut keys: Vec<(String, bool, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["target"].as_str().unwrap().into(),
                r["warmup"].as_bool().unwrap(),
                r["repetition"].as_u64().unwrap(),
            )
        })
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 14, "no run twice");
    let mut positions: Vec<u64> = runs
        .iter()
        .map(|r| r["position"].as_u64().unwrap())
        .collect();
    positions.sort();
    assert_eq!(
        positions,
        (0..14).collect::<Vec<u64>>(),
        "each run kept its place in the plan"
    );
    assert!(runs.iter().all(|r| r["status"] == "ok"));
    let again = lab.run(&["run", "--resume", "resumable"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("has finished; there is nothing to resume")
    );
}

#[test]
fn adaptive_plans_are_validated() {
    let lab = Lab::new();
    let file = lab.file("bad.toml", &format!("[plan]\nrepetitions = {{ min = 5, max = 3, until_ci = \"2%\" }}\n{}[[workload]]\nname = \"m\"\nkind = \"mock\"\n", dir_target(&lab, "d")));
    let out = lab.run(&["check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains(":2:32: repetitions: max (3) is below min (5)"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = lab.file("bad2.toml", &format!("[plan]\nrepetitions = {{ min = 3, untl_ci = \"2%\" }}\n{}[[workload]]\nname = \"m\"\nkind = \"mock\"\n", dir_target(&lab, "d")));
    let out = lab.run(&["check", file.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("did you mean `until_ci`?"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn balanced_rounds_let_each_target_run_first_and_after_the_other_alike() {
    let lab = Lab::new();
    let file = lab.file(
        "balanced.toml",
        &format!(
            "name = \"balanced\"\n[plan]\nrepetitions = 4\norder = \"balanced\"\n{}{}\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nnoise = 0.01\n",
            dir_target(&lab, "a"),
            dir_target(&lab, "b")
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let order = targets_in_order(&lab.export_json());
    // Rounds A B, B A, A B, B A: each target follows the other, and itself,
    // as often; interleaved rounds would give a b a b a b a b.
    assert_eq!(order, ["a", "b", "b", "a", "a", "b", "b", "a"]);
    let report = lab.ok(&["report", "--format", "md"]);
    assert!(report.contains("Williams design"), "{report}");
}

use crate::util::{metric, runs, storlab_mounts, Lab};

const TARGET: &str = "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n";
const WORKLOAD: &str = "[[workload]]\nname = \"w\"\nkind = \"io\"\n";

fn values(export: &serde_json::Value, name: &str) -> Vec<f64> {
    runs(export)
        .iter()
        .map(|r| crate::util::value_of(r, name).unwrap_or(f64::NAN))
        .collect()
}

#[test]
#[ignore = "needs root"]
fn a_steady_run_ends_well_before_its_runtime_and_says_when() {
    let _alone = crate::util::measuring_alone();
    require_root!();
    let lab = Lab::new();
    let name = format!("ss{}", std::process::id());
    let file = lab.file(
        "steady.toml",
        &format!(
            "[plan]\nrepetitions = 2\ntelemetry = false\n[[target]]\nname = \"{name}\"\nkind = \"tmpfs\"\nsize = \"128M\"\n\
             [[workload]]\nname = \"seqread\"\nkind = \"io\"\nrw = \"read\"\nbs = \"64k\"\nsize = \"32M\"\n\
             runtime = \"30s\"\nsteadystate = \"bw:20%\"\nss_dur = \"3s\"\n"
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    assert_eq!(storlab_mounts(&name), 0, "the tmpfs is unmounted");
    let export = lab.export_json();
    assert_eq!(export["campaign"]["status"], "finished");
    for run in runs(&export) {
        assert_eq!(
            run["status"], "ok",
            "a steady run is complete, not interrupted"
        );
        assert_eq!(run["warnings"].as_array().unwrap().len(), 0, "{run}");
        let m = |name| crate::util::value_of(run, name).unwrap();
        let at = m("ss_time_s");
        let elapsed = m("elapsed_s");
        assert_eq!(m("ss_reached"), 1.0);
        assert!((3.0..=30.0).contains(&at), "steady after {at} s");
        assert!(
            elapsed < 20.0 && elapsed < at + 1.0,
            "ran {elapsed} s, steady after {at} s"
        );
        assert!(m("ss_range_pct") < 20.0);
        let series = crate::util::series_of(run, "bw_bytes_per_s");
        assert_eq!(series.len() as f64, at, "one sample a second until steady");
        // The steady window's mean is that of the series' last 3 seconds.
        let tail: f64 = series[series.len() - 3..]
            .iter()
            .map(|v| v.as_f64().unwrap())
            .sum::<f64>()
            / 3.0;
        let window = m("ss_bw_bytes_per_s");
        assert!((window - tail).abs() <= 1e-6 * tail, "{window} vs {tail}");
        let iops = m("ss_iops");
        assert!((iops * 65536.0 - window).abs() <= 1e-6 * window);
    }
    assert_eq!(metric(&export, "seqread", &name, "ss_reached"), [1.0, 1.0]);
    let times = values(&export, "ss_time_s");
    let median = (times[0] + times[1]) / 2.0;
    let md = lab.ok(&["report", "--format", "md"]);
    let line = format!(
        "Steady state for seqread (bw:20% over 3 s windows, runtime 30 s at most) was reached in 2 of 2 measured runs, a median of {median} s into measurement."
    );
    assert!(md.contains(&line), "no `{line}` in\n{md}");
}

#[test]
fn a_criterion_never_met_runs_to_runtime_with_a_warning() {
    let _alone = crate::util::measuring_alone();
    let lab = Lab::new();
    // Within ±0.000001% of the mean, four seconds of a closed-loop 4k
    // random read (hundreds of thousands of operations a second, varying by
    // hundreds at least) would have to count exactly the same operations.
    let file = lab.file(
        "never.toml",
        &format!(
            "[plan]\nrepetitions = 1\ntelemetry = false\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"rr\"\nkind = \"io\"\nrw = \"randread\"\nsize = \"16M\"\n\
             runtime = \"5s\"\nss = \"iops:0.000001%\"\nss_dur = \"4s\"\n",
            lab.path().display()
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    let run = &runs(&export)[0];
    assert_eq!(run["status"], "ok");
    let m = |name| crate::util::value_of(run, name);
    assert_eq!(m("ss_reached"), Some(0.0));
    assert!(m("ss_time_s").is_none() && m("ss_iops").is_none(), "{run}");
    let last = m("ss_range_pct").unwrap();
    assert!(last >= 0.000001, "{last}");
    let elapsed = m("elapsed_s").unwrap();
    assert!((4.9..6.0).contains(&elapsed), "ran {elapsed} s of 5");
    let warnings = run["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0]["kind"], "steady_state_not_reached");
    let w = warnings[0]["text"].as_str().unwrap();
    assert!(
        w.starts_with("steady state not reached within runtime (5 s): in the last 4 s window, IOPS deviated from its mean by up to ")
            && w.contains("(iops limit 0.000001%)"),
        "{w}"
    );
    let md = lab.ok(&["report", "--format", "md"]);
    assert!(
        md.contains("Steady state for rr (iops:0.000001% over 4 s windows, runtime 5 s at most) was reached in 0 of 1 measured runs."),
        "{md}"
    );
    assert!(
        md.contains("steady state not reached within runtime (5 s)"),
        "{md}"
    );
}

/// Each case: the workload's lines, `line:column` of the error, a phrase of it.
const CASES: &[(&str, &str, &str)] = &[
    (
        "steadystate = \"bw:20%\"\nss_dur = \"3s\"\n",
        "8:15",
        "steadystate needs runtime (a time-based run)",
    ),
    (
        "runtime = \"10s\"\nsteadystate = \"bw=20%\"\nss_dur = \"3s\"\n",
        "9:15",
        "steadystate `bw=20%` has no limit: write CRITERION:LIMIT",
    ),
    (
        "runtime = \"10s\"\nss = \"lat:5%\"\nss_dur = \"3s\"\n",
        "9:6",
        "steadystate `lat:5%` has an unknown criterion",
    ),
    (
        "runtime = \"10s\"\nss = \"bw_slope:fast\"\nss_dur = \"3s\"\n",
        "9:6",
        "has a limit that is not a number",
    ),
    (
        "runtime = \"10s\"\nsteadystate = \"bw:20%\"\n",
        "9:15",
        "steadystate needs ss_dur",
    ),
    (
        "runtime = \"10s\"\nsteadystate = \"bw:20%\"\nss = \"bw:10%\"\nss_dur = \"3s\"\n",
        "10:6",
        "not both",
    ),
    (
        "runtime = \"10s\"\nsteadystate = \"bw:20%\"\nss_dur = \"2500ms\"\n",
        "10:10",
        "whole number of seconds",
    ),
    (
        "runtime = \"10s\"\nsteadystate = \"iops:5%\"\nss_dur = \"8s\"\nss_ramp = \"5s\"\n",
        "10:10",
        "ss_ramp + ss_dur (13 s) exceed runtime (10 s)",
    ),
    (
        "runtime = \"10s\"\nss_ramp = \"5s\"\n",
        "9:11",
        "ss_ramp needs steadystate and ss_dur",
    ),
];

#[test]
fn steady_state_parameters_are_checked_with_located_errors() {
    let lab = Lab::new();
    for (i, (lines, at, phrase)) in CASES.iter().enumerate() {
        let file = lab.file(
            &format!("case{i}.toml"),
            &format!("{TARGET}{WORKLOAD}{lines}"),
        );
        let out = lab.run(&["check", file.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "case {i}: {stderr}");
        let expected = format!("error: {}:{at}: workload `w`: ", file.display());
        assert!(
            stderr.starts_with(&expected) && stderr.contains(phrase),
            "case {i}: `{stderr}` lacks `{expected}` or `{phrase}`"
        );
        // The error's line, then the file's line at fault with a caret.
        let line = at.split(':').next().unwrap();
        assert_eq!(
            stderr.lines().filter(|l| l.starts_with("error")).count(),
            1,
            "case {i}: {stderr}"
        );
        assert!(
            stderr.lines().any(|l| l.starts_with(&format!("{line} | "))) && stderr.contains('^'),
            "case {i}: no snippet of line {line}: {stderr}"
        );
    }
    let ok = lab.file(
        "ok.toml",
        &format!("{TARGET}{WORKLOAD}runtime = \"1m\"\nss_dur = \"10s\"\nss_ramp = \"5s\"\n"),
    );
    let out = lab.ok(&["check", ok.to_str().unwrap()]);
    assert!(out.contains("runs, estimated"), "{out}");
}

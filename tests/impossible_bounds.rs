//! Never impossible, everywhere: every output of campaigns full of large
//! slowdowns on noisy figures — `show` (terminal and JSON), `compare`
//! (within and across campaigns), the Markdown, HTML and JSON reports,
//! `history`, the export — holds no bound below −100%, the ratio 0 a
//! figure that cannot be negative never goes under. The campaigns run the
//! mock workload on directories (no root), compared on the means (Fieller's
//! interval, which without the cut reaches below −100% here), with zeros
//! among the runs, and a sweep for the study's pivots; then the fixture
//! store of a busy host.

use std::path::Path;

use serde_json::Value;

use crate::util::Lab;

/// A campaign of two directory targets, `b` a 20th to a 50th of `a` on
/// noisy mock figures (noise 1.5 clips some runs at 0), compared on the
/// means; `seed` varies the draws.
fn slowdowns(lab: &Lab, seed: u32) -> std::path::PathBuf {
    let dir = |d: &str| {
        let p = lab.path().join(d);
        std::fs::create_dir_all(&p).unwrap();
        p.display().to_string()
    };
    let mut text = format!(
        "name = \"slowdowns\"\n[plan]\nrepetitions = 3\nanalysis = \"means\"\ndrop_caches = false\nblock_trace = false\n{}\
         [[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"{}\"\n\
         [[target]]\nname = \"b\"\nkind = \"dir\"\npath = \"{}\"\n",
        // Telemetry's figures (non-negative, often 0) on the first only:
        // its sampling makes a run take a few seconds.
        if seed == 1 { "" } else { "telemetry = false\n" },
        dir("a"),
        dir("b")
    );
    for (i, (noise, factor)) in [(1.0, 0.05), (1.5, 0.02)].iter().enumerate() {
        text.push_str(&format!(
            "[[workload]]\nname = \"m{i}\"\nkind = \"mock\"\nnoise = {noise}\nseed = {}\nfactor = {{ b = {factor} }}\n",
            seed + i as u32
        ));
    }
    text.push_str(&format!(
        "[[workload]]\nname = \"swept\"\nkind = \"mock\"\nnoise = 1.5\nfactor = {{ b = 0.03 }}\nsweep = {{ seed = [{}, {}] }}\n",
        seed + 10,
        seed + 11
    ));
    lab.file(&format!("slowdowns-{seed}.toml"), &text)
}

/// Percentages below −100% (`-123.4%`, `−1,250%`) and negative ratios
/// (`×-0.3`, `÷−2`) in `text`.
fn impossible(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    for (i, &c) in chars.iter().enumerate() {
        if c != '-' && c != '−' {
            continue;
        }
        let number: String = chars[i + 1..]
            .iter()
            .take_while(|d| d.is_ascii_digit() || **d == '.' || **d == ',')
            .collect();
        let number = number.trim_end_matches([',', '.']).to_string();
        let after = chars[i + 1 + number.chars().count()..]
            .iter()
            .find(|c| **c != ' ');
        let before = chars[..i].iter().rev().find(|c| **c != ' ');
        let value = number.replace(',', "").parse::<f64>().ok();
        let pct = after == Some(&'%') && value.is_some_and(|v| v > 100.0);
        let ratio = matches!(before, Some('×' | '÷')) && value.is_some();
        if pct || ratio {
            let shown: String = chars[i..i + 1 + number.chars().count()].iter().collect();
            out.push(format!(
                "{}{shown}{}",
                before
                    .filter(|_| ratio)
                    .map_or(String::new(), |c| c.to_string()),
                if pct { "%" } else { "" }
            ));
        }
    }
    out
}

/// Every `diff_pct` and interval bound of a difference in `v` below −100.
fn impossible_json(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let here = format!("{path}.{k}");
                let bounds = [x.get("low"), x.get("high")];
                if k.starts_with("diff_pct") {
                    for b in std::iter::once(Some(x)).chain(bounds).flatten() {
                        if b.as_f64().is_some_and(|f| f < -100.0) {
                            out.push(format!("{here} = {b}"));
                        }
                    }
                }
                impossible_json(x, &here, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                impossible_json(x, &format!("{path}[{i}]"), out);
            }
        }
        Value::String(s) => out.extend(impossible(s).into_iter().map(|i| format!("{path}: {i}"))),
        _ => {}
    }
}

/// Every output of the store of `lab`, named by the command that wrote it.
fn outputs(lab: &Lab, campaigns: &[&str]) -> Vec<(String, String)> {
    let run = |args: &[&str]| {
        let o = lab.run(args);
        assert!(
            o.status.code().is_some_and(|c| c <= 1),
            "storlab {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        (args.join(" "), text)
    };
    let html = |args: &[&str], name: &str| {
        let path = lab.path().join(name);
        let mut args = args.to_vec();
        args.extend(["-o", path.to_str().unwrap()]);
        run(&args);
        (args.join(" "), std::fs::read_to_string(&path).unwrap())
    };
    let mut out = Vec::new();
    for &c in campaigns {
        out.push(run(&["show", c, "--warnings"]));
        out.push(run(&["show", c, "--format", "json"]));
        out.push(run(&["compare", c, "--fail-on-regression", "5"]));
        out.push(run(&["compare", c, "--format", "json"]));
        out.push(run(&["report", c, "--format", "md"]));
        out.push(run(&["export", c, "--format", "json"]));
        out.push(html(&["report", c], &format!("report-{c}.html")));
    }
    if let [a, b, ..] = campaigns {
        out.push(run(&[
            "compare",
            a,
            b,
            "--metric",
            "all",
            "--allow-different",
        ]));
        out.push(run(&[
            "compare",
            a,
            b,
            "--metric",
            "all",
            "--allow-different",
            "--format",
            "json",
        ]));
        out.push(run(&[
            "report",
            a,
            b,
            "--metric",
            "all",
            "--allow-different",
            "--format",
            "md",
        ]));
        out.push(html(
            &["report", a, b, "--metric", "all", "--allow-different"],
            "across.html",
        ));
        out.push(run(&["history"]));
    }
    out
}

/// What in `outputs` shows an impossible bound, by output.
fn violations(outputs: &[(String, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    for (name, text) in outputs {
        let mut found = match serde_json::from_str::<Value>(text) {
            Ok(v) => {
                let mut f = Vec::new();
                impossible_json(&v, "", &mut f);
                f
            }
            Err(_) => impossible(text),
        };
        found.truncate(5);
        bad.extend(found.into_iter().map(|f| format!("{name}: {f}")));
    }
    bad
}

#[test]
fn the_scan_finds_an_impossible_bound_where_there_is_one() {
    assert_eq!(impossible("-35.9% [-48.6%, -20.1%]"), Vec::<String>::new());
    assert_eq!(
        impossible("[-100.0%, +12%] ÷2.0 [÷3, ÷1.5]"),
        Vec::<String>::new()
    );
    assert_eq!(impossible("−76.1% [−127.0%, −18.8%]"), ["−127.0%"]);
    assert_eq!(impossible("+382.6% [-1,775.4%, +2884.4%]"), ["-1,775.4%"]);
    assert_eq!(impossible("[×-0.27, ×0.5]"), ["×-0.27"]);
    let mut found = Vec::new();
    let v =
        serde_json::json!({"c": {"diff_pct": -50.0, "diff_pct_ci": {"low": -127.0, "high": 3.0}}});
    impossible_json(&v, "", &mut found);
    assert_eq!(found, [".c.diff_pct_ci = -127.0"]);
}

#[test]
fn no_output_of_campaigns_of_large_slowdowns_shows_a_bound_below_minus_100_percent() {
    let lab = Lab::new();
    for seed in [1, 20] {
        let file = slowdowns(&lab, seed);
        lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    }
    // The campaigns do reach the cut: some interval ends exactly at −100%.
    let shown = lab.ok(&["show", "1"]) + &lab.ok(&["show", "2"]);
    let md =
        lab.ok(&["report", "1", "--format", "md"]) + &lab.ok(&["report", "2", "--format", "md"]);
    assert!(
        ["[×0,", "[-100.0%", "[-100%"]
            .iter()
            .any(|cut| md.contains(cut) || shown.contains(cut)),
        "no interval reached the cut: the campaigns test nothing\n{md}"
    );
    let bad = violations(&outputs(&lab, &["1", "2"]));
    assert!(bad.is_empty(), "impossible bounds:\n{}", bad.join("\n"));
}

/// The fixture store of a busy host (`/work/shared/fixtures`), when this
/// machine has it: read from a copy, every output scanned alike.
#[test]
fn no_output_of_the_busy_host_fixture_shows_a_bound_below_minus_100_percent() {
    let fixture = Path::new("/work/shared/fixtures/quick-noisy.db");
    if !fixture.exists() {
        eprintln!("skipped: no {}", fixture.display());
        return;
    }
    let lab = Lab::new();
    std::fs::copy(fixture, lab.db()).unwrap();
    let bad = violations(&outputs(&lab, &["1"]));
    assert!(bad.is_empty(), "impossible bounds:\n{}", bad.join("\n"));
}

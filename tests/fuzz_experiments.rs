//! Mutated experiment files, thousands of them from a fixed seed (issue
//! #16): whatever the text, reading it never panics, a refused file gets
//! one located error line (`file:line:column: …`), and an accepted one can
//! be planned, estimated, echoed and its workloads built, as `storlab
//! check` and `storlab run` do before they touch anything.
//!
//! Two generators: every declared parameter of every kind set to each of a
//! list of edge values (numbers at and beyond their range, wrong shapes,
//! hostile text), and random edits of the example experiments (values
//! replaced, lines dropped, doubled or swapped, keys added, kinds changed,
//! text cut short or spliced with noise).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use storlab::experiment::{parse_experiment, Experiment, ExperimentError};
use storlab::params::{ParamSpec, Value};
use storlab::plan::plan;
use storlab::targets::TargetKind;
use storlab::workload::WorkloadKind;

/// Random edits per seed file.
const RANDOM_CASES_PER_SEED: usize = 400;

/// Values every parameter is set to in turn, as TOML.
const EDGE_VALUES: &[&str] = &[
    "inf",
    "-inf",
    "nan",
    "1e300",
    "1.8e19",
    "1e9",
    "-1.0",
    "0.5",
    "0",
    "1",
    "-1",
    "1024",
    "9223372036854775807",
    "-9223372036854775808",
    "true",
    "\"\"",
    "\"0\"",
    "\"x\"",
    "\"/\"",
    "\"inf\"",
    "\"nan s\"",
    "\"1e300s\"",
    "\"1000000000s\"",
    "\"16666667m\"",
    "\"16777215T\"",
    "\"16777216T\"",
    "\"8388608T\"",
    "\"4k\"",
    "\"-4k\"",
    "\"1.5\"",
    "\"a,b\"",
    "\"é\\u0007\"",
    "[]",
    "[\"\"]",
    "[\"a\", \"b c\"]",
    "[1, 2]",
    "{}",
    "{ a = 1, \"b=c\" = true, d = 1.5 }",
    "{ a = [1] }",
];

/// A file with one block of every kind, each with what it must have.
fn every_kind() -> String {
    let mut s = String::from("name = \"every-kind\"\n[plan]\nrepetitions = 2\n");
    let targets = [
        ("dir", "path = \"/tmp\""),
        ("tmpfs", ""),
        ("loop", ""),
        ("zfs", ""),
        ("gluster", ""),
        ("nfs", "server = \"h\"\nexport = \"/e\""),
    ];
    for (kind, extra) in targets {
        s.push_str(&format!(
            "\n[[target]]\nname = \"t-{kind}\"\nkind = \"{kind}\"\n{extra}\n"
        ));
    }
    let workloads = [
        ("io", ""),
        ("fio", "options = { rw = \"read\", size = \"1M\" }"),
        ("command", "command = [\"true\"]"),
        ("mock", ""),
        ("pgbench", ""),
        ("sqlite-oltp", ""),
        ("matrix", ""),
        ("smallfiles", ""),
        ("tinywrites", ""),
    ];
    for (kind, extra) in workloads {
        s.push_str(&format!(
            "\n[[workload]]\nname = \"w-{kind}\"\nkind = \"{kind}\"\n{extra}\n"
        ));
    }
    s
}

#[test]
fn mutated_experiment_files_never_panic_and_every_refusal_is_located() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seeds: Vec<(String, String)> = Vec::new();
    for dir in ["examples", "tests/fixtures/v3"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            seeds.push((f.display().to_string(), text));
        }
    }
    let every = every_kind();
    let origin = root.join("every-kind.toml").display().to_string();
    assert!(
        read(&origin, &every).is_ok(),
        "the every-kind seed is valid: {:?}",
        read(&origin, &every).err()
    );
    seeds.push((origin.clone(), every.clone()));
    seeds.push((
        root.join("quick.toml").display().to_string(),
        storlab::experiment::builtin::quick_source(true),
    ));

    let mut stats = Stats::default();
    // Every declared parameter at every edge value.
    for case in edge_cases(&every) {
        stats.check(&origin, &case);
    }
    // Random edits of every seed.
    let mut rng = Rng(0x05ee_d0f5_70ab);
    for (name, text) in &seeds {
        for _ in 0..RANDOM_CASES_PER_SEED {
            let mutated = mutate(text, &mut rng);
            stats.check(name, &mutated);
        }
    }
    assert!(
        stats.failures.is_empty(),
        "{} of {} cases failed; the first:\n{}",
        stats.failures.len(),
        stats.cases,
        stats.failures[..stats.failures.len().min(5)].join("\n---\n")
    );
    eprintln!(
        "fuzz: {} cases, {} accepted, {} refused",
        stats.cases, stats.accepted, stats.refused
    );
    // The generators must reach both sides, or the test proves little.
    assert!(stats.cases >= 5000, "{} cases", stats.cases);
    assert!(stats.accepted >= 500, "{} accepted", stats.accepted);
    assert!(stats.refused >= 2000, "{} refused", stats.refused);
}

#[derive(Default)]
struct Stats {
    cases: usize,
    accepted: usize,
    refused: usize,
    failures: Vec<String>,
}

impl Stats {
    fn check(&mut self, name: &str, text: &str) {
        self.cases += 1;
        let outcome = catch_unwind(AssertUnwindSafe(|| match read(name, text) {
            Ok(exp) => {
                exercise(&exp);
                Ok(true)
            }
            Err(e) => located(name, text, &e).map(|()| false),
        }));
        match outcome {
            Ok(Ok(true)) => self.accepted += 1,
            Ok(Ok(false)) => self.refused += 1,
            Ok(Err(why)) => self.failures.push(format!("{why}\n{text}")),
            Err(_) => self.failures.push(format!("panicked on:\n{text}")),
        }
    }
}

fn read(name: &str, text: &str) -> Result<Experiment, ExperimentError> {
    parse_experiment(name, text)
}

/// What `check` and `run` do with a valid experiment before touching any
/// target, and what a sweep does to a workload.
fn exercise(exp: &Experiment) {
    let _ = plan(exp);
    let _ = exp.estimate();
    let _ = exp.to_json();
    for w in &exp.workloads {
        let _ = w.config.estimate();
        let _ = w.config.bytes_needed();
        drop(w.config.build());
        let base = Path::new(&exp.origin).parent().unwrap_or(Path::new("."));
        for spec in w.kind.params() {
            if let Some(v) = extreme(spec) {
                if let Ok(variant) = w.with_value(spec.name, v, base) {
                    let _ = variant.config.estimate();
                    let _ = variant.config.bytes_needed();
                }
            }
        }
    }
    for t in &exp.targets {
        for spec in t.kind.params() {
            if let Some(v) = extreme(spec) {
                let _ = t.with_value(spec.name, v);
            }
        }
    }
}

/// The largest value of a parameter's type, as a sweep might give it.
fn extreme(spec: &ParamSpec) -> Option<Value> {
    use storlab::params::ParamType as T;
    Some(match spec.ty {
        T::Size => Value::Size(u64::MAX),
        T::Duration => Value::Duration(std::time::Duration::from_secs(1_000_000_000)),
        T::Int { max, .. } => Value::Int(max),
        T::Float { max, .. } => Value::Float(max),
        _ => return None,
    })
}

/// A refusal names the file, then a line and column inside it, on one line.
fn located(name: &str, text: &str, e: &ExperimentError) -> Result<(), String> {
    let msg = e.to_string();
    // The line shown under it, with its caret, never panics either.
    let shown = e.render();
    if !shown.contains(&msg) {
        return Err(format!("the rendered error lacks its message: {shown}"));
    }
    let rest = msg
        .strip_prefix(&format!("{name}:"))
        .ok_or_else(|| format!("not located in {name}: {msg}"))?;
    let mut parts = rest.splitn(3, ':');
    let line: usize = parts
        .next()
        .and_then(|l| l.parse().ok())
        .ok_or(format!("no line: {msg}"))?;
    let col: usize = parts
        .next()
        .and_then(|c| c.parse().ok())
        .ok_or(format!("no column: {msg}"))?;
    let lines = text.split('\n').count();
    if line == 0 || line > lines || col == 0 {
        return Err(format!(
            "{line}:{col} is outside the file ({lines} lines): {msg}"
        ));
    }
    if msg.contains('\n') {
        return Err(format!("more than one line: {msg}"));
    }
    Ok(())
}

/// For every block of `text` and every parameter its kind declares (and
/// the plan's), the file with that parameter at each edge value.
fn edge_cases(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let specs: Vec<&str> = match *line {
            "[plan]" => vec![
                "repetitions",
                "max_time",
                "order",
                "seed",
                "drop_caches",
                "remount",
                "warmup",
            ],
            "[[target]]" | "[[workload]]" => {
                let kind = lines[i + 2].trim_start_matches("kind = ").trim_matches('"');
                let params = if *line == "[[target]]" {
                    TargetKind::parse(kind).unwrap().params()
                } else {
                    WorkloadKind::parse(kind).unwrap().params()
                };
                params.iter().map(|s| s.name).collect()
            }
            _ => continue,
        };
        for key in specs {
            for value in EDGE_VALUES {
                out.push(with_line(&lines, i, key, value));
            }
        }
    }
    out
}

/// `lines` with `key = value` as the first line of the block at `header`,
/// any other line of that key in the block dropped.
fn with_line(lines: &[&str], header: usize, key: &str, value: &str) -> String {
    let end = lines[header + 1..]
        .iter()
        .position(|l| l.starts_with('['))
        .map_or(lines.len(), |p| header + 1 + p);
    let mut out = Vec::with_capacity(lines.len() + 1);
    for (i, l) in lines.iter().enumerate() {
        if i > header && i < end && l.split('=').next().map(str::trim) == Some(key) {
            continue;
        }
        out.push(l.to_string());
        if i == header {
            out.push(format!("{key} = {value}"));
        }
    }
    out.join("\n") + "\n"
}

/// splitmix64: a fixed sequence, the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Every key a file may hold, to add where it may or may not belong.
fn known_keys() -> Vec<&'static str> {
    let mut keys = vec![
        "name",
        "kind",
        "baseline",
        "targets",
        "shared",
        "description",
        "plan",
        "repetitions",
        "order",
        "warmup",
        "remount",
        "max_time",
        "seed",
    ];
    for k in TargetKind::all() {
        keys.extend(k.params().iter().map(|s| s.name));
    }
    for k in WorkloadKind::all() {
        keys.extend(k.params().iter().map(|s| s.name));
    }
    keys
}

/// One to three random edits of `text`.
fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let keys = known_keys();
    let kinds: Vec<&str> = TargetKind::names()
        .into_iter()
        .chain(WorkloadKind::names())
        .chain(["", "nope"])
        .collect();
    for _ in 0..1 + rng.below(3) {
        if lines.is_empty() {
            lines.push(String::new());
        }
        let i = rng.below(lines.len());
        match rng.below(9) {
            // A value replaced by an edge value.
            0..=2 => {
                if let Some((key, _)) = lines[i].split_once('=') {
                    lines[i] = format!("{}= {}", key, rng.pick(EDGE_VALUES));
                }
            }
            3 => {
                lines.remove(i);
            }
            4 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            5 => {
                let j = rng.below(lines.len());
                lines.swap(i, j);
            }
            // A key added, with an edge value.
            6 => {
                let line = format!("{} = {}", rng.pick(&keys), rng.pick(EDGE_VALUES));
                lines.insert(i, line);
            }
            7 => {
                if lines[i].starts_with("kind") {
                    lines[i] = format!("kind = \"{}\"", rng.pick(&kinds));
                }
            }
            // Cut short, or spliced with noise.
            _ => {
                let mut joined = lines.join("\n");
                let at = floor_boundary(&joined, rng.below(joined.len() + 1));
                if rng.below(2) == 0 {
                    joined.truncate(at);
                } else {
                    let noise = *rng.pick(&[
                        "[",
                        "]]",
                        "\"",
                        "=",
                        "{",
                        "\u{0}",
                        "é",
                        "\n[[target]]\n",
                        "#",
                        "'''",
                    ]);
                    joined.insert_str(at, noise);
                }
                lines = joined.lines().map(String::from).collect();
            }
        }
    }
    lines.join("\n") + "\n"
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

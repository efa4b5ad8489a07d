//! `storlab check EXPERIMENT`: validate, print the planned runs with an
//! estimate learned from the store's past runs, and say what `run` would
//! refuse on this host.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use super::EXIT_INVALID;
use crate::cli::{CheckArgs, Global};
use crate::estimate::load::Reading;
use crate::estimate::{Basis, Estimate, Span};
use crate::experiment::{Experiment, Repetitions};
use crate::params::units::format_seconds;
use crate::plan::plan;
use crate::store::{PastCampaign, Store};

/// Exit status of a valid experiment that `run` would refuse on this host.
pub const EXIT_REFUSED: u8 = 1;

pub fn check(g: &Global, a: &CheckArgs) -> Result<ExitCode> {
    let root = crate::host::is_root();
    let mut chosen = match super::experiment_file::load(a.experiment.as_deref(), root) {
        Ok(c) => c,
        Err(e) => {
            super::experiment_file::refuse(&e);
            return Ok(ExitCode::from(EXIT_INVALID));
        }
    };
    crate::runner::roots::name_ready(&mut chosen.exp);
    let exp = &chosen.exp;
    let past = past_runs(&g.db);
    let reading = crate::estimate::load::sample(&mut crate::estimate::load::Proc);
    let span = Span::of(exp, &past, root, reading.load());
    let estimate = &span.at_load;
    print_head(exp, estimate);
    let (roots, builds) = roots_text(exp, estimate);
    for line in roots {
        outln!("{line}");
    }
    print_runs(exp, &span, builds);
    if let Some(line) = load_text(&reading, &span) {
        outln!("{line}");
    }
    if let Some(note) = estimate.left_out_note() {
        errln!("note: {note}");
    }
    if super::refusals::print(exp, chosen.refusal()) {
        return Ok(ExitCode::from(EXIT_REFUSED));
    }
    Ok(ExitCode::SUCCESS)
}

/// The experiment's name, targets, baseline, the devices it erases and
/// its variants.
fn print_head(exp: &Experiment, estimate: &Estimate) {
    outln!("{}: valid experiment `{}`", exp.origin, exp.name);
    let targets: Vec<String> = exp
        .targets
        .iter()
        .map(|t| format!("{} ({})", t.name, t.kind.name()))
        .collect();
    outln!("targets: {}", targets.join(", "));
    outln!("baseline: {}", exp.targets[exp.baseline()].name);
    for e in super::experiment_file::erased(exp) {
        outln!("destroys: will {e}: everything on it is destroyed");
    }
    for line in variants_text(exp, estimate) {
        outln!("{line}");
    }
}

/// The planned runs, each with its estimate, and the campaign's total
/// (`builds`: building the roots it takes software from).
fn print_runs(exp: &Experiment, span: &Span, builds: std::time::Duration) {
    let estimate = &span.at_load;
    let runs = plan(exp);
    for r in &runs {
        let w = &exp.workloads[r.workload];
        let kind = if r.warmup { "warm-up" } else { "measured" };
        outln!(
            "  {:>4}  round {:>2}  {:<20} on {:<16} {kind} rep {}  ~{}",
            r.position + 1,
            r.round,
            w.name,
            exp.targets[r.target].name,
            r.repetition,
            format_seconds(estimate.per_run(r.target, r.workload).as_secs_f64())
        );
    }
    let building = match builds.is_zero() {
        true => String::new(),
        false => format!("building roots {}, ", format_seconds(builds.as_secs_f64())),
    };
    let searched = searches_text(exp, estimate);
    for line in &searched.lines {
        outln!("{line}");
    }
    // The whole campaign, or its fewest to most probes, on `e`.
    let whole = |e: &Estimate| {
        let total = e.total() + builds;
        match searched.fewest {
            Some(fewest) => format!(
                "{} to {}",
                format_seconds(total.saturating_sub(fewest).as_secs_f64()),
                format_seconds(total.as_secs_f64()),
            ),
            None => format_seconds(total.as_secs_f64()),
        }
    };
    let figure = match &span.quiet {
        Some(quiet) => format!(
            "{} quiet, up to {} at this load",
            whole(quiet),
            whole(estimate)
        ),
        None => whole(estimate),
    };
    let total = match searched.fewest {
        Some(_) => format!(
            "at most {} runs ({} of them probes), estimated {figure}",
            runs.len() as u32 + searched.most,
            searched.most,
        ),
        None => format!("{} runs, estimated {figure}", runs.len()),
    };
    outln!("{total} ({building}{})", estimate_text(estimate));
    if let Some(more) = more_rounds_text(exp, estimate, builds) {
        outln!("{more}");
    }
}

/// For a plan that decides its rounds as it goes, the runs and time it may
/// take at most: every pair to its `max`, unless `max_time` stops it first.
fn more_rounds_text(
    exp: &Experiment,
    estimate: &Estimate,
    builds: std::time::Duration,
) -> Option<String> {
    let (rule, max) = match exp.plan.repetitions {
        Repetitions::Fixed(_) => return None,
        Repetitions::Decided { max, .. } => ("until every comparison is decided", max),
        Repetitions::Adaptive { max, .. } => ("until each interval is narrow enough", max),
    };
    // Saturating: a plan's largest values must not panic `check`.
    let runs = estimate.most_runs();
    let most = (estimate.total().saturating_sub(estimate.runs()))
        .saturating_add(runs)
        .saturating_add(builds);
    let mut text = format!(
        "then more rounds {rule}: up to {} runs, {} at most",
        crate::plan::pairs(exp).len() as u32 * (exp.plan.warmup + max),
        format_seconds(most.as_secs_f64())
    );
    match exp.plan.max_time {
        Some(t) if t < estimate.runs() => text.push_str(&format!(
            "; max_time ({}) is shorter than the first {} rounds are estimated to take: the comparisons may get no verdict",
            format_seconds(t.as_secs_f64()),
            exp.plan.warmup + exp.plan.repetitions.min()
        )),
        Some(t) if t < runs => text.push_str(&format!(
            "; max_time stops starting rounds after {}",
            format_seconds(t.as_secs_f64())
        )),
        _ => {}
    }
    Some(text)
}

/// What `check` says of the capacity searches.
struct Searched {
    lines: Vec<String>,
    /// Runs the searches take at most.
    most: u32,
    /// What the searches' fewest probes save on the estimate, which
    /// counts their most; `None` without a search.
    fewest: Option<std::time::Duration>,
}

/// Each capacity search on each target: its probes, fewest to most, and
/// what they cost.
fn searches_text(exp: &Experiment, estimate: &Estimate) -> Searched {
    let mut out = Searched {
        lines: Vec::new(),
        most: 0,
        fewest: None,
    };
    let per_probe = exp.plan.repetitions.min() + exp.plan.warmup;
    for (&(t, w), p) in &estimate.pairs {
        let (Some((few, many)), Some(c)) = (p.probes, exp.workloads[w].capacity.as_ref()) else {
            continue;
        };
        let unit = c.open_loop.achieved.unit;
        let cost = |n: u32| p.per_run.saturating_mul(n * per_probe);
        out.lines.push(format!(
            "  {} on {}: {} ≤ {} from {}{}, {}% apart: {few} to {many} probes of {per_probe} runs, ~{} per run: {} to {}",
            exp.workloads[w].name,
            exp.targets[t].name,
            c.latency.name(),
            format_seconds(c.max.as_secs_f64()),
            crate::report::format::format_value(c.start, unit),
            c.max_rate.map(|m| format!(" up to {}", crate::report::format::format_value(m, unit))).unwrap_or_default(),
            c.resolution * 100.0,
            format_seconds(p.per_run.as_secs_f64()),
            format_seconds(cost(few).as_secs_f64()),
            format_seconds(cost(many).as_secs_f64()),
        ));
        out.most += many * per_probe;
        let saved = cost(many).saturating_sub(cost(few));
        out.fewest = Some(out.fewest.unwrap_or_default().saturating_add(saved));
    }
    if !out.lines.is_empty() {
        out.lines
            .insert(0, "capacity searches (then, after the runs above):".into());
    }
    out
}

/// The store's past campaigns, if there is a store: what the estimate
/// learns from. A store that cannot be read gives none (check says so).
fn past_runs(db: &Path) -> Vec<PastCampaign> {
    if !db.exists() {
        return Vec::new();
    }
    match Store::open_for_reading(db).and_then(|s| s.past_timings(crate::runner::PAST_CAMPAIGNS)) {
        Ok(p) => p,
        Err(e) => {
            errln!("note: the estimate is modelled only: the store cannot be read ({e:#})");
            Vec::new()
        }
    }
}

/// What the estimate is made of: provisioning, runs, teardown, and how
/// many pairs' runs were learned from the store.
/// What `check` read of the host's load, when it matters: on a busy host
/// (the range's two ends are a quiet host and this load), or when the
/// last minute's average says busy and the load now does not (the
/// command before has ended: the estimate is at the load now).
fn load_text(reading: &Reading, span: &Span) -> Option<String> {
    let load = span.at_load.load;
    let said = reading.describe();
    if span.quiet.is_some() {
        return Some(format!(
            "host: {said}: the estimate runs from a quiet host to this load (the modelled pairs; the load may not last the campaign)"
        ));
    }
    let minute_busy = reading.minute.is_some_and(|m| m > load.cores);
    (minute_busy && !load.is_busy()).then(|| {
        format!("host: {said}: the load of the last minute has gone; estimated at the load now")
    })
}

fn estimate_text(e: &Estimate) -> String {
    let (recorded, scaled, modelled) = e.bases();
    let mut from = Vec::new();
    if recorded > 0 {
        from.push(format!("{recorded} as recorded"));
    }
    if scaled > 0 {
        from.push(format!("{scaled} learned from runs of the same kinds"));
    }
    if modelled > 0 {
        from.push(format!(
            "{modelled} modelled at load {:.1} on {} cores",
            e.load.average, e.load.cores
        ));
    }
    let setup = match e.setup_basis {
        Basis::Recorded { .. } => "as recorded",
        Basis::Scaled { .. } => "learned",
        Basis::Modelled => "modelled",
    };
    format!(
        "provisioning {} {setup}, runs {}, teardown {}; pairs: {}",
        format_seconds(e.setup.as_secs_f64()),
        format_seconds(e.runs().as_secs_f64()),
        format_seconds(e.teardown.as_secs_f64()),
        from.join(", ")
    )
}

/// The roots the experiment takes software from: each one's release and
/// size when it is ready, or that its first run builds it and how long
/// that takes (counted in the estimate; cached after). The lines and the
/// time the builds take.
fn roots_text(exp: &Experiment, estimate: &Estimate) -> (Vec<String>, std::time::Duration) {
    use crate::provision::root::{Cache, Root, RootSpec};
    let mut lines = Vec::new();
    let mut builds = std::time::Duration::ZERO;
    let needs = crate::runner::roots::needs(exp);
    for need in needs.iter().filter(|n| !n.spec.is_host()) {
        let label = format!("  {} for {}", need.spec, need.software.display());
        let ready = Root::ready(&need.spec, need.software);
        match (&need.spec, ready) {
            (RootSpec::Debian { suite }, Some(root)) => {
                let key = Cache::key(suite, need.software);
                let size = Cache::here()
                    .manifest(&key)
                    .map(|m| crate::params::units::format_bytes(m.bytes as f64))
                    .unwrap_or_default();
                lines.push(format!(
                    "{label}: {}, cached ({key}, {size})",
                    root.release()
                ));
            }
            (RootSpec::Debian { .. }, None) => {
                let took = crate::estimate::model::root_build(need.software, estimate.load.pace());
                builds += took;
                lines.push(format!(
                    "{label}: not built yet; the first run builds it with debootstrap, ~{} (counted below; cached after)",
                    format_seconds(took.as_secs_f64())
                ));
            }
            (_, Some(root)) => lines.push(format!("{label}: {}", root.release())),
            (_, None) => lines.push(format!("{label}: not usable (below)")),
        }
    }
    if !lines.is_empty() {
        lines.insert(0, "roots:".into());
    }
    (lines, builds)
}

/// The variants of each swept target and workload: how many, of which
/// values, and (for workloads) each one's estimated run time and runs.
fn variants_text(exp: &Experiment, estimate: &Estimate) -> Vec<String> {
    let mut out = target_variants(exp);
    out.extend(workload_variants(exp, estimate));
    if !out.is_empty() {
        out.insert(0, "variants:".into());
    }
    out
}

/// Each swept target table: its kind, what it stands on, its variants.
fn target_variants(exp: &Experiment) -> Vec<String> {
    let mut out = Vec::new();
    let mut families: Vec<&str> = Vec::new();
    for t in exp.targets.iter().filter(|t| !t.factors.is_empty()) {
        if families.contains(&t.family.as_str()) {
            continue;
        }
        families.push(&t.family);
        let variants: Vec<_> = exp
            .targets
            .iter()
            .filter(|x| x.family == t.family)
            .collect();
        // A table on one variant (`on = "d[size=128M]"`) names it.
        let on =
            t.on.map(|c| match variants.iter().all(|v| v.on == t.on) {
                true => format!(", on {}", exp.targets[c].name),
                false => format!(", on {}", exp.targets[c].family),
            })
            .unwrap_or_default();
        out.push(format!(
            "  target {} ({}{on}): {} variants",
            t.family,
            t.kind.name(),
            variants.len()
        ));
        out.extend(variants.iter().map(|v| format!("      {}", v.name)));
    }
    out
}

/// Each swept workload table: its kind, and each variant's estimated run
/// time and runs.
fn workload_variants(exp: &Experiment, estimate: &Estimate) -> Vec<String> {
    let mut out = Vec::new();
    let runs_per_pair = exp.plan.repetitions.min() + exp.plan.warmup;
    let mut families: Vec<&str> = Vec::new();
    for w in exp.workloads.iter().filter(|w| !w.factors.is_empty()) {
        if families.contains(&w.family.as_str()) {
            continue;
        }
        families.push(&w.family);
        let variants: Vec<_> = exp
            .workloads
            .iter()
            .filter(|x| x.family == w.family)
            .collect();
        out.push(format!(
            "  workload {} ({}): {} variants",
            w.family,
            w.kind.name(),
            variants.len()
        ));
        for v in variants {
            let pairs = exp.targets.iter().filter(|t| v.runs_on(t)).count() as u32;
            out.push(format!(
                "      {:<40} ~{} per run, {} runs",
                v.name,
                format_seconds(per_run(estimate, exp, v).as_secs_f64()),
                pairs * runs_per_pair
            ));
        }
    }
    out
}

/// A workload variant's longest estimated run over its targets.
fn per_run(
    estimate: &Estimate,
    exp: &Experiment,
    w: &crate::experiment::WorkloadSpec,
) -> std::time::Duration {
    let Some(wi) = exp.workloads.iter().position(|x| x.name == w.name) else {
        return w.config.estimate();
    };
    (0..exp.targets.len())
        .map(|t| estimate.per_run(t, wi))
        .max()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::Load;

    /// Seed 003's check at load 11.6 said 11m21s; its campaign took 4m05s
    /// (/work/stores/003), and at load 3.66 left by the command before,
    /// 140 s of a 67.6 s campaign. On a busy host check gives the range
    /// and says the load it read; after a busy minute on a host quiet now,
    /// the one figure at the load now, and why.
    #[test]
    fn a_busy_check_gives_a_range_and_a_stale_minute_does_not() {
        use crate::estimate::load::{sample, Recorded};
        let src = include_str!("../../examples/003-iozone-gluster-vs-nfs.toml");
        let exp = crate::experiment::parse_experiment("003.toml", src).unwrap();
        let mut busy = Recorded::steady(2, 4.0, 4.0, 90.0);
        let reading = sample(&mut busy);
        let span = Span::of(&exp, &[], true, reading.load());
        let quiet = span.quiet.as_ref().expect("a range at load 4");
        assert!(quiet.total() < span.at_load.total() / 2 * 3 / 2);
        let line = load_text(&reading, &span).unwrap();
        assert!(
            line.starts_with("host: load 4.0 now (6 samples over 0.5 s), 4.0 over the last minute; tasks stalled 90%"),
            "{line}"
        );
        let mut after = Recorded::steady(2, 0.0, 3.66, 0.4);
        let reading = sample(&mut after);
        let span = Span::of(&exp, &[], true, reading.load());
        assert!(span.quiet.is_none());
        assert_eq!(span.at_load.load.pace(), Load::REFERENCE.quiet().pace());
        let line = load_text(&reading, &span).unwrap();
        assert!(
            line.ends_with("3.7 over the last minute; tasks stalled 0% of the window (CPU 0%, I/O 0%; 0% of the last 10 s): the load of the last minute has gone; estimated at the load now"),
            "{line}"
        );
        // A quiet minute and a quiet window: nothing to say.
        let mut quiet = Recorded::steady(2, 0.0, 0.3, 0.0);
        let reading = sample(&mut quiet);
        assert_eq!(
            load_text(&reading, &Span::of(&exp, &[], true, reading.load())),
            None
        );
    }
}

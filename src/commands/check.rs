//! `storlab check EXPERIMENT`: validate, print the planned runs with an
//! estimate learned from the store's past runs, and say what `run` would
//! refuse on this host.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use super::EXIT_INVALID;
use crate::cli::{CheckArgs, Global};
use crate::estimate::{Basis, Estimate};
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
    let (past, load) = (past_runs(&g.db), crate::estimate::Load::now());
    let estimate = Estimate::of(exp, &past, root, load);
    let quiet = Estimate::of(exp, &past, root, load.quiet());
    print_head(exp, &estimate);
    let (roots, builds) = roots_text(exp, &estimate);
    for line in roots {
        outln!("{line}");
    }
    print_runs(exp, &estimate, builds);
    if let Some(line) = quiet_text(&estimate, &quiet) {
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
fn print_runs(exp: &Experiment, estimate: &Estimate, builds: std::time::Duration) {
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
    let total = estimate.total() + builds;
    let total = match searched.fewest {
        Some(fewest) => format!(
            "at most {} runs ({} of them probes), estimated {} to {}",
            runs.len() as u32 + searched.most,
            searched.most,
            format_seconds(total.saturating_sub(fewest).as_secs_f64()),
            format_seconds(total.as_secs_f64()),
        ),
        None => format!(
            "{} runs, estimated {}",
            runs.len(),
            format_seconds(total.as_secs_f64())
        ),
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
    let per_pair = |reps: u32| f64::from(exp.plan.warmup + reps);
    let scale = per_pair(max) / per_pair(exp.plan.repetitions.min()).max(1.0);
    // Saturating: a plan's largest values must not panic `check`.
    let runs = crate::estimate::learned::scaled(estimate.runs(), scale);
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
/// What the campaign would take on a quiet host, when the load now
/// makes the estimate much longer: the modelled pairs scale with the
/// load, which a campaign of minutes may not keep (the seed examples'
/// runs took 0.5–2× their check's estimate from one hour to the next);
/// the recorded ones carry the load they ran at.
fn quiet_text(at_load: &Estimate, quiet: &Estimate) -> Option<String> {
    let (busy, calm) = (at_load.total(), quiet.total());
    (calm.as_secs_f64() < 0.85 * busy.as_secs_f64()).then(|| {
        format!(
            "on a quiet host: ~{} (the modelled pairs at load 0 instead of {:.1}; the estimate above is the busy end)",
            format_seconds(calm.as_secs_f64()),
            at_load.load.average
        )
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
    /// (/work/stores/003). On a busy host check says the quiet end too; at
    /// a load its cores absorb, the one figure.
    #[test]
    fn a_busy_check_gives_the_quiet_end_too() {
        let src = include_str!("../../examples/003-iozone-gluster-vs-nfs.toml");
        let exp = crate::experiment::parse_experiment("003.toml", src).unwrap();
        let at = |average| {
            Estimate::of(
                &exp,
                &[],
                true,
                Load {
                    average,
                    cores: 2.0,
                },
            )
        };
        let busy = at(11.6);
        let line = quiet_text(&busy, &at(0.0)).expect("a range at load 11.6");
        assert!(line.starts_with("on a quiet host: ~"), "{line}");
        assert!(line.contains("instead of 11.6"), "{line}");
        assert!(at(0.0).total() < busy.total() / 2);
        assert_eq!(quiet_text(&at(0.5), &at(0.0)), None);
        assert_eq!(
            Load {
                average: 9.0,
                cores: 2.0
            }
            .quiet()
            .pace(),
            at(0.0).load.pace()
        );
    }
}

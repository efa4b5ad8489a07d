//! The warnings at a glance: one line per kind with how many runs carry
//! it, where, and the range of the figure that raised it — "noisy host:
//! 17 of 42 runs, every workload on both targets; others used 25.0–66.7%
//! of the host's CPU" — for the terminal (after the summary) and the
//! report's top. The full list, each warning with its evidence, stays in
//! the Warnings section and `storlab show --warnings`.

use crate::analysis::model::{runs_text, Report};
use crate::analysis::warnings::{Evidence, KindCount};
use crate::analysis::CampaignAnalysis;
use crate::metric::catalogue as m;
use crate::report::document::Section;
use crate::warning::WarningKind;

/// The class of the section holding the lines by kind.
pub const BY_KIND: &str = "warnings-by-kind";

/// `16 warnings by kind, …:` and a line per kind (`label: what`); none
/// without warnings.
pub fn by_kind_section(a: &CampaignAnalysis) -> Section {
    let counts = &a.by_kind;
    let mut s = Section::untitled(2).with_class(BY_KIND);
    let total: usize = counts.iter().map(|k| k.lines).sum();
    if total == 0 {
        return s;
    }
    s.text(match total {
        1 => "1 warning, with its evidence under Warnings at the end:".to_string(),
        n => format!("{n} warnings by kind, each with its evidence under Warnings at the end:"),
    });
    s.list(counts.iter().map(|k| kind_line(a, k)).collect());
    s
}

/// `label: count, where; evidence`.
pub fn kind_line(a: &CampaignAnalysis, k: &KindCount) -> String {
    let r = &a.model;
    let mut what = Vec::new();
    if !k.runs.is_empty() {
        what.push(format!("{} of {} runs", k.runs.len(), a.about.runs.all));
    }
    let workloads: Vec<&str> = r.workloads.iter().map(|w| w.name.as_str()).collect();
    // The targets runs were made on, failed ones too: not a Gluster
    // volume that only carries the VM disks the runs used.
    let ran_on = |t: &str| a.about.targets.iter().any(|x| x.name == t && x.ran);
    let targets: Vec<&str> = r
        .targets
        .iter()
        .map(String::as_str)
        .filter(|t| ran_on(t))
        .collect();
    if let Some(p) = pairs_text(&workloads, &targets, &k.pairs) {
        what.push(p);
    }
    if what.is_empty() {
        what.push(match k.lines {
            1 => "1 line".into(),
            n => format!("{n} lines"),
        });
    }
    let mut line = format!("{}: {}", k.kind.label(), what.join(", "));
    let evidence: Vec<String> = k.evidence.iter().filter_map(evidence_text).collect();
    if !evidence.is_empty() {
        line.push_str(&format!("; {}", evidence.join("; ")));
    } else if k.kind == WarningKind::Inconclusive {
        line.push_str(&settle_text(r));
    }
    line
}

/// Which workloads on which targets, as briefly as it can be said:
/// `randread-4k on cwd`, `seqwrite-1m, smallfiles-4k on tmpfs`, `every
/// workload on both targets`, `5 workloads on cwd; oltp-sqlite on tmpfs`,
/// `14 pairs on 6 of 6 targets`.
fn pairs_text(workloads: &[&str], targets: &[&str], pairs: &[(String, String)]) -> Option<String> {
    if pairs.is_empty() {
        return None;
    }
    let on_target = |t: &str| -> Vec<&str> {
        pairs
            .iter()
            .filter(|(_, pt)| pt == t)
            .map(|(w, _)| w.as_str())
            .collect()
    };
    let names = |ws: &[&str]| -> String {
        match ws.len() {
            n if n == workloads.len() && n > 1 => "every workload".into(),
            n if n > 3 => format!("{n} workloads"),
            _ => ws.join(", "),
        }
    };
    let groups: Vec<(&str, Vec<&str>)> = targets
        .iter()
        .map(|t| (*t, on_target(t)))
        .filter(|(_, ws)| !ws.is_empty())
        .collect();
    let same = groups.len() == targets.len()
        && targets.len() > 1
        && groups.windows(2).all(|g| g[0].1 == g[1].1);
    if same {
        let on = if targets.len() == 2 {
            "both targets"
        } else {
            "every target"
        };
        return Some(format!("{} on {on}", names(&groups[0].1)));
    }
    // More targets than a line can name (a study's variants): a count;
    // `show --warnings` and the report's folded list name every pair.
    if groups.len() > 3 {
        return Some(format!(
            "{} pairs on {} of {} targets",
            pairs.len(),
            groups.len(),
            targets.len()
        ));
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(t, ws)| format!("{} on {t}", names(ws)))
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The range of one figure a kind's check judged.
fn evidence_text(e: &Evidence) -> Option<String> {
    let span = |scale: f64, digits: usize| {
        let (lo, hi) = (e.low * scale, e.high * scale);
        if format!("{lo:.digits$}") == format!("{hi:.digits$}") {
            format!("{hi:.digits$}%")
        } else {
            format!("{lo:.digits$}–{hi:.digits$}%")
        }
    };
    Some(match e.metric.name {
        n if n == m::CPU_OTHERS_PCT.name => {
            format!("others used {} of the host's CPU", span(1.0, 1))
        }
        n if n == m::CPU_STEAL_PCT.name => {
            format!("the hypervisor took {} (steal)", span(1.0, 1))
        }
        n if n == m::PROC_BUSIEST_THREAD_PCT.name => {
            format!("a thread at {} of a core", span(1.0, 1))
        }
        n if n == m::DEV_READ_RATIO.name => {
            format!("the device read {} of what was read", span(100.0, 1))
        }
        _ => return None,
    })
}

/// `; ±5% needs about 203–857 runs`: what would settle the inconclusive
/// comparisons.
fn settle_text(r: &Report) -> String {
    let settles: Vec<_> = r
        .workloads
        .iter()
        .filter_map(|w| w.primary_metric())
        .flat_map(|m| m.targets.iter().filter_map(|t| t.settle))
        .collect();
    let Some(first) = settles.first() else {
        return String::new();
    };
    let known: Vec<usize> = settles.iter().filter_map(|s| s.runs).collect();
    let runs = match (known.iter().min(), known.iter().max()) {
        (Some(lo), Some(hi)) if lo != hi && known.len() == settles.len() => {
            format!("about {lo}–{hi} runs")
        }
        (Some(_), _) if known.len() == settles.len() => format!("{} runs", runs_text(first.runs)),
        _ => format!("{} runs", runs_text(None)),
    };
    format!("; ±{}% needs {runs}", first.pct)
}

#[cfg(test)]
mod tests {
    use super::pairs_text;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(w, t)| (w.to_string(), t.to_string()))
            .collect()
    }

    #[test]
    fn where_a_kind_was_raised_reads_as_a_line() {
        let ws = ["a", "b"];
        let every = pairs(&[
            ("a", "x"),
            ("b", "x"),
            ("a", "y"),
            ("b", "y"),
            ("a", "z"),
            ("b", "z"),
        ]);
        assert_eq!(
            pairs_text(&ws, &["x", "y", "z"], &every).unwrap(),
            "every workload on every target"
        );
        assert_eq!(
            pairs_text(&ws, &["x", "y"], &every[..4]).unwrap(),
            "every workload on both targets"
        );
        assert_eq!(
            pairs_text(&ws, &["x", "y"], &pairs(&[("a", "x"), ("b", "y")])).unwrap(),
            "a on x; b on y"
        );
        // A study's six variants: a count, not six clauses.
        let ts = ["t1", "t2", "t3", "t4", "t5", "t6"];
        let some = pairs(&[
            ("a", "t1"),
            ("b", "t2"),
            ("a", "t3"),
            ("b", "t4"),
            ("a", "t4"),
        ]);
        assert_eq!(
            pairs_text(&ws, &ts, &some).unwrap(),
            "5 pairs on 4 of 6 targets"
        );
    }
}

//! "Where the reads came from", beside "Where the latency went": per
//! workload and target the sentence [`crate::analysis::reads`] says, with
//! a stacked bar of the layers in the order the sentence names them
//! (`storlab run` and `show` print those), then in the report a bar per
//! layer with what it was asked and served, the layers that were not
//! measured and why, and where the layers do not add up to what the
//! workload read, what made the gap. For a matrix, each read test's share
//! per layer against the file size (where a cache stops serving) and a
//! map of the layer that served most of each cell.

use super::{Context, Contributor};
use crate::analysis::matrix::KIND as MATRIX;
use crate::analysis::model::WorkloadReport;
use crate::analysis::reads::{and_list, pct, Share, Waterfall, RUN_ONLY_WHY};
use crate::metric::labels::{FILE_SIZE, RECORD_SIZE, TEST};
use crate::metric::layer::Layer;
use crate::params::units::format_bytes;
use crate::report::document::{Chart, Section};
use crate::report::svg::{target_color, Line, LineChart};
use crate::report::table::Table;

/// The section's title.
pub const TITLE: &str = "Where the reads came from";

/// Glyphs of a stacked bar, one per layer in order.
const GLYPHS: [char; 5] = ['█', '▓', '▒', '░', '▪'];
/// Characters of a whole bar.
const BAR: usize = 20;

pub struct Reads;

impl Contributor for Reads {
    fn summary(&self, cx: Context, w: &WorkloadReport) -> Vec<Section> {
        let found = of_workload(cx, w);
        super::listed(TITLE, found.iter().map(|f| summary_line(f)).collect())
    }

    fn sections(&self, cx: Context, w: &WorkloadReport) -> Vec<Section> {
        let found = of_workload(cx, w);
        if found.is_empty() {
            return Vec::new();
        }
        let mut s = Section::new(3, TITLE);
        s.text(
            "Each layer of the target's stack that a read passes through, top to bottom, with what it was asked and what it served itself (what it was asked less what it passed down), from each layer's own counters read before and after every measured run and summed over them: the workload's, PostgreSQL's (pg_stat_database), the FUSE client's io-stats, each brick's (gluster volume profile), a FUSE daemon's /proc/PID/io, /proc/diskstats (storlab's docs/methodology.md, “Where the reads came from”). A layer's share is its hit ratio times the share of the reads that reached it.",
        );
        if w.kind == MATRIX {
            s.text("For a matrix, the device's figure is what it read during the reading tests, when the layers above it were asked: over the whole run it also counts what the writing tests and other processes read.");
        }
        s.list(found.iter().map(|f| sentence(f)).collect());
        s.table(layers_table(&found));
        let notes: Vec<String> = found.iter().flat_map(|f| notes(f)).collect();
        if !notes.is_empty() {
            s.list(notes);
        }
        if let Some(note) = (w.kind == MATRIX)
            .then(|| run_only_note(cx, &found))
            .flatten()
        {
            s.text(note);
        }
        let mut out = vec![s];
        if w.kind == MATRIX {
            out.extend(matrix_sections(cx, w));
        }
        out
    }
}

/// The waterfalls of `w`, in the report's target order.
fn of_workload<'a>(cx: Context<'a>, w: &WorkloadReport) -> Vec<&'a Waterfall> {
    (cx.analysis.model.targets.iter())
        .filter_map(|t| cx.analysis.reads_pair(&w.name, t))
        .collect()
}

/// `w on t: 71% from the page cache, …`.
fn sentence(f: &Waterfall) -> String {
    format!("{} on {}: {}", f.workload, f.target, f.sentence())
}

/// The sentence after a stacked bar of its layers.
fn summary_line(f: &Waterfall) -> String {
    format!(
        "{} on {}: {} {}",
        f.workload,
        f.target,
        stacked(&f.layers),
        f.sentence()
    )
}

/// One bar of [`BAR`] characters, each layer's share in its glyph, in
/// order (the sentence names them in the same order).
fn stacked(layers: &[Share]) -> String {
    let mut out = String::new();
    let mut done = 0.0;
    let mut drawn = 0;
    for (i, s) in layers.iter().filter(|s| s.share > 0.0).enumerate() {
        done += s.share;
        let upto = ((done * BAR as f64).round() as usize).min(BAR);
        let glyph = GLYPHS[i.min(GLYPHS.len() - 1)];
        out.extend(std::iter::repeat(glyph).take(upto.saturating_sub(drawn)));
        drawn = drawn.max(upto);
    }
    out.extend(std::iter::repeat(' ').take(BAR - drawn));
    format!("▕{out}▏")
}

/// A bar of `share` (0–1) in eighths of a character.
fn bar(share: f64) -> String {
    const PARTS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    let eighths = (share.clamp(0.0, 1.0) * BAR as f64 * 8.0).round() as usize;
    let mut out = "█".repeat(eighths / 8);
    out.push_str(PARTS[eighths % 8]);
    if out.is_empty() && share > 0.0 {
        out.push('▏');
    }
    out
}

/// A row per layer of every target: its share as a bar and in %, and what
/// it was asked and served.
fn layers_table(found: &[&Waterfall]) -> Table {
    let mut t = Table::new(
        &["target", "from", "share", "", "asked", "served", "requests"],
        &[false, false, false, true, true, true, true],
    );
    t.droppable = vec![6, 4];
    for f in found {
        for s in &f.layers {
            t.push(vec![
                f.target.clone(),
                s.words.clone(),
                bar(s.share),
                pct(s.share),
                format_bytes(s.asked_bytes / f.runs as f64),
                format_bytes(s.served_bytes / f.runs as f64),
                s.requests.map_or("—".into(), |r| {
                    crate::metric::format::si(r / f.runs as f64)
                }),
            ]);
        }
    }
    t
}

/// What was not measured, and the gap where the layers do not add up.
fn notes(f: &Waterfall) -> Vec<String> {
    let mut out: Vec<String> = f
        .not_measured
        .iter()
        .map(|(l, why)| {
            format!(
                "{} on {}: {} not measured ({why})",
                f.workload,
                f.target,
                l.words()
            )
        })
        .collect();
    if let Some(gap) = f.balance.gap_sentence(&f.layers) {
        out.push(format!("{} on {}: {gap}", f.workload, f.target));
    }
    out
}

/// Where a matrix's cells do not tell apart layers its whole run does
/// ([`crate::analysis::reads::Reads::run_only`]): which, why, and what a
/// cell does say, once for the targets it holds for, instead of a map per
/// test whose every cell would name the same joined layers.
fn run_only_note(cx: Context, found: &[&Waterfall]) -> Option<String> {
    let reads = &cx.analysis.reads;
    let of = |f: &&&Waterfall| reads.run_only(&f.workload, &f.target);
    let joined: Vec<&Waterfall> = found
        .iter()
        .filter(|f| !of(f).is_empty())
        .copied()
        .collect();
    let first = joined.first()?;
    let words = |layers: &mut dyn Iterator<Item = Layer>| -> String {
        let mut all: Vec<Layer> = layers.collect();
        all.sort();
        all.dedup();
        and_list(&all.iter().map(|l| l.words()).collect::<Vec<_>>())
    };
    let mut layers: Vec<Layer> = joined.iter().flat_map(|f| of(&f)).collect();
    layers.dedup();
    let verb = if layers.len() == 1 { "is" } else { "are" };
    let run_only = words(&mut layers.into_iter());
    let targets: Vec<&str> = joined.iter().map(|f| f.target.as_str()).collect();
    let mut out = format!(
        "{} on {}: {run_only} {verb} told apart over the whole run only (the table above), not per cell: {RUN_ONLY_WHY}.",
        first.workload,
        and_list(&targets),
    );
    if joined
        .iter()
        .all(|f| reads.cells_tell_only_memory(&f.workload, &f.target))
    {
        let layers = || joined.iter().flat_map(|f| f.layers.iter());
        let memory = words(
            &mut layers()
                .flat_map(|s| s.layers.clone())
                .filter(|l| l.is_memory()),
        );
        let mut below: Vec<&str> = layers()
            .filter(|s| !s.layers.iter().all(|l| l.is_memory()))
            .map(|s| s.words.as_str())
            .collect();
        below.dedup();
        out.push_str(&format!(
            " Per cell, the reads came from memory ({memory} together) or from {}, as the matrix's maps of the % of each cell's bytes the device read show: no map of the layer that served each cell is drawn here.",
            and_list(&below)
        ));
    }
    Some(out)
}

/// Per read test and target, each layer's share against the file size
/// (every record size together), and the layer that served most of each
/// cell.
fn matrix_sections(cx: Context, w: &WorkloadReport) -> Vec<Section> {
    let mut out = Vec::new();
    for t in &cx.analysis.model.targets {
        // Cells that tell only memory from the device: the matrix's map of
        // the share the device read says it; [`run_only_note`] says why.
        if cx.analysis.reads.cells_tell_only_memory(&w.name, t) {
            continue;
        }
        let files: Vec<&Waterfall> = (cx.analysis.reads.files.iter())
            .filter(|f| f.workload == w.name && &f.target == t)
            .collect();
        let mut tests: Vec<&str> = files.iter().filter_map(|f| f.cell.get(&TEST)).collect();
        tests.dedup();
        for test in tests {
            let of_test: Vec<&Waterfall> = (files.iter().copied())
                .filter(|f| f.cell.get(&TEST) == Some(test))
                .collect();
            let Some((chart, table)) = curve(&w.name, t, test, &of_test) else {
                continue;
            };
            let mut s = Section::new(
                4,
                format!("{test} on {t}: where the reads came from by file size"),
            );
            s.chart(Chart::Line(chart));
            s.table(table);
            if let Some(map) = cell_map(cx, w, t, test) {
                s.text(format!(
                    "The layer that served most of each {test} cell's reads, and its share (file size × record size):"
                ));
                s.table(map);
            }
            out.push(s);
        }
    }
    out
}

/// Each layer's share (%) against the file size, a line per layer.
fn curve(
    workload: &str,
    target: &str,
    test: &str,
    files: &[&Waterfall],
) -> Option<(LineChart, Table)> {
    let mut labels: Vec<(String, String)> = Vec::new();
    for f in files {
        for s in &f.layers {
            if !labels.iter().any(|(l, _)| *l == s.label) {
                labels.push((s.label.clone(), s.words.clone()));
            }
        }
    }
    if files.len() < 2 || labels.is_empty() {
        return None;
    }
    let size = |f: &Waterfall| f.cell.bytes(&FILE_SIZE).unwrap_or(0) as f64;
    let share = |f: &Waterfall, label: &str| {
        100.0
            * f.layers
                .iter()
                .filter(|s| s.label == label)
                .map(|s| s.share)
                .sum::<f64>()
    };
    let lines = labels
        .iter()
        .enumerate()
        .map(|(i, (label, words))| Line {
            label: words.clone(),
            color: target_color(i),
            points: files.iter().map(|f| (size(f), share(f, label))).collect(),
        })
        .collect();
    let chart = LineChart {
        title: format!("{workload} {test} on {target}: share of the reads each layer served"),
        x_label: "file size (bytes)".into(),
        y_label: "share of the reads (%)".into(),
        lines,
        log_y: false,
        log_x: true,
        x_ticks: Vec::new(),
    };
    let mut header = vec!["file size".to_string()];
    header.extend(labels.iter().map(|(_, w)| w.clone()));
    let right = vec![true; header.len()];
    let mut table = Table {
        header,
        right,
        ..Table::default()
    };
    for f in files {
        let mut row = vec![format_bytes(size(f))];
        row.extend(labels.iter().map(|(l, _)| pct(share(f, l) / 100.0)));
        table.push(row);
    }
    Some((chart, table))
}

/// Rows: file sizes; columns: record sizes; a cell: the layer that served
/// most of the cell's reads, and its share.
fn cell_map(cx: Context, w: &WorkloadReport, target: &str, test: &str) -> Option<Table> {
    let cells: Vec<&Waterfall> = cx
        .analysis
        .reads
        .cells_of(&w.name, target)
        .filter(|c| c.cell.get(&TEST) == Some(test))
        .collect();
    let mut files: Vec<u64> = cells
        .iter()
        .filter_map(|c| c.cell.bytes(&FILE_SIZE))
        .collect();
    let mut records: Vec<u64> = cells
        .iter()
        .filter_map(|c| c.cell.bytes(&RECORD_SIZE))
        .collect();
    files.sort();
    files.dedup();
    records.sort();
    records.dedup();
    if cells.is_empty() {
        return None;
    }
    let mut header = vec!["file \\ record".to_string()];
    header.extend(records.iter().map(|r| format_bytes(*r as f64)));
    let right = vec![false; header.len()];
    let mut t = Table {
        header,
        right,
        ..Table::default()
    };
    for f in &files {
        let mut row = vec![format_bytes(*f as f64)];
        for r in &records {
            let c = cells.iter().find(|c| {
                c.cell.bytes(&FILE_SIZE) == Some(*f) && c.cell.bytes(&RECORD_SIZE) == Some(*r)
            });
            row.push(match c.and_then(|c| c.largest()) {
                Some(s) => format!("{} {}", s.words, pct(s.share)),
                None => "—".into(),
            });
        }
        t.push(row);
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(label: &str, share: f64) -> Share {
        Share {
            label: label.into(),
            layers: vec![Layer::from_name(label).unwrap()],
            words: label.into(),
            asked_bytes: 0.0,
            served_bytes: 0.0,
            requests: None,
            share,
        }
    }

    #[test]
    fn a_stacked_bar_gives_each_layer_its_glyph_in_order() {
        let s = stacked(&[
            share("page_cache", 0.5),
            share("gluster_client", 0.25),
            share("device", 0.25),
        ]);
        assert_eq!(s, "▕██████████▓▓▓▓▓▒▒▒▒▒▏");
        // A layer that served nothing takes no glyph; the bar is whole.
        let s = stacked(&[share("page_cache", 0.0), share("device", 1.0)]);
        assert_eq!(s, format!("▕{}▏", "█".repeat(BAR)));
    }

    #[test]
    fn a_bar_is_its_share_of_the_width_in_eighths() {
        assert_eq!(bar(1.0), "█".repeat(BAR));
        assert_eq!(bar(0.5), "█".repeat(BAR / 2));
        assert_eq!(bar(0.0), "");
        assert_eq!(bar(0.001), "▏");
        assert_eq!(bar(0.0125), "▎");
    }
}

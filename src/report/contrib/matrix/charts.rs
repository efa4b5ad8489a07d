//! Heat map descriptions of one test of a matrix: the targets' mean
//! throughput as one group of maps on one colour scale with one colour bar
//! (one colour, one value, in every panel) — logarithmic when the test's
//! values span more than a decade, where a linear scale would flatten the
//! slower target into one colour; likewise the share of reads the devices
//! delivered, on one 0–100 scale; per non-baseline target, the % difference
//! from the baseline on one diverging scale, cells that are not significant
//! hatched. And, as iozone's 2-D charts, per target one line per record
//! size against file size: the mean throughput, and the mean latency of one
//! operation (seed 003's write and read latency charts).

use super::tables::{size_text, Unit};
use crate::analysis::matrix::{MatrixReport, Rows, TargetMatrix, TestMatrix};
use crate::analysis::model::MIN_EFFECT_PCT;
use crate::metric::Unit as StoredUnit;
use crate::report::svg::{sequential_color, Curve, CurveChart, CurvePoint, HeatMap, HeatMapGroup};
use crate::report::text::display_unit;

/// Legend of the cells no run measured.
pub const MISSING_LEGEND: &str = "no cell: record larger than file";

/// Legend of the hatched cells of a difference map.
pub fn muted_legend() -> String {
    format!("hatched: not significant (p ≥ 0.05 or under {MIN_EFFECT_PCT}%)")
}

fn base(m: &MatrixReport, title: String, value_label: String) -> HeatMap {
    HeatMap {
        title,
        x_label: "record size".into(),
        y_label: "file size".into(),
        x_ticks: m.axes.records.iter().map(|&r| size_text(r)).collect(),
        y_ticks: m.axes.files.iter().map(|&f| size_text(f)).collect(),
        cells: Vec::new(),
        value_label,
        diverging: false,
        log: false,
        range: None,
        muted: Vec::new(),
        muted_label: String::new(),
        missing_label: MISSING_LEGEND.into(),
    }
}

/// `rows` with `f` applied to each present cell.
fn map<T, U>(rows: &Rows<T>, f: impl Fn(&T) -> U) -> Rows<U> {
    rows.iter()
        .map(|r| r.iter().map(|c| c.as_ref().map(&f)).collect())
        .collect()
}

/// Smallest and largest `value` of the present cells of every target's `rows`.
fn extent<T>(
    t: &TestMatrix,
    rows: impl Fn(&TargetMatrix) -> Option<&Rows<T>>,
    value: impl Fn(&T) -> f64,
) -> Option<(f64, f64)> {
    let mut out: Option<(f64, f64)> = None;
    for v in t
        .targets
        .iter()
        .filter_map(rows)
        .flatten()
        .flatten()
        .flatten()
    {
        let v = value(v);
        if v.is_finite() {
            out = Some(out.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))));
        }
    }
    out
}

/// Values spanning more than this ratio are drawn on a log scale.
const DECADE: f64 = 10.0;

/// Mean throughput of `t` on each target, in `unit`: one panel per target
/// on one colour scale, logarithmic when the values span more than a decade.
pub fn throughput_maps(m: &MatrixReport, t: &TestMatrix, unit: &Unit) -> HeatMapGroup {
    let shared = extent(t, |x| Some(&x.means), |v| v / unit.scale);
    let log = shared.is_some_and(|(lo, hi)| spans_decade(lo, hi));
    let maps = t
        .targets
        .iter()
        .map(|x| {
            let title = format!("on {}, mean of {} run(s)", x.target, x.runs);
            let mut h = base(m, title, format!("throughput ({})", unit.name));
            h.cells = map(&x.means, |v| v / unit.scale);
            h.range = shared;
            h.log = log;
            h
        })
        .collect();
    let scale = if log { "one log scale" } else { "one scale" };
    HeatMapGroup {
        title: format!(
            "{}: {}, mean throughput per target ({scale})",
            m.workload,
            t.test.name()
        ),
        maps,
    }
}

/// Whether positive values from `lo` to `hi` span more than a decade.
fn spans_decade(lo: f64, hi: f64) -> bool {
    lo > 0.0 && hi / lo > DECADE
}

/// What a line chart of one test on one target draws: the mean throughput
/// (bytes/s) or the mean latency of one operation (ns) of each cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measure {
    Throughput,
    Latency,
}

/// Where viridis ends for the largest record: its last tenth is a pale
/// yellow that a line on white would lose.
const LAST_RECORD_COLOR: f64 = 0.88;

/// `t` on target `x` as lines against file size (log x, the file sizes
/// as ticks), one per record size from dark (small records) to green
/// (large ones), in the unit that reads best for this chart's values (a
/// target's panels are drawn apart, as the seed's were); the y axis is
/// logarithmic when the values span more than a decade. `None` when no
/// cell of `x` has the measure.
pub fn file_size_lines(
    m: &MatrixReport,
    t: &TestMatrix,
    x: &TargetMatrix,
    measure: Measure,
) -> Option<CurveChart> {
    let (rows, stored) = match measure {
        Measure::Throughput => (&x.means, StoredUnit::BytesPerSec),
        Measure::Latency => (&x.latency, StoredUnit::Nanoseconds),
    };
    let (lo, hi) = rows
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .fold(None, |acc: Option<(f64, f64)>, v| {
            Some(acc.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
        })?;
    let (scale, unit) = display_unit(stored, hi);
    let records = m.axes.records.len();
    let curves: Vec<Curve> = m
        .axes
        .records
        .iter()
        .enumerate()
        .map(|(col, &record)| Curve {
            label: format!("{} records", size_text(record)),
            color: sequential_color(
                LAST_RECORD_COLOR * col as f64 / records.saturating_sub(1).max(1) as f64,
            ),
            points: m
                .axes
                .files
                .iter()
                .enumerate()
                .filter_map(|(row, &file)| {
                    let v = rows.get(row)?.get(col).copied().flatten()?;
                    Some(CurvePoint {
                        x: file as f64,
                        y: v / scale,
                        ci: None,
                    })
                })
                .collect(),
        })
        .filter(|c| !c.points.is_empty())
        .collect();
    let (what, y_label) = match measure {
        Measure::Throughput => ("mean throughput", format!("throughput ({unit})")),
        Measure::Latency => (
            "mean latency of one operation",
            format!("latency per record ({unit})"),
        ),
    };
    Some(CurveChart {
        title: format!("{} on {}: {what}", t.test.name(), x.target),
        x_label: format!("file size (mean of {} run(s))", x.runs),
        y_label,
        x_ticks: m
            .axes
            .files
            .iter()
            .map(|&f| (f as f64, size_text(f)))
            .collect(),
        log_x: true,
        log_y: spans_decade(lo, hi),
        curves,
    })
}

/// % difference of `t` from the baseline on each other target, on one
/// diverging scale; cells that are not significant are hatched.
pub fn difference_maps(m: &MatrixReport, t: &TestMatrix) -> Vec<HeatMap> {
    let range = extent(t, |x| x.diffs.as_ref(), |d| d.diff_pct);
    t.targets
        .iter()
        .filter_map(|x| {
            let diffs = x.diffs.as_ref()?;
            let title = format!(
                "{}: {} on {} against {}",
                m.workload,
                t.test.name(),
                x.target,
                m.baseline
            );
            let mut h = base(m, title, "% difference in throughput".into());
            h.diverging = true;
            h.cells = map(diffs, |d| d.diff_pct);
            h.muted = diffs
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|d| d.is_some_and(|d| !d.significant))
                        .collect()
                })
                .collect();
            h.muted_label = muted_legend();
            h.range = range;
            Some(h)
        })
        .collect()
}

/// Per target, the share of `t`'s reads its devices delivered (%), one
/// panel each on one 0–100 scale: the page cache's boundary shows as the
/// line between pale and dark cells. None for a writing test or without
/// device reads.
pub fn device_maps(m: &MatrixReport, t: &TestMatrix) -> Option<HeatMapGroup> {
    if t.test.writes() {
        return None;
    }
    let maps: Vec<HeatMap> = t
        .targets
        .iter()
        .filter(|x| x.has_device_reads())
        .map(|x| {
            let title = format!("on {}", x.target);
            let mut h = base(m, title, "% of bytes read from the device".into());
            h.cells = map(&x.device_read, |r| 100.0 * r);
            h.range = Some((0.0, 100.0));
            h
        })
        .collect();
    (!maps.is_empty()).then(|| HeatMapGroup {
        title: format!(
            "{}: {}, share of the reads the device delivered",
            m.workload,
            t.test.name()
        ),
        maps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::matrix::{Axes, CellDiff};
    use crate::metric::matrix::Test;

    fn test_matrix() -> (MatrixReport, TestMatrix) {
        const K: u64 = 1024;
        let axes = Axes::of_cells(
            Test::Read,
            &[(64 * K, 4 * K), (128 * K, 4 * K), (128 * K, 128 * K)],
        );
        let d = |diff_pct, significant| {
            Some(CellDiff {
                diff_pct,
                p_value: Some(0.01),
                significant,
            })
        };
        let mib = 1048576.0;
        let a = TargetMatrix {
            target: "a".into(),
            runs: 3,
            means: vec![
                vec![Some(10.0 * mib), None],
                vec![Some(20.0 * mib), Some(30.0 * mib)],
            ],
            diffs: None,
            // 64K files came from memory, 128K ones from the device.
            device_read: vec![vec![Some(0.02), None], vec![Some(0.97), Some(1.0)]],
            latency: Vec::new(),
        };
        let b = TargetMatrix {
            target: "b".into(),
            runs: 3,
            means: vec![
                vec![Some(5.0 * mib), None],
                vec![Some(40.0 * mib), Some(30.3 * mib)],
            ],
            device_read: Vec::new(),
            latency: Vec::new(),
            diffs: Some(vec![
                vec![d(-50.0, true), None],
                vec![d(100.0, true), d(1.0, false)],
            ]),
        };
        let t = TestMatrix {
            test: Test::Read,
            targets: vec![a, b],
        };
        let m = MatrixReport {
            workload: "iozone".into(),
            baseline: "a".into(),
            axes,
            tests: vec![t.clone()],
        };
        (m, t)
    }

    #[test]
    fn targets_share_one_throughput_scale() {
        let (m, t) = test_matrix();
        let unit = Unit {
            scale: 1048576.0,
            name: "MiB/s".into(),
        };
        let g = throughput_maps(&m, &t, &unit);
        let maps = &g.maps;
        assert_eq!(maps.len(), 2);
        assert!(maps.iter().all(|h| h.range == Some((5.0, 40.0)) && !h.log));
        assert!(g
            .title
            .contains("read, mean throughput per target (one scale)"));
        assert_eq!(maps[0].cells[1], [Some(20.0), Some(30.0)]);
        assert_eq!(maps[0].cells[0][1], None, "record > file stays empty");
        assert_eq!(maps[0].x_ticks, ["4K", "128K"]);
        assert_eq!(maps[0].y_ticks, ["64K", "128K"]);
        assert!(maps[1].title.contains("on b"), "{}", maps[1].title);
        assert!(!maps[0].diverging);
    }

    // Gluster's write map beside a fast target: one linear scale would
    // paint all of it the lowest colour; one log scale keeps both legible
    // and a colour still means one value in both.
    #[test]
    fn targets_spanning_decades_share_one_log_scale() {
        let (m, mut t) = test_matrix();
        let mib = 1048576.0;
        t.targets[1].means = vec![
            vec![Some(0.5 * mib), None],
            vec![Some(40.0 * mib), Some(30.0 * mib)],
        ];
        let unit = Unit {
            scale: mib,
            name: "MiB/s".into(),
        };
        let g = throughput_maps(&m, &t, &unit);
        for h in &g.maps {
            assert_eq!(h.range, Some((0.5, 40.0)), "{}", h.title);
            assert!(h.log, "{}", h.title);
        }
        assert!(g.title.ends_with("(one log scale)"), "{}", g.title);
    }

    // Seed 003's latency charts: per target, latency against file size,
    // one line per record size; a line holds the files its record fits.
    #[test]
    fn latency_and_throughput_lines_have_one_line_per_record_size() {
        let (m, t) = test_matrix();
        let mut a = t.targets[0].clone();
        a.latency = vec![
            vec![Some(2_000.0), None],
            vec![Some(3_000.0), Some(90_000.0)],
        ];
        let c = file_size_lines(&m, &t, &a, Measure::Latency).unwrap();
        assert_eq!(c.curves.len(), 2);
        assert_eq!(c.curves[0].label, "4K records");
        let ys = |i: usize| {
            c.curves[i]
                .points
                .iter()
                .map(|p| (p.x, p.y))
                .collect::<Vec<_>>()
        };
        assert_eq!(ys(0), [(65536.0, 2.0), (131072.0, 3.0)]);
        assert_eq!(
            ys(1),
            [(131072.0, 90.0)],
            "a 128K record fits 128K files only"
        );
        assert_ne!(c.curves[0].color, c.curves[1].color);
        assert!(c.log_x && c.log_y, "2 to 90 µs: more than a decade");
        assert_eq!(
            c.x_ticks,
            [(65536.0, "64K".into()), (131072.0, "128K".into())]
        );
        assert_eq!(c.title, "read on a: mean latency of one operation");
        assert_eq!(c.x_label, "file size (mean of 3 run(s))");
        assert_eq!(c.y_label, "latency per record (µs)");
        // Throughput: 10 to 30 MiB/s, within a decade: linear.
        let c = file_size_lines(&m, &t, &a, Measure::Throughput).unwrap();
        assert_eq!(c.y_label, "throughput (MiB/s)");
        assert_eq!(c.curves[0].points[1].y, 20.0);
        assert!(!c.log_y);
        // A target whose runs recorded no latency has no latency chart.
        assert!(file_size_lines(&m, &t, &t.targets[1], Measure::Latency).is_none());
    }

    #[test]
    fn only_non_baseline_targets_get_a_difference_map() {
        let (m, t) = test_matrix();
        let maps = difference_maps(&m, &t);
        assert_eq!(maps.len(), 1);
        let h = &maps[0];
        assert!(
            h.diverging && h.title.contains("b against a"),
            "{}",
            h.title
        );
        assert_eq!(
            h.cells,
            [vec![Some(-50.0), None], vec![Some(100.0), Some(1.0)]]
        );
        assert_eq!(h.muted, [vec![false, false], vec![false, true]]);
        assert!(h.muted_label.contains("not significant"));
    }

    #[test]
    fn device_maps_share_0_to_100_for_targets_with_device_reads() {
        let (m, mut t) = test_matrix();
        let g = device_maps(&m, &t).unwrap();
        let maps = &g.maps;
        assert_eq!(maps.len(), 1, "b recorded no device reads");
        assert_eq!(maps[0].range, Some((0.0, 100.0)));
        assert_eq!(
            maps[0].cells,
            [vec![Some(2.0), None], vec![Some(97.0), Some(100.0)]]
        );
        assert!(maps[0].title.contains("on a"), "{}", maps[0].title);
        t.test = Test::Write;
        assert!(device_maps(&m, &t).is_none(), "a writing test");
    }
}

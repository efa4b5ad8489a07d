use super::*;
use crate::analysis::CampaignAnalysis;
use crate::report::document::Block;
use crate::report::render;
use crate::testdata::telemetry::{campaign, run, watched_campaign};
use crate::warning::{Warning, WarningKind};

/// The analysis of a campaign with the default options.
macro_rules! analysed {
    ($c:expr) => {
        crate::analysis::analyse($c, &Default::default()).unwrap()
    };
}

fn panel_of(a: &CampaignAnalysis) -> Option<Section> {
    let t = a.telemetry.first()?;
    Some(section(t, &a.model.workloads[0]))
}

fn tables(p: &Section) -> Vec<&Table> {
    p.blocks
        .iter()
        .filter_map(|b| match b {
            Block::Table(t) => Some(t),
            _ => None,
        })
        .collect()
}

fn texts(p: &Section) -> Vec<&str> {
    p.blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn no_panel_without_telemetry() {
    let c = campaign(vec![run(1, "a", 0.0, false), run(2, "b", 0.0, false)]);
    assert_eq!(panel_of(&analysed!(&c)), None);
}

#[test]
fn figures_compare_the_targets_and_leave_single_devices_to_their_table() {
    let c = watched_campaign();
    let p = panel_of(&analysed!(&c)).unwrap();
    let t = tables(&p);
    let watched = t[0];
    assert_eq!(
        watched.rows[0],
        vec!["a", "loop0, vda (under loop0)", "storlab"]
    );
    let figures = t[1];
    assert_eq!(figures.header[1..], ["a", "b", "b vs a"]);
    let names: Vec<&str> = figures.rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        names,
        [
            "dev_read_ratio",
            "dev_read_bytes",
            "proc_cpu_pct (storlab)",
            "telemetry_cpu_pct"
        ],
        "catalogue order; no device-labelled row"
    );
    // b's device read a tenth of a's: -90%, ÷10 from ×2 on.
    let bytes = &figures.rows[1];
    assert!(bytes[1].starts_with("20.0 MiB"), "{bytes:?}");
    assert!(bytes[3].starts_with("÷10 ["), "{bytes:?}");

    let devices = t[2];
    assert_eq!(devices.header[..3], ["target", "device", "read"]);
    assert_eq!(devices.rows.len(), 2);
    assert_eq!(devices.rows[0][..3], ["a", "loop0", "20.0 MiB"]);
    assert_eq!(devices.rows[1][..3], ["b", "loop1", "2.0 MiB"]);
    assert_eq!(devices.rows[0][3], "—", "no figure recorded: a dash");
}

#[test]
fn over_time_aligns_the_clocks_and_leaves_out_lines_at_zero() {
    let c = watched_campaign();
    let p = panel_of(&analysed!(&c)).unwrap();
    let charts: Vec<&LineChart> = p
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Chart(Chart::Line(c)) => Some(c),
            _ => None,
        })
        .collect();
    // Per target: throughput (workload and device), CPU, dirty memory.
    assert_eq!(charts.len(), 6);
    let labels: Vec<&str> = charts[0].lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        ["loop0 read"],
        "the workload's two samples are no course over time: in the table, not drawn"
    );
    assert_eq!(charts[1].title, "w on a, run 1: CPU of storlab");
    assert_eq!(charts[2].lines.len(), 1, "writeback stayed at zero");
    let over = tables(&p)[3];
    assert_eq!(
        over.header,
        [
            "t (s)",
            "workload (MiB/s)",
            "loop0 read (MiB/s)",
            "storlab (% of one core)",
            "dirty (MiB)"
        ]
    );
    let rows: Vec<Vec<&str>> = over
        .rows
        .iter()
        .map(|r| r.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["1.0", "100.0", "90.0", "10.0", "2.0"],
            vec!["2.0", "110.0", "95.0", "12.0", "3.0"],
            vec!["3.0", "", "1.0", "30.0", "0.0"],
        ]
    );
}

#[test]
fn the_runs_warnings_are_listed_with_their_run() {
    let mut c = watched_campaign();
    let p = panel_of(&analysed!(&c)).unwrap();
    assert!(texts(&p)
        .last()
        .unwrap()
        .starts_with("The validity checks found nothing"));
    c.runs[2].warnings = vec![Warning::new(
        WarningKind::PageCache,
        "page cache: the device delivered 0 B",
    )];
    let p = panel_of(&analysed!(&c)).unwrap();
    assert_eq!(
        p.blocks.last(),
        Some(&Block::List(vec![
            "run 3 (a, rep 3): page cache: the device delivered 0 B".into()
        ]))
    );
}

#[test]
fn markdown_leaves_the_charts_out_and_html_draws_them() {
    let p = panel_of(&analysed!(&watched_campaign())).unwrap();
    let doc = crate::report::document::Document {
        title: "t".into(),
        summary: Vec::new(),
        body: vec![p],
        warnings: Vec::new(),
    };
    let md = render::markdown::render(&doc).unwrap();
    assert!(md.contains("### What the system did"), "{md}");
    assert!(!md.contains("<svg"));
    assert!(md.contains("| loop0 read (MiB/s) |"));
    let html = render::html::render(&doc).unwrap();
    assert_eq!(html.matches("<svg").count(), 6);
}

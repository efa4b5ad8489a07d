//! The report of a campaign written to a real store
//! ([`crate::testdata::every_row`]) read as each command reads it: what
//! `show` and `run` print is the report's own summary, and the report of
//! the campaign read with only the series its analysis follows is the
//! report of the campaign read whole.

use crate::analysis::analyse;
use crate::report::outline;
use crate::testdata::every_row::{drawn_and_whole, read_as, stored, terminal_and_whole};

// One report model: what `show` and `run` print (the summary, read without
// the series) is the report's own summary, word for word.
#[test]
fn the_terminals_document_is_the_reports_summary() {
    let (_dir, whole, light) = terminal_and_whole();
    let options = outline::Options::default();
    let report = outline::build(&analyse(&whole, &options).unwrap());
    let terminal = outline::terminal(&analyse(&light, &options).unwrap());
    assert!(!report.body.is_empty() && terminal.body.is_empty());
    assert_eq!(terminal.title, report.title);
    assert_eq!(terminal.summary, report.summary);
    assert_eq!(terminal.warnings, report.warnings);
}

// The report reads the series of the runs it draws only (`drawn`): its
// HTML is the report of the campaign read whole, byte for byte.
#[test]
fn a_report_reading_only_the_series_it_draws_is_the_report_read_whole() {
    let (_dir, whole, light) =
        drawn_and_whole(|c| crate::analysis::drawn::drawn(c, &Default::default()));
    let count = |c: &crate::analysis::CampaignAnalysis| {
        let lines: usize = c.timelines.iter().map(|t| t.runs.len()).sum();
        let courses = c.telemetry.iter().flat_map(|t| &t.courses);
        let attributed = c.attributions.iter().filter_map(|a| a.course.as_ref());
        lines
            + courses
                .chain(attributed)
                .map(|k| k.series.len())
                .sum::<usize>()
    };
    let options = outline::Options::default();
    let (whole, light) = (
        analyse(&whole, &options).unwrap(),
        analyse(&light, &options).unwrap(),
    );
    assert_eq!(count(&whole), count(&light));
    let html = |a| crate::report::render::html::render(&outline::build(a)).unwrap();
    let (a, b) = (html(&whole), html(&light));
    assert!(a.contains("Over time") && a.contains("dirty"), "{a}");
    assert_eq!(a, b);
}

// The report reads of each run the figures its sections declare, and the
// telemetry panels' figures per pair and key (`Parts::columns`), as
// `storlab report` does: its HTML is the report of the campaign read
// whole, byte for byte; with the index by key or without it; asked for
// one workload, it reads that one's telemetry only, and lays out what the
// campaign read whole gives.
#[test]
fn a_report_reading_the_telemetry_per_pair_is_the_report_read_whole() {
    let (dir, whole) = stored();
    let id = whole.campaign.id;
    // By value: the campaign read is let go once laid out.
    let html = |c, options: &outline::Options| {
        let a = analyse(&c, options).unwrap();
        crate::report::render::html::render(&outline::build(&a)).unwrap()
    };
    let as_report = |options: &outline::Options, without_index: bool| {
        read_as(
            &dir,
            id,
            without_index,
            |head| crate::analysis::figures::parts(head, options),
            |c| crate::analysis::drawn::drawn(c, options),
        )
    };
    let options = outline::Options::default();
    let light = as_report(&options, false);
    let fewer: usize = light.runs.iter().map(|r| r.metrics.len()).sum();
    let all: usize = whole.runs.iter().map(|r| r.metrics.len()).sum();
    assert!(fewer < all, "{fewer} of {all} figures in the runs");
    let pair = &whole.runs[0];
    let columns = light.columns.of(&pair.workload, &pair.target);
    assert!(
        columns
            .iter()
            .any(|c| c.key.labels.iter().any(|(l, _)| l == "device"))
            && columns.iter().any(|c| c.key.labels.is_empty()),
        "{columns:?}"
    );
    let a = html(whole.clone(), &options);
    assert!(
        a.contains("What the system did") && a.contains("queue depth"),
        "{a}"
    );
    assert_eq!(a, html(light, &options));
    let one = whole.workloads[1].name.clone();
    let asked = outline::Options {
        workloads: vec![one.clone()],
        ..Default::default()
    };
    let b = html(whole.clone(), &asked);
    assert!(
        b.contains("What the system did") && b.contains("variants laid out"),
        "{b}"
    );
    // With the index by key, then without it.
    for without_index in [false, true] {
        let light = as_report(&asked, without_index);
        for w in &whole.workloads {
            for t in &whole.targets {
                let read = light.columns.of(&w.name, &t.name);
                assert_eq!(read.is_empty(), w.name != one, "{} on {}", w.name, t.name);
            }
        }
        assert_eq!(b, html(light, &asked));
    }
    let unindexed = as_report(&options, true);
    assert_eq!(a, html(unindexed, &options));
}

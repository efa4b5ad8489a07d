//! The report of a campaign written to a real store
//! ([`crate::testdata::every_row`]) read as each command reads it: what
//! `show` and `run` print is the report's own summary, and the report of
//! the campaign read with only the series its analysis follows is the
//! report of the campaign read whole.

use crate::analysis::analyse;
use crate::report::outline;
use crate::testdata::every_row::{drawn_and_whole, terminal_and_whole};

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

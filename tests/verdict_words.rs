//! A verdict is worded in one place (`storlab::report::verdict::words`)
//! and reads the same in every output: on the busy host's quick campaign
//! (tests/fixtures/quick-noisy), each headline sentence of `show --format
//! json` is a line of the Markdown report and of the HTML report, each
//! verdict's summary cell is in `storlab show`'s table on its row, and its
//! table-of-differences cell is in both reports.

use std::path::Path;

use storlab::report::render::html::html_escape;
use storlab::report::render::markdown::md_escape;

use crate::util::Lab;

/// The outputs of `storlab show` (text and JSON) and `storlab report`
/// (Markdown and HTML) of the quick-noisy campaign.
struct Outputs {
    show: String,
    json: serde_json::Value,
    md: String,
    html: String,
}

fn outputs() -> Outputs {
    let lab = Lab::new();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quick-noisy/quick-noisy.db");
    std::fs::copy(fixture, lab.db()).expect("copy the quick-noisy store");
    let json = lab.ok(&["show", "--format", "json"]);
    Outputs {
        show: lab.ok(&["show", "--color", "never"]),
        json: serde_json::from_str(&json).expect("show's JSON"),
        md: lab.ok(&["report", "--format", "md"]),
        // A table's prose keeps each hyphenated word on one line in a
        // span of its own: the words read as they are without it.
        html: lab
            .ok(&["report", "--format", "html"])
            .replace("<span class=\"nb\">", "")
            .replace("</span>", ""),
    }
}

fn texts(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|s| s.as_str().expect("a string").to_string())
        .collect()
}

#[test]
fn a_verdict_reads_the_same_in_the_terminal_markdown_html_and_json() {
    let o = outputs();
    let headline = texts(&o.json["headline"]);
    assert_eq!(headline.len(), 7, "{headline:#?}");
    for line in &headline {
        assert!(
            o.md.contains(&format!("- {}\n", md_escape(line))),
            "not in the Markdown report: {line}"
        );
        assert!(
            o.html.contains(&format!("<li>{}</li>", html_escape(line))),
            "not in the HTML report: {line}"
        );
    }
    let verdicts = o.json["verdicts"].as_array().expect("verdicts");
    let primary: Vec<&serde_json::Value> =
        verdicts.iter().filter(|v| v["primary"] == true).collect();
    assert_eq!(primary.len(), 7);
    for v in &primary {
        let (w, t) = (
            v["workload"].as_str().unwrap(),
            v["target"].as_str().unwrap(),
        );
        // Not grouped with others, a verdict's own sentence is its line.
        let sentence = v["sentence"].as_str().unwrap();
        assert!(headline.iter().any(|l| l == sentence), "{sentence}");
        // The summary table's row of the pair ends with its cell.
        let summary = v["summary"].as_str().unwrap();
        let row = o
            .show
            .lines()
            .find(|l| l.starts_with(w) && l.split_whitespace().nth(1) == Some(t))
            .unwrap_or_else(|| panic!("no row of {w} on {t}:\n{}", o.show));
        assert!(row.trim_end().ends_with(summary), "{row}\n{summary}");
        // The workload's table of differences holds its cell.
        let detail = v["detail"].as_str().unwrap();
        assert!(o.md.contains(&md_escape(detail)), "{detail}");
        assert!(o.html.contains(&html_escape(detail)), "{detail}");
    }
    // Every verdict of the campaign is worded, the exploratory ones too.
    assert!(verdicts.len() > primary.len());
    assert!(verdicts
        .iter()
        .all(|v| !v["sentence"].as_str().unwrap().is_empty()));
}

//! The catalogue as a reference for people: `docs/facts.md`, one table per
//! subject (host, target, run). A test keeps the file equal to what this
//! renders.

use super::catalogue::ALL;
use super::{Changes, FactDef, Subject};

/// The whole reference, in Markdown.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Facts\n\n\
         What storlab reads back about the host, each target and each run, as its \
         catalogue (`src/fact/catalogue.rs`) declares it. *Changes* says whether a \
         fact takes a new value with every campaign of the same configuration \
         (such a fact is no difference between two campaigns); *reads back* names \
         the experiment's parameter whose effect the fact shows, which reports \
         check against what was asked for.\n\n\
         This file is generated: `STORLAB_BLESS=1 cargo test --lib fact::reference` \
         rewrites it.\n",
    );
    for (subject, title) in [
        (Subject::Host, "Host (a campaign's environment)"),
        (Subject::Target, "Target (read back once provisioned)"),
        (Subject::Run, "Run"),
    ] {
        out.push_str(&format!("\n## {title}\n\n"));
        out.push_str("| fact | unit | changes | reads back | meaning |\n|---|---|---|---|---|\n");
        for d in ALL.iter().filter(|d| d.subject == subject) {
            out.push_str(&row(d));
        }
    }
    out
}

fn row(d: &FactDef) -> String {
    let name = match d.name {
        n if n.starts_with('_') => format!("`*{n}`"),
        n if n.ends_with('.') => format!("`{n}*`"),
        n => format!("`{n}`"),
    };
    let changes = match d.changes {
        Changes::Never => "no",
        Changes::Always => "every campaign",
        Changes::WhereStorlabNamesIt => "where storlab names it",
    };
    let reads = d.reads_back.map(|p| format!("`{p}`")).unwrap_or_default();
    format!(
        "| {name} | {} | {changes} | {reads} | {} |\n",
        d.unit.as_str(),
        d.about.replace('|', "\\|")
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn docs_facts_md_is_what_the_catalogue_renders() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/facts.md");
        let want = super::markdown();
        if std::env::var_os("STORLAB_BLESS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "docs/facts.md is stale: run STORLAB_BLESS=1 cargo test --lib fact::reference"
        );
    }

    #[test]
    fn every_name_is_declared_once() {
        let mut names: Vec<&str> = super::ALL.iter().map(|d| d.name).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(n, names.len());
    }
}

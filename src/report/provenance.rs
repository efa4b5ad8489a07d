//! A campaign's provenance as text for `storlab show` and `run`: its UUID,
//! tags, the versions of the programs it used, the host's facts and where
//! it was imported from. The JSON export carries the same facts in full.

use crate::analysis::about::About;
use crate::analysis::differences::version_text;

/// Longest kernel command line shown in full; the export has all of it.
const CMDLINE_CHARS: usize = 100;

pub fn provenance_text(c: &About) -> String {
    let f = &c.facts;
    let p = &f.provenance;
    let mut out = format!("uuid {}", f.uuid);
    if !p.tags.is_empty() {
        out.push_str(&format!("; tags: {}", pairs(&p.tags, "=")));
    }
    out.push('\n');
    let mut versions = vec![format!("storlab {}", c.campaign.storlab_version)];
    versions.extend(p.versions.iter().map(|(k, v)| version_text(k, v)));
    out.push_str(&format!("versions: {}\n", versions.join("; ")));
    let host: Vec<String> = p
        .host
        .iter()
        .filter(|(k, _)| k.as_str() != "kernel_cmdline")
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    if !host.is_empty() {
        out.push_str(&format!("host: {}\n", host.join("; ")));
    }
    if let Some(cmdline) = p.host.get("kernel_cmdline") {
        out.push_str(&format!("kernel command line: {}\n", abbreviated(cmdline)));
    }
    if !f.imported.is_empty() {
        out.push_str(&format!(
            "imported from {} (campaign {} there) at {}\n",
            f.imported.get("from").map(String::as_str).unwrap_or("?"),
            f.imported
                .get("original_id")
                .map(String::as_str)
                .unwrap_or("?"),
            f.imported.get("at").map(String::as_str).unwrap_or("?"),
        ));
    }
    out
}

/// The provenance as rows of the report's environment table: UUID, tags,
/// every version, the host facts the environment lacks, the import record.
pub fn provenance_rows(c: &About) -> Vec<Vec<String>> {
    let f = &c.facts;
    let p = &f.provenance;
    let mut t = vec![vec!["Campaign UUID".into(), f.uuid.clone()]];
    if !p.tags.is_empty() {
        t.push(vec!["Tags".into(), pairs(&p.tags, "=")]);
    }
    for (program, line) in &p.versions {
        t.push(vec![format!("Version of {program}"), line.clone()]);
    }
    for (name, label) in [
        ("cpu_governor", "CPU governor"),
        ("transparent_hugepage", "Transparent huge pages"),
        ("kernel_cmdline", "Kernel command line"),
    ] {
        if let Some(v) = p.host.get(name) {
            t.push(vec![label.into(), v.clone()]);
        }
    }
    for (name, value) in &f.imported {
        t.push(vec![format!("Imported: {name}"), value.clone()]);
    }
    t
}

fn pairs(m: &std::collections::BTreeMap<String, String>, sep: &str) -> String {
    m.iter()
        .map(|(k, v)| format!("{k}{sep}{v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` cut after [`CMDLINE_CHARS`] characters, saying where the rest is.
pub fn abbreviated(text: &str) -> String {
    match text.char_indices().nth(CMDLINE_CHARS) {
        Some((i, _)) => format!("{}… (in full in the JSON export)", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_command_lines_are_cut_and_say_where_the_rest_is() {
        let long = "x".repeat(300);
        let t = abbreviated(&long);
        assert!(t.starts_with(&"x".repeat(CMDLINE_CHARS)) && t.contains("JSON export"));
        assert_eq!(abbreviated("quiet"), "quiet");
    }
}

//! The reference in docs/ against the code: every parameter declared in the
//! target, workload and plan tables (read through the registries, so this
//! follows the code) has a row in its kind's section, every subcommand is
//! in the command-line page, and every relative link leads to a file.

use std::path::{Path, PathBuf};

use clap::CommandFactory;
use storlab::params::ParamSpec;
use storlab::targets::TargetKind;
use storlab::workload::WorkloadKind;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn doc(name: &str) -> String {
    std::fs::read_to_string(repo().join("docs").join(name))
        .unwrap_or_else(|e| panic!("docs/{name}: {e}"))
}

/// The text of the `## `kind`` section of `page`, up to the next `## `.
fn section<'a>(page: &'a str, kind: &str) -> Option<&'a str> {
    let heading = format!("\n## `{kind}`\n");
    let start = page.find(&heading)? + heading.len();
    let end = page[start..]
        .find("\n## ")
        .map_or(page.len(), |i| start + i);
    Some(&page[start..end])
}

/// Parameters of `params` without a row `| `name` |` in `text`.
fn undocumented(text: &str, params: &[ParamSpec]) -> Vec<&'static str> {
    params
        .iter()
        .filter(|p| !text.contains(&format!("| `{}` |", p.name)))
        .map(|p| p.name)
        .collect()
}

/// What `page` lacks of the kinds' parameters: each kind (name, parameters)
/// needs a section ## `NAME` naming every parameter.
fn missing_kinds(
    page: &str,
    kinds: impl Iterator<Item = (&'static str, &'static [ParamSpec])>,
) -> Vec<String> {
    let page = doc(page);
    let mut missing = Vec::new();
    for (name, params) in kinds {
        match section(&page, name) {
            None => missing.push(format!("no section ## `{name}`")),
            Some(text) => missing.extend(
                undocumented(text, params)
                    .into_iter()
                    .map(|p| format!("{name}: `{p}`")),
            ),
        }
    }
    missing
}

#[test]
fn every_target_parameter_is_in_the_reference() {
    let missing = missing_kinds(
        "targets.md",
        TargetKind::all().map(|k| (k.name(), k.params())),
    );
    assert!(missing.is_empty(), "docs/targets.md lacks {missing:?}");
}

#[test]
fn every_workload_parameter_is_in_the_reference() {
    let missing = missing_kinds(
        "workloads.md",
        WorkloadKind::all().map(|k| (k.name(), k.params())),
    );
    assert!(missing.is_empty(), "docs/workloads.md lacks {missing:?}");
}

#[test]
fn every_plan_parameter_is_in_the_reference() {
    let page = doc("experiment.md");
    let mut missing = undocumented(&page, storlab::experiment::schema::PlanParams::PARAMS);
    missing.extend(undocumented(
        &page,
        storlab::experiment::schema::AdaptiveParams::PARAMS,
    ));
    assert!(missing.is_empty(), "docs/experiment.md lacks {missing:?}");
}

#[test]
fn every_command_is_in_the_reference() {
    let page = doc("cli.md");
    let missing: Vec<String> = storlab::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|n| !page.contains(&format!("storlab {n}")))
        .collect();
    assert!(missing.is_empty(), "docs/cli.md lacks {missing:?}");
}

#[test]
fn the_check_notices_a_missing_parameter() {
    let page = "# T\n\n## `a`\n\n| `x` | int |\n\n## `b`\n\n| `y` | int |\n";
    assert!(section(page, "a").unwrap().contains("`x`"));
    assert!(!section(page, "a").unwrap().contains("`y`"));
    assert!(section(page, "c").is_none());
}

/// Relative link targets (`](path)` not starting with a scheme or `#`).
fn links(text: &str) -> Vec<String> {
    text.match_indices("](")
        .filter_map(|(i, _)| {
            let rest = &text[i + 2..];
            let end = rest.find(')')?;
            let target = rest[..end].split('#').next()?.to_string();
            (!target.is_empty() && !target.contains("://")).then_some(target)
        })
        .collect()
}

#[test]
fn every_relative_link_in_the_readme_and_docs_leads_to_a_file() {
    let mut pages = vec![repo().join("README.md")];
    for e in std::fs::read_dir(repo().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) == Some("md") {
            pages.push(p);
        }
    }
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let dir = page.parent().unwrap_or(Path::new("."));
        for target in links(&text) {
            if !dir.join(&target).exists() {
                broken.push(format!("{}: {target}", page.display()));
            }
        }
    }
    assert!(pages.len() > 5, "{pages:?}");
    assert!(broken.is_empty(), "{broken:?}");
}

#[test]
fn the_readme_names_the_test_command_and_it_exists() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(readme.contains("cargo install --locked --path . && storlab run"));
    assert!(readme.contains("\nscripts/test\n"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(repo().join("scripts/test"))
        .unwrap()
        .permissions()
        .mode();
    assert!(mode & 0o111 != 0, "scripts/test is executable");
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    assert!(ci.trim_end().ends_with("scripts/test"), "{ci}");
}

//! No import cycles among the modules of `src/`: layers point down.
//!
//! Every file of the library is parsed with `syn` and every reference to
//! another module of the crate is collected: `use` trees and paths that
//! start with `crate::`, `super::`, `self::` or the name of a child module
//! (`io::IoParams` in `workload/mod.rs`), in code, types and macro paths.
//! A module may use its ancestors and its ancestors may use it (a `mod.rs`
//! declares its children, which implement its traits); every other
//! reference must point one way. So, below every module, the graph of its
//! children — each standing for its whole subtree — must have no cycle:
//! this covers files within a folder and folders within the crate alike.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A module path below the crate root (`["workload", "io", "job"]`).
type ModPath = Vec<String>;

/// Known cycles, each to be removed by the work named beside it: the
/// children of `parent` that still form a circle. The test fails once a
/// listed cycle is gone, so that the exception goes with it.
/// None is left: the last, report's (html, matrix, model, sections), went
/// with issue #14's one report document.
const TEMPORARY_EXCEPTIONS: &[(&str, &[&str], &str)] = &[];

#[test]
fn no_import_cycle_among_the_modules_of_src() {
    let crate_ = Crate::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let mut cycles = crate_.cycles();
    let mut stale = Vec::new();
    for (parent, members, why) in TEMPORARY_EXCEPTIONS {
        let before = cycles.len();
        cycles.retain(|c| {
            !(c.parent == *parent && c.members.iter().all(|m| members.contains(&m.as_str())))
        });
        if cycles.len() == before {
            stale.push(format!("{parent}: {members:?} ({why})"));
        }
    }
    let report: Vec<String> = cycles.iter().map(Cycle::describe).collect();
    assert!(
        report.is_empty(),
        "import cycles in src/:\n{}",
        report.join("\n")
    );
    assert!(
        stale.is_empty(),
        "these cycles are gone: remove their exception from TEMPORARY_EXCEPTIONS: {stale:?}"
    );
}

#[test]
fn the_lowest_layers_import_nothing_above_them() {
    let crate_ = Crate::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let uses = |from: &str, to: &str| -> Vec<String> {
        crate_
            .edges
            .iter()
            .filter(|e| e.from.first().map(String::as_str) == Some(from))
            .filter(|e| e.to.first().map(String::as_str) == Some(to))
            .map(|e| format!("{} -> {}", e.from.join("::"), e.to.join("::")))
            .collect()
    };
    // The parameter layer sits below the experiment parser and the kinds.
    for above in ["experiment", "workload", "targets", "runner", "store"] {
        assert_eq!(uses("params", above), Vec::<String>::new());
    }
    // The kinds read their parameters from it, not from the parser.
    assert_eq!(uses("workload", "experiment"), Vec::<String>::new());
    assert_eq!(uses("targets", "experiment"), Vec::<String>::new());
    // The analysis of the store knows nothing of how it is laid out.
    assert_eq!(uses("analysis", "report"), Vec::<String>::new());
    assert_eq!(uses("analysis", "commands"), Vec::<String>::new());
    // The child processes and the stop flag know nothing of what is
    // measured or run with them.
    for above in [
        "measure",
        "workload",
        "runner",
        "provision",
        "targets",
        "store",
    ] {
        assert_eq!(uses("process", above), Vec::<String>::new());
    }
    // What the target kinds stand on knows no kind.
    assert_eq!(uses("provision", "targets"), Vec::<String>::new());
    assert_eq!(uses("provision", "workload"), Vec::<String>::new());
}

/// The layers above the store that lay out or judge what it holds, and
/// what each must not import (a module path, its whole subtree): a
/// campaign is analysed once, from the store ([`crate::analysis`]), and the
/// report lays that analysis out, never reading the store; neither reaches
/// into the layers that do the work (provisioning, the target and workload
/// kinds, measuring, running); a command prints what the analysis found and
/// computes no statistic of its own, nor lays out a report's sections.
const FORBIDDEN: &[(&str, &[&str])] = &[
    (
        "report",
        &[
            "store",
            "provision",
            "targets",
            "workload",
            "measure",
            "runner",
        ],
    ),
    (
        "analysis",
        &[
            "report",
            "provision",
            "targets",
            "workload",
            "measure",
            "runner",
        ],
    ),
    (
        "commands",
        &[
            "stats",
            "measure",
            "analysis::model",
            "report::sections",
            "report::contrib",
            "report::svg",
        ],
    ),
];

/// The references from below `from` to below any of `to`, as `file ->
/// file` lines.
fn crossing(crate_: &Crate, from: &str, to: &[&str]) -> Vec<String> {
    let path = |p: &str| -> ModPath { p.split("::").map(String::from).collect() };
    let from = path(from);
    let mut out: Vec<String> = crate_
        .edges
        .iter()
        .filter(|e| e.from.starts_with(&from))
        .filter(|e| to.iter().any(|t| e.to.starts_with(&path(t))))
        .map(|e| format!("{} -> {}", e.from.join("::"), e.to.join("::")))
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn the_layers_above_the_store_import_only_what_they_may() {
    let crate_ = Crate::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let mut found = Vec::new();
    for (from, to) in FORBIDDEN {
        found.extend(crossing(&crate_, from, to));
    }
    assert!(
        found.is_empty(),
        "imports that point where their layer may not (tests/import_cycles.rs FORBIDDEN):\n{}",
        found.join("\n")
    );
}

// The rule sees an import it forbids: a report file that names the store,
// by `use` or by a path in code, fails it.
#[test]
fn a_report_that_reads_the_store_fails_the_rule() {
    let crate_ = Crate::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let with = |file: &[&str], code: &str| {
        let parsed = syn::parse_file(code).unwrap();
        let module: ModPath = file.iter().map(|s| s.to_string()).collect();
        let mut c = Collector {
            module: module.clone(),
            children: BTreeMap::new(),
            refs: Vec::new(),
        };
        c.visit_file(&parsed);
        let mut edges: Vec<Edge> = c
            .refs
            .into_iter()
            .map(|(_, to)| Edge {
                from: module.clone(),
                to,
            })
            .collect();
        edges.extend(crate_.edges.iter().map(|e| Edge {
            from: e.from.clone(),
            to: e.to.clone(),
        }));
        crossing(&Crate { edges }, "report", &["store"])
    };
    assert_eq!(
        with(
            &["report", "sections", "x"],
            "use crate::store::CampaignData;"
        ),
        ["report::sections::x -> store::CampaignData"]
    );
    assert_eq!(
        with(&["report", "x"], "fn f() { crate::store::Store::open(p); }"),
        ["report::x -> store::Store::open"]
    );
    assert!(with(&["report", "x"], "use crate::analysis::CampaignAnalysis;").is_empty());
}

#[test]
fn the_parser_of_this_test_sees_what_it_must() {
    let src = "mod a;\nmod b { use super::a::X; }\nuse crate::c::{self, d::E as F};\n\
               fn f() { a::g(); super::h(); std::io::stdout(); }\n";
    let file = syn::parse_file(src).unwrap();
    let mut c = Collector {
        module: vec!["m".into()],
        children: BTreeMap::from([(
            vec!["m".to_string()],
            BTreeSet::from(["a".to_string(), "b".to_string()]),
        )]),
        refs: Vec::new(),
    };
    c.visit_file(&file);
    let refs: BTreeSet<String> = c
        .refs
        .iter()
        .map(|(m, p)| format!("{} {}", m.join("::"), p.join("::")))
        .collect();
    let expected = ["m m::a::g", "m::b m::a::X", "m c", "m c::d::E", "m h"];
    assert_eq!(refs, expected.iter().map(|s| s.to_string()).collect());
}

/// One reference between two files of the crate.
struct Edge {
    from: ModPath,
    to: ModPath,
}

/// Children of `parent` that use each other in a circle, with the file
/// references that close it.
struct Cycle {
    parent: String,
    members: Vec<String>,
    through: Vec<String>,
}

impl Cycle {
    fn describe(&self) -> String {
        format!(
            "below `{}`: {} (through {})",
            if self.parent.is_empty() {
                "crate"
            } else {
                &self.parent
            },
            self.members.join(", "),
            self.through.join("; ")
        )
    }
}

struct Crate {
    edges: Vec<Edge>,
}

impl Crate {
    /// Parses every file of the library under `src`.
    fn read(src: &Path) -> Crate {
        let mut files = Vec::new();
        collect_files(src, &mut files);
        let parsed: Vec<(ModPath, syn::File)> = files
            .iter()
            .filter(|f| !f.ends_with("main.rs"))
            .map(|f| {
                let text = std::fs::read_to_string(f).unwrap();
                let file =
                    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
                (module_of(src, f), file)
            })
            .collect();
        let mut children: BTreeMap<ModPath, BTreeSet<String>> = BTreeMap::new();
        // Inline modules map to the file that holds them.
        let mut file_of: BTreeMap<ModPath, ModPath> = BTreeMap::new();
        for (module, file) in &parsed {
            file_of.insert(module.clone(), module.clone());
            declared_modules(module, module, &file.items, &mut children, &mut file_of);
        }
        let mut refs = Vec::new();
        for (module, file) in &parsed {
            let mut c = Collector {
                module: module.clone(),
                children: children.clone(),
                refs: Vec::new(),
            };
            c.visit_file(file);
            refs.extend(c.refs.into_iter().map(|(m, p)| (module.clone(), m, p)));
        }
        let mut edges = Vec::new();
        for (from_file, _, path) in refs {
            let Some(target) = (0..=path.len()).rev().find_map(|k| file_of.get(&path[..k])) else {
                continue;
            };
            if *target != from_file {
                edges.push(Edge {
                    from: from_file,
                    to: target.clone(),
                });
            }
        }
        Crate { edges }
    }

    /// The circles among the children of every module.
    fn cycles(&self) -> Vec<Cycle> {
        // parent → child → (child it uses, the file reference)
        let mut graphs: BTreeMap<ModPath, BTreeMap<String, BTreeMap<String, String>>> =
            BTreeMap::new();
        for e in &self.edges {
            let common = e.from.iter().zip(&e.to).take_while(|(a, b)| a == b).count();
            if common == e.from.len() || common == e.to.len() {
                continue; // one is the other's ancestor
            }
            graphs
                .entry(e.from[..common].to_vec())
                .or_default()
                .entry(e.from[common].clone())
                .or_default()
                .entry(e.to[common].clone())
                .or_insert_with(|| format!("{} -> {}", e.from.join("::"), e.to.join("::")));
        }
        let mut out = Vec::new();
        for (parent, graph) in &graphs {
            for members in strongly_connected(graph) {
                let through = members
                    .iter()
                    .flat_map(|m| graph[m].iter().filter(|(to, _)| members.contains(to)))
                    .map(|(_, via)| via.clone())
                    .collect();
                out.push(Cycle {
                    parent: parent.join("::"),
                    members,
                    through,
                });
            }
        }
        out
    }
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// `src/workload/io/mod.rs` → `workload::io`; `src/lib.rs` → the root.
fn module_of(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: ModPath = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// Records the modules `items` declare below `module` (in the file of
/// module `file`), inline ones with their own children.
fn declared_modules(
    file: &ModPath,
    module: &ModPath,
    items: &[syn::Item],
    children: &mut BTreeMap<ModPath, BTreeSet<String>>,
    file_of: &mut BTreeMap<ModPath, ModPath>,
) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        let name = m.ident.to_string();
        children
            .entry(module.clone())
            .or_default()
            .insert(name.clone());
        if let Some((_, inner)) = &m.content {
            let mut path = module.clone();
            path.push(name);
            file_of.insert(path.clone(), file.clone());
            declared_modules(file, &path, inner, children, file_of);
        }
    }
}

/// Walks one file, resolving references to absolute module paths.
struct Collector {
    /// The module being walked (inline modules included).
    module: ModPath,
    children: BTreeMap<ModPath, BTreeSet<String>>,
    /// (module the reference is in, absolute path it names)
    refs: Vec<(ModPath, ModPath)>,
}

impl Collector {
    fn reference(&mut self, segments: &[String]) {
        if let Some(path) = self.resolve(segments) {
            self.refs.push((self.module.clone(), path));
        }
    }

    /// The absolute path `segments` names, if it is in this crate.
    fn resolve(&self, segments: &[String]) -> Option<ModPath> {
        let first = segments.first()?;
        let mut base = self.module.clone();
        let mut rest = segments;
        match first.as_str() {
            "crate" => {
                base.clear();
                rest = &segments[1..];
            }
            "self" => rest = &segments[1..],
            "super" => {
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            name if segments.len() > 1
                && self
                    .children
                    .get(&self.module)
                    .is_some_and(|c| c.contains(name)) => {}
            _ => return None,
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.use_leaf(prefix, &n.ident),
            syn::UseTree::Rename(r) => self.use_leaf(prefix, &r.ident),
            syn::UseTree::Glob(_) => {
                let p = prefix.clone();
                self.reference(&p);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    fn use_leaf(&mut self, prefix: &[String], ident: &syn::Ident) {
        let mut path = prefix.to_vec();
        if ident != "self" {
            path.push(ident.to_string());
        }
        // `use a::b` with one segment names a child module itself.
        if path.len() == 1
            && self
                .children
                .get(&self.module)
                .is_some_and(|c| c.contains(&path[0]))
        {
            let mut p = self.module.clone();
            p.push(path[0].clone());
            self.refs.push((self.module.clone(), p));
            return;
        }
        self.reference(&path);
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if m.content.is_some() {
            self.module.push(m.ident.to_string());
            syn::visit::visit_item_mod(self, m);
            self.module.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.reference(&segments);
        syn::visit::visit_path(self, p);
    }
}

/// Tarjan's strongly connected components of more than one node.
fn strongly_connected(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeMap<String, String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flat_map(|m| m.keys()) {
            if !s.index.contains_key(w.as_str()) {
                visit(s, w);
                let lw = s.low[w.as_str()];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w.as_str()) {
                let iw = s.index[w.as_str()];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

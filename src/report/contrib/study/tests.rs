use super::{charts, sections, tables};
use crate::analysis::campaign::judge;
use crate::analysis::model::TargetStats;
use crate::analysis::study::studies;
use crate::analysis::study::Study;
use crate::experiment::sweep::Scale;
use crate::testdata::study::{compress, factor, size, Builder};

/// Seed 002's shape: total_size × compress on the disk and on Gluster;
/// Gluster is 10× slower, gzip doubles the time on the disk only.
fn seed_002(compare: &[&str]) -> Vec<Study> {
    let mut b = Builder::new().target("disk", vec![]).target("gl", vec![]);
    b.compare_levels = compare.iter().map(|s| s.to_string()).collect();
    for mib in [100, 10] {
        for c in ["none", "gzip:6"] {
            b = b.workload("tiny", vec![compress(c), size(mib)]);
        }
    }
    let c = b.runs(|t, w| {
        let mib = if w.name.contains("100M") { 100.0 } else { 10.0 };
        let gzip = w.name.contains("gzip");
        match (t.name.as_str(), gzip) {
            ("disk", false) => 0.01 * mib,
            ("disk", true) => 0.02 * mib,
            (_, _) => 0.1 * mib,
        }
    });
    studies_of(c)
}

/// The studies of campaign `c`.
fn studies_of(b: Builder) -> Vec<Study> {
    let c = b.build();
    studies(&c, &judge(&c, None).unwrap().model, &[])
}

fn mean(s: &Option<TargetStats>) -> f64 {
    s.as_ref().unwrap().summary.unwrap().mean
}

#[test]
fn a_numeric_workload_factor_makes_the_columns_and_the_rest_the_rows() {
    let studies = seed_002(&[]);
    assert_eq!(studies.len(), 1);
    let s = &studies[0];
    assert_eq!(s.factors, ["compress", "total_size"]);
    let p = &s.primary;
    assert_eq!(p.metric, "total_s");
    let axis = p.column.as_ref().unwrap();
    assert_eq!(axis.key, "total_size");
    let texts: Vec<&str> = axis.levels.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(texts, ["10M", "100M"], "sizes in numeric order");
    assert!(axis.log);
    let rows: Vec<&str> = p.rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(
        rows,
        [
            "disk · compress=none",
            "disk · compress=gzip:6",
            "gl · compress=none",
            "gl · compress=gzip:6"
        ]
    );
    assert!((mean(&p.rows[0].cells[0]) - 0.1).abs() < 1e-9);
    assert!((mean(&p.rows[0].cells[1]) - 1.0).abs() < 1e-9);
    assert!((mean(&p.rows[1].cells[1]) - 2.0).abs() < 1e-9);
    // Against the baseline (disk) on the same variant: gl is 10× slower.
    let gl = p.rows[2].cells[1].as_ref().unwrap();
    assert!((gl.comparison.as_ref().unwrap().diff_pct - 900.0).abs() < 1e-6);
    assert_eq!(s.headlines.len(), 1);
    assert_eq!(s.headlines[0].metric, "init_seconds");
    assert!((mean(&s.headlines[0].rows[0].cells[1]) - 2.0).abs() < 1e-9);
}

#[test]
fn levels_are_compared_on_each_target() {
    let studies = seed_002(&["compress"]);
    let l = &studies[0].levels[0];
    assert_eq!(
        (l.factor.as_str(), l.base.text.as_str()),
        ("compress", "none")
    );
    let rows: Vec<&str> = l.pivot.rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(rows, ["disk · compress=gzip:6", "gl · compress=gzip:6"]);
    let diff = |r: usize, c: usize| {
        l.pivot.rows[r].cells[c]
            .as_ref()
            .unwrap()
            .comparison
            .as_ref()
            .unwrap()
            .diff_pct
    };
    assert!(
        (diff(0, 0) - 100.0).abs() < 1e-6,
        "gzip doubles the disk's time"
    );
    assert!(diff(1, 1).abs() < 1e-6, "and changes nothing on Gluster");
    let t = tables::levels(l, false);
    assert_eq!(t.rows[0][1], "×2.0", "from ×2 a ratio");
    assert_eq!(t.rows[1][2], "(+0.0%)", "not significant: in parentheses");
}

#[test]
fn the_tables_read_as_the_seeds_tables() {
    let studies = seed_002(&[]);
    let s = &studies[0];
    let m = tables::means(&s.primary);
    assert_eq!(m.header, ["target \\ total_size", "10M", "100M"]);
    assert_eq!(m.rows[0][0], "disk · compress=none");
    let d = tables::differences(&s.primary, &s.baseline, false);
    assert_eq!(d.rows[0][1], "baseline");
    assert_eq!(d.rows[2][1], "×10");
    let d = tables::differences(&s.primary, &s.baseline, true);
    assert!(d.rows[2][1].starts_with("×10 [×"), "{}", d.rows[2][1]);
    let text = crate::report::render::terminal::summary(
        &crate::report::document::Document {
            title: String::new(),
            summary: sections::summary(s),
            body: Vec::new(),
            warnings: Vec::new(),
        },
        None,
    );
    assert!(
        text.contains("tiny: total_s (s), mean ± 95% CI, by total_size"),
        "{text}"
    );
    assert!(text.contains("% difference from disk"), "{text}");
}

#[test]
fn two_workload_factors_make_a_heat_map_per_target() {
    let studies = seed_002(&[]);
    let g = studies[0].grid.as_ref().unwrap();
    assert_eq!(
        (g.x.key.as_str(), g.y.key.as_str()),
        ("total_size", "compress")
    );
    assert_eq!(g.maps.len(), 2);
    let (target, cells) = &g.maps[0];
    assert_eq!(target, "disk");
    assert!(
        (cells[1][1].unwrap() - 2.0).abs() < 1e-9,
        "gzip, 100M: {cells:?}"
    );
    let group = charts::heatmaps(&studies[0]).unwrap();
    let maps = &group.maps;
    assert_eq!(maps.len(), 2);
    assert_eq!(maps[0].range, maps[1].range, "one colour scale");
    assert_eq!(maps[0].log, maps[1].log, "of one kind");
    assert_eq!(maps[0].title, "on disk");
    let curve = charts::curve(&studies[0], &studies[0].primary).unwrap();
    assert!(curve.log_x);
    assert_eq!(curve.curves.len(), 4);
    assert_eq!(
        curve.x_ticks[1],
        ((100u64 << 20) as f64, "100M".to_string())
    );
}

#[test]
fn a_target_factor_alone_makes_the_columns() {
    let alloc = |a: &str| factor("allocation", a, a, Scale::Category);
    let c = Builder::new()
        .target("vm", vec![alloc("thin")])
        .target("vm", vec![alloc("preallocated")])
        .workload("w", vec![])
        .runs(|t, _| if t.name.contains("thin") { 2.0 } else { 1.0 });
    let s = &studies_of(c)[0];
    let axis = s.primary.column.as_ref().unwrap();
    assert_eq!(axis.key, "allocation");
    let texts: Vec<&str> = axis.levels.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(
        texts,
        ["thin", "preallocated"],
        "words in the order written"
    );
    assert_eq!(s.primary.rows.len(), 1);
    assert_eq!(s.primary.rows[0].label, "vm");
    assert!((mean(&s.primary.rows[0].cells[1]) - 1.0).abs() < 1e-9);
    assert!(s.grid.is_none());
    let curve = charts::curve(s, &s.primary).unwrap();
    assert!(!curve.log_x);
    assert_eq!(curve.x_ticks[1], (1.0, "preallocated".to_string()));
}

#[test]
fn counts_sort_numerically_and_nothing_swept_is_no_study() {
    let tx = |n: u32| factor("transactions", &n.to_string(), &n.to_string(), Scale::Count);
    let mut b = Builder::new().target("a", vec![]).target("b", vec![]);
    for n in [4000, 500, 1000] {
        b = b.workload("tpcb", vec![tx(n)]);
    }
    let c = b.workload("plain", vec![]).runs(|_, _| 1.0);
    let all = studies_of(c);
    assert_eq!(all.len(), 1, "the unswept workload has no study");
    let texts: Vec<&str> = all[0]
        .primary
        .column
        .as_ref()
        .unwrap()
        .levels
        .iter()
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(texts, ["500", "1000", "4000"]);
}

/// Seed 001's shape: a workload's prewarm compared level against level on
/// ext4 and on a zfs target swept over recordsize.
#[test]
fn levels_are_compared_on_targets_without_the_other_targets_sweep() {
    let recordsize = |v: &str| factor("recordsize", v, v, Scale::Category);
    let prewarm = |v: &str| factor("prewarm", v, v, Scale::Category);
    let mut b = Builder::new()
        .target("ext4", vec![])
        .target("zfs", vec![recordsize("8k")])
        .target("zfs", vec![recordsize("16k")]);
    b.compare_levels = vec!["prewarm".into()];
    for p in ["8s", "0s"] {
        b = b.workload("oltp", vec![prewarm(p)]);
    }
    let c = b.runs(|t, w| {
        let base = if t.name == "ext4" { 10.0 } else { 5.0 };
        if w.name.contains("0s") {
            base * 2.0
        } else {
            base
        }
    });
    let s = studies_of(c);
    let l = &s[0].levels[0];
    let rows: Vec<&str> = l.pivot.rows.iter().map(|r| r.label.as_str()).collect();
    assert!(
        rows.iter().any(|r| r.starts_with("ext4")),
        "ext4's prewarm=0s against 8s is missing: {rows:?}"
    );
    let cells = l
        .pivot
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .count();
    assert_eq!(cells, 3, "one comparison per target: {rows:?}");
}

/// Seed 000's shape: pgbench -i once per disk, on a cluster every
/// transaction count shares; init_seconds is the disk's, not a value
/// under the first transaction count.
#[test]
fn a_figure_measured_once_per_target_is_one_column() {
    let tx = |n: u32| factor("transactions", &n.to_string(), &n.to_string(), Scale::Count);
    let mut b = Builder::new().target("thin", vec![]).target("full", vec![]);
    b.init_once = true;
    for n in [12, 25, 50] {
        b = b.workload("pgbench", vec![tx(n)]);
    }
    let c = b.runs(|t, _| if t.name == "thin" { 30.0 } else { 18.0 });
    let s = studies_of(c);
    assert_eq!(
        s[0].primary.width(),
        3,
        "the primary metric by transactions"
    );
    let init = &s[0].headlines[0];
    assert_eq!(init.metric, "init_seconds");
    assert!(init.column.is_none(), "{:?}", init.column);
    let rows: Vec<&str> = init.rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(rows, ["thin", "full"]);
    assert!((mean(&init.rows[0].cells[0]) - 60.0).abs() < 1.0);
}

#[test]
fn the_legend_of_one_tables_variants_names_only_what_varies() {
    // Seed 000: the curve's legend read `vm[glu…ns=[]…` for
    // `vm[gluster.mount_options=[],preallocation=off]` and its siblings.
    let opts = |o: &str| factor("gluster.mount_options", o, o, Scale::Category);
    let prealloc = |p: &str| factor("preallocation", p, p, Scale::Category);
    let tx = |n: u32| factor("transactions", &n.to_string(), &n.to_string(), Scale::Count);
    let mut b = Builder::new();
    for o in ["[]", "[\"auto-invalidation=false\"]"] {
        for p in ["off", "full"] {
            b = b.target("vm", vec![opts(o), prealloc(p)]);
        }
    }
    let c = b
        .workload("pgbench", vec![tx(12)])
        .workload("pgbench", vec![tx(25)])
        .runs(|_, _| 1.0);
    let s = &studies_of(c.clone())[0];
    assert_eq!(
        legend(&studies_of(c)),
        [
            "mount_options=[], preallocation=off",
            "mount_options=[], preallocation=full",
            "mount_options=[\"auto-invalidation=false\"], preallocation=off",
            "mount_options=[\"auto-invalidation=false\"], preallocation=full",
        ]
    );
    // The tables keep the variant's whole name.
    assert_eq!(
        s.primary.rows[0].label,
        "vm[gluster.mount_options=[],preallocation=off]"
    );
}

/// The labels of the first study's primary curves, in order.
fn legend(studies: &[Study]) -> Vec<String> {
    let s = &studies[0];
    let curve = charts::curve(s, &s.primary).unwrap();
    curve.curves.iter().map(|c| c.label.clone()).collect()
}

#[test]
fn the_legend_of_several_tables_keeps_their_names() {
    let size = |n: u32| factor("size", &n.to_string(), &n.to_string(), Scale::Size);
    let c = Builder::new()
        .target("disk", vec![])
        .target("gluster", vec![])
        .workload("tiny", vec![size(512)])
        .workload("tiny", vec![size(1024)])
        .runs(|_, _| 1.0);
    assert_eq!(legend(&studies_of(c)), ["disk", "gluster"]);
}

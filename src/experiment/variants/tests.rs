use crate::experiment::{parse_experiment, Experiment};
use crate::params::Value;

const DIR: &str = "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n";

fn parse(text: &str) -> Experiment {
    match parse_experiment("t.toml", text) {
        Ok(e) => e,
        Err(e) => panic!("{e}\n{text}"),
    }
}

/// (target, workload) pairs that run, as the plan makes them (the plan
/// sits above the experiment, so it is not asked here).
fn pairs(e: &Experiment) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (w, wl) in e.workloads.iter().enumerate() {
        for (t, tg) in e.targets.iter().enumerate() {
            if wl.runs_on(tg) {
                out.push((t, w));
            }
        }
    }
    out
}

/// The error's `line:column` and message.
fn refused(text: &str) -> (String, String) {
    let e = parse_experiment("t.toml", text)
        .expect_err("refused")
        .to_string();
    let rest = e.strip_prefix("t.toml:").unwrap_or(&e);
    let (at, msg) = rest.split_at(rest.find(": ").unwrap_or(0));
    (at.to_string(), msg.trim_start_matches(": ").to_string())
}

#[test]
fn a_sweep_of_two_parameters_makes_their_product() {
    let e = parse(&format!(
        "{DIR}[[workload]]\nname = \"tpcb\"\nkind = \"pgbench\"\nsweep = {{ clients = [1, 8], transactions = [500, 1000] }}\n"
    ));
    let names: Vec<&str> = e.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "tpcb[clients=1,transactions=500]",
            "tpcb[clients=1,transactions=1000]",
            "tpcb[clients=8,transactions=500]",
            "tpcb[clients=8,transactions=1000]",
        ]
    );
    let last = &e.workloads[3];
    assert_eq!(last.family, "tpcb");
    assert_eq!(last.slug, "tpcb-4");
    assert_eq!(last.params.get("clients"), Some(&Value::Int(8)));
    assert_eq!(last.params.get("transactions"), Some(&Value::Int(1000)));
    let keys: Vec<(&str, &str)> = last
        .factors
        .iter()
        .map(|f| (f.key.as_str(), f.value.as_str()))
        .collect();
    assert_eq!(keys, [("clients", "8"), ("transactions", "1000")]);
    assert!(
        e.workloads[3].config.estimate() > e.workloads[2].config.estimate(),
        "each variant is configured with its own values"
    );
    assert_eq!(pairs(&e).len(), 4, "each variant runs on the one target");
}

#[test]
fn zip_pairs_the_lists_and_needs_one_length() {
    let e = parse(&format!(
        "{DIR}[[workload]]\nname = \"w\"\nkind = \"io\"\nsweep = {{ bs = [\"4k\", \"1M\"], size = [\"1M\", \"64M\"] }}\nsweep_mode = \"zip\"\n"
    ));
    let names: Vec<&str> = e.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["w[bs=4k,size=1M]", "w[bs=1M,size=64M]"]);
    assert_eq!(e.workloads[1].factors[0].value, (1 << 20).to_string());
    let (at, msg) = refused(&format!(
        "{DIR}[[workload]]\nname = \"w\"\nkind = \"io\"\nsweep = {{ bs = [\"4k\", \"8k\"], size = [\"1M\"] }}\nsweep_mode = \"zip\"\n"
    ));
    assert_eq!(at, "9:14");
    assert!(
        msg.contains("need one length (bs has 2, size has 1)"),
        "{msg}"
    );
}

#[test]
fn a_table_parameter_sweeps_its_entries() {
    let e = parse(
        "[[target]]\nname = \"gl\"\nkind = \"gluster\"\noptions = { \"performance.io-cache\" = \"off\" }\n\
         sweep = { options = { \"performance.write-behind\" = [\"on\", \"off\"] } }\n\
         [[workload]]\nname = \"w\"\nkind = \"io\"\n",
    );
    assert_eq!(e.targets.len(), 2);
    assert_eq!(e.targets[1].name, "gl[performance.write-behind=off]");
    match e.targets[1].params.get("options") {
        Some(Value::Map(m)) => {
            assert_eq!(m["performance.write-behind"], "off");
            assert_eq!(
                m["performance.io-cache"], "off",
                "the table's own entries stay"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(e.baseline(), 0);
}

#[test]
fn the_first_values_are_the_baseline_unless_a_target_says_so() {
    let swept = "[[target]]\nname = \"img\"\nkind = \"loop\"\nsweep = { allocation = [\"thin\", \"preallocated\"] }\n";
    let w = "[[workload]]\nname = \"w\"\nkind = \"io\"\n";
    let e = parse(&format!("{swept}{DIR}{w}"));
    assert_eq!(e.targets[e.baseline()].name, "img[allocation=thin]");
    let e = parse(&format!("{swept}{DIR}baseline = true\n{w}"));
    assert_eq!(e.targets[e.baseline()].name, "a");
    let e = parse(&format!("{DIR}{swept}baseline = true\n{w}"));
    assert_eq!(e.targets[e.baseline()].name, "img[allocation=thin]");
    assert!(e.targets[1].baseline && !e.targets[2].baseline);
}

#[test]
fn a_loop_target_stands_on_each_variant_of_another() {
    let e = parse(
        "[[target]]\nname = \"vm\"\nkind = \"loop\"\non = \"gl\"\nsweep = { allocation = [\"thin\", \"preallocated\"] }\n\
         [[target]]\nname = \"gl\"\nkind = \"gluster\"\nsweep = { options = { \"performance.cache-invalidation\" = [\"on\", \"off\"] } }\n\
         [[workload]]\nname = \"w\"\nkind = \"io\"\ntargets = [\"vm\"]\n",
    );
    let names: Vec<&str> = e.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "vm[performance.cache-invalidation=on,allocation=thin]",
            "vm[performance.cache-invalidation=on,allocation=preallocated]",
            "vm[performance.cache-invalidation=off,allocation=thin]",
            "vm[performance.cache-invalidation=off,allocation=preallocated]",
            "gl[performance.cache-invalidation=on]",
            "gl[performance.cache-invalidation=off]",
        ]
    );
    assert_eq!(e.targets[2].on, Some(5));
    assert_eq!(
        e.targets[2].params.get("on"),
        Some(&Value::Str("gl[performance.cache-invalidation=off]".into()))
    );
    assert_eq!(e.provision_order(), [4, 0, 1, 5, 2, 3]);
    // The Gluster volumes carry the images; the baseline is measured.
    assert_eq!(e.baseline(), 0);
    assert_eq!(pairs(&e).len(), 4);
}

#[test]
fn workloads_name_targets_by_table_or_variant() {
    let e = parse(&format!(
        "{DIR}[[target]]\nname = \"img\"\nkind = \"loop\"\nsweep = {{ fs = [\"ext4\", \"xfs\"] }}\n\
         [[workload]]\nname = \"w\"\nkind = \"io\"\ntargets = [\"img\"]\n\
         [[workload]]\nname = \"x\"\nkind = \"io\"\ntargets = [\"img[fs=xfs]\"]\n"
    ));
    let pairs: Vec<(String, String)> = pairs(&e)
        .iter()
        .map(|&(t, w)| (e.targets[t].name.clone(), e.workloads[w].name.clone()))
        .collect();
    assert_eq!(pairs.len(), 3);
    assert_eq!(pairs[2], ("img[fs=xfs]".into(), "x".into()));
}

#[test]
fn a_variant_that_does_not_validate_is_refused_at_its_value() {
    let (at, msg) = refused(&format!(
        "{DIR}[[workload]]\nname = \"w\"\nkind = \"io\"\nsize = \"64k\"\nsweep = {{ bs = [\"4k\", \"1M\"] }}\n"
    ));
    assert_eq!(at, "9:23");
    assert!(msg.starts_with("workload `w[bs=1M]`:"), "{msg}");
    assert!(msg.contains("larger than size"), "{msg}");
}

#[test]
fn sweep_refusals_are_located() {
    let w = |sweep: &str| format!("{DIR}[[workload]]\nname = \"w\"\nkind = \"io\"\n{sweep}\n");
    let cases: &[(&str, &str, &str)] = &[
        ("sweep = { runtme = [\"1s\"] }", "8:11", "unknown swept key `runtme`; did you mean `runtime`?"),
        ("sweep = { clients = [1, 8] }", "8:11", "sweeps `clients`, a parameter of pgbench, sqlite-oltp workloads that this kind does not have"),
        ("sweep = { bs = [] }", "8:16", "`sweep.bs` is an empty list"),
        ("sweep = { bs = \"4k\" }", "8:16", "must be a list of values"),
        ("sweep = { bs = [\"4k\", \"4k\"] }", "8:23", "lists `4k` twice"),
        ("sweep = { bs = [\"4q\"] }", "8:17", "unknown size unit"),
        ("sweep = { name = [\"a\"] }", "8:11", "`name` cannot be swept"),
        ("sweep = 3", "8:9", "must be a table of lists"),
        ("sweep = {}", "8:9", "`sweep` is empty"),
        ("bs = \"8k\"\nsweep = { bs = [\"4k\"] }", "9:11", "`bs` is both set and swept"),
        ("sweep_mode = \"zip\"", "8:14", "there is no `sweep`"),
        ("sweep = { bs = [\"4k\"] }\nsweep_mode = \"zipp\"", "9:14", "did you mean `zip`?"),
        ("sweep = { bs = [\"4k\"] }\ncompare_levels = [\"size\"]", "9:18", "names `size`, which neither it nor its targets sweep (swept: bs)"),
    ];
    for (sweep, at, phrase) in cases {
        let (got, msg) = refused(&w(sweep));
        assert_eq!(
            (got.as_str(), msg.contains(phrase)),
            (*at, true),
            "{sweep}: {got} {msg}"
        );
    }
}

#[test]
fn stacking_refusals_are_located() {
    let w = "[[workload]]\nname = \"w\"\nkind = \"io\"\n";
    let cases: &[(&str, &str, &str)] = &[
        ("[[target]]\nname = \"vm\"\nkind = \"loop\"\non = \"vm\"\n", "4:6", "cannot stand on itself"),
        ("[[target]]\nname = \"vm\"\nkind = \"loop\"\non = \"gll\"\n[[target]]\nname = \"gl\"\nkind = \"gluster\"\n", "4:6", "stands on `gll`, which the experiment does not define; did you mean `gl`?"),
        ("[[target]]\nname = \"x\"\nkind = \"loop\"\non = \"y\"\n[[target]]\nname = \"y\"\nkind = \"loop\"\non = \"x\"\n", "4:6", "circle"),
        ("[[target]]\nname = \"vm\"\nkind = \"loop\"\non = \"gl\"\ndir = \"/tmp\"\n[[target]]\nname = \"gl\"\nkind = \"gluster\"\n", "5:7", "`dir` does not apply"),
        ("[[target]]\nname = \"gl\"\nkind = \"gluster\"\non = \"x\"\n", "4:1", "unknown key `on`"),
        ("[[target]]\nname = \"vm\"\nkind = \"loop\"\nsweep = { on = [\"a\"] }\n", "4:11", "`on` cannot be swept"),
        ("[[target]]\nname = \"vm\"\nkind = \"loop\"\non = \"gl[size=3G]\"\n[[target]]\nname = \"gl\"\nkind = \"loop\"\nsweep = { size = [\"2G\", \"4G\"] }\n", "4:6", "stands on `gl[size=3G]`, which is not a variant of `gl` (its variants, as `storlab check` lists them: gl[size=2G], gl[size=4G]); name one of them exactly, or write `on = \"gl\"`"),
        ("[[target]]\nname = \"vm\"\nkind = \"loop\"\non = \"gl[size=2G]\"\n[[target]]\nname = \"gl\"\nkind = \"loop\"\nsize = \"2G\"\n", "4:6", "`gl` is not swept: it has no variants; write `on = \"gl\"`"),
        ("[[target]]\nname = \"vm\"\nkind = \"loop\"\non = \"vm[size=2G]\"\nsweep = { size = [\"1G\", \"2G\"] }\n", "4:6", "cannot stand on itself"),
        ("[[target]]\nname = \"t\"\nkind = \"tmpfs\"\nsize = \"512M\"\n[[target]]\nname = \"vm\"\nkind = \"loop\"\non = \"t\"\nsize = \"300M\"\nsweep = { fs = [\"ext4\", \"xfs\"] }\n", "8:6", "2 images stand on `t` (tmpfs): `vm[fs=ext4]`, `vm[fs=xfs]` need 600.0 MiB together, but it holds only 512.0 MiB"),
    ];
    for (targets, at, phrase) in cases {
        let (got, msg) = refused(&format!("{targets}{w}"));
        assert_eq!(
            (got.as_str(), msg.contains(phrase)),
            (*at, true),
            "{targets}: {got} {msg}"
        );
    }
}

#[test]
fn a_workload_and_its_target_cannot_sweep_one_key() {
    let (at, msg) = refused(
        "[[target]]\nname = \"t\"\nkind = \"tmpfs\"\nsweep = { size = [\"1G\", \"2G\"] }\n\
         [[workload]]\nname = \"w\"\nkind = \"io\"\nsweep = { size = [\"1M\"] }\n",
    );
    assert_eq!(at, "8:19");
    assert!(msg.contains("which target `t` sweeps too"), "{msg}");
}

#[test]
fn a_name_that_is_also_a_variants_path_name_is_refused() {
    // `w[bs=1M]` is `w-2` in paths; `w_2` would share its directories.
    for other in ["w-2", "w_2"] {
        let (_, msg) = refused(&format!(
            "{DIR}[[workload]]\nname = \"w\"\nkind = \"io\"\nsweep = {{ bs = [\"4k\", \"1M\"] }}\n\
             [[workload]]\nname = \"{other}\"\nkind = \"io\"\n"
        ));
        assert!(
            msg.contains("is also how storlab names a variant"),
            "{other}: {msg}"
        );
    }
}

#[test]
fn a_target_stands_on_one_variant_by_the_name_check_prints() {
    let e = parse(
        "[[target]]\nname = \"d\"\nkind = \"tmpfs\"\nsweep = { size = [\"128M\", \"256M\"] }\n\
         [[target]]\nname = \"img\"\nkind = \"loop\"\nsize = \"64M\"\non = \"d[size=256M]\"\n\
         sweep = { allocation = [\"thin\", \"preallocated\"] }\n\
         [[workload]]\nname = \"w\"\nkind = \"io\"\n",
    );
    let names: Vec<&str> = e.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "d[size=128M]",
            "d[size=256M]",
            "img[allocation=thin]",
            "img[allocation=preallocated]"
        ]
    );
    // Both images on the one variant, which they carry no factor of.
    assert_eq!((e.targets[2].on, e.targets[3].on), (Some(1), Some(1)));
    assert_eq!(e.targets[2].factors.len(), 1);
    assert_eq!(e.targets[2].slug, "img-1");
    assert_eq!(e.provision_order(), [0, 1, 2, 3]);
}

#[test]
fn a_stacked_variant_is_labelled_with_its_own_values() {
    // The tmpfs sweeps `size`; the image has a `size` of its own (64M),
    // which is what `size` must mean on its name and its metrics.
    let e = parse(
        "[[target]]\nname = \"d\"\nkind = \"tmpfs\"\nsweep = { size = [\"128M\", \"256M\"] }\n\
         [[target]]\nname = \"img\"\nkind = \"loop\"\nsize = \"64M\"\non = \"d\"\n\
         [[target]]\nname = \"top\"\nkind = \"loop\"\non = \"img\"\nsweep = { size = [\"16M\", \"32M\"] }\n\
         [[workload]]\nname = \"w\"\nkind = \"io\"\n",
    );
    let names: Vec<&str> = e.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "d[size=128M]",
            "d[size=256M]",
            "img[d.size=128M]",
            "img[d.size=256M]",
            "top[d.size=128M,size=16M]",
            "top[d.size=128M,size=32M]",
            "top[d.size=256M,size=16M]",
            "top[d.size=256M,size=32M]",
        ]
    );
    let img = &e.targets[2];
    let labels = crate::experiment::sweep::labels(&img.factors);
    assert_eq!(
        labels.value("d.size"),
        Some((128u64 << 20).to_string().as_str())
    );
    assert_eq!(labels.value("size"), None, "64M is the image's size");
    let top = &e.targets[5];
    let labels = crate::experiment::sweep::labels(&top.factors);
    assert_eq!(
        labels.value("size"),
        Some((32u64 << 20).to_string().as_str())
    );
    assert_eq!(
        top.params.get("on"),
        Some(&Value::Str("img[d.size=128M]".into()))
    );
    // A key the image does not have keeps its name (seed 000's options).
    let e = parse(
        "[[target]]\nname = \"gl\"\nkind = \"gluster\"\nsweep = { options = { \"performance.write-behind\" = [\"on\", \"off\"] } }\n\
         [[target]]\nname = \"vm\"\nkind = \"loop\"\non = \"gl\"\n\
         [[workload]]\nname = \"w\"\nkind = \"io\"\ntargets = [\"vm\"]\n",
    );
    assert_eq!(e.targets[2].name, "vm[performance.write-behind=on]");
}

#[test]
fn a_workload_naming_a_variant_by_its_old_name_is_told_the_new_one() {
    let (at, msg) = refused(
        "[[target]]\nname = \"d\"\nkind = \"tmpfs\"\nsweep = { size = [\"128M\", \"256M\"] }\n\
         [[target]]\nname = \"img\"\nkind = \"loop\"\nsize = \"64M\"\non = \"d\"\n\
         [[workload]]\nname = \"w\"\nkind = \"io\"\ntargets = [\"img[size=128M]\"]\n",
    );
    assert_eq!(at, "13:11");
    assert!(
        msg.ends_with("which the experiment does not define; did you mean `img[d.size=128M]`?"),
        "{msg}"
    );
}

#[test]
fn variants_that_would_make_the_same_cluster_share_its_directory() {
    // reinit = "once": one database serves every transaction count, as the
    // seed's VM served every pgbench -t; a sweep of scale makes one each.
    let e = parse(&format!(
        "{DIR}[[workload]]\nname = \"tpcb\"\nkind = \"pgbench\"\nreinit = \"once\"\nsweep = {{ scale = [1, 2], transactions = [10, 20] }}\n"
    ));
    let names: Vec<&str> = e.workloads.iter().map(|w| w.name.as_str()).collect();
    let owner = |w: usize| e.workloads[e.files_of(w)].name.as_str();
    for (w, name) in names.iter().enumerate() {
        let scale = if name.contains("scale=1") {
            "scale=1"
        } else {
            "scale=2"
        };
        assert!(owner(w).contains(scale), "{name} uses {}", owner(w));
    }
    let owners: std::collections::BTreeSet<usize> =
        (0..names.len()).map(|w| e.files_of(w)).collect();
    assert_eq!(owners.len(), 2, "{names:?}");
    // A fresh cluster every run keeps nothing to share.
    let each = parse(&format!(
        "{DIR}[[workload]]\nname = \"tpcb\"\nkind = \"pgbench\"\nsweep = {{ transactions = [10, 20] }}\n"
    ));
    assert_eq!((each.files_of(0), each.files_of(1)), (0, 1));
}

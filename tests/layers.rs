//! Where the reads came from, against ground truth on real stacks: an
//! O_DIRECT read on a loop target comes from the device, a re-read of a
//! cached file from the page cache; a re-read file well inside Gluster's
//! io-cache comes from the client's translators and one four times the
//! cache's size does not; pgbench's database inside shared_buffers is
//! read from them, one larger than them partly from below. Every run's
//! layers add up to what its workload read, or a layer's read-ahead names
//! the gap. The waterfalls are the analysis' own (`storlab::analysis`),
//! over the store the campaign wrote.

use storlab::analysis::campaign::Options;
use storlab::analysis::reads::{Waterfall, GAP_SHARE};
use storlab::metric::layer::Layer;
use storlab::store::Store;

use crate::provision::daemons;
use crate::telemetry::{campaign, loop_target};
use crate::util::{runs, Lab};

/// The analysis' waterfalls of the lab's latest campaign.
fn reads(lab: &Lab) -> storlab::analysis::reads::Reads {
    let store = Store::open(&lab.db()).expect("the store");
    let c = store.load_campaign(1).expect("campaign 1");
    storlab::analysis::analyse(&c, &Options::default())
        .expect("the analysis")
        .reads
}

/// The waterfall of `workload` on `target`.
fn pair(r: &storlab::analysis::reads::Reads, w: &str, t: &str) -> Waterfall {
    let found = r
        .pair(w, t)
        .unwrap_or_else(|| panic!("no waterfall of {w} on {t}: {:?}", r.pairs));
    eprintln!("{w} on {t}: {}", found.sentence());
    found.clone()
}

/// The waterfall of one matrix cell's test of `workload` on `target`.
fn cell(r: &storlab::analysis::reads::Reads, w: &str, t: &str, test: &str) -> Waterfall {
    let found = r
        .cells_of(w, t)
        .find(|c| c.cell.value("test") == Some(test))
        .unwrap_or_else(|| panic!("no {test} cell of {w} on {t}: {:?}", r.cells));
    eprintln!("{test} of {w} on {t}: {}", found.sentence());
    found.clone()
}

/// Every run's served layers add up to what its workload read within
/// [`GAP_SHARE`], or some layer below was asked more than the layer above
/// it passed down (read-ahead, or another process on a shared disk): the
/// gap has a name.
fn balances(export: &serde_json::Value) {
    for r in runs(export).iter().filter(|r| r["status"] == "ok") {
        let layer = |name: &str, layer: &str| -> Option<f64> {
            r["metrics"].as_array()?.iter().find_map(|m| {
                let labels = m["labels"].as_object()?;
                (m["name"] == name && labels.len() == 1 && labels.get("layer")?.as_str()? == layer)
                    .then(|| m["value"].as_f64())
                    .flatten()
            })
        };
        let Some(read) = layer("layer_read_bytes", "workload") else {
            continue;
        };
        let stack: Vec<(Layer, f64)> = Layer::ALL
            .into_iter()
            .skip(1)
            .filter_map(|l| Some((l, layer("layer_read_bytes", l.name())?)))
            .collect();
        let served: f64 = r["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| {
                m["name"] == "layer_served_bytes" && m["labels"].as_object().unwrap().len() == 1
            })
            .filter_map(|m| m["value"].as_f64())
            .sum();
        let named = stack.windows(2).any(|w| w[1].1 > w[0].1);
        assert!(
            (served - read).abs() <= GAP_SHARE * read || named,
            "run {}: the layers served {served} for {read} read, and no layer passed down more than it was asked: {stack:?}",
            r["id"]
        );
    }
}

#[test]
#[ignore = "needs root"]
fn an_o_direct_read_on_a_loop_target_comes_from_the_device() {
    require_root!();
    let lab = Lab::new();
    let export = campaign(
        &lab,
        "drop_caches = true",
        loop_target(),
        "[[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"read\"\nbs = \"1M\"\nsize = \"64M\"\ndirect = true\n",
    );
    balances(&export);
    let w = pair(&reads(&lab), "r", "ext4");
    // The page cache was passed by: what it was asked went down whole.
    let below = 1.0 - w.share_of(Layer::PageCache);
    assert!((below - 1.0).abs() <= 0.02, "{}: {w:?}", w.sentence());
    // With caches dropped, the image's page cache held nothing either: the
    // disk under it read it.
    assert!(w.share_of(Layer::Device) >= 0.98, "{}", w.sentence());
    assert!(
        w.sentence()
            .ends_with(&format!("100% from {}", w.layers.last().unwrap().words)),
        "{}",
        w.sentence()
    );
}

#[test]
#[ignore = "needs root"]
fn a_cached_reread_comes_from_the_page_cache() {
    require_root!();
    let lab = Lab::new();
    // The file it laid out, read for 2 s over and over without dropping it.
    let export = campaign(
        &lab,
        "drop_caches = false",
        loop_target(),
        "[[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"read\"\nbs = \"1M\"\nsize = \"32M\"\nruntime = \"2s\"\ninvalidate = false\n",
    );
    balances(&export);
    let w = pair(&reads(&lab), "r", "ext4");
    // Mostly: another process on this host dropping its caches meanwhile
    // sends some of the reads to the device.
    assert!(w.share_of(Layer::PageCache) >= 0.8, "{}", w.sentence());
    // The page-cache warning is a reading of the same table: said exactly
    // when the device served under 10%.
    let warned = runs(&export)[0]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| {
            x["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("page cache: the page cache served"))
        });
    assert_eq!(
        warned,
        w.share_of(Layer::Device) < 0.1,
        "{}: {}",
        w.sentence(),
        runs(&export)[0]["warnings"]
    );
}

/// A Gluster volume with io-cache (and read-ahead) on and a 64 MB cache,
/// mounted with direct I/O so that no page cache sits above it.
const IO_CACHE: &str = "[[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 2\nreplica = 2\ndir = \"@DIR@\"\n\
    mount_options = [\"direct-io-mode=enable\"]\n\
    options = { \"performance.io-cache\" = \"on\", \"performance.read-ahead\" = \"on\", \"performance.cache-size\" = \"64MB\" }\n";

/// A matrix of files from `min` to `max`: written, read, re-read in 1M
/// records.
fn matrix(name: &str, min: &str, max: &str) -> String {
    format!(
        "[[workload]]\nname = \"{name}\"\nkind = \"matrix\"\ntests = [\"write\", \"read\", \"reread\"]\n\
         min_file_size = \"{min}\"\nmax_file_size = \"{max}\"\nmin_record_size = \"1M\"\nmax_record_size = \"1M\"\n"
    )
}

#[test]
#[ignore = "needs root"]
fn a_file_inside_glusters_io_cache_is_reread_from_it_and_one_four_times_its_size_is_not() {
    require_root!();
    let _d = daemons();
    let lab = Lab::new();
    // 4M and 8M are a sixteenth and an eighth of the cache (Gluster 10's
    // io-cache keeps files up to about a quarter of it: docs/seed-004.md);
    // 256M is four times it. Two sizes, so that a per-size map could be
    // drawn.
    let export = campaign(
        &lab,
        "drop_caches = true",
        IO_CACHE,
        &format!(
            "{}\n{}",
            matrix("small", "4M", "8M"),
            matrix("large", "256M", "256M")
        ),
    );
    balances(&export);
    let r = reads(&lab);
    // Between a cell's tests only what reads fast is read (Gluster's
    // counters would change the next test's figures): a cell tells the
    // page cache from the rest and says why it cannot say more.
    let small = cell(&r, "small", "gl", "reread");
    assert!(
        small.sentence().contains("not told apart"),
        "{}",
        small.sentence()
    );
    // So the report draws no map of the layer that served each cell, in
    // which every cell would name the same joined layers, and says once
    // which layers the whole run alone tells apart, and why.
    let md = lab.ok(&["report", "--format", "md"]);
    assert!(
        md.contains("the bricks' page cache are told apart over the whole run only"),
        "{md}"
    );
    assert!(
        !md.contains("on gl: where the reads came from by file size"),
        "{md}"
    );
    // The run's figures, read before and after the whole run, tell every
    // layer apart: the 4M and 8M files' re-read (half their reads) came
    // from io-cache, the 256M file's reads from below it.
    let small = pair(&r, "small", "gl");
    assert!(
        small.share_of(Layer::GlusterClient) >= 0.4,
        "4M and 8M read and re-read: {}",
        small.sentence()
    );
    let large = pair(&r, "large", "gl");
    let above = large.share_of(Layer::PageCache) + large.share_of(Layer::GlusterClient);
    assert!(above <= 0.1, "256M read and re-read: {}", large.sentence());
    // What each brick was asked is stored, and the profile counted reads.
    let bricks: Vec<&serde_json::Value> = runs(&export)[0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            m["name"] == "layer_read_bytes"
                && m["labels"]["brick"].is_string()
                && m["labels"]["test"].is_null()
        })
        .collect();
    assert_eq!(bricks.len(), 2, "{bricks:?}");
}

/// pgbench on a loop target, select-only so that its reads are the
/// database's, after a prewarm that brings every page of the scale-1
/// database (about 16 MB) into memory once, with `shared_buffers` as
/// given.
fn pgbench(shared_buffers: &str) -> String {
    format!(
        "[[workload]]\nname = \"pg\"\nkind = \"pgbench\"\nscale = 1\nclients = 2\nthreads = 2\n\
         prewarm = \"4s\"\nduration = \"4s\"\nmode = \"prepared\"\nbuiltin = \"select-only\"\n\
         settings = {{ shared_buffers = \"{shared_buffers}\" }}\n"
    )
}

#[test]
#[ignore = "needs root"]
fn a_database_inside_shared_buffers_is_read_from_them_and_a_larger_one_partly_from_below() {
    require_root!();
    require_program!("pgbench");
    // PostgreSQL's cluster and WAL need more room than the io tests' 256M.
    let target = loop_target().replace("256M", "768M");
    let lab = Lab::new();
    let export = campaign(&lab, "drop_caches = true", &target, &pgbench("128MB"));
    balances(&export);
    let w = pair(&reads(&lab), "pg", "ext4");
    assert!(w.share_of(Layer::SharedBuffers) > 0.99, "{}", w.sentence());
    let lab = Lab::new();
    let export = campaign(&lab, "drop_caches = true", &target, &pgbench("2MB"));
    balances(&export);
    let w = pair(&reads(&lab), "pg", "ext4");
    assert!(w.share_of(Layer::SharedBuffers) < 0.95, "{}", w.sentence());
    let below = w.share_of(Layer::PageCache)
        + w.share_of(Layer::ImagePageCache)
        + w.share_of(Layer::Device);
    assert!(below > 0.05, "{}", w.sentence());
}

use super::*;
use crate::metric::labels::{LabelDef, BRICK};
use crate::metric::layer::joined;
use crate::metric::MetricDef;
use crate::testdata::runs;

/// What one level of a stack was asked: bytes, and per device or brick;
/// `None` when its counter could not be read.
type Asked = Option<(f64, Vec<(&'static LabelDef, &'static str, f64)>)>;

fn count(bytes: f64) -> Asked {
    Some((bytes, Vec::new()))
}

fn parts(def: &'static LabelDef, parts: &[(&'static str, f64)]) -> Asked {
    Some((
        parts.iter().map(|p| p.1).sum(),
        parts.iter().map(|&(n, b)| (def, n, b)).collect(),
    ))
}

fn devices(each: &[(&'static str, f64)]) -> Asked {
    parts(&DEVICE, each)
}

fn put(r: &mut RunData, def: &MetricDef, labels: Labels, value: f64) {
    r.metrics
        .insert(MetricKey::new(def.name, labels), runs::value(def, value));
}

/// A run of `w` on `t` whose stack `levels` was asked `asked`, the
/// workload having read `asked[0]`, stored as measure::layers stores it:
/// each measured level's bytes asked (and per device), and what it served
/// down to the next measured level (the levels between served together).
fn run(id: i64, levels: &[Layer], asked: &[Asked], cell: &Labels) -> RunData {
    let mut r = runs::ok(id, "t", "w");
    let at = |layer: &str| cell.clone().with(&LAYER, layer);
    let top = asked[0].as_ref().map_or(0.0, |a| a.0);
    put(
        &mut r,
        &m::LAYER_READ_BYTES,
        at(Layer::Workload.name()),
        top,
    );
    let measured: Vec<usize> = (0..levels.len()).filter(|&i| asked[i].is_some()).collect();
    for (n, &i) in measured.iter().enumerate() {
        let next = measured.get(n + 1).copied();
        let (bytes, parts) = asked[i].clone().unwrap();
        put(&mut r, &m::LAYER_READ_BYTES, at(levels[i].name()), bytes);
        for (def, part, b) in parts {
            put(
                &mut r,
                &m::LAYER_READ_BYTES,
                at(levels[i].name()).with(def, part),
                b,
            );
        }
        let below = next.map_or(0.0, |j| asked[j].as_ref().unwrap().0);
        let group = joined(&levels[i..next.unwrap_or(levels.len())]);
        put(
            &mut r,
            &m::LAYER_SERVED_BYTES,
            at(&group),
            (bytes - below).max(0.0),
        );
    }
    r
}

fn whole(runs: &[&RunData], words: &Words) -> Option<Waterfall> {
    waterfall(runs, &|l| l.iter().count() == 0, Labels::new(), words)
}

const GLUSTER: [Layer; 4] = [
    Layer::PageCache,
    Layer::GlusterClient,
    Layer::BrickPageCache,
    Layer::Device,
];

#[test]
fn the_issues_example_reads_as_the_issue_says() {
    let runs = [run(
        1,
        &GLUSTER,
        &[
            count(100.0),
            count(29.0),
            count(7.0),
            devices(&[("vdb", 1.0)]),
        ],
        &Labels::new(),
    )];
    let refs: Vec<&RunData> = runs.iter().collect();
    let facts = serde_json::json!({"effective_options": {
        "performance.io-cache": "on", "performance.read-ahead": "off (DEFAULT)"}});
    let w = whole(&refs, &Words::of_target(&facts)).unwrap();
    assert_eq!(
        w.sentence(),
        "71% from the page cache, 22% from Gluster's io-cache, 6% from the bricks' page cache, 1% from vdb"
    );
    assert_eq!(w.largest().unwrap().layers, [Layer::PageCache]);
    assert_eq!(w.balance.gap, None);
    assert_eq!(w.balance.served_bytes, 100.0);
    assert!((w.share_of(Layer::GlusterClient) - 0.22).abs() < 1e-12);
}

#[test]
fn a_workload_that_read_nothing_has_no_waterfall() {
    // A writer: the disk under it read its metadata (and other processes'
    // blocks), none of it for the workload.
    let runs = [run(
        1,
        &[Layer::PageCache, Layer::Device],
        &[count(0.0), devices(&[("vda", 40960.0)])],
        &Labels::new(),
    )];
    let refs: Vec<&RunData> = runs.iter().collect();
    assert_eq!(
        whole(&refs, &Words::of_target(&serde_json::json!({}))),
        None
    );
}

#[test]
fn shares_add_up_to_the_whole_even_when_a_layer_reads_ahead() {
    // The page cache passed down 64 of the 100 read; the image's page
    // cache 64 to loop's image, and vda read 91 (others on the disk).
    let levels = [Layer::PageCache, Layer::ImagePageCache, Layer::Device];
    let runs = [run(
        1,
        &levels,
        &[count(100.0), count(64.0), devices(&[("vda", 91.0)])],
        &Labels::new(),
    )];
    let refs: Vec<&RunData> = runs.iter().collect();
    let w = whole(&refs, &Words::default()).unwrap();
    let shares: Vec<f64> = w.layers.iter().map(|s| s.share).collect();
    assert_eq!(shares, [0.36, 0.0, 0.64]);
    assert_eq!(w.sentence(), "36% from the page cache, 64% from vda");
    // The layers served 36 + 0 + 91 for the 100 read: the gap is named.
    assert_eq!(w.balance.gap, Some(("image_page_cache".to_string(), 27.0)));
    let said = w.balance.gap_sentence(&w.layers).unwrap();
    assert!(
        said.starts_with("the image's page cache passed 27 B more down to vda than it was asked"),
        "{said}"
    );
}

#[test]
fn layers_not_told_apart_are_one_entry_and_the_unread_are_named() {
    let levels = [
        Layer::PageCache,
        Layer::ZfsArc,
        Layer::ImagePageCache,
        Layer::Device,
    ];
    let mut r = run(
        1,
        &levels,
        &[count(100.0), count(40.0), None, devices(&[("vda", 10.0)])],
        &Labels::new(),
    );
    r.facts.insert(
        format!(
            "{}image_page_cache",
            crate::fact::catalogue::LAYER_NOT_MEASURED.name
        ),
        "zfs-fuse's reads of its pool are not told apart",
    );
    let w = whole(&[&r], &Words::default()).unwrap();
    assert_eq!(
        w.sentence(),
        "60% from the page cache, 30% from ZFS's ARC and the image's page cache (not told apart), 10% from vda"
    );
    assert_eq!(
        w.not_measured,
        [(
            Layer::ImagePageCache,
            "zfs-fuse's reads of its pool are not told apart".to_string()
        )]
    );
}

/// The labels of a reread cell of `size` bytes in 128k records.
fn reread_cell(size: u64) -> Labels {
    Labels::new()
        .with(&TEST, "reread")
        .with(&FILE_SIZE, size)
        .with(&RECORD_SIZE, 131072)
}

#[test]
fn runs_are_summed_and_cells_kept_apart() {
    let levels = [Layer::PageCache, Layer::Device];
    let mut a = run(
        1,
        &levels,
        &[count(100.0), devices(&[("vda", 0.0)])],
        &reread_cell(8),
    );
    let b = run(
        2,
        &levels,
        &[count(300.0), devices(&[("vda", 300.0)])],
        &reread_cell(64),
    );
    for (k, v) in b.metrics.iter() {
        a.metrics.insert(k.clone(), v.clone());
    }
    let c = run(
        3,
        &levels,
        &[count(100.0), devices(&[("vda", 100.0)])],
        &reread_cell(8),
    );
    let refs = [&a, &c];
    let found = cells(&refs);
    assert_eq!(found, [reread_cell(8), reread_cell(64)]);
    let of = |size: u64| {
        let cell = reread_cell(size);
        waterfall(&refs, &|l| *l == cell, cell.clone(), &Words::default()).unwrap()
    };
    let small = of(8);
    assert_eq!(small.runs, 2);
    assert_eq!(small.sentence(), "50% from the page cache, 50% from vda");
    let big = of(64);
    assert_eq!(big.runs, 1);
    assert_eq!(big.sentence(), "100% from vda");
    // No whole-run figures in these runs.
    assert!(whole(&refs, &Words::default()).is_none());
}

// A matrix's pair is its cells together: each brick's part of what the
// bricks were asked is not counted again beside the layer's figure.
#[test]
fn a_pair_of_cells_counts_the_bricks_once() {
    let levels = [
        Layer::PageCache,
        Layer::GlusterClient,
        Layer::BrickPageCache,
        Layer::Device,
    ];
    let cell = Labels::new()
        .with(&TEST, "reread")
        .with(&FILE_SIZE, 8)
        .with(&RECORD_SIZE, 131072);
    let r = run(
        1,
        &levels,
        &[
            count(100.0),
            count(100.0),
            parts(&BRICK, &[("h:/b0", 25.0), ("h:/b1", 25.0)]),
            devices(&[("vda", 10.0)]),
        ],
        &cell,
    );
    let refs = [&r];
    let in_pair = |l: &Labels| l.get(&TEST).is_some();
    for w in [
        waterfall(&refs, &in_pair, Labels::new(), &Words::default()).unwrap(),
        waterfall(&refs, &|l| *l == cell, cell.clone(), &Words::default()).unwrap(),
    ] {
        assert_eq!(
            w.sentence(),
            "50% from Gluster's client translators, 40% from the bricks' page cache, 10% from vda"
        );
        assert_eq!(w.balance.gap, None);
    }
}

/// A disk target whose device read `vda` of the 100 bytes its workload
/// read (the page cache served the rest).
fn disk(id: i64, vda: f64) -> Waterfall {
    let levels = [Layer::PageCache, Layer::Device];
    let mut r = run(
        id,
        &levels,
        &[count(100.0), devices(&[("vda", vda)])],
        &Labels::new(),
    );
    r.target = "disk".into();
    whole(&[&r], &Words::default()).unwrap()
}

#[test]
fn sides_read_from_different_layers_are_called_apart() {
    let gl = {
        let mut r = run(
            1,
            &GLUSTER,
            &[
                count(100.0),
                count(100.0),
                count(12.0),
                devices(&[("vda", 12.0)]),
            ],
            &Labels::new(),
        );
        r.target = "gluster".into();
        whole(&[&r], &Words::default()).unwrap()
    };
    let a = apart(&disk(2, 97.0), &gl).unwrap();
    assert_eq!(
        (
            a.candidate.as_str(),
            a.candidate_from.as_str(),
            a.candidate_pct
        ),
        ("gluster", "Gluster's client translators", 88)
    );
    assert_eq!(
        (
            a.baseline.as_str(),
            a.baseline_from.as_str(),
            a.baseline_pct
        ),
        ("disk", "vda", 97)
    );
    // The same layer on both sides, or shares that differ little, are not
    // apart.
    assert!(apart(&disk(2, 97.0), &disk(3, 97.0)).is_none());
    assert!(
        apart(&disk(4, 45.0), &disk(5, 55.0)).is_none(),
        "55% page cache against 55% vda"
    );
}

/// A Gluster matrix run as measure::layers stores it: the whole run's
/// figures tell every layer apart (io-cache served 40 of the 100 bytes,
/// the bricks were asked 60); its two reading cells, 50 bytes each, tell
/// only what lies above vda from vda (Gluster's counters are not read
/// between a cell's tests), vda reading `cells_vda` during them (none: not
/// read); over the whole run vda read `whole_vda` (writes, others' reads).
fn gluster_matrix(id: i64, whole_vda: f64, cells_vda: &[Option<f64>]) -> RunData {
    let mut r = run(
        id,
        &GLUSTER,
        &[
            count(100.0),
            count(100.0),
            count(60.0),
            devices(&[("vda", whole_vda)]),
        ],
        &Labels::new(),
    );
    for (size, vda) in [8, 64].into_iter().zip(cells_vda.iter().copied()) {
        let asked = [
            count(50.0),
            None,
            None,
            vda.and_then(|v| devices(&[("vda", v)])),
        ];
        let c = run(id, &GLUSTER, &asked, &reread_cell(size));
        for (k, v) in c.metrics.iter() {
            r.metrics.insert(k.clone(), v.clone());
        }
    }
    r
}

#[test]
fn a_matrixs_whole_run_reads_its_device_during_its_reading_cells() {
    let stored = gluster_matrix(1, 90.0, &[Some(0.0), Some(20.0)]);
    // Over the whole run vda read more than the bricks asked: as stored,
    // the bricks' page cache seems to serve nothing.
    assert_eq!(
        whole(&[&stored], &Words::default()).unwrap().sentence(),
        "40% from Gluster's client translators, 60% from vda"
    );
    // During the reading cells vda read 20 of the 60 the bricks asked.
    let read = bottom_of_cells(&stored, &device_whole()).expect("every reading cell read vda");
    let w = whole(&[&read], &Words::default()).unwrap();
    assert_eq!(
        w.sentence(),
        "40% from Gluster's client translators, 40% from the bricks' page cache, 20% from vda"
    );
    assert_eq!(w.balance.gap, None);
    // A cell whose device was not read, or a run without cells, keeps
    // the whole run's figures.
    assert!(bottom_of_cells(
        &gluster_matrix(2, 90.0, &[Some(0.0), None]),
        &device_whole()
    )
    .is_none());
    let plain = gluster_matrix(3, 90.0, &[]);
    assert!(bottom_of_cells(&plain, &device_whole()).is_none());
}

#[test]
fn layers_a_matrixs_cells_join_and_its_whole_run_tells_apart_are_named() {
    let r = gluster_matrix(1, 90.0, &[Some(0.0), Some(20.0)]);
    let refs = [&r];
    let words = Words::default();
    let of_cells = |refs: &[&RunData]| -> Vec<Waterfall> {
        cells(refs)
            .into_iter()
            .filter_map(|c| waterfall(refs, &|l| *l == c, c.clone(), &words))
            .collect()
    };
    let reads = Reads {
        pairs: vec![whole(&refs, &words).unwrap()],
        cells: of_cells(&refs),
        files: Vec::new(),
    };
    let (w, t) = (&reads.pairs[0].workload, &reads.pairs[0].target);
    assert_eq!(
        reads.run_only(w, t),
        [Layer::GlusterClient, Layer::BrickPageCache]
    );
    assert!(reads.cells_tell_only_memory(w, t));
    // A matrix on a disk: its cells tell the page cache from the device
    // as its whole run does.
    let cell = Labels::new()
        .with(&TEST, "read")
        .with(&FILE_SIZE, 8)
        .with(&RECORD_SIZE, 4096);
    let levels = [Layer::PageCache, Layer::Device];
    let mut disk = run(
        2,
        &levels,
        &[count(100.0), devices(&[("vda", 30.0)])],
        &Labels::new(),
    );
    let c = run(
        2,
        &levels,
        &[count(100.0), devices(&[("vda", 30.0)])],
        &cell,
    );
    for (k, v) in c.metrics.iter() {
        disk.metrics.insert(k.clone(), v.clone());
    }
    let refs = [&disk];
    let reads = Reads {
        pairs: vec![whole(&refs, &words).unwrap()],
        cells: of_cells(&refs),
        files: Vec::new(),
    };
    assert!(reads.run_only(w, t).is_empty());
    assert!(!reads.cells_tell_only_memory(w, t));
    // Without cells, nothing is joined.
    let reads = Reads {
        cells: Vec::new(),
        ..reads
    };
    assert!(reads.run_only(w, t).is_empty());
}

//! Where the reads came from: per workload and target, the layers of the
//! target's stack that served a share of what the workload read — from
//! the layer figures each run stored (`layer_read_bytes`,
//! `layer_served_bytes`, [`crate::measure::layers`]), summed over the
//! pair's measured runs — with the sentence that says it: "71% from the
//! page cache, 22% from Gluster's io-cache, 6% from the bricks' page
//! cache, 1% from vdb".
//!
//! A layer's share of the workload's bytes is its hit ratio (1 − what it
//! passed down ÷ what it was asked, kept within 0–1) times the share of
//! the workload's bytes that reached it; the bottom serves all that
//! reaches it, so the shares add up to 100%. Where every layer passed
//! down no more than it was asked, a layer's share is exactly what it
//! served ÷ what the workload read. A layer that passed down more than it
//! was asked (read-ahead; another process reading a shared disk) served
//! none of it; the excess is the **gap**: what the layers served adds up
//! to the workload's reads plus the gap, which [`Balance`] names.
//!
//! Layers whose boundary was not measured are one entry ("ZFS's ARC and
//! the image's page cache"); a layer nothing could read is named with the
//! reason, never guessed. For a matrix workload the same is done per
//! cell (test, file size, record size).

use std::collections::BTreeMap;

use super::by_name::ByName;

use crate::metric::catalogue as m;
use crate::metric::labels::{BRICK, DEVICE, FILE_SIZE, LAYER, RECORD_SIZE, TEST};
use crate::metric::layer::{shares, split, Layer};
use crate::metric::{Labels, MetricDef, MetricKey};
use crate::params::units::format_bytes;
use crate::store::keyed::{PerKeys, SameKeys};
use crate::store::{CampaignData, RunData};
use crate::warning::WarningKind;

use super::model::{Apart, Caveat, Report};

/// The figures of its runs where the reads came from is told by: what
/// each layer was asked, served and sent on (`crate::analysis::figures`).
pub const FIGURES: &[&MetricDef] = &[
    &m::LAYER_SERVED_BYTES,
    &m::LAYER_READ_BYTES,
    &m::LAYER_READS,
];

/// Why a matrix cell's waterfall joins layers its whole run tells apart
/// (`measure::layers::Stack::between_tests`): Gluster's counters are the
/// ones read around the run only.
pub const RUN_ONLY_WHY: &str = "their counters are read before and after the run, never between a cell's tests, which iozone runs back to back: read there (gluster volume profile goes through glusterd, ~100 ms; an io-stats dump wakes the FUSE client), they slowed the next test several-fold";

/// A gap this share of the workload's reads or more is named.
pub const GAP_SHARE: f64 = 0.02;

/// One layer (or layers served together) of a pair's waterfall.
#[derive(Debug, Clone, PartialEq)]
pub struct Share {
    /// The `layer` label: `page_cache`, `zfs_arc+image_page_cache`.
    pub label: String,
    pub layers: Vec<Layer>,
    /// "the page cache", "vda", "ZFS's ARC and the image's page cache".
    pub words: String,
    /// Bytes asked of it and bytes it served, over the pair's runs.
    pub asked_bytes: f64,
    pub served_bytes: f64,
    /// Requests asked of it, where counted.
    pub requests: Option<f64>,
    /// Its share of the bytes the workload read (0–1).
    pub share: f64,
}

/// What the layers served against what the workload read.
#[derive(Debug, Clone, PartialEq)]
pub struct Balance {
    /// What the workload read (passed to the target's stack, with its own
    /// cache's hits) and what the layers served, in all.
    pub read_bytes: f64,
    pub served_bytes: f64,
    /// The layer that passed down the most beyond what it was asked, and
    /// how much, when the sum is off by [`GAP_SHARE`] or more.
    pub gap: Option<(String, f64)>,
}

/// One workload on one target (or one of a matrix's cells).
#[derive(Debug, Clone, PartialEq)]
pub struct Waterfall {
    pub workload: String,
    pub target: String,
    /// The cell's labels (test, file size, record size); empty for the
    /// whole run.
    pub cell: Labels,
    /// Measured runs that read their layers.
    pub runs: usize,
    /// Top to bottom.
    pub layers: Vec<Share>,
    /// Layers whose counters could not be read, and why (the first run's
    /// reason).
    pub not_measured: Vec<(Layer, String)>,
    pub balance: Balance,
}

impl Waterfall {
    /// The layer that served the largest share.
    pub fn largest(&self) -> Option<&Share> {
        self.layers
            .iter()
            .max_by(|a, b| a.share.total_cmp(&b.share))
    }

    /// The share `layer` served (alone or with the layers it was served
    /// with), 0 when it is not in the stack.
    pub fn share_of(&self, layer: Layer) -> f64 {
        self.layers
            .iter()
            .filter(|s| s.layers.contains(&layer))
            .map(|s| s.share)
            .sum()
    }

    /// "71% from the page cache, 22% from Gluster's io-cache, 1% from
    /// vdb": every layer that served a share that rounds above 0.
    pub fn sentence(&self) -> String {
        if self.layers.is_empty() {
            return "not measured".into();
        }
        let parts: Vec<String> = self
            .layers
            .iter()
            .filter(|s| s.share >= 0.0005)
            .map(|s| format!("{} from {}", pct(s.share), s.words))
            .collect();
        match parts.is_empty() {
            true => "nothing was read".into(),
            false => parts.join(", "),
        }
    }
}

/// A share as people read it: `71%`, `0.4%`.
pub fn pct(share: f64) -> String {
    let p = 100.0 * share;
    if p > 0.0 && p < 0.95 {
        format!("{p:.1}%")
    } else {
        format!("{p:.0}%")
    }
}

/// Every pair's waterfall, and every matrix cell's, in the campaign's
/// order of workloads and targets; pairs without layer figures have none.
#[derive(Debug, Clone, Default)]
pub struct Reads {
    pub pairs: Vec<Waterfall>,
    pub cells: Vec<Waterfall>,
    /// A matrix's read tests per file size, over every record size: the
    /// curve of each layer's share against the file size.
    pub files: Vec<Waterfall>,
}

impl Reads {
    /// The waterfall of `workload` on `target`.
    pub fn pair(&self, workload: &str, target: &str) -> Option<&Waterfall> {
        self.pairs
            .iter()
            .find(|w| w.workload == workload && w.target == target)
    }

    /// The layers the whole run of `workload` on `target` told apart and
    /// none of its cells did: their counters are read before and after
    /// the run only, never between a cell's tests ([`RUN_ONLY_WHY`]).
    /// Empty for a workload without cells.
    pub fn run_only(&self, workload: &str, target: &str) -> Vec<Layer> {
        let Some(pair) = self.pair(workload, target) else {
            return Vec::new();
        };
        let tops = |w: &Waterfall| w.layers.iter().map(|s| s.layers[0]).collect::<Vec<_>>();
        let cells: Vec<Layer> = self.cells_of(workload, target).flat_map(tops).collect();
        if cells.is_empty() {
            return Vec::new();
        }
        tops(pair)
            .into_iter()
            .filter(|l| !cells.contains(l))
            .collect()
    }

    /// Whether the cells of `workload` on `target` join layers its whole
    /// run tells apart ([`Reads::run_only`]) and tell no more than memory
    /// (every cache in it, one entry) from what lies below: what a
    /// matrix's map of the share its device delivered says already, so
    /// that a map of the layer that served each cell would show one name
    /// for every cache and no layer the file size moves between.
    pub fn cells_tell_only_memory(&self, workload: &str, target: &str) -> bool {
        !self.run_only(workload, target).is_empty()
            && self.cells_of(workload, target).all(|c| {
                (c.layers.iter())
                    .filter(|s| s.layers.iter().all(|l| l.is_memory()))
                    .count()
                    <= 1
            })
    }

    /// The cells of `workload` on `target`.
    pub fn cells_of<'a>(
        &'a self,
        workload: &str,
        target: &str,
    ) -> impl Iterator<Item = &'a Waterfall> + 'a {
        let (workload, target) = (workload.to_string(), target.to_string());
        self.cells
            .iter()
            .filter(move |w| w.workload == workload && w.target == target)
    }
}

/// The waterfalls of campaign `c`.
pub fn reads(c: &CampaignData) -> Reads {
    let mut out = Reads::default();
    let whole = device_whole();
    let mut with_whole: PerKeys<bool> = PerKeys::default();
    for w in &c.workloads {
        for t in &c.targets {
            let runs: Vec<&RunData> = c
                .runs_of(&w.name, &t.name)
                .filter(|r| !r.warmup && r.status == "ok")
                .collect();
            let words = Words::of_target(&t.facts);
            let cells = cells(&runs);
            // A pair's waterfall is the whole run's counters, read before
            // and after it (a matrix's too: between a cell's tests only the
            // counters that read fast are read, see
            // measure::layers::Stack::between_tests, so its cells may not
            // tell every layer apart). What others read on a shared device
            // while a matrix wrote is named as the gap.
            let pair = |l: &Labels| l.iter().count() == 0;
            // Most runs have no device figure over the whole run: that is
            // told once per list of keys.
            let bottoms: Vec<Option<RunData>> = (runs.iter())
                .map(|r| {
                    let has = *with_whole.of(&r.metrics, || r.metrics.contains_key(&whole));
                    has.then(|| bottom_of_cells(r, &whole)).flatten()
                })
                .collect();
            let whole: Vec<&RunData> = (runs.iter().zip(&bottoms))
                .map(|(r, b)| b.as_ref().unwrap_or(r))
                .collect();
            if let Some(wf) = waterfall(&whole, &pair, Labels::new(), &words) {
                out.pairs.push(wf);
            }
            for cell in &cells {
                if let Some(wf) = waterfall(&runs, &|l| l == cell, cell.clone(), &words) {
                    out.cells.push(wf);
                }
            }
            let mut files: Vec<Labels> = cells
                .iter()
                .map(|c| {
                    c.clone().without(
                        &Labels::new().with(&RECORD_SIZE, c.get(&RECORD_SIZE).unwrap_or("")),
                    )
                })
                .collect();
            files.dedup();
            for file in files {
                let select = |l: &Labels| file.iter().all(|(k, v)| l.value(k) == Some(v));
                if let Some(wf) = waterfall(&runs, &select, file.clone(), &words) {
                    out.files.push(wf);
                }
            }
        }
    }
    out
}

/// What the device at the bottom read over a whole run (made once, not
/// for each of 10^5 runs).
fn device_whole() -> MetricKey {
    MetricKey::new(
        m::LAYER_READ_BYTES.name,
        Labels::new().with(&LAYER, Layer::Device.name()),
    )
}

/// A matrix run as its whole waterfall reads it: the device at the bottom
/// asked what it was asked during the run's reading tests (the sum of its
/// cells'), not over the whole run, and the layer above it serving the
/// rest of what it was asked. Every layer above the device counts only
/// the reads that reach it, which the reading tests make; the device also
/// counts what the writing tests, the time between tests and other
/// processes on a shared disk read: over a Gluster matrix on the host's
/// disk, more than the bricks asked, which made the whole run read "100%
/// from vda" where every cell read mostly from memory. `None` (the run as
/// stored) when the run has no cells or a cell did not read the device.
/// `whole` is the device's figure over the whole run.
fn bottom_of_cells(r: &RunData, whole: &MetricKey) -> Option<RunData> {
    let device = Layer::Device.name();
    r.metrics.get(whole)?;
    // The reading cells, and those whose device figure was read.
    let (mut cells, mut read_by) = (Vec::new(), Vec::new());
    let mut read = 0.0;
    let mut parts: BTreeMap<String, f64> = BTreeMap::new();
    let mut requests: Option<f64> = None;
    for (k, v) in r.metrics.iter() {
        if k.name != m::LAYER_READS.name && k.name != m::LAYER_READ_BYTES.name {
            continue;
        }
        if k.labels.get(&TEST).is_none() {
            continue;
        }
        if k.name == m::LAYER_READS.name && k.labels.get(&LAYER) == Some(device) {
            *requests.get_or_insert(0.0) += v.value;
        }
        if k.name != m::LAYER_READ_BYTES.name {
            continue;
        }
        let cell = || {
            k.labels
                .clone()
                .without(&Labels::new().with(&LAYER, k.labels.get(&LAYER).unwrap_or("")))
        };
        match (k.labels.get(&LAYER), k.labels.get(&DEVICE)) {
            (Some(l), _) if l == Layer::Workload.name() => cells.push(cell()),
            (Some(l), Some(d)) if l == device => {
                *parts.entry(d.to_string()).or_default() += v.value
            }
            (Some(l), None) if l == device => {
                read_by.push(cell());
                read += v.value;
            }
            _ => {}
        }
    }
    if cells.is_empty() || cells.iter().any(|c| !read_by.contains(c)) {
        return None;
    }
    let above = r
        .metrics
        .iter()
        .filter(|(k, _)| k.name == m::LAYER_SERVED_BYTES.name && k.labels.iter().count() == 1)
        .filter_map(|(k, _)| split(k.labels.get(&LAYER)?).map(|l| (l, k.labels.clone())))
        .filter(|(l, _)| l[0] != Layer::Device)
        .max_by_key(|(l, _)| l[0]);
    let mut out = r.clone();
    let mut set = |def: &crate::metric::MetricDef, labels: Labels, value: f64| {
        out.metrics.insert(
            MetricKey::new(def.name, labels),
            crate::store::MetricValue {
                value,
                unit: def.unit,
                direction: def.direction,
            },
        );
    };
    let only = Labels::new().with(&LAYER, device);
    set(&m::LAYER_READ_BYTES, only.clone(), read);
    set(&m::LAYER_SERVED_BYTES, only.clone(), read);
    if let Some(n) = requests {
        set(&m::LAYER_READS, only.clone(), n);
    }
    for (d, bytes) in parts {
        set(&m::LAYER_READ_BYTES, only.clone().with(&DEVICE, &d), bytes);
    }
    if let Some((layers, labels)) = above {
        let first = Labels::new().with(&LAYER, layers[0].name());
        let asked = (r
            .metrics
            .get(&MetricKey::new(m::LAYER_READ_BYTES.name, first)))
        .map_or(0.0, |v| v.value);
        set(&m::LAYER_SERVED_BYTES, labels, (asked - read).max(0.0));
    }
    Some(out)
}

/// The cells (test, file size, record size) whose layers the runs read.
fn cells(runs: &[&RunData]) -> Vec<Labels> {
    let mut out: Vec<Labels> = Vec::new();
    // A run with the very keys of a run before has no cell of its own.
    let mut known = SameKeys::default();
    for r in runs {
        if !known.slot(&r.metrics).1 {
            continue;
        }
        for k in r.metrics.keys() {
            if k.name != m::LAYER_SERVED_BYTES.name || k.labels.get(&TEST).is_none() {
                continue;
            }
            let cell = Labels::new()
                .with(&TEST, k.labels.get(&TEST).unwrap_or(""))
                .with(&FILE_SIZE, k.labels.get(&FILE_SIZE).unwrap_or(""))
                .with(&RECORD_SIZE, k.labels.get(&RECORD_SIZE).unwrap_or(""));
            if !out.contains(&cell) {
                out.push(cell);
            }
        }
    }
    out.sort_by_key(|c| {
        (
            c.get(&TEST).map(str::to_string),
            c.bytes(&FILE_SIZE),
            c.bytes(&RECORD_SIZE),
        )
    });
    out
}

/// How a target's layers read: the Gluster translators it has on.
#[derive(Debug, Clone, Default)]
pub struct Words {
    gluster: Option<String>,
}

impl Words {
    /// From the target's facts: a Gluster volume's effective options name
    /// the caching translators that are on ("Gluster's io-cache and
    /// read-ahead").
    pub fn of_target(facts: &serde_json::Value) -> Words {
        let opts = &facts["effective_options"];
        // Open-behind delays opens; it keeps no data.
        let on: Vec<&str> = ["io-cache", "read-ahead", "quick-read"]
            .into_iter()
            .filter(|t| {
                opts[format!("performance.{t}")]
                    .as_str()
                    .is_some_and(|v| v.trim().starts_with("on"))
            })
            .collect();
        Words {
            gluster: opts.is_object().then(|| match on.as_slice() {
                [] => "Gluster's client translators (no caching one on)".into(),
                _ => format!("Gluster's {}", and_list(&on)),
            }),
        }
    }

    fn of(&self, layer: Layer) -> String {
        match (layer, &self.gluster) {
            (Layer::GlusterClient, Some(g)) => g.clone(),
            _ => layer.words().to_string(),
        }
    }
}

/// `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Where a figure goes in a waterfall.
enum Place {
    /// A device at the bottom of the stack that read.
    Device(String),
    /// What a layer (or layers served together, `label`) served.
    Served(String),
    /// What a layer was asked, bytes and requests.
    Asked(Layer),
    Requests(Layer),
    /// Not a figure of this waterfall.
    Elsewhere,
}

impl Place {
    /// Where figure `k` goes in the waterfall of the labels beside `layer`
    /// that `select` takes.
    fn of(k: &MetricKey, select: &dyn Fn(&Labels) -> bool) -> Place {
        // Only these figures place reads (a run has dozens).
        if !FIGURES.iter().any(|d| d.name == k.name) {
            return Place::Elsewhere;
        }
        let Some(label) = k.labels.get(&LAYER) else {
            return Place::Elsewhere;
        };
        if let Some(d) = k.labels.get(&DEVICE) {
            let bottom = label == Layer::Device.name();
            return match bottom && k.name == m::LAYER_READ_BYTES.name {
                true => Place::Device(d.to_string()),
                false => Place::Elsewhere,
            };
        }
        // A brick's part of its layer is in the layer's own figure.
        if k.labels.get(&BRICK).is_some() {
            return Place::Elsewhere;
        }
        let rest = k.labels.clone().without(&Labels::new().with(&LAYER, label));
        if !select(&rest) {
            return Place::Elsewhere;
        }
        let Some(layers) = split(label) else {
            return Place::Elsewhere;
        };
        if k.name == m::LAYER_SERVED_BYTES.name {
            Place::Served(label.to_string())
        } else if k.name == m::LAYER_READ_BYTES.name && layers.len() == 1 {
            Place::Asked(layers[0])
        } else if k.name == m::LAYER_READS.name && layers.len() == 1 {
            Place::Requests(layers[0])
        } else {
            Place::Elsewhere
        }
    }
}

/// What the runs' figures whose labels beside `layer` `select` takes
/// (the whole run's: none; a cell's: its test and sizes) say, summed, as
/// the waterfall of `cell`; `None` when no run has any. Parts (`device`,
/// `brick`) name the devices.
fn waterfall(
    runs: &[&RunData],
    select: &dyn Fn(&Labels) -> bool,
    cell: Labels,
    words: &Words,
) -> Option<Waterfall> {
    let mut asked: BTreeMap<Layer, f64> = BTreeMap::new();
    let mut requests: BTreeMap<Layer, f64> = BTreeMap::new();
    let mut served: BTreeMap<String, f64> = BTreeMap::new();
    let mut devices: Vec<String> = Vec::new();
    let mut not_measured: Vec<(Layer, String)> = Vec::new();
    let mut n = 0;
    // Runs share their lists of keys: each list's figures are placed once
    // (10^5 runs of dozens of figures, a few of them layers').
    let mut placed: PerKeys<Vec<(usize, Place)>> = PerKeys::default();
    for r in runs {
        let mut any = false;
        let places = placed.of(&r.metrics, || {
            (r.metrics.keys().enumerate())
                .map(|(i, k)| (i, Place::of(k, select)))
                .filter(|(_, p)| !matches!(p, Place::Elsewhere))
                .collect()
        });
        for (i, place) in places {
            let Some(v) = r.metrics.value_at(*i) else {
                continue;
            };
            match place {
                Place::Device(d) => {
                    if !devices.contains(d) {
                        devices.push(d.clone());
                    }
                }
                Place::Served(label) => {
                    *served.entry(label.clone()).or_default() += v.value;
                    any = true;
                }
                Place::Asked(l) => *asked.entry(*l).or_default() += v.value,
                Place::Requests(l) => *requests.entry(*l).or_default() += v.value,
                Place::Elsewhere => {}
            }
        }
        n += usize::from(any);
        for (name, why) in r.facts.iter() {
            let Some(l) = name.strip_prefix(crate::fact::catalogue::LAYER_NOT_MEASURED.name) else {
                continue;
            };
            if let Some(layer) = Layer::from_name(l) {
                if !not_measured.iter().any(|(x, _)| *x == layer) {
                    not_measured.push((layer, why.to_string()));
                }
            }
        }
    }
    if n == 0 {
        return None;
    }
    let mut groups: Vec<(String, Vec<Layer>, f64)> = served
        .into_iter()
        .filter_map(|(label, bytes)| Some((label.clone(), split(&label)?, bytes)))
        .collect();
    groups.sort_by_key(|g| g.1[0]);
    let top = asked.get(&Layer::Workload).copied();
    // A workload that read nothing (a writer) has no reads to place: what
    // its layers were asked is metadata, read-ahead or other processes'.
    if top.is_some_and(|t| t <= 0.0) {
        return None;
    }
    let firsts: Vec<f64> = (groups.iter())
        .map(|g| asked.get(&g.1[0]).copied().unwrap_or(0.0))
        .collect();
    let shares = shares(&firsts);
    let layers: Vec<Share> = groups
        .iter()
        .zip(shares)
        .map(|((label, layers, bytes), share)| Share {
            label: label.clone(),
            words: group_words(layers, words, &devices),
            asked_bytes: asked.get(&layers[0]).copied().unwrap_or(0.0),
            served_bytes: *bytes,
            requests: requests.get(&layers[0]).copied(),
            share,
            layers: layers.clone(),
        })
        .collect();
    not_measured.retain(|(l, _)| !layers.iter().any(|s| s.layers[0] == *l));
    Some(Waterfall {
        workload: runs[0].workload.clone(),
        target: runs[0].target.clone(),
        cell,
        runs: n,
        balance: balance(top, &layers),
        layers,
        not_measured,
    })
}

/// "the page cache", "vda", "ZFS's ARC and the image's page cache (not
/// told apart)".
fn group_words(layers: &[Layer], words: &Words, devices: &[String]) -> String {
    let each: Vec<String> = layers
        .iter()
        .map(|l| match (l, devices.is_empty()) {
            (Layer::Device, false) => {
                and_list(&devices.iter().map(String::as_str).collect::<Vec<_>>())
            }
            _ => words.of(*l),
        })
        .collect();
    match each.as_slice() {
        [one] => one.clone(),
        many => format!(
            "{} (not told apart)",
            and_list(&many.iter().map(String::as_str).collect::<Vec<_>>())
        ),
    }
}

/// What the layers served against what the top was asked: they add up
/// to it unless a layer passed down more than it was asked.
fn balance(top: Option<f64>, layers: &[Share]) -> Balance {
    let served: f64 = layers.iter().map(|s| s.served_bytes).sum();
    let read = top
        .or_else(|| layers.first().map(|s| s.asked_bytes))
        .unwrap_or(0.0);
    let excess = layers
        .windows(2)
        .map(|w| (w[1].asked_bytes - w[0].asked_bytes, &w[0]))
        .filter(|(x, _)| *x > 0.0)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let off = (served - read).abs() >= GAP_SHARE * read.max(1.0);
    Balance {
        read_bytes: read,
        served_bytes: served,
        gap: excess.filter(|_| off).map(|(x, s)| (s.label.clone(), x)),
    }
}

impl Balance {
    /// "the image's page cache passed 24.2 MiB more down to vda than it
    /// was asked (read-ahead, or other processes reading the same
    /// device)": the gap in words, when there is one.
    pub fn gap_sentence(&self, layers: &[Share]) -> Option<String> {
        let (label, bytes) = self.gap.as_ref()?;
        let i = layers.iter().position(|s| &s.label == label)?;
        let (above, below) = (&layers[i], layers.get(i + 1)?);
        let why = match below.layers[0] {
            Layer::Device => "read-ahead, or other processes reading the same device",
            _ => "read-ahead, or reads of its own",
        };
        Some(format!(
            "{} passed {} more down to {} than it was asked ({why}): the layers served {} for the {} read",
            above.words,
            format_bytes(*bytes),
            below.words,
            format_bytes(self.served_bytes),
            format_bytes(self.read_bytes)
        ))
    }
}

/// The share by which the layer one side read most from must exceed what
/// it served the other side for the sides to be called served apart.
pub const APART_SHARE: f64 = 0.25;

/// Whether the two sides of a verdict read mostly from different layers:
/// the layer the candidate read most from served it at least
/// [`APART_SHARE`] more of its reads than it served the baseline's (or
/// the other way round): "gluster read 88% from Gluster's io-cache, disk
/// 97% from vda".
pub fn apart(baseline: &Waterfall, candidate: &Waterfall) -> Option<Apart> {
    let (b, c) = (baseline.largest()?, candidate.largest()?);
    if b.layers == c.layers {
        return None;
    }
    let gap = |top: &Share, own: &Waterfall, other: &Waterfall| {
        own.share_of(top.layers[0]) - other.share_of(top.layers[0])
    };
    let wide =
        gap(c, candidate, baseline) >= APART_SHARE || gap(b, baseline, candidate) >= APART_SHARE;
    wide.then(|| Apart {
        candidate: candidate.target.clone(),
        candidate_from: c.words.clone(),
        candidate_pct: (100.0 * c.share).round() as u32,
        baseline: baseline.target.clone(),
        baseline_from: b.words.clone(),
        baseline_pct: (100.0 * b.share).round() as u32,
    })
}

/// Adds to every comparison of the model whose sides were served apart
/// ([`apart`]) its caveat, on the candidate's side.
pub fn add_caveats(model: &mut Report, reads: &Reads) {
    let base = model.baseline.clone();
    // Each pair's waterfall found by its workload's name: thousands of
    // pairs, each looked up for every metric compared.
    let by_workload = ByName::of_list(&reads.pairs, |p| &p.workload);
    let pair = |w: &str, t: &str| by_workload.of(w, &reads.pairs).find(|p| p.target == t);
    for w in &mut model.workloads {
        let Some(b) = pair(&w.name, &base) else {
            continue;
        };
        for m in &mut w.metrics {
            for t in m.targets.iter_mut().filter(|t| t.comparison.is_some()) {
                let candidate = pair(&w.name, &t.target);
                let Some(served) = candidate.and_then(|c| apart(b, c)) else {
                    continue;
                };
                let runs = candidate.map_or(0, |c| c.runs);
                t.caveats.push(Caveat {
                    kind: WarningKind::ServedByDifferentLayers,
                    target: t.target.clone(),
                    runs,
                    of: runs,
                    served: Some(served),
                });
            }
        }
    }
}

/// The metric key of a layer's figure, for readers of single runs.
pub fn key(def: &crate::metric::MetricDef, layer: Layer) -> MetricKey {
    MetricKey::new(def.name, Labels::new().with(&LAYER, layer.name()))
}

#[cfg(test)]
mod tests;

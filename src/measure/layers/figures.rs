//! A stretch of a run's layer figures, from what each layer was asked:
//! `layer_read_bytes` per layer (and per brick or device where a layer
//! has several), `layer_reads` where a counter counts requests, and
//! `layer_served_bytes`: what a layer was asked less what the next
//! measured layer below it was asked (never below 0), the bottom all it
//! was asked. Layers between two measured boundaries are served together,
//! under a joined label (`zfs_arc+image_page_cache`); why a boundary was
//! not measured goes into the run's facts. Pure functions of their inputs.

use super::{Asked, Count, Part, Readings, Snapshot, Stack};
use crate::fact::catalogue as facts;
use crate::measure::{Metric, RunOutput};
use crate::metric::catalogue as m;
use crate::metric::labels::{BRICK, DEVICE, LAYER};
use crate::metric::layer::{joined, Layer};
use crate::metric::Labels;

/// What one level was asked over a stretch, or why that is not known.
pub type AskedOf = Result<Count, String>;

/// The figures of a stretch in which `levels` were asked `asked` (in the
/// same order), each value labelled `labels` beside its layer.
pub fn layer_metrics(levels: &[Layer], asked: &[AskedOf], labels: &Labels) -> Vec<Metric> {
    let mut out = Vec::new();
    let n = levels.len().min(asked.len());
    let mut i = 0;
    while i < n {
        let Ok(a) = &asked[i] else {
            i += 1;
            continue;
        };
        let l = labels.clone().with(&LAYER, levels[i].name());
        out.push(m::LAYER_READ_BYTES.labelled(l.clone(), a.bytes));
        if let Some(r) = a.requests {
            out.push(m::LAYER_READS.labelled(l.clone(), r));
        }
        // Parts even when there is one: they name the devices.
        if !a.parts.is_empty() {
            for (part, bytes) in &a.parts {
                let pl = match part {
                    Part::Brick(b) => l.clone().with(&BRICK, b),
                    Part::Device(d) => l.clone().with(&DEVICE, d),
                };
                out.push(m::LAYER_READ_BYTES.labelled(pl, *bytes));
            }
        }
        let next = (i + 1..n).find(|&j| asked[j].is_ok());
        let below = next
            .and_then(|j| asked[j].as_ref().ok())
            .map_or(0.0, |b| b.bytes);
        let group = joined(&levels[i..next.unwrap_or(n)]);
        out.push(m::LAYER_SERVED_BYTES.labelled(
            labels.clone().with(&LAYER, group),
            (a.bytes - below).max(0.0),
        ));
        i = next.unwrap_or(n);
    }
    out
}

/// What the workload passed down to the target's stack: what it read, or
/// what its own cache (PostgreSQL's shared buffers) did not serve, from
/// the layer figures it reported itself.
pub fn passed_by_workload(out: &RunOutput) -> Result<f64, String> {
    let own = |def, layer: Layer| out.labelled(def, &Labels::new().with(&LAYER, layer.name()));
    if let Some(asked) = own(&m::LAYER_READ_BYTES, Layer::Workload) {
        let served: f64 = (Layer::ALL.iter())
            .filter_map(|l| own(&m::LAYER_SERVED_BYTES, *l))
            .sum();
        return Ok((asked - served).max(0.0));
    }
    out.metric(&m::READ_BYTES)
        .ok_or_else(|| "the workload does not count what it read".to_string())
}

/// What each level of `stack` was asked between two snapshots, the top
/// what the workload passed down (`top`).
fn asked_between(
    stack: &Stack,
    before: &Snapshot,
    after: &Snapshot,
    top: &Result<f64, String>,
) -> Vec<AskedOf> {
    (stack.levels.iter())
        .zip(before.iter().zip(after))
        .map(|(level, (b, a))| match level.asked {
            Asked::Above => top.clone().map(|bytes| Count {
                bytes,
                ..Count::default()
            }),
            _ => match (b, a) {
                (Ok(b), Ok(a)) => a.since(b),
                (Err(e), _) | (_, Err(e)) => Err(e.clone()),
            },
        })
        .collect()
}

/// The layer figures of a phase of a run (a matrix cell's test) that
/// read `read` bytes between two snapshots, labelled `labels`, with the
/// workload's own (`layer = workload`).
pub fn phase(
    stack: &Stack,
    before: &Snapshot,
    after: &Snapshot,
    read: f64,
    labels: &Labels,
) -> Vec<Metric> {
    let levels: Vec<Layer> = stack.levels.iter().map(|l| l.layer).collect();
    let asked = asked_between(stack, before, after, &Ok(read));
    let mut out = vec![
        m::LAYER_READ_BYTES.labelled(labels.clone().with(&LAYER, Layer::Workload.name()), read)
    ];
    out.extend(layer_metrics(&levels, &asked, labels));
    out
}

/// Drops the layer figures a workload reported of its own cache (PostgreSQL's
/// shared buffers) when nothing under it was read (`caches = false`, or no
/// counter of the stack could be read): alone, the cache would be the
/// bottom of the waterfall and seem to serve every read that reached it.
pub fn unread(out: &mut RunOutput) {
    let layer_defs = [
        &m::LAYER_READ_BYTES,
        &m::LAYER_SERVED_BYTES,
        &m::LAYER_READS,
    ];
    out.metrics
        .retain(|x| !layer_defs.iter().any(|d| std::ptr::eq(x.def, *d)));
}

/// Adds a run's layer figures and facts to its output: the workload's
/// reads (`layer = workload`) when it did not report its own layers, then
/// each layer of the target's stack.
pub fn conclude(r: &Readings, out: &mut RunOutput) {
    let top = passed_by_workload(out);
    let levels: Vec<Layer> = r.stack.levels.iter().map(|l| l.layer).collect();
    let asked = asked_between(&r.stack, &r.before, &r.after, &top);
    if asked.iter().all(|a| a.is_err()) {
        unread(out);
    } else {
        let own = Labels::new().with(&LAYER, Layer::Workload.name());
        if let (Ok(read), None) = (&top, out.labelled(&m::LAYER_READ_BYTES, &own)) {
            out.metrics.push(m::LAYER_READ_BYTES.labelled(own, *read));
        }
        out.metrics
            .extend(layer_metrics(&levels, &asked, &Labels::new()));
    }
    out.facts
        .push((facts::LAYERS.name.into(), r.stack.describe()));
    for (layer, why) in levels.iter().zip(&asked) {
        if let Err(why) = why {
            out.facts.push((
                format!("{}{}", facts::LAYER_NOT_MEASURED.name, layer.name()),
                why.clone(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(bytes: f64) -> AskedOf {
        Ok(Count {
            bytes,
            ..Count::default()
        })
    }

    fn served(ms: &[Metric]) -> Vec<(String, f64)> {
        ms.iter()
            .filter(|x| std::ptr::eq(x.def, &m::LAYER_SERVED_BYTES))
            .map(|x| (x.labels.get(&LAYER).unwrap().to_string(), x.value))
            .collect()
    }

    #[test]
    fn each_layer_serves_what_it_was_asked_less_what_it_passed_down() {
        let levels = [
            Layer::PageCache,
            Layer::GlusterClient,
            Layer::BrickPageCache,
            Layer::Device,
        ];
        let ms = layer_metrics(
            &levels,
            &[count(100.0), count(29.0), count(7.0), count(1.0)],
            &Labels::new(),
        );
        assert_eq!(
            served(&ms),
            [
                ("page_cache".to_string(), 71.0),
                ("gluster_client".to_string(), 22.0),
                ("brick_page_cache".to_string(), 6.0),
                ("device".to_string(), 1.0)
            ]
        );
        // The served bytes add up to what the top was asked.
        let sum: f64 = served(&ms).iter().map(|x| x.1).sum();
        assert_eq!(sum, 100.0);
    }

    #[test]
    fn a_boundary_not_measured_joins_the_layers_on_either_side() {
        let levels = [
            Layer::PageCache,
            Layer::ZfsArc,
            Layer::ImagePageCache,
            Layer::Device,
        ];
        let ms = layer_metrics(
            &levels,
            &[
                count(100.0),
                count(40.0),
                Err("not told apart".into()),
                count(10.0),
            ],
            &Labels::new(),
        );
        assert_eq!(
            served(&ms),
            [
                ("page_cache".to_string(), 60.0),
                ("zfs_arc+image_page_cache".to_string(), 30.0),
                ("device".to_string(), 10.0)
            ]
        );
        // A layer that passed down more than it was asked (read-ahead)
        // served nothing, never a negative amount.
        let ms = layer_metrics(
            &[Layer::PageCache, Layer::Device],
            &[count(4.0), count(128.0)],
            &Labels::new(),
        );
        assert_eq!(
            served(&ms),
            [
                ("page_cache".to_string(), 0.0),
                ("device".to_string(), 128.0)
            ]
        );
    }

    #[test]
    fn the_workload_passes_down_its_reads_or_what_its_own_cache_missed() {
        let mut out = RunOutput::default();
        assert!(passed_by_workload(&out).is_err());
        out.metrics.push(m::READ_BYTES.value(10.0));
        assert_eq!(passed_by_workload(&out), Ok(10.0));
        let l = |x: Layer| Labels::new().with(&LAYER, x.name());
        out.metrics.extend([
            m::LAYER_READ_BYTES.labelled(l(Layer::Workload), 1000.0),
            m::LAYER_READ_BYTES.labelled(l(Layer::SharedBuffers), 1000.0),
            m::LAYER_SERVED_BYTES.labelled(l(Layer::SharedBuffers), 990.0),
        ]);
        assert_eq!(passed_by_workload(&out), Ok(10.0));
    }

    // PostgreSQL's shared buffers alone, nothing under them read: no
    // waterfall (it would say they served all that reached them).
    #[test]
    fn a_workloads_own_cache_without_the_stack_under_it_is_no_waterfall() {
        let l = |x: Layer| Labels::new().with(&LAYER, x.name());
        let pg = || RunOutput {
            metrics: vec![
                m::READ_BYTES.value(10.0),
                m::LAYER_READ_BYTES.labelled(l(Layer::Workload), 1000.0),
                m::LAYER_READ_BYTES.labelled(l(Layer::SharedBuffers), 1000.0),
                m::LAYER_SERVED_BYTES.labelled(l(Layer::SharedBuffers), 510.0),
            ],
            ..RunOutput::default()
        };
        let is_layer = |x: &Metric| x.labels.get(&LAYER).is_some();
        let mut off = pg();
        unread(&mut off);
        assert_eq!(off.metrics.len(), 1);
        let stack = std::sync::Arc::new(Stack::default().then([
            super::super::Level::unknown(Layer::PageCache, "ranks on 2 hosts"),
            super::super::Level::unknown(Layer::Device, "ranks on 2 hosts"),
        ]));
        let mut none = pg();
        conclude(&stack.begin().end(), &mut none);
        assert!(!none.metrics.iter().any(is_layer), "{:?}", none.metrics);
        assert!(none.facts.iter().any(|f| f.0.ends_with("page_cache")));
        let stack = std::sync::Arc::new(Stack::of_chain(&Default::default()));
        let mut measured = pg();
        conclude(&stack.begin().end(), &mut measured);
        assert!(measured
            .metrics
            .iter()
            .any(|x| is_layer(x) && x.labels.get(&LAYER) == Some("page_cache")));
    }
}

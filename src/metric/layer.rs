//! The layers of a target's stack that reads pass through, top to bottom:
//! the names the `layer` label stores and the words people read. The
//! measurement ([`crate::measure::layers`]) and the analysis
//! ([`crate::analysis::reads`]) both speak of layers in these terms.
//!
//! A label value `a+b` stands for two adjacent layers whose boundary was
//! not measured: what they served together.

/// One layer, top to bottom in the order of [`Layer::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layer {
    /// What the workload read: the top, which serves nothing itself.
    Workload,
    /// PostgreSQL's buffer cache (pg_stat_database blks_hit, blks_read).
    SharedBuffers,
    /// The kernel's page cache of the target's own mount.
    PageCache,
    /// Gluster's client translators (io-cache, read-ahead, quick-read,
    /// open-behind) between the FUSE bridge and the bricks.
    GlusterClient,
    /// The page cache of the filesystems holding a Gluster volume's bricks.
    BrickPageCache,
    /// ZFS's adaptive replacement cache.
    ZfsArc,
    /// The page cache of a vm-disk's FUSE export (under the guest's loop
    /// device).
    ExportPageCache,
    /// QEMU's block layer and, with `cache.direct=off`, the host's page
    /// cache of the image it reads.
    Qemu,
    /// The host's page cache of a loop device's image file.
    ImagePageCache,
    /// The physical devices at the bottom.
    Device,
}

impl Layer {
    pub const ALL: [Layer; 10] = [
        Layer::Workload,
        Layer::SharedBuffers,
        Layer::PageCache,
        Layer::GlusterClient,
        Layer::BrickPageCache,
        Layer::ZfsArc,
        Layer::ExportPageCache,
        Layer::Qemu,
        Layer::ImagePageCache,
        Layer::Device,
    ];

    /// The stable name the `layer` label stores.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Workload => "workload",
            Layer::SharedBuffers => "shared_buffers",
            Layer::PageCache => "page_cache",
            Layer::GlusterClient => "gluster_client",
            Layer::BrickPageCache => "brick_page_cache",
            Layer::ZfsArc => "zfs_arc",
            Layer::ExportPageCache => "export_page_cache",
            Layer::Qemu => "qemu",
            Layer::ImagePageCache => "image_page_cache",
            Layer::Device => "device",
        }
    }

    /// The words a sentence uses after "from": "the page cache".
    pub fn words(self) -> &'static str {
        match self {
            Layer::Workload => "the workload",
            Layer::SharedBuffers => "PostgreSQL's shared buffers",
            Layer::PageCache => "the page cache",
            Layer::GlusterClient => "Gluster's client translators",
            Layer::BrickPageCache => "the bricks' page cache",
            Layer::ZfsArc => "ZFS's ARC",
            Layer::ExportPageCache => "the export's page cache",
            Layer::Qemu => "QEMU",
            Layer::ImagePageCache => "the image's page cache",
            Layer::Device => "the device",
        }
    }

    /// The layer of a stored name; `None` for one this storlab does not know.
    pub fn from_name(name: &str) -> Option<Layer> {
        Layer::ALL.into_iter().find(|l| l.name() == name)
    }

    /// Whether it is a cache in memory (every layer but the workload and
    /// the device).
    pub fn is_memory(self) -> bool {
        !matches!(self, Layer::Workload | Layer::Device)
    }
}

/// Each layer's share of the bytes the top was asked, from what each
/// (layer, or layers served together) was asked, top to bottom: its hit
/// ratio (1 − what the next was asked ÷ what it was asked, kept within
/// 0–1) times the share that reached it; the last takes what reached it.
/// The shares add up to 1 (none for an empty stack).
pub fn shares(asked: &[f64]) -> Vec<f64> {
    let mut reaching = 1.0;
    let mut out = Vec::with_capacity(asked.len());
    for (i, a) in asked.iter().enumerate() {
        let Some(next) = asked.get(i + 1) else {
            out.push(reaching);
            break;
        };
        let hit = if *a > 0.0 {
            (1.0 - next / a).clamp(0.0, 1.0)
        } else {
            0.0
        };
        out.push(reaching * hit);
        reaching *= 1.0 - hit;
    }
    out
}

/// The `layer` label of layers served together (`page_cache+gluster_client`).
pub fn joined(layers: &[Layer]) -> String {
    layers
        .iter()
        .map(|l| l.name())
        .collect::<Vec<_>>()
        .join("+")
}

/// The layers of a `layer` label, top first; `None` when a name is unknown.
pub fn split(label: &str) -> Option<Vec<Layer>> {
    label.split('+').map(Layer::from_name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_hit_ratios_of_what_reached_each_layer() {
        let s = shares(&[100.0, 29.0, 7.0, 1.0]);
        for (got, want) in s.iter().zip([0.71, 0.22, 0.06, 0.01]) {
            assert!((got - want).abs() < 1e-12, "{s:?}");
        }
        // A layer that passed down more than it was asked served none.
        assert_eq!(shares(&[100.0, 64.0, 91.0]), [0.36, 0.0, 0.64]);
        assert_eq!(shares(&[0.0, 0.0]), [0.0, 1.0]);
        assert!(shares(&[]).is_empty());
    }

    #[test]
    fn names_are_unique_and_read_back() {
        for l in Layer::ALL {
            assert_eq!(Layer::from_name(l.name()), Some(l));
        }
        let label = joined(&[Layer::GlusterClient, Layer::BrickPageCache]);
        assert_eq!(label, "gluster_client+brick_page_cache");
        assert_eq!(
            split(&label),
            Some(vec![Layer::GlusterClient, Layer::BrickPageCache])
        );
        assert_eq!(split("page_cache+nope"), None);
        // ALL is in stack order: the sort order of the enum.
        let mut sorted = Layer::ALL;
        sorted.sort();
        assert_eq!(sorted, Layer::ALL);
    }
}

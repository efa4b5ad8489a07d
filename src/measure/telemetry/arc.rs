//! The ZFS ARC's hits, misses and size limit, where ZFS exposes them:
//! kernel ZFS in /proc/spl/kstat/zfs/arcstats (a table of name, type,
//! data), zfs-fuse in /zfs-kstat/zfs/arcstats/ (a file per figure). The
//! ARC belongs to the whole host (every pool), so a run's figures are the
//! differences over the run.

use std::path::Path;

const KERNEL: &str = "/proc/spl/kstat/zfs/arcstats";
const FUSE_DIR: &str = "/zfs-kstat/zfs/arcstats";

/// The ARC's counters at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arc {
    pub hits: u64,
    pub misses: u64,
    /// Its size limit (c_max), bytes.
    pub c_max: u64,
}

/// The ARC's counters now, from whichever ZFS the host runs.
pub fn read() -> Option<Arc> {
    if let Ok(text) = std::fs::read_to_string(KERNEL) {
        return parse_kstat(&text);
    }
    let dir = Path::new(FUSE_DIR);
    let get = |name: &str| -> Option<u64> {
        std::fs::read_to_string(dir.join(name))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    Some(Arc {
        hits: get("hits")?,
        misses: get("misses")?,
        c_max: get("c_max")?,
    })
}

/// Kernel ZFS's arcstats text: two header lines, then `name type data`.
fn parse_kstat(text: &str) -> Option<Arc> {
    let get = |name: &str| -> Option<u64> {
        text.lines().find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3 && f[0] == name)
                .then(|| f[2].parse().ok())
                .flatten()
        })
    };
    Some(Arc {
        hits: get("hits")?,
        misses: get("misses")?,
        c_max: get("c_max")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_arcstats_parse() {
        let text = "13 1 0x01 123 33456 7070343066 1183493846214\n\
            name                            type data\n\
            hits                            4    1500\n\
            misses                          4    25\n\
            c_max                           4    4294967296\n";
        assert_eq!(
            parse_kstat(text),
            Some(Arc {
                hits: 1500,
                misses: 25,
                c_max: 4 << 30
            })
        );
        assert_eq!(parse_kstat("name type data\n"), None);
    }
}

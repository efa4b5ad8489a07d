//! Gluster's own counters of the bytes read: the FUSE client's io-stats
//! translator, at the top of the client's graph, counts what the kernel
//! asked of the client (what left the page cache); each brick's io-stats
//! counts what reached that brick (what the client translators did not
//! serve). The client's are dumped to a file by setting the
//! `trusted.io-stats-dump` xattr on the mount; the bricks' are read with
//! `gluster volume profile VOLUME info cumulative --xml`, which needs the
//! volume's profiling started (the target starts it).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context, Result};

use super::{Count, Part, Source};
use crate::measure::telemetry::procs::tag;

/// Where the client writes its dumps (a name without a slash lands here).
const DUMP_DIRS: &[&str] = &["/var/run/gluster", "/run/gluster"];

/// The bytes and reads the FUSE client of `mount` was asked, from its
/// io-stats dump ("Cumulative stats": BytesRead, Read Count).
#[derive(Debug, Clone)]
pub struct ClientStats {
    pub mount: PathBuf,
    pub volume: String,
}

impl Source for ClientStats {
    fn read(&self) -> Result<Count> {
        let text = dump(&self.mount, &self.volume)?;
        parse_dump(&text).with_context(|| {
            format!(
                "the io-stats dump of {} has no cumulative BytesRead",
                self.mount.display()
            )
        })
    }

    fn describe(&self) -> String {
        format!(
            "the FUSE client's io-stats (setxattr trusted.io-stats-dump on {})",
            self.mount.display()
        )
    }

    fn slow(&self) -> Option<String> {
        Some("a dump wakes the FUSE client, which changes the next test's figures (a 64 KiB open-read-close right after one took 49 µs instead of 36)".into())
    }
}

/// Asks the client of `mount` for a dump and returns its text; the dump
/// file is removed.
fn dump(mount: &Path, volume: &str) -> Result<String> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "storlab-io-stats-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    set_xattr(mount, "trusted.io-stats-dump", &name)?;
    let mut found: Vec<PathBuf> = Vec::new();
    for dir in DUMP_DIRS {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            if file.starts_with(&format!("{name}.")) {
                found.push(e.path());
            }
        }
    }
    // One dump per io-stats translator of the graph: the volume's is the
    // one at the top.
    found.sort_by_key(|p| !p.to_string_lossy().ends_with(&format!(".{volume}")));
    let text = found.first().map(std::fs::read_to_string);
    for f in &found {
        let _ = std::fs::remove_file(f);
    }
    match text {
        Some(t) => t.with_context(|| format!("reading {}", found[0].display())),
        None => bail!(
            "the Gluster client wrote no io-stats dump `{name}.*` in {}",
            DUMP_DIRS.join(" or ")
        ),
    }
}

fn set_xattr(path: &Path, name: &str, value: &str) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let p = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    let n = std::ffi::CString::new(name)?;
    // SAFETY: the strings are NUL-terminated and live across the call;
    // the value is passed with its length.
    let r = unsafe {
        libc::setxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("setting {name} on {}", path.display()));
    }
    Ok(())
}

/// The cumulative section of an io-stats dump: `BytesRead : N` and every
/// `Read Count :` column (one per block size).
pub fn parse_dump(text: &str) -> Option<Count> {
    let start = text.find("=== Cumulative stats ===")?;
    let section = &text[start..];
    let end = section[3..].find("\n===").map_or(section.len(), |e| e + 3);
    let section = &section[..end];
    let value = |key: &str| -> Vec<f64> {
        section
            .lines()
            .filter_map(|l| l.split_once(':'))
            .filter(|(k, _)| k.trim() == key)
            .flat_map(|(_, v)| v.split_whitespace().filter_map(|x| x.parse::<f64>().ok()))
            .collect()
    };
    let bytes = *value("BytesRead").first()?;
    let reads = value("Read Count");
    Some(Count {
        bytes,
        requests: (!reads.is_empty()).then(|| reads.iter().sum()),
        parts: Vec::new(),
    })
}

/// Runs `gluster volume profile VOLUME info cumulative --xml` where the
/// volume's glusterd is (the target knows: this host or its first server).
pub type Profile = Arc<dyn Fn() -> Result<String> + Send + Sync>;

/// What reached each brick: `gluster volume profile`'s cumulative
/// `totalRead` per brick, and its reads (the block-size histogram's).
#[derive(Clone)]
pub struct Bricks {
    pub volume: String,
    pub profile: Profile,
}

impl std::fmt::Debug for Bricks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bricks")
            .field("volume", &self.volume)
            .finish()
    }
}

impl Source for Bricks {
    fn read(&self) -> Result<Count> {
        let xml = (self.profile)()?;
        if let Some(err) = refused(&xml) {
            bail!(
                "gluster volume profile {} info cumulative failed: {err}",
                self.volume
            );
        }
        parse_profile(&xml).with_context(|| {
            format!(
                "gluster volume profile {} info cumulative gave no brick's totalRead",
                self.volume
            )
        })
    }

    fn describe(&self) -> String {
        format!(
            "each brick's reads (gluster volume profile {} info cumulative)",
            self.volume
        )
    }

    fn slow(&self) -> Option<String> {
        Some(format!(
            "`gluster volume profile {} info` goes through glusterd to every brick (~100 ms), long enough to change what the next test finds in the caches",
            self.volume
        ))
    }
}

/// Why the gluster command refused, when it did (`opRet` not 0).
fn refused(xml: &str) -> Option<String> {
    let ret = tag(xml, "opRet")?;
    (ret != "0").then(|| tag(xml, "opErrstr").unwrap_or(ret).to_string())
}

/// Each `<brick>` of the profile's XML: its name, `totalRead` and the
/// reads of its block-size histogram; their sums.
pub fn parse_profile(xml: &str) -> Option<Count> {
    if refused(xml).is_some() {
        return None;
    }
    let mut count = Count {
        requests: Some(0.0),
        ..Count::default()
    };
    let mut any = false;
    for brick in xml.split("<brick>").skip(1) {
        let brick = brick.split("</brick>").next().unwrap_or("");
        let name = tag(brick, "brickName")?.to_string();
        let stats = brick.split("<cumulativeStats>").nth(1)?;
        let bytes: f64 = tag(stats, "totalRead")?.parse().ok()?;
        let reads: f64 = stats
            .split("<reads>")
            .skip(1)
            .filter_map(|r| r.split("</reads>").next()?.trim().parse::<f64>().ok())
            .sum();
        count.bytes += bytes;
        count.requests = count.requests.map(|r| r + reads);
        count.parts.push((Part::Brick(name), bytes));
        any = true;
    }
    any.then_some(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "
=== Cumulative stats ===
      Duration : 3 secs
     BytesRead : 16777216
  BytesWritten : 8388608

Block Size   :            4096B+          131072B+
Read Count   :                 2               126
Write Count  :                 0                64

Fop           Call Count    Avg-Latency    Min-Latency    Max-Latency
READ                 130    95538.07 us     2910.00 us  4979709.00 us

=== Interval 0 stats ===
      Duration : 1 secs
     BytesRead : 5
";

    #[test]
    fn a_client_dump_gives_its_cumulative_reads() {
        assert_eq!(
            parse_dump(DUMP),
            Some(Count {
                bytes: 16777216.0,
                requests: Some(128.0),
                parts: Vec::new()
            })
        );
        assert_eq!(
            parse_dump("=== Interval 0 stats ===\nBytesRead : 5\n"),
            None
        );
    }

    #[test]
    fn a_profile_gives_each_bricks_reads() {
        let xml = "<cliOutput><opRet>0</opRet><opErrno>0</opErrno><opErrstr/><volProfile><volname>v</volname>\
            <brick><brickName>h:/b/1</brickName><cumulativeStats><blockStats>\
            <block><size>4096</size><reads>1</reads><writes>0</writes></block>\
            <block><size>131072</size><reads>64</reads><writes>64</writes></block>\
            </blockStats><duration>10</duration><totalRead>8519680</totalRead><totalWrite>8388608</totalWrite></cumulativeStats></brick>\
            <brick><brickName>h:/b/2</brickName><cumulativeStats><blockStats>\
            <block><size>131072</size><reads>0</reads><writes>64</writes></block>\
            </blockStats><totalRead>0</totalRead><totalWrite>8388608</totalWrite></cumulativeStats></brick>\
            </volProfile></cliOutput>";
        let c = parse_profile(xml).unwrap();
        assert_eq!(c.bytes, 8519680.0);
        assert_eq!(c.requests, Some(65.0));
        assert_eq!(
            c.parts,
            [
                (Part::Brick("h:/b/1".into()), 8519680.0),
                (Part::Brick("h:/b/2".into()), 0.0)
            ]
        );
        assert_eq!(
            parse_profile("<cliOutput><opRet>-1</opRet><opErrstr>Profile on Volume v is not started</opErrstr></cliOutput>"),
            None
        );
    }
}

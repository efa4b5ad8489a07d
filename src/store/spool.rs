//! Runs the store could not take. A campaign reserves a file beside the
//! store when it starts (`<store>.spool-<campaign>`, [`RESERVE`] bytes
//! allocated up front, so that writing into it needs no free space). When
//! a finished run cannot be committed — the store's filesystem is full,
//! the disk failed — the run is written into that file in full (and
//! printed by the runner), and the next storlab command that opens the
//! store writably commits it, once its campaign's process is gone. Nothing
//! a campaign measured is lost to a full disk.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::write::{RankRow, RunRecord};
use super::Store;
use crate::measure::wire::WireOutput;
use crate::measure::RunOutput;

/// Bytes reserved per running campaign: room for a run with hundreds of
/// metrics and latency histograms.
pub const RESERVE: u64 = 4 << 20;

/// The spool file of `campaign` beside the store at `db`.
fn spool_path(db: &Path, campaign: i64) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(format!("{}{campaign}", super::files::SPOOL));
    PathBuf::from(name)
}

/// A run as spooled: everything [`Store::record_run_ranks`] takes.
#[derive(Debug, Serialize, Deserialize)]
struct Spooled {
    campaign: i64,
    target: i64,
    workload: i64,
    repetition: u32,
    round: u32,
    position: u32,
    warmup: bool,
    status: String,
    error: Option<String>,
    started_at: String,
    duration_s: f64,
    caches_dropped: bool,
    remounted: bool,
    ranks: u32,
    output: Option<WireOutput>,
    per_rank: Vec<SpooledRank>,
}

#[derive(Debug, Serialize, Deserialize)]
struct SpooledRank {
    rank: u32,
    host: String,
    status: String,
    error: Option<String>,
    done_s: Option<f64>,
    metrics: WireOutput,
}

fn status(s: &str) -> Result<&'static str> {
    ["ok", "failed", "interrupted"]
        .into_iter()
        .find(|k| *k == s)
        .ok_or_else(|| anyhow!("a spooled run has an unknown status `{s}`"))
}

/// The text of one run, as spooled and as printed when it cannot be stored.
pub fn run_text(r: &RunRecord, out: Option<&RunOutput>, ranks: &[RankRow]) -> Result<String> {
    let per_rank = ranks
        .iter()
        .map(|k| {
            let metrics = RunOutput {
                metrics: k.metrics.clone(),
                ..Default::default()
            };
            Ok(SpooledRank {
                rank: k.rank,
                host: k.host.clone(),
                status: k.status.clone(),
                error: k.error.clone(),
                done_s: k.done_s,
                metrics: WireOutput::from_output(&metrics)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let s = Spooled {
        campaign: r.campaign,
        target: r.target,
        workload: r.workload,
        repetition: r.repetition,
        round: r.round,
        position: r.position,
        warmup: r.warmup,
        status: r.status.into(),
        error: r.error.clone(),
        started_at: r.started_at.clone(),
        duration_s: r.duration_s,
        caches_dropped: r.caches_dropped,
        remounted: r.remounted,
        ranks: r.ranks,
        output: out.map(WireOutput::from_output).transpose()?,
        per_rank,
    };
    Ok(serde_json::to_string(&s)?)
}

fn parse_run(line: &str) -> Result<(RunRecord, Option<RunOutput>, Vec<RankRow>)> {
    let s: Spooled = serde_json::from_str(line).context("reading a spooled run")?;
    let record = RunRecord {
        campaign: s.campaign,
        target: s.target,
        workload: s.workload,
        repetition: s.repetition,
        round: s.round,
        position: s.position,
        warmup: s.warmup,
        status: status(&s.status)?,
        error: s.error,
        started_at: s.started_at,
        duration_s: s.duration_s,
        caches_dropped: s.caches_dropped,
        remounted: s.remounted,
        ranks: s.ranks,
    };
    let ranks = s
        .per_rank
        .into_iter()
        .map(|k| {
            Ok(RankRow {
                rank: k.rank,
                host: k.host,
                status: k.status,
                error: k.error,
                done_s: k.done_s,
                metrics: k.metrics.into_output()?.metrics,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((
        record,
        s.output.map(|o| o.into_output()).transpose()?,
        ranks,
    ))
}

/// Reserves `bytes` of disk for `file`, so that writing them later needs
/// no free space.
fn reserve(file: &File, bytes: u64) -> std::io::Result<()> {
    // SAFETY: a valid descriptor; the result is checked.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, bytes as libc::off_t) };
    match rc {
        0 => Ok(()),
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}

/// The spooled text in `bytes`: up to the first NUL of the reserve.
fn spooled_text(bytes: &[u8]) -> &str {
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    std::str::from_utf8(&bytes[..end]).unwrap_or("")
}

impl Store {
    /// Reserves the spool file of `campaign` beside the store.
    pub fn reserve_spool(&mut self, campaign: i64) -> Result<()> {
        let path = spool_path(&self.path, campaign);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("creating {}", path.display()))?;
        reserve(&file, RESERVE).with_context(|| {
            format!(
                "reserving {} MiB beside the store for a run it might fail to take ({})",
                RESERVE >> 20,
                path.display()
            )
        })?;
        self.spool = Some((campaign, file));
        Ok(())
    }

    /// Writes a run the store could not take into the spool file; returns
    /// where it is.
    pub fn spool_run(&mut self, text: &str) -> Result<PathBuf> {
        let Some((campaign, file)) = self.spool.as_mut() else {
            bail!("no spool file was reserved");
        };
        let path = spool_path(&self.path, *campaign);
        let at = std::fs::read(&path)
            .map(|b| spooled_text(&b).len() as u64)
            .unwrap_or(0);
        file.seek(SeekFrom::Start(at))
            .and_then(|_| file.write_all(format!("{text}\n").as_bytes()))
            .and_then(|()| file.sync_data())
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(path)
    }

    /// Removes the campaign's spool file when nothing was spooled into it.
    pub fn release_spool(&mut self) {
        if let Some((campaign, _)) = self.spool.take() {
            let path = spool_path(&self.path, campaign);
            if std::fs::read(&path).is_ok_and(|b| spooled_text(&b).is_empty()) {
                let _ = std::fs::remove_file(path);
            }
        }
    }

    /// Commits what campaigns no longer running spooled, and removes their
    /// empty reserves. A spool that cannot be committed is kept (and said).
    pub(super) fn commit_spooled(mut self) -> Store {
        for (campaign, path) in self.spool_files() {
            if self.is_running(campaign) {
                continue;
            }
            match self.commit_file(&path) {
                Ok(0) => {}
                Ok(n) => errln!(
                    "storlab: committed {n} run(s) of campaign {campaign} that the store could not take before (from {})",
                    path.display()
                ),
                Err(e) => {
                    errln!(
                        "storlab: {} holds runs the store could not take, and committing them failed: {e:#}; it is kept for the next command",
                        path.display()
                    );
                    continue;
                }
            }
            if let Err(e) = std::fs::remove_file(&path) {
                errln!("storlab: removing {}: {e}", path.display());
            }
        }
        self
    }

    fn spool_files(&self) -> Vec<(i64, PathBuf)> {
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let Some(name) = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
        else {
            return Vec::new();
        };
        let prefix = format!("{name}.spool-");
        let mut out: Vec<(i64, PathBuf)> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let file = e.file_name().to_string_lossy().into_owned();
                let id = file.strip_prefix(&prefix)?.parse().ok()?;
                Some((id, spool_path(&self.path, id)))
            })
            .collect();
        out.sort();
        out
    }

    fn commit_file(&mut self, path: &Path) -> Result<usize> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let runs = spooled_text(&bytes)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(parse_run)
            .collect::<Result<Vec<_>>>()?;
        for (record, output, ranks) in &runs {
            self.record_run_ranks(record, output.as_ref(), ranks)?;
        }
        Ok(runs.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::catalogue as m;

    fn record() -> RunRecord {
        RunRecord {
            campaign: 1,
            target: 1,
            workload: 1,
            repetition: 1,
            round: 1,
            position: 0,
            warmup: false,
            status: "ok",
            error: None,
            started_at: "t".into(),
            duration_s: 0.1,
            caches_dropped: false,
            remounted: false,
            ranks: 1,
        }
    }

    #[test]
    fn a_spooled_run_reads_back_exactly() {
        let out = RunOutput {
            metrics: vec![m::BW_BYTES_PER_S.value(0.1 + 0.2)],
            ..Default::default()
        };
        let text = run_text(&record(), Some(&out), &[]).unwrap();
        let (r, o, k) = parse_run(&text).unwrap();
        assert_eq!((r.status, r.position), ("ok", 0));
        assert_eq!(o.unwrap().metrics, out.metrics, "bit for bit");
        assert!(k.is_empty());
        assert_eq!(spooled_text(b"abc\n\0\0\0"), "abc\n");
    }
}

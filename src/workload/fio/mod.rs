//! Workload `fio`: a user's fio job file (or inline options for one job),
//! run by fio itself in storlab's working directory on the target, its
//! JSON+ output mapped into storlab's metrics.
//!
//! The job file is read when the experiment is: `include`s expanded, path
//! options checked to stay inside the working directory, and the text kept
//! with the workload's parameters (`job_text`), so that every run and the
//! store see the same job. Each run lays the files out untimed first
//! (`fio --create_only=1`, before the cache drop), then runs
//! `fio --output-format=json+ --directory=<working dir> -` with the job
//! text on stdin (`directory` lines of the job file replaced), and removes
//! what the job left, so that the next run lays its files out anew.

mod jobfile;
mod output;
mod phases;
mod policy;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{anyhow, Context, Result};

use super::{Configure, OpenLoop, RunContext, Workload, WorkloadConfig};
use crate::measure::RunOutput;
use crate::params::units::saturating_secs;
use crate::params::{declare, Fault, Params, Value};
use crate::process::child::{self, describe_status, tail_lines, ChildOptions, Finished};
use crate::process::StopFlag;
use crate::warning::Warning;

/// The program run; found on PATH.
const FIO: &str = "fio";

/// The resolved parameter holding the job text fio runs (includes expanded).
pub const JOB_TEXT: &str = "job_text";

/// fio's start-up and teardown, twice per run (layout, then the job).
const FIO_OVERHEAD: Duration = Duration::from_millis(600);

declare! {
    /// The parameters of a `fio` workload.
    pub struct FioParams {
        job: string => "fio job file; a relative path is resolved against the experiment file's directory",
        options: map => "instead of job: fio options of one job, e.g. { rw = \"randread\", bs = \"4k\", size = \"1G\" }",
        rate_iops: int(u64, 0, 1_000_000_000) = "0" => "sets fio's rate_iops of every job, in place of the job's own (a capacity search sets it; 0: as the job says)",
    }
}

impl FioParams {
    fn validate(&self) -> Result<(), Fault> {
        match (&self.job, &self.options) {
            (None, None) => Err((
                "job",
                "a fio workload needs `job` (a fio job file) or `options` (fio options of one job)"
                    .into(),
            )),
            (Some(_), Some(_)) => {
                Err(("options", "give either `job` or `options`, not both".into()))
            }
            (None, Some(o)) if o.is_empty() => Err(("options", "`options` is empty".into())),
            _ => Ok(()),
        }
    }
}

/// A fio workload's job text, checked, with includes expanded.
#[derive(Debug, Clone)]
pub struct FioConfig {
    text: String,
}

impl Configure for FioParams {
    type Config = FioConfig;

    /// Reads and checks the job file (relative to `base`, the experiment
    /// file's directory) or the inline options, and keeps the job text.
    fn configure(self, base: &Path, stored: &mut Params) -> Result<FioConfig, Fault> {
        self.validate()?;
        let (key, text) = match (&self.job, &self.options) {
            (Some(job), _) => {
                let path = base.join(job);
                let abs = std::fs::canonicalize(&path).map_err(|e| {
                    (
                        "job",
                        format!(
                            "cannot open the fio job file `{job}` ({}: {e}); a relative path is resolved against the experiment file's directory",
                            path.display()
                        ),
                    )
                })?;
                let text = jobfile::load(&abs, base).map_err(|e| ("job", e))?;
                stored.set("job", Value::Str(abs.display().to_string()));
                ("job", text)
            }
            (None, options) => {
                let options = options.clone().unwrap_or_default();
                (
                    "options",
                    jobfile::inline(&options).map_err(|e| ("options", e))?,
                )
            }
        };
        let text = match self.rate_iops {
            0 => text,
            n => jobfile::with_rate_iops(&text, n),
        };
        if jobfile::jobs(&text).is_empty() {
            return Err((
                key,
                "the fio job defines no job: add a [section] other than [global]".into(),
            ));
        }
        stored.set(JOB_TEXT, Value::Str(text.clone()));
        Ok(FioConfig { text })
    }
}

impl WorkloadConfig for FioConfig {
    fn preflight(&self) -> Result<()> {
        preflight()
    }

    fn estimate(&self) -> Duration {
        let jobs = jobfile::jobs(&self.text);
        let layout = saturating_secs(jobfile::bytes_needed(&jobs) as f64 / 1e9);
        jobfile::estimate(&jobs)
            .saturating_add(layout)
            .saturating_add(FIO_OVERHEAD)
    }

    /// Laying the files out; fio's own estimate of its jobs stays.
    fn estimate_io(&self) -> Duration {
        saturating_secs(jobfile::bytes_needed(&jobfile::jobs(&self.text)) as f64 / 1e9)
    }

    fn bytes_needed(&self) -> u64 {
        jobfile::bytes_needed(&jobfile::jobs(&self.text))
    }

    /// Every job's `rate_iops`, which the search sets alike; `iops` is
    /// the run's total. fio counts latency from when it issued each
    /// operation, not from when it was due: past the knee the achieved
    /// rate shows it first.
    fn open_loop(&self) -> Result<OpenLoop, String> {
        let jobs = jobfile::jobs(&self.text);
        let mut rates = Vec::new();
        for j in &jobs {
            let Some(r) = &j.rate_iops else {
                return Err(format!("its job `{}` sets no rate_iops; a capacity search sets every job's, and judges the run's total iops", j.name));
            };
            let r: u64 = r.trim().parse().map_err(|_| {
                format!("job `{}` sets rate_iops={r}; a capacity search sets one rate for reads and writes alike: write one number", j.name)
            })?;
            rates.push(r);
        }
        Ok(OpenLoop {
            param: "rate_iops",
            issuers: jobs.iter().map(|j| j.numjobs).sum(),
            value: rates.iter().copied().max().unwrap_or(0) as f64,
            whole: true,
            achieved: &crate::metric::catalogue::IOPS,
            served: None,
        })
    }

    fn build(&self) -> Box<dyn Workload> {
        Box::new(Fio::new(&self.text))
    }
}

/// fio must be there before anything is provisioned.
fn preflight() -> Result<()> {
    let mut cmd = Command::new(FIO);
    cmd.arg("--version");
    crate::console::echo(&cmd);
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|_| ())
        .map_err(spawn_error)
}

fn spawn_error(e: std::io::Error) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        anyhow!("fio is not installed (no `fio` on PATH); install it, e.g. `apt-get install fio`")
    } else {
        anyhow!(e).context("starting fio")
    }
}

pub struct Fio {
    /// The job text as handed to fio.
    text: String,
    /// Recorded with every run (a replaced `directory`).
    warnings: Vec<String>,
}

impl Fio {
    pub fn new(job_text: &str) -> Fio {
        let (text, warnings) = jobfile::render(job_text);
        Fio { text, warnings }
    }

    /// Runs fio on the job text in `dir` and returns it with its stdout.
    fn invoke(
        &self,
        dir: &Path,
        extra: &[&str],
        stop: &StopFlag,
        timeout: Option<Duration>,
    ) -> Result<(Finished, String)> {
        // fio separates directories with `:`; a literal one is escaped.
        let directory = dir.display().to_string().replace(':', "\\:");
        let mut cmd = Command::new(FIO);
        cmd.arg("--output-format=json+")
            .arg("--eta=never")
            .arg(format!("--directory={directory}"))
            .args(extra)
            .arg("-")
            .current_dir(dir);
        let finished = child::run(
            &mut cmd,
            ChildOptions {
                stdin: Some(self.text.clone().into_bytes()),
                capture_stdout: true,
                stop,
                stop_signal: libc::SIGINT,
                timeout,
            },
        )
        .map_err(spawn_error)?;
        let stdout = String::from_utf8_lossy(&finished.stdout).into_owned();
        Ok((finished, stdout))
    }
}

/// How long laying out `bytes` of files may take: an external command's
/// limit (STORLAB_COMMAND_TIMEOUT), and a second per 10 MB on top, so that
/// a large layout on a slow disk finishes while a hung fio does not hang
/// the campaign. (The timed run itself is bounded by the job's own
/// `runtime` and by the campaign's stop.)
fn layout_timeout(bytes: u64) -> Duration {
    crate::provision::cmd::timeout().saturating_add(Duration::from_secs(bytes / 10_000_000))
}

/// What fio said: its notes on stdout and its stderr, last lines first kept.
fn said(f: &Finished, stdout: &str, lines: usize) -> String {
    let text = format!(
        "{}\n{}",
        output::notes(stdout),
        String::from_utf8_lossy(&f.stderr)
    );
    tail_lines(&text, lines)
}

/// fio's own words for a failure, with the failed jobs' error codes.
fn failure(f: &Finished, stdout: &str) -> anyhow::Error {
    let mut parts = Vec::new();
    let words = said(f, stdout, 8);
    if !words.is_empty() {
        parts.push(words);
    }
    parts.extend(output::job_errors(stdout));
    if parts.is_empty() {
        parts.push("no message, and no JSON output".into());
    }
    let how = if f.status.success() {
        "a job failed".to_string()
    } else {
        describe_status(f.status)
    };
    anyhow!("fio failed ({how}): {}", parts.join(" | "))
}

impl Workload for Fio {
    fn prepare(&mut self, dir: &Path, cx: &RunContext) -> Result<()> {
        let limit = layout_timeout(jobfile::bytes_needed(&jobfile::jobs(&self.text)));
        let (f, stdout) = self.invoke(dir, &["--create_only=1"], &cx.stop, Some(limit))?;
        if f.timed_out {
            return Err(anyhow!(
                "fio --create_only=1 did not lay the job's files out within {} s and was killed (STORLAB_COMMAND_TIMEOUT, in seconds, plus a second per 10 MB of files sets the limit)",
                limit.as_secs()
            ));
        }
        if !f.status.success() || !output::job_errors(&stdout).is_empty() {
            return Err(failure(&f, &stdout))
                .context("laying out the job's files (fio --create_only=1)");
        }
        Ok(())
    }

    fn run(&mut self, dir: &Path, cx: &RunContext) -> Result<RunOutput> {
        let (f, stdout) = self.invoke(dir, &[], &cx.stop, None)?;
        let failed = !f.status.success() || !output::job_errors(&stdout).is_empty();
        // Stopped by SIGINT, fio still reports what it did: the run is
        // recorded as interrupted.
        if failed && !cx.stop.is_raised() {
            return Err(failure(&f, &stdout));
        }
        let report = match output::parse(&stdout) {
            Some(parsed) => parsed?,
            None => return Err(failure(&f, &stdout)),
        };
        let mut out = output::to_run_output(&report, &jobfile::jobs(&self.text))?;
        out.warnings
            .extend(self.warnings.iter().cloned().map(Warning::note));
        let words = said(&f, &stdout, 5);
        if !words.is_empty() {
            out.warnings
                .push(Warning::note(format!("fio said: {words}")));
        }
        Ok(out)
    }

    /// Removes what the job left in its directory (files, logs): the next
    /// run lays its files out anew, as the `io` workload does, so that
    /// repetitions do not all measure one placement of the blocks.
    fn cleanup(&mut self, dir: &Path) -> Result<()> {
        let entries =
            std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
        for entry in entries {
            let path = entry?.path();
            let removed = if path.is_dir() && !path.is_symlink() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.with_context(|| format!("removing {}", path.display()))?;
        }
        Ok(())
    }
}

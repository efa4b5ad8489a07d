//! Reading the `io` parameters into a job: the one place that interprets
//! them. The declared, typed parameters (`IoParams`) become the job every
//! thread runs, after the checks that involve several of them.

use std::time::Duration;

use super::bssplit::BsSplit;
use super::dist::Dist;
use super::fill::FillSpec;
use super::job::{Advice, JobSpec, VerifySpec};
use super::schedule::period_ps;
use super::steady::SteadySpec;
use super::verify::HEADER;
use super::IoParams;
use crate::params::Fault;

/// Everything an `io` workload needs to run.
#[derive(Debug, Clone)]
pub struct Options {
    pub spec: JobSpec,
    pub numjobs: usize,
    pub steady: Option<SteadySpec>,
    /// Where this job, read as a fio job, would mean something else
    /// (docs/workloads.md, "storlab and fio"): recorded with every run.
    pub fio_differences: Vec<String>,
}

pub fn read(p: &IoParams) -> Result<Options, Fault> {
    let (split, bs_key) = block_sizes(p)?;
    let mut spec = JobSpec {
        rw: p.rw,
        split,
        offset: p.offset,
        size: p.size,
        engine: p.ioengine,
        iodepth: p.iodepth,
        batch_submit: match p.iodepth_batch_submit {
            0 => p.iodepth,
            n => n.min(p.iodepth),
        },
        direct: p.direct,
        fsync_every: p.fsync,
        end_fsync: p.end_fsync,
        runtime: p.runtime,
        time_based: p.time_based,
        invalidate: p.invalidate && !p.direct,
        advice: Advice::of_hint(&p.fadvise_hint, p.rw),
        ramp: p.ramp_time,
        rwmixread: p.rwmixread,
        period_ps: None,
        seed: 0x0570_41ab,
        dist: Dist::parse(&p.random_distribution).map_err(|e| ("random_distribution", e))?,
        randommap: !p.norandommap,
        fill: fill(p),
        verify: verify(p)?,
        raw: false,
    };
    spec.period_ps = period_ps(spec.mean_bs().round() as usize, p.rate, p.rate_iops);
    check_region(&spec, bs_key)?;
    check_engine(&spec)?;
    check_timing(p)?;
    p.steady.validate(p.runtime)?;
    Ok(Options {
        fio_differences: fio_differences(&spec),
        spec,
        numjobs: p.numjobs,
        steady: p.steady.spec(),
    })
}

/// Where storlab deliberately reads a parameter otherwise than fio, in
/// effect for this job.
fn fio_differences(spec: &JobSpec) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(r), true) = (spec.runtime, spec.time_based) {
        out.push(format!(
            "runtime = {} runs time-based with storlab's default time_based = true (fio's default is 0: runtime only caps a size-based job)",
            crate::params::units::format_seconds(r.as_secs_f64())
        ));
    }
    if spec.engine == super::engine::EngineKind::IoUring && spec.batch_submit != 1 {
        out.push(format!(
            "iodepth_batch_submit = {} (fio's default is 1)",
            spec.batch_submit
        ));
    }
    out
}

/// `bs`, or `bssplit` when given (it overrides `bs`, as in fio), with the
/// key the block sizes came from.
fn block_sizes(p: &IoParams) -> Result<(BsSplit, &'static str), Fault> {
    let (split, key) = match &p.bssplit {
        Some(text) => (BsSplit::parse(text).map_err(|e| ("bssplit", e))?, "bssplit"),
        None if p.bs == 0 => return Err(("bs", "bs must be larger than 0".into())),
        None => (BsSplit::fixed(p.bs as usize), "bs"),
    };
    split.check_multiples().map_err(|e| (key, e))?;
    Ok((split, key))
}

fn fill(p: &IoParams) -> FillSpec {
    FillSpec {
        zero: p.zero_buffers,
        refill: p.refill_buffers,
        scramble: p.scramble_buffers,
        compress_pct: p.buffer_compress_percentage,
        compress_chunk: p.buffer_compress_chunk as usize,
        dedupe_pct: p.dedupe_percentage,
    }
}

fn verify(p: &IoParams) -> Result<Option<VerifySpec>, Fault> {
    match (p.verify.as_str(), p.verify_fatal) {
        ("none", true) => Err((
            "verify_fatal",
            "verify_fatal needs verify = \"crc32c\"".into(),
        )),
        ("none", false) => Ok(None),
        (_, fatal) => Ok(Some(VerifySpec { fatal })),
    }
}

/// The region and block sizes fit together; `bs_key` names where the
/// block sizes came from.
fn check_region(spec: &JobSpec, bs_key: &'static str) -> Result<(), Fault> {
    let (size, min, max) = (spec.size, spec.unit() as u64, spec.max_bs() as u64);
    if max > size {
        return Err((
            bs_key,
            format!("the block size ({max} bytes) is larger than size ({size} bytes)"),
        ));
    }
    if size % min != 0 {
        return Err((
            "size",
            format!("size ({size} bytes) must be a multiple of the block size ({min} bytes)"),
        ));
    }
    if spec.offset.checked_add(size).is_none() {
        return Err(("offset", "offset + size is beyond any file".into()));
    }
    if spec.direct && min % 512 != 0 {
        return Err((
            bs_key,
            "with direct = true, block sizes must be multiples of 512 bytes (4k is safe)".into(),
        ));
    }
    if spec.direct && spec.offset % 512 != 0 {
        return Err((
            "offset",
            "with direct = true, offset must be a multiple of 512 bytes (4k is safe)".into(),
        ));
    }
    if spec.verify.is_some() && min < HEADER as u64 {
        return Err((
            "verify",
            format!("verify needs blocks of at least {HEADER} bytes for its header"),
        ));
    }
    Ok(())
}

fn check_engine(spec: &JobSpec) -> Result<(), Fault> {
    if spec.iodepth > 1 && !spec.engine.caps().queued {
        return Err((
            "iodepth",
            "iodepth > 1 needs ioengine = \"io_uring\" (psync and mmap issue one operation at a time)".into(),
        ));
    }
    Ok(())
}

fn check_timing(p: &IoParams) -> Result<(), Fault> {
    if !p.ramp_time.is_zero() && p.runtime.is_none() {
        return Err((
            "ramp_time",
            "ramp_time needs runtime (a time-based run)".into(),
        ));
    }
    if p.runtime == Some(Duration::ZERO) {
        return Err(("runtime", "runtime must be longer than 0".into()));
    }
    Ok(())
}

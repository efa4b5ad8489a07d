//! Reading the `io` parameters into a job: the one place that interprets
//! them. Validation and construction both go through [`read`], so a
//! workload that validated builds exactly what was checked.

use std::time::Duration;

use super::bssplit::BsSplit;
use super::dist::Dist;
use super::engine::EngineKind;
use super::fill::FillSpec;
use super::job::{JobSpec, Rw, VerifySpec};
use super::schedule::period_ps;
use super::steady::{self, SteadySpec};
use super::verify::HEADER;
use crate::experiment::params::Params;

/// A parameter at fault, and why.
pub type Fault = (&'static str, String);

/// Everything an `io` workload needs to run.
#[derive(Debug, Clone)]
pub struct Options {
    pub spec: JobSpec,
    pub numjobs: usize,
    pub steady: Option<SteadySpec>,
}

pub fn read(p: &Params) -> Result<Options, Fault> {
    let split = block_sizes(p)?;
    let engine =
        EngineKind::parse(p.str("ioengine").unwrap_or("psync")).unwrap_or(EngineKind::Psync);
    let iodepth = p.int("iodepth").unwrap_or(1).max(1) as usize;
    let mut spec = JobSpec {
        rw: Rw::parse(p.str("rw").unwrap_or("read")).unwrap_or(Rw::Read),
        split,
        offset: p.size("offset").unwrap_or(0),
        size: p.size("size").unwrap_or(256 << 20),
        engine,
        iodepth,
        batch_submit: match p.int("iodepth_batch_submit").unwrap_or(4) {
            0 => iodepth,
            n => (n as usize).min(iodepth),
        },
        direct: p.bool("direct").unwrap_or(false),
        fsync_every: p.int("fsync").unwrap_or(0) as u64,
        end_fsync: p.bool("end_fsync").unwrap_or(false),
        runtime: p.duration("runtime"),
        ramp: p.duration("ramp_time").unwrap_or_default(),
        rwmixread: p.int("rwmixread").unwrap_or(50) as u32,
        period_ps: None,
        seed: 0x0570_41ab,
        dist: Dist::parse(p.str("random_distribution").unwrap_or("random"))
            .map_err(|e| ("random_distribution", e))?,
        randommap: !p.bool("norandommap").unwrap_or(false),
        fill: fill(p),
        verify: verify(p)?,
    };
    spec.period_ps = period_ps(
        spec.mean_bs().round() as usize,
        p.size("rate").unwrap_or(0),
        p.int("rate_iops").unwrap_or(0).max(0) as u64,
    );
    let bs_key = if p.str("bssplit").is_some() {
        "bssplit"
    } else {
        "bs"
    };
    check_region(&spec, bs_key)?;
    check_engine(&spec)?;
    check_timing(p)?;
    steady::validate(p)?;
    Ok(Options {
        spec,
        numjobs: p.int("numjobs").unwrap_or(1).max(1) as usize,
        steady: steady::from_params(p),
    })
}

/// `bs`, or `bssplit` when given (it overrides `bs`, as in fio).
fn block_sizes(p: &Params) -> Result<BsSplit, Fault> {
    let split = match p.str("bssplit") {
        Some(text) => BsSplit::parse(text).map_err(|e| ("bssplit", e))?,
        None => {
            let bs = p.size("bs").unwrap_or(0);
            if bs == 0 {
                return Err(("bs", "bs must be larger than 0".into()));
            }
            BsSplit::fixed(bs as usize)
        }
    };
    split.check_multiples().map_err(|e| ("bssplit", e))?;
    Ok(split)
}

fn fill(p: &Params) -> FillSpec {
    FillSpec {
        zero: p.bool("zero_buffers").unwrap_or(false),
        refill: p.bool("refill_buffers").unwrap_or(false),
        scramble: p.bool("scramble_buffers").unwrap_or(true),
        compress_pct: p.int("buffer_compress_percentage").unwrap_or(0) as u32,
        compress_chunk: p.size("buffer_compress_chunk").unwrap_or(512) as usize,
        dedupe_pct: p.int("dedupe_percentage").unwrap_or(0) as u32,
    }
}

fn verify(p: &Params) -> Result<Option<VerifySpec>, Fault> {
    let fatal = p.bool("verify_fatal").unwrap_or(false);
    match p.str("verify").unwrap_or("none") {
        "none" if fatal => Err((
            "verify_fatal",
            "verify_fatal needs verify = \"crc32c\"".into(),
        )),
        "none" => Ok(None),
        _ => Ok(Some(VerifySpec { fatal })),
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

fn check_timing(p: &Params) -> Result<(), Fault> {
    let ramp = p.duration("ramp_time").unwrap_or_default();
    if !ramp.is_zero() && p.duration("runtime").is_none() {
        return Err((
            "ramp_time",
            "ramp_time needs runtime (a time-based run)".into(),
        ));
    }
    if p.duration("runtime") == Some(Duration::ZERO) {
        return Err(("runtime", "runtime must be longer than 0".into()));
    }
    Ok(())
}

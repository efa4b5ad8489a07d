//! `storlab cleanup --roots [--remove KEY|all]`: the roots storlab built
//! and cached (`root = "debian:SUITE"`), with what each holds and its size
//! on disk, and their removal on request. A root a running campaign holds
//! is never removed; the next campaign that needs a removed root builds
//! it again.

use std::process::ExitCode;

use anyhow::Result;

use crate::params::units::format_bytes;
use crate::provision::root::cache::{Cache, Entry};

pub fn roots(remove: &[String]) -> Result<ExitCode> {
    let cache = Cache::here();
    let entries = cache.list();
    if remove.is_empty() {
        list(&cache, &entries);
        return Ok(ExitCode::SUCCESS);
    }
    let keys: Vec<String> = match remove.iter().any(|k| k == "all") {
        true => entries.iter().map(|e| e.key.clone()).collect(),
        false => remove.to_vec(),
    };
    let mut failed = false;
    for key in keys {
        match cache.remove(&key) {
            Ok(bytes) => outln!("removed root {key} ({})", format_bytes(bytes as f64)),
            Err(e) => {
                errln!("error: {e:#}");
                failed = true;
            }
        }
    }
    Ok(match failed {
        true => ExitCode::FAILURE,
        false => ExitCode::SUCCESS,
    })
}

fn list(cache: &Cache, entries: &[Entry]) {
    if entries.is_empty() {
        outln!("no cached root in {}", cache.dir().display());
        return;
    }
    outln!("cached roots in {}:", cache.dir().display());
    for e in entries {
        let m = &e.manifest;
        outln!(
            "  {}  {:>9}  debian:{} with {} {} ({}), built {}{}",
            e.key,
            format_bytes(e.bytes as f64),
            m.suite,
            m.software.display(),
            m.version,
            m.packages.join(", "),
            m.built.get(..10).unwrap_or(&m.built),
            if e.in_use { ", in use" } else { "" }
        );
    }
    let total: u64 = entries.iter().map(|e| e.bytes).sum();
    outln!(
        "{} root(s), {}; `storlab cleanup --roots --remove KEY` (or `all`) removes them",
        entries.len(),
        format_bytes(total as f64)
    );
}

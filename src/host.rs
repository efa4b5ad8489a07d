//! Environment facts recorded once per campaign: CPU, memory, kernel,
//! distribution, hostname and storlab's version.

use serde_json::{json, Value};

pub fn environment() -> Value {
    json!({
        "storlab_version": crate::VERSION,
        "hostname": hostname(),
        "cpu_model": cpu_model(),
        "cpu_count": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "memory_bytes": meminfo_total(),
        "kernel": uname_release(),
        "distribution": distribution(),
        "root": is_root(),
    })
}

/// The local time now, as stored (RFC 3339 with milliseconds and offset).
pub fn now_rfc3339() -> String {
    chrono::Local::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, false)
}

/// The host's load average over the last minute (`/proc/loadavg`).
pub fn load_average() -> Option<f64> {
    use procfs::Current;
    procfs::LoadAverage::current()
        .ok()
        .map(|l| f64::from(l.one))
}

/// Whether storlab runs as root (mounts, loop devices, cache drops).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

pub fn hostname() -> String {
    read("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn uname_release() -> String {
    read("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn cpu_model() -> String {
    read("/proc/cpuinfo")
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn meminfo_total() -> Option<u64> {
    let t = read("/proc/meminfo")?;
    let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn distribution() -> String {
    read("/etc/os-release")
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("PRETTY_NAME="))
                .map(|l| l["PRETTY_NAME=".len()..].trim_matches('"').to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Syncs and drops the page cache, dentries and inodes. Needs root.
pub fn drop_caches() -> std::io::Result<()> {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", b"3")
}

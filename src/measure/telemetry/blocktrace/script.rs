//! The bpftrace program: the block tracepoints of the watched devices,
//! a sample of their requests timed in kernel maps, and a dump of those
//! maps whenever storlab calls [`super::storlab_block_trace_mark`] (a
//! uprobe on storlab's own binary, filtered to this process), so that each
//! dump falls exactly where the sampler takes a sample. Nothing is
//! streamed per request, and most requests touch no map at all.
//!
//! - `block_rq_issue` notes the issue time of the requests in the sample
//!   (below) in `@issue`, keyed by device and sector, with the sampling
//!   shift it was taken at;
//! - `block_rq_complete` takes a sampled request's time since issue into
//!   the latency buckets ([`super::buckets`]), keyed by the shift too (its
//!   weight, 2^shift, when read back: [`super::trace`]), and counts every
//!   flush (`F` first in rwbs: a flush, or a write with a preflush) and
//!   FUA write (`F` after the `W`) — a string compare, a map update only
//!   for those;
//! - `block_rq_requeue` (a driver that could not take the request now)
//!   forgets a sampled request's issue: it is timed from its next.
//!
//! How many requests there were, of which operation and size, is not
//! counted here: /proc/diskstats counts them at the same marks (the
//! sampler reads both at each sample), exactly and at no cost.
//!
//! **The sample.** A request is timed when the top `shift` bits of its
//! sector's multiplicative hash are zero: 1 in 2^shift, the same choice
//! at issue and completion with no map to remember it, and unrelated to
//! the request's size, direction or time. The shift is each device's own
//! (`@shift`), set by storlab at every sample from the device's request
//! rate ([`super::sampling`]): 0 (every request timed) up to
//! [`super::sampling::TIMED_PER_S`] requests a second, so that a slow
//! device is timed whole and a fast one pays for a few thousand timings a
//! second. Completion looks up the requests sampled at `@reap`, the
//! smaller of the device's last two shifts, so that a request issued just
//! before a change is still found. Every count (the maps print
//! cumulative counts, storlab subtracts dumps) is a `count()`.
//!
//! Why sample: noting every request's issue in a hash map and taking it
//! back at completion cost 0.8 µs of BPF time per request here (bpftrace
//! 0.17, kernel 6.18, a loop device over tmpfs at ~70k requests/s:
//! `run_time_ns / run_cnt` of its programs, kernel.bpf_stats_enabled),
//! which cut io_uring's QD32 4 KiB random reads on the virtio disk to
//! 0.93 of untraced (issue #45). A request outside the sample costs its
//! two tracepoints and a hash test (about 0.1 µs); one in it, 0.6 µs.
//!
//! The time a request waited in the I/O scheduler's queue (from
//! `block_rq_insert` to its issue) is not traced: noting each insert in a
//! map keyed by (device, sector) cut io_uring's 4 KiB direct random reads
//! on this host's virtio disk (queue depth 32) from 51–61k IOPS to 31–40k
//! (bench/telemetry_overhead.sh; fio with and without the probe by hand).

use super::buckets::SUB_BITS;
use std::fmt::Write;

/// Operations by their number in the maps, as the `op` label names them.
pub const OPS: [&str; 5] = ["read", "write", "flush", "discard", "other"];

/// What marks a dump's start and end in bpftrace's output.
pub const MARK: &str = "storlab-mark";
pub const END: &str = "storlab-end";
pub const READY: &str = "storlab-ready";
pub const RESET: &str = "storlab-reset";

/// The maps a dump prints, in order.
pub const MAPS: [&str; 3] = ["@latency", "@flushes", "@fua"];

/// The multiplier of the sector's hash (2^64 / the golden ratio).
const HASH: &str = "0x9E3779B97F4A7C15";

/// The kernel's device number of (major, minor), as tracepoints carry it.
pub fn kernel_dev(major: u32, minor: u32) -> u64 {
    (u64::from(major) << 20) | u64::from(minor)
}

/// Whether the request at `args->sector` is in the sample of shift `w`
/// (a variable holding it).
fn sampled(w: &str) -> String {
    format!("({w} == 0 || ((args->sector * {HASH}) >> (64 - {w})) == 0)")
}

/// The program for `devices` (major, minor), marked by process `pid`,
/// every device's shift starting at `shift`.
pub fn program(devices: &[(u32, u32)], pid: u32, shift: u32) -> String {
    let filter = devices
        .iter()
        .map(|(a, b)| format!("args->dev == {}", kernel_dev(*a, *b)))
        .collect::<Vec<_>>()
        .join(" || ");
    let key = "args->dev, args->sector";
    let mut p = String::new();
    let _ = write!(p, "BEGIN {{");
    for (a, b) in devices {
        let d = kernel_dev(*a, *b);
        let _ = write!(p, " @shift[{d}] = {shift}; @reap[{d}] = {shift};");
    }
    let _ = writeln!(p, " printf(\"{READY}\\n\"); }}");
    let _ = writeln!(p, "tracepoint:block:block_rq_issue /{filter}/ {{");
    let _ = writeln!(p, "  $w = @shift[args->dev];");
    let _ = writeln!(
        p,
        "  if {} {{ @issue[{key}] = (nsecs << 6) | $w; }}\n}}",
        sampled("$w")
    );
    let _ = writeln!(p, "tracepoint:block:block_rq_requeue /{filter}/ {{");
    let _ = writeln!(p, "  $w = @reap[args->dev];");
    let _ = writeln!(p, "  if {} {{ delete(@issue[{key}]); }}\n}}", sampled("$w"));
    let _ = writeln!(p, "tracepoint:block:block_rq_complete /{filter}/ {{");
    p.push_str(FLAGS);
    p.push_str("  if ($f) { @flushes[args->dev] = count(); }\n");
    p.push_str("  if ($fua) { @fua[args->dev] = count(); }\n");
    let _ = writeln!(p, "  $w = @reap[args->dev];");
    let _ = writeln!(p, "  if {} {{", sampled("$w"));
    let _ = writeln!(p, "    $s = @issue[{key}];");
    let _ = writeln!(
        p,
        "    if ($s) {{\n      delete(@issue[{key}]);\n      $v = nsecs - ($s >> 6);"
    );
    p.push_str(&bucket("$v", "      "));
    p.push_str(
        "      @latency[args->dev, $op, $s & 63, $sh, $v >> $sh] = count();\n    }\n  }\n}\n",
    );
    let mut dump = String::new();
    for m in MAPS {
        let _ = write!(dump, " print({m});");
    }
    let _ = writeln!(
        p,
        "uprobe:/proc/{pid}/exe:storlab_block_trace_mark /pid == {pid}/ {{ printf(\"{MARK} %d %lld\\n\", arg0, nsecs);{dump} printf(\"{END}\\n\"); }}"
    );
    // A run's reset (before it is prepared): the counts start again, so
    // that the maps hold one run's keys, not a campaign's. Requests in
    // flight keep their times (@issue), devices their shifts.
    let mut reset = String::new();
    for m in MAPS {
        let _ = write!(reset, " clear({m});");
    }
    let _ = writeln!(
        p,
        "uprobe:/proc/{pid}/exe:storlab_block_trace_reset /pid == {pid}/ {{{reset} printf(\"{RESET} %d\\n\", arg0); }}"
    );
    // A device's new shift (arg0 the device, arg1 the shift): requests
    // issued before it are still looked up at completion (@reap, the
    // smaller of the two).
    let _ = writeln!(
        p,
        "uprobe:/proc/{pid}/exe:storlab_block_trace_rate /pid == {pid}/ {{ $old = @shift[arg0]; @reap[arg0] = $old < arg1 ? $old : arg1; @shift[arg0] = arg1; }}"
    );
    // The maps were printed at the last mark: nothing more at exit.
    let mut clear = String::new();
    for m in MAPS.iter().chain(&["@issue", "@shift", "@reap"]) {
        let _ = write!(clear, " clear({m});");
    }
    let _ = writeln!(p, "END {{{clear} }}");
    p
}

/// At completion, from the tracepoint's rwbs: `$f` a flush (`F` first: a
/// flush request, or a write with a preflush), `$op` the operation's
/// number (a write with a preflush, `FW…`, is a write; `F` alone or `FF`
/// a flush), `$fua` a write with FUA (`F` after the `W`).
const FLAGS: &str = "  $f = strncmp(args->rwbs, \"F\", 1) == 0;
  $op = $f ? (strncmp(args->rwbs, \"FW\", 2) == 0 ? 1 : 2) : strncmp(args->rwbs, \"R\", 1) == 0 ? 0 : strncmp(args->rwbs, \"W\", 1) == 0 ? 1 : strncmp(args->rwbs, \"D\", 1) == 0 ? 3 : 4;
  $fua = $op == 1 && (strncmp(args->rwbs, \"WF\", 2) == 0 || strncmp(args->rwbs, \"FWF\", 3) == 0);
";

/// `$sh`: the shift of `var`'s bucket (its leading one's place less
/// [`SUB_BITS`], at least 0), found by halving (no loops in BPF).
fn bucket(var: &str, indent: &str) -> String {
    let mut s = format!("{indent}$x = {var}; $m = 0;\n");
    for step in [32, 16, 8, 4, 2] {
        let _ = writeln!(
            s,
            "{indent}if ($x >> {step}) {{ $x = $x >> {step}; $m = $m + {step}; }}"
        );
    }
    let _ = writeln!(s, "{indent}if ($x >> 1) {{ $m = $m + 1; }}");
    let _ = writeln!(s, "{indent}$sh = $m > {SUB_BITS} ? $m - {SUB_BITS} : 0;");
    s
}

/// The sector hash's top `shift` bits are zero: what the program samples
/// (for tests of the sample's size).
pub fn in_sample(sector: u64, shift: u32) -> bool {
    shift == 0 || sector.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - shift) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_watches_only_the_given_devices_and_marks_of_this_process() {
        let p = program(&[(7, 3), (254, 0)], 4242, 4);
        assert!(
            p.contains("args->dev == 7340035 || args->dev == 266338304"),
            "{p}"
        );
        assert!(p.contains("uprobe:/proc/4242/exe:storlab_block_trace_mark /pid == 4242/"));
        assert!(p.contains("uprobe:/proc/4242/exe:storlab_block_trace_reset /pid == 4242/"));
        assert!(p.contains("uprobe:/proc/4242/exe:storlab_block_trace_rate /pid == 4242/"));
        assert!(
            p.contains("@shift[7340035] = 4; @reap[7340035] = 4;"),
            "{p}"
        );
        for m in MAPS {
            assert!(p.contains(&format!("print({m});")), "{m}");
            assert!(p.contains(&format!("clear({m});")), "{m}");
        }
        assert_eq!(kernel_dev(254, 0), 254 << 20);
    }

    #[test]
    fn the_sample_is_one_request_in_two_to_the_shift_whatever_their_sizes() {
        for (step, shift) in [(1u64, 4u32), (8, 5), (2048, 3), (8, 0)] {
            let n = 1u64 << 16;
            let timed = (0..n).filter(|i| in_sample(i * step, shift)).count() as f64;
            let want = n as f64 / f64::from(1u32 << shift);
            assert!((timed / want - 1.0).abs() < 0.05, "{step} {shift}: {timed}");
        }
        // A request in the sample at a shift is in it at every smaller one.
        for sector in 0..10_000u64 {
            for shift in 1..8 {
                assert!(!in_sample(sector, shift) || in_sample(sector, shift - 1));
            }
        }
    }
}

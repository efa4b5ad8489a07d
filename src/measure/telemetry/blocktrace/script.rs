//! The bpftrace program: the block tracepoints of the watched devices,
//! counted in kernel maps, and a dump of those maps whenever storlab
//! calls [`super::storlab_block_trace_mark`] (a uprobe on storlab's own
//! binary, filtered to this process), so that each dump falls exactly
//! where the sampler takes a sample. Nothing is streamed per request: a
//! request costs a few map updates and the maps are read once a second.
//!
//! - `block_rq_issue` (the request handed to the driver) counts it by
//!   operation, its bytes, flushes (`F` first in rwbs: a flush, or a
//!   write with a preflush) and FUA writes, and notes the issue time
//!   with the operation and flags;
//! - `block_rq_complete` takes the time since issue into the latency
//!   buckets ([`super::buckets`]) and the busy time (their sum);
//! - `block_rq_requeue` (a driver that could not take the request now,
//!   virtio-blk with a full ring) takes back what its issue counted: the
//!   request is issued again, and timed from that last issue.
//!
//! Counts are `sum()`s so that a requeue can subtract (`sum(-1)`).
//!
//! Every map is cumulative from the attach; storlab subtracts dumps.
//!
//! The time a request waited in the I/O scheduler's queue (from
//! `block_rq_insert` to its issue) is not traced: noting each insert in a
//! map keyed by (device, sector) cut io_uring's 4 KiB direct random reads
//! on this host's virtio disk (queue depth 32) from 51–61k IOPS to 31–40k,
//! where the rest of the program costs nothing measurable (bench/
//! telemetry_overhead.sh; fio with and without the probe by hand).

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
pub const MAPS: [&str; 8] = [
    "@latency",
    "@requests",
    "@bytes",
    "@done",
    "@busy",
    "@flushes",
    "@fua",
    "@unmatched",
];

/// The kernel's device number of (major, minor), as tracepoints carry it.
pub fn kernel_dev(major: u32, minor: u32) -> u64 {
    (u64::from(major) << 20) | u64::from(minor)
}

/// The program for `devices` (major, minor), marked by process `pid`.
pub fn program(devices: &[(u32, u32)], pid: u32) -> String {
    let filter = devices
        .iter()
        .map(|(a, b)| format!("args->dev == {}", kernel_dev(*a, *b)))
        .collect::<Vec<_>>()
        .join(" || ");
    let key = "args->dev, args->sector";
    let mut p = String::new();
    let _ = writeln!(p, "BEGIN {{ printf(\"{READY}\\n\"); }}");
    let _ = writeln!(p, "tracepoint:block:block_rq_issue /{filter}/ {{");
    p.push_str(ISSUE_FLAGS);
    p.push_str(
        "  @requests[args->dev, $op] = sum(1);\n  @bytes[args->dev, $op] = sum(args->bytes);\n",
    );
    p.push_str(
        "  if ($f) { @flushes[args->dev] = sum(1); }\n  if ($fua) { @fua[args->dev] = sum(1); }\n",
    );
    let _ = writeln!(
        p,
        "  if (@issue[{key}]) {{ @unmatched[args->dev] = count(); }}"
    );
    let _ = writeln!(
        p,
        "  @issue[{key}] = (nsecs << 5) | ($fua << 4) | ($f << 3) | $op;\n}}"
    );
    let _ = writeln!(p, "tracepoint:block:block_rq_requeue /{filter}/ {{");
    let _ = writeln!(p, "  $s = @issue[{key}];");
    let _ = writeln!(
        p,
        "  if ($s) {{\n    delete(@issue[{key}]);\n    $op = $s & 7;"
    );
    p.push_str("    @requests[args->dev, $op] = sum(-1);\n");
    p.push_str("    @bytes[args->dev, $op] = sum(-((int64)args->nr_sector * 512));\n");
    p.push_str("    if ($s & 8) { @flushes[args->dev] = sum(-1); }\n");
    p.push_str("    if ($s & 16) { @fua[args->dev] = sum(-1); }\n  }\n}\n");
    let _ = writeln!(p, "tracepoint:block:block_rq_complete /{filter}/ {{");
    let _ = writeln!(p, "  $s = @issue[{key}];");
    let _ = writeln!(
        p,
        "  if ($s) {{\n    delete(@issue[{key}]);\n    $op = $s & 7;\n    $v = nsecs - ($s >> 5);"
    );
    p.push_str(&bucket("$v", "    "));
    p.push_str("    @latency[args->dev, $op, $sh, $v >> $sh] = count();\n");
    p.push_str("    @done[args->dev, $op] = count();\n");
    p.push_str("    @busy[args->dev] = sum($v);\n  }\n}\n");
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
    // flight keep their times (@issue).
    let mut reset = String::new();
    for m in MAPS {
        let _ = write!(reset, " clear({m});");
    }
    let _ = writeln!(
        p,
        "uprobe:/proc/{pid}/exe:storlab_block_trace_reset /pid == {pid}/ {{{reset} printf(\"{RESET} %d\\n\", arg0); }}"
    );
    // The maps were printed at the last mark: nothing more at exit.
    let mut clear = String::new();
    for m in MAPS.iter().chain(&["@issue"]) {
        let _ = write!(clear, " clear({m});");
    }
    let _ = writeln!(p, "END {{{clear} }}");
    p
}

/// At issue, from the tracepoint's rwbs: `$f` a flush (`F` first: a
/// flush request, or a write with a preflush), `$op` the operation's
/// number (a write with a preflush, `FW…`, is a write; `F` alone or `FF`
/// a flush), `$fua` a write with FUA (`F` after the `W`). They ride with
/// the issue time in `@issue` (its low 5 bits), so that completion and
/// requeue need no string compares: each costs the program seconds of
/// compiling.
const ISSUE_FLAGS: &str = "  $f = strncmp(args->rwbs, \"F\", 1) == 0;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_watches_only_the_given_devices_and_marks_of_this_process() {
        let p = program(&[(7, 3), (254, 0)], 4242);
        assert!(
            p.contains("args->dev == 7340035 || args->dev == 266338304"),
            "{p}"
        );
        assert!(p.contains("uprobe:/proc/4242/exe:storlab_block_trace_mark /pid == 4242/"));
        assert!(p.contains("uprobe:/proc/4242/exe:storlab_block_trace_reset /pid == 4242/"));
        for m in MAPS {
            assert!(p.contains(&format!("print({m});")), "{m}");
            assert!(p.contains(&format!("clear({m});")), "{m}");
        }
        assert_eq!(kernel_dev(254, 0), 254 << 20);
    }
}

//! Which fio options storlab hands to fio. fio runs as root inside
//! storlab's working directory, and many of its options reach further: a
//! job may run programs (`exec_prerun`), change the host's I/O scheduler
//! (`ioscheduler`), map files anywhere (`mem=mmapshared:/path`), replay a
//! block trace onto devices (`read_iolog`), make cgroups, or load an engine
//! from any library (`ioengine=external:…`). So this is an allow-list: an
//! option is passed only if it is known to stay inside the working
//! directory and the fio processes themselves; options that name files
//! must name them relative to the working directory. Everything else is
//! refused, naming the option, before anything runs. The list is fio
//! 3.33's (`fio --cmdhelp=all`, `fio --enghelp=ENGINE`), aliases included
//! (`fio --cmdhelp=NAME` names them); a test holds it against the
//! installed fio.
//!
//! Everything that becomes a file name stays below the working directory:
//! the path options, `filename_format` (its `$jobname`, `$jobnum`,
//! `$filenum` and `$clientuid` expanded by fio, nothing else), and the
//! job's name — a section's `[name]` or `name=` — which fio makes the
//! default file name (`NAME.0.0`), so a name holds no `/`.

use std::path::Path;

/// Options that shape the I/O, the reporting and the fio processes only.
const ALLOWED: &[&str] = &[
    // job identity and ordering
    "description",
    "name",
    "wait_for",
    "stonewall",
    "wait_for_previous",
    "new_group",
    "thread",
    // not in --cmdhelp, but fio takes it for `thread`
    "threads",
    "numjobs",
    "exitall",
    "exit_what",
    "exitall_on_error",
    "startdelay",
    "group_reporting",
    // the I/O pattern
    "rw",
    "readwrite",
    "rw_sequencer",
    "bs",
    "blocksize",
    "ba",
    "blockalign",
    "bsrange",
    "blocksize_range",
    "bssplit",
    "bs_unaligned",
    "blocksize_unaligned",
    "bs_is_seq_rand",
    "randrepeat",
    "randseed",
    "norandommap",
    "allrandrepeat",
    "random_generator",
    "random_distribution",
    "percentage_random",
    "rwmixread",
    "rwmixwrite",
    "iodepth",
    "iodepth_batch",
    "iodepth_batch_submit",
    "iodepth_batch_complete",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete_max",
    "iodepth_low",
    "serialize_overlap",
    "io_submit_mode",
    "size",
    "io_size",
    "io_limit",
    "filesize",
    "fill_device",
    "fill_fs",
    "file_append",
    "offset",
    "fileoffset",
    "offset_increment",
    "offset_align",
    "number_ios",
    "nrfiles",
    "nr_files",
    "file_service_type",
    "openfiles",
    "lockfile",
    "unique_filename",
    "fallocate",
    "fadvise_hint",
    "fsync",
    "fdatasync",
    "write_barrier",
    "sync_file_range",
    "direct",
    "atomic",
    "buffered",
    "overwrite",
    "loops",
    "sync",
    "write_hint",
    "invalidate",
    "pre_read",
    "end_fsync",
    "fsync_on_close",
    "unlink",
    "unlink_each_loop",
    "create_serialize",
    "create_fsync",
    "create_on_open",
    "create_only",
    "allow_file_create",
    "ignore_error",
    "continue_on_error",
    "error_dump",
    // time
    "runtime",
    "timeout",
    "time_based",
    "ramp_time",
    "clocksource",
    "gtod_reduce",
    "gtod_cpu",
    "steadystate",
    "ss",
    "steadystate_duration",
    "ss_dur",
    "steadystate_ramp_time",
    "ss_ramp",
    // rates and latency targets
    "thinktime",
    "thinktime_spin",
    "thinktime_blocks",
    "thinktime_blocks_type",
    "thinktime_iotime",
    "rate",
    "rate_min",
    "ratemin",
    "rate_process",
    "rate_cycle",
    "ratecycle",
    "rate_ignore_thinktime",
    "rate_iops",
    "rate_iops_min",
    "max_latency",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "latency_run",
    "flow_id",
    "flow",
    "flow_sleep",
    // data written and checked
    "zero_buffers",
    "refill_buffers",
    "scramble_buffers",
    "buffer_pattern",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "dedupe_percentage",
    "dedupe_mode",
    "dedupe_working_set_percentage",
    "dedupe_global",
    "verify",
    "do_verify",
    "verify_interval",
    "verify_offset",
    "verify_pattern",
    "verify_fatal",
    "verify_async",
    "verify_backlog",
    "verify_backlog_batch",
    "experimental_verify",
    "verify_only",
    // dumps go to fio's current directory, which is the working directory
    "verify_dump",
    "trim_percentage",
    "trim_verify_zero",
    "trim_backlog",
    "trim_backlog_batch",
    // zones of a plain file (`zonemode=strided`; `zbd` is refused below)
    "zonesize",
    "zonerange",
    "zoneskip",
    "zonecapacity",
    // the fio processes
    "nice",
    "prio",
    "prioclass",
    "cpumask",
    "cpus_allowed",
    "cpus_allowed_policy",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "hugepage_size",
    // statistics and logs (log files are path options, below)
    "stats",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "percentile_list",
    "significant_figures",
    "disk_util",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "disable_bw",
    "unified_rw_reporting",
    "block_error_percentiles",
    "kb_base",
    "unit_base",
    "per_job_logs",
    "bwavgtime",
    "iopsavgtime",
    "log_entries",
    "log_avg_msec",
    "log_hist_msec",
    "log_hist_coarseness",
    "log_max_value",
    "log_offset",
    "log_prio",
    "log_compression",
    "log_compression_cpus",
    "log_store_compressed",
    "log_unix_epoch",
    "log_alternate_epoch",
    "log_alternate_epoch_clock_id",
    // the allowed engines' own options (io_uring, libaio, pvsync2, mmap, cpuio)
    "hipri",
    "hipri_percentage",
    "cmdprio_percentage",
    "cmdprio_class",
    "cmdprio",
    "cmdprio_bssplit",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "nonvectored",
    "uncached",
    "nowait",
    "force_async",
    "userspace_reap",
    "thp",
    "cpuload",
    "cpumode",
    "cpuchunks",
    "exit_on_io_done",
];

/// Options naming files fio writes or reads: relative names only, which
/// fio resolves inside the working directory.
pub const PATH_OPTIONS: &[&str] = &[
    "filename",
    "filename_format",
    "opendir",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "write_iolog",
];

/// Engines that do I/O on the job's files (or none) and nothing else.
const ENGINES: &[&str] = &[
    "sync",
    "psync",
    "vsync",
    "pvsync",
    "pvsync2",
    "libaio",
    "io_uring",
    "posixaio",
    "mmap",
    "splice",
    "null",
    "cpuio",
    "falloc",
    "ftruncate",
    "filecreate",
    "filestat",
    "filedelete",
    "dircreate",
    "dirstat",
    "dirdelete",
];

/// Memory for I/O buffers, without a file to map.
const MEM: &[&str] = &["malloc", "shm", "shmhuge", "mmap", "mmaphuge", "mmapshared"];

/// Why the options fio users meet most often are refused.
const WHY: &[(&str, &str)] = &[
    ("exec_prerun", "runs a program"),
    ("exec_postrun", "runs a program"),
    ("ioscheduler", "changes the host's I/O scheduler of the backing device"),
    ("read_iolog", "replays an I/O trace onto the devices it names"),
    ("replay_redirect", "replays an I/O trace onto a device"),
    ("merge_blktrace_file", "writes a merged trace where it says"),
    ("cgroup", "creates a cgroup on the host"),
    ("uid", "runs the job as another user"),
    ("gid", "runs the job as another group"),
    ("profile", "runs a built-in test that chooses its own devices"),
    ("allow_mounted_write", "writes to a mounted device"),
    ("lockmem", "locks host memory"),
    ("verify_state_save", "writes state files outside the working directory"),
    ("verify_state_load", "reads state files outside the working directory"),
    ("include", "pastes another file in (only `include FILE` lines below the experiment's directory are read)"),
];

/// Checks one `key[=value]` of a job (key already normalized: lower case,
/// `-` as `_`). The error says why, and what to do.
pub fn check(key: &str, value: Option<&str>) -> Result<(), String> {
    let value = value.unwrap_or("");
    if key == "directory" {
        return Ok(()); // replaced by storlab's own (see `render`)
    }
    if key == "filename_format" {
        return check_relative(key, &without_tokens(value));
    }
    if PATH_OPTIONS.contains(&key) {
        return split_colons(value)
            .iter()
            .try_for_each(|part| check_relative(key, part));
    }
    match key {
        "name" => return check_job_name(value.trim()).map_err(|why| format!("`name={value}` {why}")),
        "zonemode" if matches!(value.trim(), "none" | "strided") => return Ok(()),
        "zonemode" => {
            return Err(format!(
                "`zonemode={value}` addresses a zoned block device; storlab allows zonemode=strided (zones of the job's own file) and none"
            ))
        }
        "ioengine" if ENGINES.contains(&value.trim()) => return Ok(()),
        "ioengine" => {
            return Err(format!(
                "`ioengine={value}` is not an engine storlab runs: it allows engines that do I/O on the job's own files ({}); an external or device engine could reach outside the working directory",
                ENGINES.join(", ")
            ))
        }
        "mem" | "iomem" if MEM.contains(&value.trim()) => return Ok(()),
        "mem" | "iomem" => {
            return Err(format!(
                "`{key}={value}`: storlab allows I/O buffers from {} without a file to map; a file named here could lie anywhere",
                MEM.join(", ")
            ))
        }
        "buffer_pattern" | "verify_pattern" if value.contains(['/', '\'', '"']) => {
            return Err(format!(
                "`{key}={value}`: give the pattern as a number or hex (0x…); a quoted or path-like pattern is not passed"
            ))
        }
        _ => {}
    }
    if ALLOWED.contains(&key) {
        return Ok(());
    }
    Err(refusal(key))
}

/// A job's name (its `[section]` or `name=`): fio names the job's files
/// after it unless `filename` says otherwise, so it must be one file name.
pub fn check_job_name(name: &str) -> Result<(), String> {
    let why = if name.contains('/') {
        "holds a `/`"
    } else if name.contains('$') {
        "expands a variable"
    } else if name.chars().any(char::is_control) {
        "holds a control character"
    } else {
        return Ok(());
    };
    Err(format!(
        "{why}: fio names a job's files after the job (NAME.0.0) unless `filename` says otherwise, so the name could point outside storlab's working directory; name the job with letters, digits, `-`, `_` or `.`"
    ))
}

/// `filename_format` with the tokens fio expands in it taken out: the job
/// name (checked as [`check_job_name`]), the job's and file's numbers and
/// the client's uid.
fn without_tokens(value: &str) -> String {
    ["$jobname", "$jobnum", "$filenum", "$clientuid"]
        .iter()
        .fold(value.to_string(), |v, token| v.replace(token, "x"))
}

fn refusal(key: &str) -> String {
    let shown = if key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && key.len() <= 40
    {
        format!("`{key}`")
    } else {
        "this line".to_string() // not an option name: do not echo the file's text
    };
    let why = WHY
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, w)| format!(" ({w})"))
        .unwrap_or_default();
    format!(
        "fio option {shown} is not one storlab passes to fio{why}: fio runs as root, so storlab allows only options known to stay inside its working directory and the fio processes; remove it, or run that job with fio by hand"
    )
}

/// fio's list separator for file names is `:`, escaped as `\:`.
fn split_colons(value: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                parts.last_mut().expect("never empty").push(':');
                chars.next();
            }
            ':' => parts.push(String::new()),
            c => parts.last_mut().expect("never empty").push(c),
        }
    }
    parts
}

/// A file name must stay below the working directory.
fn check_relative(key: &str, part: &str) -> Result<(), String> {
    let why = if part.starts_with('/') || part.starts_with('~') {
        "is an absolute path"
    } else if Path::new(part).components().any(|c| c.as_os_str() == "..") {
        "climbs out with `..`"
    } else if part.contains('$') {
        "expands a variable, so storlab cannot check where it points"
    } else {
        return Ok(());
    };
    Err(format!(
        "`{key}={part}` {why}; storlab runs fio inside its own working directory on each target and writes nowhere else: use a relative name (e.g. {key}=data) or remove the line"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_that_reach_outside_are_refused_and_ordinary_ones_pass() {
        for (k, v) in [
            ("exec_prerun", Some("touch /tmp/x")),
            ("exec_postrun", Some("sh -c id")),
            ("ioscheduler", Some("none")),
            ("mem", Some("mmapshared:/abs/file")),
            ("iomem", Some("mmap:/dev/shm/x")),
            ("ioengine", Some("external:/tmp/evil.so")),
            ("ioengine", Some("sg")),
            ("read_iolog", Some("trace")),
            ("cgroup", Some("x")),
            ("filename", Some("/dev/sdb")),
            ("filename", Some("a:/etc/passwd")),
            ("write_bw_log", Some("/tmp/bw")),
            ("opendir", Some("${HOME}")),
            ("no_such_option", None),
            ("name", Some("../../x")),
            ("name", Some("/etc/x")),
            ("filename_format", Some("../$jobname")),
            ("filename_format", Some("/tmp/$jobnum")),
            ("filename_format", Some("$HOME.$jobnum")),
            ("zonemode", Some("zbd")),
            ("root:$6$abc:19000:0:99999:7:::", None),
        ] {
            assert!(check(k, v).is_err(), "{k}={v:?}");
        }
        let e = check("root:$6$secret:1", None).unwrap_err();
        assert!(
            !e.contains("secret"),
            "never echoes a line that is no option: {e}"
        );
        assert!(check("exec_prerun", Some("x"))
            .unwrap_err()
            .contains("runs a program"));
        for (k, v) in [
            ("rw", Some("randrw")),
            ("bssplit", Some("4k/10:64k/50:32k/40")),
            ("ioengine", Some("io_uring")),
            ("mem", Some("mmapshared")),
            ("filename", Some("a\\:b:c")),
            ("write_lat_log", Some("lat")),
            ("time_based", None),
            ("directory", Some("/mnt")),
            ("hugepage_size", Some("2m")),
            ("fixedbufs", None),
            ("name", Some("job-1.a")),
            ("filename_format", Some("$jobname.$jobnum.$filenum")),
            ("filename_format", Some("f.$clientuid")),
            ("zonemode", Some("strided")),
            ("verify_dump", Some("1")),
            ("threads", Some("1")),
            ("ratemin", Some("1m")),
            ("wait_for_previous", None),
        ] {
            assert!(check(k, v).is_ok(), "{k}={v:?}");
        }
    }
}

/// The allow-list held against the installed fio: every name is one fio
/// knows (`--cmdhelp=NAME`, or an allowed engine's `--enghelp`), and every
/// alias fio gives an allowed option is allowed too.
#[cfg(test)]
mod installed_fio {
    use std::process::Command;

    use super::*;

    fn fio(arg: &str) -> String {
        let out = Command::new("fio").arg(arg).output().unwrap_or_else(|e| {
            panic!("fio is not installed ({e}): install the Debian package `fio` (scripts/test installs it)")
        });
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `fio --cmdhelp=NAME` for a name fio knows (as itself or an alias),
    /// `-` and `_` taken alike as storlab does.
    fn cmdhelp(name: &str) -> Option<String> {
        [name.to_string(), name.replace('_', "-")]
            .into_iter()
            .map(|n| fio(&format!("--cmdhelp={n}")))
            .find(|h| !h.trim().is_empty() && !h.contains("closest match"))
    }

    /// Whether fio parses a job with `line` in it.
    fn parses(line: &str) -> bool {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("j.fio");
        std::fs::write(&job, format!("[j]\nsize=1M\n{line}\n")).unwrap();
        Command::new("fio")
            .arg("--parse-only")
            .arg(&job)
            .current_dir(dir.path())
            .output()
            .is_ok_and(|o| o.status.success())
    }

    #[test]
    fn the_allow_list_matches_the_installed_fio() {
        let engine_options: String = ["io_uring", "libaio", "pvsync2", "mmap", "cpuio"]
            .iter()
            .map(|e| fio(&format!("--enghelp={e}")))
            .collect();
        let known = |name: &str| {
            engine_options
                .lines()
                .any(|l| l.split(':').next().map(str::trim) == Some(name))
        };
        let names: Vec<&str> = ALLOWED
            .iter()
            .chain(PATH_OPTIONS)
            .chain(&["ioengine", "mem", "iomem", "directory"])
            .copied()
            .collect();
        let allowed = |n: &str| names.contains(&n);
        // fio answers one name at a time: ask in parallel.
        let helps: Vec<Option<String>> = std::thread::scope(|s| {
            let chunks: Vec<_> = names
                .chunks(names.len().div_ceil(8))
                .map(|c| s.spawn(move || c.iter().map(|n| cmdhelp(n)).collect::<Vec<_>>()))
                .collect();
            chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let (mut unknown, mut missing) = (Vec::new(), Vec::new());
        for (name, help) in names.iter().zip(helps) {
            match help {
                Some(help) => {
                    for alias in help
                        .lines()
                        .filter_map(|l| l.trim().strip_prefix("alias: "))
                    {
                        if !allowed(alias.trim()) {
                            missing.push(format!("{alias} (alias of {name})"));
                        }
                    }
                }
                None if known(name) => {}
                None if parses(&format!("{name}=1")) => {} // `threads`
                None => unknown.push(name.to_string()),
            }
        }
        assert!(
            missing.is_empty(),
            "aliases fio gives allowed options, refused: {missing:?}"
        );
        assert!(
            unknown.is_empty(),
            "allowed names fio does not know: {unknown:?}"
        );
    }
}

//! The built-in quick experiment that `storlab run` runs without a file: the
//! current directory's filesystem against tmpfs, sequential and random I/O,
//! a short SQLite OLTP step, a small-file storm and a stream of tiny writes,
//! three interleaved repetitions, under two minutes.

use super::{parse_experiment, Experiment, ExperimentError};

/// The quick experiment's text. Without root, tmpfs is reached through a
/// `dir` target on /dev/shm instead of a mount of storlab's own.
pub fn quick_source(root: bool) -> String {
    let tmpfs = if root {
        "[[target]]\nname = \"tmpfs\"\nkind = \"tmpfs\"\nsize = \"1G\"\n"
    } else {
        "[[target]]\nname = \"tmpfs\"\nkind = \"dir\"\npath = \"/dev/shm\"\n"
    };
    format!(
        r#"name = "quick"
description = "The current directory's filesystem against tmpfs: sequential and random I/O, SQLite OLTP, small files, tiny writes"

[plan]
repetitions = 3
order = "interleaved"
drop_caches = true

[[target]]
name = "cwd"
kind = "dir"
path = "."
baseline = true

{tmpfs}
[[workload]]
name = "seqwrite-1m"
kind = "io"
rw = "write"
bs = "1M"
size = "256M"
end_fsync = true

[[workload]]
name = "seqread-1m"
kind = "io"
rw = "read"
bs = "1M"
size = "256M"

[[workload]]
name = "randread-4k"
kind = "io"
rw = "randread"
bs = "4k"
size = "256M"
runtime = "3s"

[[workload]]
name = "randwrite-4k-fsync"
kind = "io"
rw = "randwrite"
bs = "4k"
size = "64M"
fsync = 1
runtime = "3s"

[[workload]]
name = "oltp-sqlite"
kind = "sqlite-oltp"
clients = 2
duration = "3s"
journal_mode = "wal"
synchronous = "full"

[[workload]]
name = "smallfiles-4k"
kind = "smallfiles"
files = 2000
dirs = 20
file_size = "4k"

[[workload]]
name = "tinywrites-64b"
kind = "tinywrites"
write_size = 64
total_size = "16M"
"#
    )
}

pub fn quick(root: bool) -> Result<Experiment, ExperimentError> {
    let mut exp = parse_experiment("built-in:quick", &quick_source(root))?;
    exp.origin = "built-in:quick".into();
    Ok(exp)
}

#[cfg(test)]
mod tests {
    #[test]
    fn quick_experiment_is_valid_with_and_without_root() {
        for root in [true, false] {
            let e = super::quick(root).unwrap();
            assert_eq!(e.targets.len(), 2);
            assert_eq!(e.workloads.len(), 7);
            assert!(e.estimate().as_secs() < 120, "{:?}", e.estimate());
        }
    }
}

//! The built-in quick experiment that `storlab run` runs without a file: the
//! current directory's filesystem against tmpfs, sequential and random I/O,
//! a short SQLite OLTP step, a small-file storm and a stream of tiny writes,
//! three interleaved repetitions, under two minutes.

use super::{parse_experiment, Experiment, ExperimentError};

/// The quick experiment's text, commented as `storlab init` writes it for
/// a user to edit. Without root, tmpfs is reached through a `dir` target on
/// /dev/shm instead of a mount of storlab's own.
pub fn quick_source(root: bool) -> String {
    let tmpfs = if root {
        "[[target]]\nname = \"tmpfs\"\nkind = \"tmpfs\"            # a tmpfs storlab mounts and unmounts\nsize = \"1G\"\n"
    } else {
        "# Not root: no tmpfs of storlab's own; /dev/shm is one already.\n[[target]]\nname = \"tmpfs\"\nkind = \"dir\"\npath = \"/dev/shm\"\n"
    };
    include_str!("quick.toml").replace("@TMPFS@\n", tmpfs)
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
            assert!(!super::quick_source(root).contains('@'));
        }
    }
}

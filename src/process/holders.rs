//! Which processes hold a file open: every process's open descriptors
//! (`/proc/PID/fd/*`) read as the links the kernel gives them, a path or
//! `socket:[INODE]`. What a process storlab may not read is not seen.

use std::path::Path;

/// The pids (other than storlab's own) with a descriptor whose link
/// `wanted` accepts, each once, with the program each runs.
pub fn holding(wanted: impl Fn(&Path) -> bool) -> Vec<(u32, String)> {
    let me = std::process::id();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        let holds = fds
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| wanted(&l)));
        if holds && pid != me {
            let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
            out.push((pid, comm.trim().to_string()));
        }
    }
    out
}

/// The processes that have the file `path` open (also once it is
/// removed: the kernel then says `PATH (deleted)`).
pub fn of_file(path: &Path) -> Vec<(u32, String)> {
    let deleted = format!("{} (deleted)", path.display());
    holding(|l| l == path || l.as_os_str() == deleted.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_holding_a_file_is_found_and_storlab_itself_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("held");
        std::fs::write(&path, b"x").unwrap();
        let _mine = std::fs::File::open(&path).unwrap();
        assert!(of_file(&path).is_empty(), "storlab's own descriptor");
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg("exec 3<\"$1\"; exec sleep 30")
            .arg("sh")
            .arg(&path)
            .spawn()
            .unwrap();
        let t0 = std::time::Instant::now();
        while of_file(&path).is_empty() && t0.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let found = of_file(&path);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(found, vec![(child.id(), "sleep".to_string())]);
    }
}

//! A loop device throttled by a cgroup, for tests against ground truth:
//! the device over a sparse image (detached on drop), a cgroup that limits
//! its reads or writes in bytes or operations per second (cgroup v2's
//! io.max where the io controller is there, else v1's blkio throttle;
//! removed on drop), and storlab run inside it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::util::Lab;

/// A loop device over a sparse image, detached on drop.
pub struct LoopDev {
    image: PathBuf,
    pub dev: PathBuf,
}

impl LoopDev {
    pub fn new(dir: &Path) -> LoopDev {
        LoopDev::sized(dir, 128 << 20)
    }

    pub fn sized(dir: &Path, bytes: u64) -> LoopDev {
        let image = dir.join("throttle.img");
        storlab::provision::loopdev::create_image(&image, bytes, false).unwrap();
        let dev = storlab::provision::loopdev::attach(&image).unwrap();
        LoopDev { image, dev }
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = storlab::provision::loopdev::detach_all(&self.image);
    }
}

/// What a [`Throttle`] limits.
#[derive(Debug, Clone, Copy)]
pub enum Limit {
    ReadBytes,
    WriteBytes,
    ReadOps,
}

impl Limit {
    /// io.max's key and v1's throttle file.
    fn keys(self) -> (&'static str, &'static str) {
        match self {
            Limit::ReadBytes => ("rbps", "blkio.throttle.read_bps_device"),
            Limit::WriteBytes => ("wbps", "blkio.throttle.write_bps_device"),
            Limit::ReadOps => ("riops", "blkio.throttle.read_iops_device"),
        }
    }
}

/// A cgroup that limits one device, removed on drop.
pub struct Throttle {
    dir: PathBuf,
    pub procs: PathBuf,
}

impl Throttle {
    /// Limits the device `major:minor` to `rate` (bytes or operations per
    /// second); `None` where the host has neither controller.
    pub fn new(major: u32, minor: u32, limit: Limit, rate: u64) -> Option<Throttle> {
        let (v2_key, v1_file) = limit.keys();
        let name = format!("storlab-test-{}-{v2_key}", std::process::id());
        let v2 = Path::new("/sys/fs/cgroup/cgroup.controllers");
        let (dir, file, line) =
            if std::fs::read_to_string(v2).is_ok_and(|c| c.split_whitespace().any(|x| x == "io")) {
                let _ = std::fs::write("/sys/fs/cgroup/cgroup.subtree_control", "+io");
                let dir = Path::new("/sys/fs/cgroup").join(name);
                (dir, "io.max", format!("{major}:{minor} {v2_key}={rate}"))
            } else if Path::new("/sys/fs/cgroup/blkio").join(v1_file).exists() {
                let dir = Path::new("/sys/fs/cgroup/blkio").join(name);
                (dir, v1_file, format!("{major}:{minor} {rate}"))
            } else {
                return None;
            };
        std::fs::create_dir(&dir).ok()?;
        let t = Throttle {
            procs: dir.join("cgroup.procs"),
            dir: dir.clone(),
        };
        std::fs::write(dir.join(file), line).ok()?;
        Some(t)
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The numbers of a block device (`/dev/loop3` → (7, 3)).
pub fn numbers(dev: &Path) -> (u32, u32) {
    let name = dev.file_name().unwrap().to_string_lossy().into_owned();
    let numbers = std::fs::read_to_string(format!("/sys/block/{name}/dev")).unwrap();
    let (major, minor) = numbers.trim().split_once(':').unwrap();
    (major.parse().unwrap(), minor.parse().unwrap())
}

/// Runs storlab on `file` inside the throttled cgroup (it joins the cgroup
/// before it execs, so that none of its I/O escapes the limit).
pub fn run_throttled(lab: &Lab, throttle: &Throttle, file: &Path) {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::CommandExt;
    let procs = std::ffi::CString::new(throttle.procs.as_os_str().as_bytes()).unwrap();
    let mut cmd = lab.cmd();
    cmd.args(["run", "--quiet", file.to_str().unwrap()]);
    // SAFETY: between fork and exec the closure only makes async-signal-safe
    // system calls (open, write, close) on memory prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let fd = libc::open(procs.as_ptr(), libc::O_WRONLY);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let n = libc::write(fd, b"0".as_ptr().cast(), 1);
            libc::close(fd);
            match n {
                1 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        })
    };
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

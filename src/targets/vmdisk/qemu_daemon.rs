//! qemu-storage-daemon serving one image as a FUSE export: a regular file
//! that reads and writes the image's guest-visible contents through
//! QEMU's block layer — its format driver (qcow2 or raw), its cache mode
//! and aio engine, as a VM's disk would be served. Each target starts its
//! own daemon, with a pid file storlab chose (`--daemonize`: the command
//! returns once the export is up), and stops it only by that pid, and only
//! while the process there is the daemon started with that pid file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::qemu_img::{escape, escape_path, Location};
use crate::provision::daemon::PidFiled;
use crate::provision::{cmd, mount};

/// The daemon's program.
pub const PROGRAM: &str = "qemu-storage-daemon";

/// QEMU's cache modes, as `-drive cache=` names them.
pub const CACHE_MODES: &[&str] = &["none", "writeback", "writethrough", "directsync", "unsafe"];

/// What one `cache` mode sets: O_DIRECT on the image (`cache.direct`),
/// flushes ignored (`cache.no-flush`), and a flush after every write
/// before it completes (the export's `writethrough`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheBits {
    pub direct: bool,
    pub no_flush: bool,
    pub writethrough: bool,
}

/// The bits of a cache mode, as QEMU's `-drive cache=` maps them.
pub fn cache_bits(mode: &str) -> Option<CacheBits> {
    let (direct, no_flush, writethrough) = match mode {
        "writeback" => (false, false, false),
        "none" => (true, false, false),
        "writethrough" => (false, false, true),
        "directsync" => (true, false, true),
        "unsafe" => (false, true, false),
        _ => return None,
    };
    Some(CacheBits {
        direct,
        no_flush,
        writethrough,
    })
}

/// One export: the image, how it is served, and where.
#[derive(Debug, Clone)]
pub struct Export {
    pub image: Location,
    pub format: String,
    pub cache: String,
    /// The file driver's aio engine (`threads`, `native`, `io_uring`);
    /// `None` is QEMU's default, and the gluster driver has none.
    pub aio: Option<String>,
    /// Guest discards reach the image (`discard=unmap`).
    pub discard: bool,
    /// The regular file the export is mounted on.
    pub mountpoint: PathBuf,
    pub pidfile: PathBuf,
}

impl Export {
    /// The daemon's argument vector.
    pub fn args(&self) -> Result<Vec<String>> {
        let bits = cache_bits(&self.cache)
            .with_context(|| format!("`{}` is not a QEMU cache mode", self.cache))?;
        let on = |b: bool| if b { "on" } else { "off" };
        let cache = format!(
            "cache.direct={},cache.no-flush={}",
            on(bits.direct),
            on(bits.no_flush)
        );
        let discard = if self.discard { "unmap" } else { "ignore" };
        let protocol = match &self.image {
            Location::File(path) => {
                let mut p = format!("driver=file,filename={}", escape_path(path));
                if let Some(aio) = &self.aio {
                    p.push_str(&format!(",aio={aio}"));
                }
                p
            }
            Location::Gluster { host, volume, path } => format!(
                "driver=gluster,volume={},path={},server.0.type=inet,server.0.host={},server.0.port=24007",
                escape(volume),
                escape(path),
                escape(host)
            ),
        };
        Ok(vec![
            "--blockdev".into(),
            format!("{protocol},node-name=image,{cache},discard={discard}"),
            "--blockdev".into(),
            format!(
                "driver={},node-name=disk,file=image,{cache},discard={discard}",
                self.format
            ),
            "--export".into(),
            format!(
                "type=fuse,id=export,node-name=disk,mountpoint={},writable=on,writethrough={}",
                escape_path(&self.mountpoint),
                on(bits.writethrough)
            ),
            "--daemonize".into(),
            "--pidfile".into(),
            self.pidfile.display().to_string(),
        ])
    }

    /// Starts the daemon; it returns once the export is mounted. The
    /// mount point (a regular file) must exist. Returns the daemon's pid.
    pub fn start(&self) -> Result<u32> {
        let args = self.args()?;
        cmd::run(PROGRAM, &args).with_context(|| {
            format!(
                "starting {PROGRAM} to serve {} as a FUSE export on {}",
                self.image.filename(),
                self.mountpoint.display()
            )
        })?;
        let pid = read_pid(&self.pidfile).with_context(|| {
            format!(
                "{PROGRAM} started but wrote no pid to {}",
                self.pidfile.display()
            )
        })?;
        if mount::mounted_at(&self.mountpoint).is_none() {
            bail!(
                "{PROGRAM} (pid {pid}) started but {} is not mounted",
                self.mountpoint.display()
            );
        }
        Ok(pid)
    }
}

/// The daemon started with `pidfile` (`--pidfile PIDFILE`).
fn started_with(pidfile: &Path) -> PidFiled<'_> {
    PidFiled {
        program: PROGRAM,
        flag: "--pidfile",
        pidfile,
    }
}

pub fn read_pid(pidfile: &Path) -> Option<u32> {
    started_with(pidfile).pid()
}

/// Whether `pid` is a qemu-storage-daemon started with `pidfile` (its
/// command line says so), alive: a pid reused by another process since is
/// not it.
pub fn is_ours(pid: u32, pidfile: &Path) -> bool {
    started_with(pidfile).is(pid)
}

/// Stops the daemon whose pid is in `pidfile` if it is still the one
/// started with it (SIGTERM: it flushes the image and unmounts its export;
/// SIGKILL after 20 s), then unmounts `mountpoint` if the export is still
/// there (a daemon killed outright leaves it, disconnected). Succeeds when
/// it is already gone.
pub fn stop(pidfile: &Path, mountpoint: Option<&Path>) -> Result<()> {
    started_with(pidfile).stop(Duration::from_secs(20))?;
    if let Some(m) = mountpoint {
        mount::umount_if_mounted(m)?;
    }
    Ok(())
}

/// QEMU's version, from the daemon's `--version`.
pub fn version() -> Option<String> {
    cmd::version(PROGRAM, &["--version"])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn export(cache: &str, aio: Option<&str>) -> Export {
        Export {
            image: Location::File("/v/storlab-1-vm/a,b.qcow2".into()),
            format: "qcow2".into(),
            cache: cache.into(),
            aio: aio.map(String::from),
            discard: true,
            mountpoint: "/tmp/storlab-1-vm/export".into(),
            pidfile: "/tmp/storlab-1-vm/qemu-storage-daemon.pid".into(),
        }
    }

    #[test]
    fn cache_modes_map_as_qemus_drive_option_does() {
        let a = export("none", Some("native")).args().unwrap();
        assert_eq!(
            a[1],
            "driver=file,filename=/v/storlab-1-vm/a,,b.qcow2,aio=native,node-name=image,cache.direct=on,cache.no-flush=off,discard=unmap"
        );
        assert_eq!(
            a[3],
            "driver=qcow2,node-name=disk,file=image,cache.direct=on,cache.no-flush=off,discard=unmap"
        );
        assert!(a[5].ends_with("writable=on,writethrough=off"), "{}", a[5]);
        let ds = export("directsync", None).args().unwrap();
        assert!(ds[1].contains("cache.direct=on") && ds[5].ends_with("writethrough=on"));
        let un = export("unsafe", None).args().unwrap();
        assert!(un[1].contains("cache.direct=off,cache.no-flush=on"));
        assert!(export("bogus", None).args().is_err());
        for m in CACHE_MODES {
            assert!(cache_bits(m).is_some(), "{m}");
        }
    }

    #[test]
    fn the_gluster_driver_names_the_volume_and_path() {
        let mut e = export("writeback", None);
        e.image = Location::Gluster {
            host: "h1".into(),
            volume: "storlab-1-gl".into(),
            path: "storlab-work-gl/storlab-1-vm/disk.qcow2".into(),
        };
        let a = e.args().unwrap();
        assert!(a[1].starts_with("driver=gluster,volume=storlab-1-gl,path=storlab-work-gl/storlab-1-vm/disk.qcow2,server.0.type=inet,server.0.host=h1,"), "{}", a[1]);
    }

    #[test]
    fn only_the_daemon_started_with_the_pid_file_is_ours() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("q.pid");
        std::fs::write(&pidfile, format!("{}\n", std::process::id())).unwrap();
        assert!(!is_ours(std::process::id(), &pidfile));
        stop(&pidfile, None).unwrap();
        assert!(!pidfile.exists(), "a stale pid file is removed");
        stop(&pidfile, None).unwrap();
    }
}

//! Target `gluster`: a volume of N bricks in directories storlab creates
//! (replica, disperse or plain distribute), `options` applied with
//! `gluster volume set` and read back with `gluster volume get`, mounted
//! with the FUSE client. glusterd is started when it is not running and
//! stopped at teardown only if storlab started it. Bricks live on the local
//! host (its name, or `host`), with `force` since they may sit on the root
//! filesystem.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::{Target, TargetConfig};
use crate::measure::telemetry::procs::{gluster_status_pids, Locate};
use crate::measure::telemetry::{Backing, Served};
use crate::params::{declare, Fault};
use crate::provision::gluster_cli::{
    create_args, gluster, glusterd_reachable, parse_get, parse_info, same_value, GLUSTER,
};
use crate::provision::journal::{state_dir, Held, Journal, Resource};
use crate::provision::{cmd, daemon, mount, options, resource_name};

declare! {
    /// The parameters of a `gluster` target.
    pub struct GlusterParams {
        bricks: int(usize, 1, 24) = "2" => "number of bricks, each a directory storlab creates",
        replica: int(usize, 2, 24) => "replica count (bricks must be a multiple of it)",
        disperse: int(usize, 3, 24) => "disperse count (erasure coding; bricks a multiple of it)",
        dir: string = "/var/tmp" => "existing directory for the bricks (storlab makes its own subdirectory)",
        host: string => "host name of the bricks and the mount [default: this host's name]",
        options: map => "volume options, e.g. { \"performance.write-behind\" = \"off\" }",
        mount_options: list => "options of the FUSE mount, e.g. [\"direct-io-mode=disable\"]",
    }
}

impl TargetConfig for GlusterParams {
    fn validate(&self) -> Result<(), Fault> {
        let bricks = self.bricks;
        match (self.replica, self.disperse) {
            (Some(_), Some(_)) => Err((
                "disperse",
                "a volume is replica or disperse, not both".into(),
            )),
            (Some(r), None) if bricks % r != 0 => Err((
                "replica",
                format!(
                    "{bricks} bricks cannot form replica-{r} sets; make `bricks` a multiple of {r}"
                ),
            )),
            (None, Some(d)) if bricks % d != 0 => Err((
                "disperse",
                format!(
                    "{bricks} bricks cannot form disperse-{d} sets; make `bricks` a multiple of {d}"
                ),
            )),
            _ => super::dir::validate_dir_param("dir", &self.dir),
        }
    }

    fn build(&self, name: &str, journal: &Journal) -> Box<dyn Target> {
        Box::new(Gluster::new(name, self, journal))
    }
}

pub struct Gluster {
    name: String,
    bricks: usize,
    layout: Option<(&'static str, i64)>,
    dir: PathBuf,
    host: String,
    options: BTreeMap<String, String>,
    mount_options: Vec<String>,
    base: PathBuf,
    mnt: PathBuf,
    volume: String,
    started_daemon: Option<u32>,
    /// This campaign relies on the daemon until teardown (see daemon::Claim).
    claim: Option<daemon::Claim>,
    held: Held,
}

impl Gluster {
    pub fn new(name: &str, p: &GlusterParams, journal: &Journal) -> Gluster {
        let dir = PathBuf::from(&p.dir);
        let base = dir.join(resource_name('-', name));
        let layout = match (p.replica, p.disperse) {
            (Some(r), _) => Some(("replica", r as i64)),
            (None, Some(d)) => Some(("disperse", d as i64)),
            _ => None,
        };
        Gluster {
            name: name.to_string(),
            bricks: p.bricks,
            layout,
            host: p.host.clone().unwrap_or_else(local_hostname),
            options: p.options.clone().unwrap_or_default(),
            mount_options: p.mount_options.clone().unwrap_or_default(),
            mnt: base.join("mnt"),
            base,
            dir,
            volume: resource_name('-', name),
            started_daemon: None,
            claim: None,
            held: Held::new(journal),
        }
    }

    /// The brick directories, in volume order.
    pub fn brick_dirs(&self) -> Vec<PathBuf> {
        (0..self.bricks)
            .map(|i| self.base.join(format!("brick{i}")))
            .collect()
    }

    fn ensure_glusterd(&mut self) -> Result<()> {
        if glusterd_reachable() {
            return Ok(());
        }
        let pidfile = state_dir().join(format!("glusterd-{}.pid", std::process::id()));
        self.held.record(Resource::Daemon {
            program: "glusterd".into(),
            pidfile: pidfile.clone(),
        })?;
        let args = vec!["-p".to_string(), pidfile.display().to_string()];
        self.started_daemon = Some(daemon::start(
            "glusterd",
            &args,
            &pidfile,
            glusterd_reachable,
        )?);
        Ok(())
    }

    fn create_volume(&mut self) -> Result<()> {
        let mut specs = Vec::new();
        for b in self.brick_dirs() {
            self.held.make_dir(&b).context("creating a brick")?;
            specs.push(format!("{}:{}", self.host, b.display()));
        }
        self.held.record(Resource::Volume {
            name: self.volume.clone(),
        })?;
        cmd::run(GLUSTER, &create_args(&self.volume, self.layout, &specs))
            .with_context(|| format!("creating Gluster volume {}", self.volume))?;
        for (k, v) in &self.options {
            gluster(&["volume", "set", &self.volume, k, v])
                .with_context(|| format!("setting {k}={v} on volume {}", self.volume))?;
        }
        gluster(&["volume", "start", &self.volume])
            .with_context(|| format!("starting volume {}", self.volume))?;
        Ok(())
    }

    /// Fails unless every option reads back with the value asked for.
    fn check_options(&self) -> Result<()> {
        for (k, want) in &self.options {
            let got = parse_get(&gluster(&["volume", "get", &self.volume, k])?);
            match got.get(k) {
                Some(v) if same_value(want, v) => {}
                other => bail!(
                    "volume {}: option {k} reads back as {other:?}, not `{want}`",
                    self.volume
                ),
            }
        }
        Ok(())
    }

    fn mount(&self) -> Result<()> {
        let source = format!("{}:/{}", self.host, self.volume);
        mount::mount("glusterfs", &source, &self.mnt, &self.mount_options)?;
        if mount::mounted_at(&self.mnt).is_none() {
            bail!(
                "{source} is not mounted on {} after mount(8) succeeded",
                self.mnt.display()
            );
        }
        Ok(())
    }
}

fn local_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "127.0.0.1".into())
}

/// Gluster refuses loopback brick addresses, so bricks use the host's name,
/// which must resolve.
fn check_resolves(host: &str) -> Result<()> {
    use std::net::ToSocketAddrs;
    if (host, 0)
        .to_socket_addrs()
        .map(|mut a| a.next().is_some())
        .unwrap_or(false)
    {
        return Ok(());
    }
    bail!("the brick host `{host}` does not resolve; add it to /etc/hosts or set `host` to this machine's name or address (not 127.0.0.1: gluster refuses loopback bricks)")
}

impl Target for Gluster {
    fn preflight(&self) -> Result<()> {
        options::refuse_paths_in_map("options", &self.options, false)?;
        options::refuse_paths("mount_options", &self.mount_options)?;
        if !crate::host::is_root() {
            bail!("target `{}` needs root (glusterd, FUSE mount)", self.name);
        }
        for p in ["gluster", "glusterd", "mount.glusterfs"] {
            if cmd::which(p).is_none() {
                bail!("{p} is not installed; install glusterfs-server and glusterfs-client");
            }
        }
        if !glusterd_reachable() && !Path::new("/var/lib/glusterd").is_dir() {
            bail!("glusterd is not running and /var/lib/glusterd does not exist; create it (mkdir -p /var/lib/glusterd) or reinstall glusterfs-server");
        }
        check_resolves(&self.host)?;
        super::image::preflight_image_dir(&self.name, &self.dir, &self.base, 0)
    }

    fn provision(&mut self) -> Result<()> {
        self.claim = Some(daemon::claim("glusterd")?);
        self.ensure_glusterd()?;
        if gluster(&["volume", "info", &self.volume]).is_ok() {
            bail!(
                "a Gluster volume named {} already exists; storlab will not touch it",
                self.volume
            );
        }
        self.held.make_dir(&self.base)?;
        self.create_volume()?;
        self.check_options()?;
        self.held.make_dir(&self.mnt)?;
        self.held.record(Resource::Mount {
            path: self.mnt.clone(),
        })?;
        self.mount()
    }

    fn root(&self) -> &Path {
        &self.mnt
    }

    fn remount(&mut self) -> Result<()> {
        mount::umount_if_mounted(&self.mnt)?;
        self.mount().context("mounting again")
    }

    fn teardown(&mut self) -> Result<()> {
        // The claim holds until the volume is gone: released earlier,
        // another campaign could stop the daemon under our teardown.
        self.held
            .undo_while(|r| !matches!(r, Resource::Daemon { .. }))?;
        self.claim = None; // our own claim must not keep the daemon running
        self.held.undo_all()
    }

    fn facts(&self) -> Value {
        let info = gluster(&["volume", "info", &self.volume])
            .map(|t| parse_info(&t))
            .unwrap_or_default();
        let effective: BTreeMap<String, String> = gluster(&["volume", "get", &self.volume, "all"])
            .map(|t| parse_get(&t))
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| {
                k.starts_with("performance.")
                    || k.starts_with("features.cache")
                    || self.options.contains_key(k)
            })
            .collect();
        json!({
            "volume": self.volume,
            "host": self.host,
            "bricks": self.brick_dirs().iter().map(|b| b.display().to_string()).collect::<Vec<_>>(),
            "options_requested": self.options,
            "volume_info": info,
            "effective_options": effective,
            "gluster_version": cmd::version(GLUSTER, &["--version"]),
            "daemon_started_pid": self.started_daemon,
            "brick_dir_facts": crate::provision::facts::path_facts(&self.dir),
        })
    }

    /// The bricks' directories, each brick's glusterfsd and the volume's
    /// self-heal daemon as `gluster volume status` lists them, and the FUSE
    /// client of the mount point storlab created.
    fn backing(&self) -> Backing {
        let mut serving = Vec::new();
        let status = gluster(&["volume", "status", &self.volume, "--xml"]).unwrap_or_default();
        for (what, pid) in gluster_status_pids(&status) {
            let label = if what.contains("Self-heal") {
                "glustershd"
            } else {
                "glusterfsd"
            };
            serving.push(Served::pid(
                label,
                pid,
                format!(
                    "{label}: pid {pid} for {what} (gluster volume status {})",
                    self.volume
                ),
            ));
        }
        serving.push(Served {
            label: "glusterfs".into(),
            locate: Locate::FuseClient {
                mount: self.mnt.clone(),
                program: "glusterfs".into(),
            },
            why: format!(
                "glusterfs: the FUSE client whose mount point is {}",
                self.mnt.display()
            ),
        });
        Backing {
            paths: self.brick_dirs(),
            serving,
            zfs: false,
        }
    }
}

impl Drop for Gluster {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}

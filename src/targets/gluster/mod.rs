//! Target `gluster`: a volume of N bricks in directories storlab creates
//! (replica, disperse or plain distribute), `options` applied with
//! `gluster volume set` and read back with `gluster volume get`, mounted
//! with the FUSE client.
//!
//! Bricks live on this host (its name, or `host`) unless `servers` names
//! the hosts that hold them: brick i on server i mod N, so that the
//! bricks of each replica or disperse set land on different servers, as
//! Gluster recommends. The gluster command line runs on the first server
//! (through the remote shell, [`crate::provision::site`], when it is
//! another host), which probes the others into its trusted pool; a server
//! storlab added is journaled and detached at teardown, one that was in the
//! pool already is left alone. Every brick directory is journaled on its
//! server and removed there. glusterd is started here when a brick is here
//! and it is not running, and stopped at teardown only if storlab started
//! it; on another server it must be running. Bricks use `force` since they
//! may sit on the root filesystem. Under MPI the first rank on each other
//! host mounts the volume as this host did ([`Target::reach`]).

pub mod cli;
pub mod resources;
mod rooted;
pub mod runtime;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use self::cli::{
    create_args, gluster, glusterd_reachable, is_peer, parse_get, parse_info, probe_peer,
    same_value, volume_names, Probed, GLUSTER,
};
use self::resources::GLUSTERD;
use crate::measure::layers::gluster::{Bricks, ClientStats, Profile};
use crate::measure::layers::{below_cache, Level, Stack};
use crate::measure::telemetry::procs::{gluster_status_pids, Locate};
use crate::measure::telemetry::{Backing, Chain, Served};
use crate::metric::layer::Layer;
use crate::params::{declare, Fault};
use crate::process::watch;
use crate::provision::client::ClientMount;
use crate::provision::journal::{state_dir, Held, Journal, Resource};
use crate::provision::root::{preflight, RootNeed, RootSpec, Software};
use crate::provision::site::{check_host, rsh_text, Site};
use crate::provision::{cmd, daemon, mount, options, resource_name, site_fs};
use crate::targets::{Reach, Target, TargetConfig};
use rooted::Rooted;

/// Where the host's glusterd listens for its command line.
const GLUSTERD_SOCKET: &str = "/var/run/glusterd.socket";

declare! {
    /// The parameters of a `gluster` target.
    pub struct GlusterParams {
        bricks: int(usize, 1, 24) = "2" => "number of bricks, each a directory storlab creates",
        replica: int(usize, 2, 24) => "replica count (bricks must be a multiple of it)",
        disperse: int(usize, 3, 24) => "disperse count (erasure coding; bricks a multiple of it)",
        dir: string = "/var/tmp" => "existing directory for the bricks (storlab makes its own subdirectory), on every server",
        host: string => "host name of the bricks and the mount when they are on this host [default: this host's name]",
        servers: list => "hosts that hold the bricks, spread over them as Gluster does (brick i on server i mod N); reached through STORLAB_RSH (ssh) [default: this host]",
        options: map => "volume options, e.g. { \"performance.write-behind\" = \"off\" }",
        mount_options: list => "options of the FUSE mount, e.g. [\"direct-io-mode=disable\"]",
        root: string = "host" => "where Gluster (glusterd, bricks, command line, FUSE client) comes from: \"host\", \"debian:SUITE\" (a minimal Debian root storlab builds and caches, e.g. \"debian:trixie\" for Gluster 11.1) or the path of a tree you made; its daemons run chrooted in a network namespace of their own, on this host (docs/targets.md, roots)",
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
            _ => {
                validate_servers(self)?;
                validate_root(self)?;
                crate::targets::dir::validate_holder_dir("dir", &self.dir)
            }
        }
    }

    fn build(&self, name: &str, journal: &Journal) -> Box<dyn Target> {
        Box::new(Gluster::new(name, self, journal))
    }

    fn root(&self) -> Option<RootNeed> {
        Some(RootNeed {
            spec: RootSpec::parse(&self.root).unwrap_or(RootSpec::Host),
            software: Software::Gluster,
        })
    }
}

/// `root`: a root storlab reads; another root's daemons serve this host's
/// bricks on their own address (no `servers`, no `host`).
fn validate_root(p: &GlusterParams) -> Result<(), Fault> {
    let root = RootSpec::parse(&p.root).map_err(|m| ("root", m))?;
    if root.is_host() {
        return Ok(());
    }
    for (key, set) in [("servers", p.servers.is_some()), ("host", p.host.is_some())] {
        if set {
            return Err((
                "root",
                format!("root = \"{root}\" runs glusterd on this host, in a network namespace of its own with its own address; leave `{key}` out"),
            ));
        }
    }
    Ok(())
}

/// `servers`: host names, each once, each holding at least one brick, and
/// not together with `host`.
fn validate_servers(p: &GlusterParams) -> Result<(), Fault> {
    let Some(servers) = &p.servers else {
        return Ok(());
    };
    if p.host.is_some() {
        return Err((
            "host",
            "`host` names this host's bricks; with `servers`, leave it out".into(),
        ));
    }
    if servers.is_empty() {
        return Err(("servers", "name at least one server".into()));
    }
    for (i, s) in servers.iter().enumerate() {
        check_host(s).map_err(|e| ("servers", format!("{e:#}")))?;
        if servers[..i].contains(s) {
            return Err(("servers", format!("`{s}` is named twice")));
        }
    }
    if p.bricks < servers.len() {
        return Err((
            "bricks",
            format!(
                "{} bricks leave a server without one; make `bricks` at least {}",
                p.bricks,
                servers.len()
            ),
        ));
    }
    Ok(())
}

/// A host holding bricks: its name (as in the brick specs) and where
/// commands for it run.
#[derive(Debug, Clone)]
struct Server {
    name: String,
    site: Site,
}

pub struct Gluster {
    bricks: usize,
    layout: Option<(&'static str, i64)>,
    dir: PathBuf,
    /// The servers in the order given; the first runs the command line.
    servers: Vec<Server>,
    /// Servers storlab added to the trusted pool.
    peers_added: Vec<String>,
    options: BTreeMap<String, String>,
    mount_options: Vec<String>,
    base: PathBuf,
    mnt: PathBuf,
    volume: String,
    started_daemon: Option<u32>,
    /// This campaign relies on the daemon until teardown (see daemon::Claim).
    claim: Option<daemon::Claim>,
    held: Held,
    /// Where Gluster comes from (`root`), and once provisioned from
    /// another root, its jail.
    root: RootSpec,
    rooted: Option<Rooted>,
    /// The target's name, which names its jail.
    name: String,
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
        // `host` is this host under another name (an address, say): its
        // commands run here whatever the name.
        let servers = match &p.servers {
            Some(names) => names
                .iter()
                .map(|n| Server {
                    name: n.clone(),
                    site: Site::of(n),
                })
                .collect(),
            None => vec![Server {
                name: p.host.clone().unwrap_or_else(local_hostname),
                site: Site::Local,
            }],
        };
        Gluster {
            bricks: p.bricks,
            layout,
            servers,
            peers_added: Vec::new(),
            options: p.options.clone().unwrap_or_default(),
            mount_options: p.mount_options.clone().unwrap_or_default(),
            mnt: base.join("mnt"),
            base,
            dir,
            volume: resource_name('-', name),
            started_daemon: None,
            claim: None,
            held: Held::new(journal),
            root: RootSpec::parse(&p.root).unwrap_or(RootSpec::Host),
            rooted: None,
            name: name.to_string(),
        }
    }

    /// The brick directories, in volume order.
    pub fn brick_dirs(&self) -> Vec<PathBuf> {
        (0..self.bricks)
            .map(|i| self.base.join(format!("brick{i}")))
            .collect()
    }

    /// Each brick's server and directory, in volume order: brick i on
    /// server i mod N, so that consecutive bricks — the members of a
    /// replica or disperse set — are on different servers.
    fn bricks_on(&self) -> Vec<(&Server, PathBuf)> {
        let n = self.servers.len();
        self.brick_dirs()
            .into_iter()
            .enumerate()
            .map(|(i, d)| (&self.servers[i % n], d))
            .collect()
    }

    /// Where the gluster command line runs: the first server.
    fn anchor(&self) -> &Site {
        &self.servers[0].site
    }

    /// The servers on other hosts.
    fn remote_servers(&self) -> impl Iterator<Item = &Server> {
        self.servers.iter().filter(|s| !s.site.is_local())
    }

    fn has_local_bricks(&self) -> bool {
        self.servers.iter().any(|s| s.site.is_local())
    }

    /// `gluster --mode=script args…` on the first server, or in the
    /// root's jail.
    fn gluster<S: AsRef<str>>(&self, args: &[S]) -> Result<String> {
        match &self.rooted {
            Some(r) => r.gluster(args),
            None => {
                let args: Vec<&str> = args.iter().map(|a| a.as_ref()).collect();
                gluster(self.anchor(), &args)
            }
        }
    }

    /// Provisions the volume with another root's Gluster: its jail, the
    /// bricks' directory shared into it, glusterd on the jail's address
    /// (which names the bricks), the volume, the root's FUSE client.
    fn provision_in_root(&mut self) -> Result<()> {
        let journal = self.held.journal().clone();
        let rooted = Rooted::open(&self.root, &self.name, &journal, &mut self.held)?;
        self.servers = vec![Server {
            name: rooted.address(),
            site: Site::Local,
        }];
        self.held.make_dir(&self.base)?;
        // Made before glusterd starts, so that its undo (stopping the
        // brick processes with it) comes before theirs.
        for b in self.brick_dirs() {
            self.held.make_dir(&b)?;
        }
        let rooted = self.rooted.insert(rooted);
        rooted.share(&self.base, &mut self.held)?;
        self.started_daemon = Some(rooted.start_glusterd(&mut self.held)?);
        self.serve_and_mount()
    }

    /// Creates the volume, checks its options and mounts it.
    fn serve_and_mount(&mut self) -> Result<()> {
        self.create_volume()?;
        self.check_options()?;
        self.held.make_mount_point(&self.mnt)?;
        self.mount()
    }

    fn ensure_glusterd(&mut self) -> Result<()> {
        if glusterd_reachable(&Site::Local) {
            return Ok(());
        }
        let pidfile = state_dir().join(format!("glusterd-{}.pid", std::process::id()));
        self.held.record(Resource::Daemon {
            program: GLUSTERD.into(),
            pidfile: pidfile.clone(),
        })?;
        let args = vec!["-p".to_string(), pidfile.display().to_string()];
        let ready = || glusterd_reachable(&Site::Local);
        self.started_daemon = Some(daemon::start(
            GLUSTERD,
            &args,
            &pidfile,
            ready,
            &volume_names,
        )?);
        Ok(())
    }

    /// Makes the bricks' directory on every other server (this host's is
    /// made with the mount point's).
    fn make_remote_bases(&mut self) -> Result<()> {
        let sites: Vec<Site> = self.remote_servers().map(|s| s.site.clone()).collect();
        for site in sites {
            self.held
                .make_dir_at(&site, &self.base)
                .with_context(|| format!("making the bricks' directory on {site}"))?;
        }
        Ok(())
    }

    /// Probes every other server into the first one's trusted pool,
    /// journaling each before it is probed; one found in the pool already
    /// is not this campaign's to detach.
    fn probe_peers(&mut self) -> Result<()> {
        let anchor = self.anchor().clone();
        let first = self.servers[0].name.clone();
        let names: Vec<String> = self.servers[1..].iter().map(|s| s.name.clone()).collect();
        for name in names.into_iter().filter(|n| *n != first) {
            if is_peer(&anchor, &name)? {
                continue;
            }
            let peer = Resource::Peer { name: name.clone() };
            self.held.record(Resource::at(&anchor, peer))?;
            match probe_peer(&anchor, &name, Duration::from_secs(60))? {
                Probed::Added => self.peers_added.push(name),
                Probed::Already => self.held.disown_last()?,
            }
        }
        Ok(())
    }

    fn create_volume(&mut self) -> Result<()> {
        let mut specs = Vec::new();
        let bricks: Vec<(Server, PathBuf)> = self
            .bricks_on()
            .into_iter()
            .map(|(s, b)| (s.clone(), b))
            .collect();
        for (server, b) in bricks {
            let made = Resource::at(&server.site, Resource::Dir { path: b.clone() });
            if !self.held.holds(&made) {
                self.held
                    .make_dir_at(&server.site, &b)
                    .with_context(|| format!("creating a brick on {}", server.site))?;
            }
            specs.push(format!("{}:{}", server.name, b.display()));
        }
        // A root's volume lives in its jail's glusterd, undone with it.
        if self.rooted.is_none() {
            let volume = Resource::Volume {
                name: self.volume.clone(),
            };
            self.held.record(Resource::at(self.anchor(), volume))?;
        }
        self.gluster(&create_args(&self.volume, self.layout, &specs))
            .with_context(|| format!("creating Gluster volume {}", self.volume))?;
        for (k, v) in &self.options {
            self.gluster(&["volume", "set", &self.volume, k, v])
                .with_context(|| format!("setting {k}={v} on volume {}", self.volume))?;
        }
        self.gluster(&["volume", "start", &self.volume])
            .with_context(|| format!("starting volume {}", self.volume))?;
        // Its bricks here serve this target: watched during its runs.
        for (pid, brick) in runtime::bricks(&self.volume) {
            watch::register(pid, &format!("glusterfsd for {brick}"), &self.name, true);
        }
        Ok(())
    }

    /// Fails unless every option reads back with the value asked for.
    fn check_options(&self) -> Result<()> {
        for (k, want) in &self.options {
            let got = parse_get(&self.gluster(&["volume", "get", &self.volume, k])?);
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

    /// How this host and every other client mount the volume: from the
    /// first server.
    fn client_mount(&self) -> ClientMount {
        ClientMount {
            fs_type: "glusterfs".into(),
            source: format!("{}:/{}", self.servers[0].name, self.volume),
            options: self.mount_options.clone(),
            path: self.mnt.clone(),
            top: self.base.clone(),
            made_on: self.servers.iter().map(|s| s.site.host()).collect(),
        }
    }

    fn mount(&self) -> Result<()> {
        match &self.rooted {
            Some(r) => r.mount(&self.client_mount()),
            None => self.client_mount().mount(),
        }
    }

    /// The first line of `gluster --version` where the volume is served.
    fn version_line(&self) -> Option<String> {
        let out = match &self.rooted {
            Some(r) => return Some(format!("glusterfs {}", r.version())),
            None => self.anchor().run(GLUSTER, &["--version"]),
        };
        out.ok().and_then(|t| t.lines().next().map(str::to_string))
    }

    /// The checks of this host's glusterd, when a brick is here.
    fn preflight_local_server(&self) -> Result<()> {
        for p in ["gluster", "glusterd"] {
            if cmd::which(p).is_none() {
                bail!("{p} is not installed; install glusterfs-server");
            }
        }
        if !glusterd_reachable(&Site::Local) && !Path::new("/var/lib/glusterd").is_dir() {
            bail!("glusterd is not running and /var/lib/glusterd does not exist; create it (mkdir -p /var/lib/glusterd) or reinstall glusterfs-server");
        }
        Ok(())
    }

    /// The checks of a server on another host: glusterd answers there
    /// through the remote shell, and `dir` exists there.
    fn preflight_remote_server(&self, server: &Server) -> Result<()> {
        let site = &server.site;
        if let Err(e) = gluster(site, &["volume", "list"]) {
            bail!(
                "server `{}`: its glusterd does not answer through the remote shell `{}`: {e:#}; start glusterd on {site}, and set STORLAB_RSH to how this host runs commands there as root (see `storlab targets`)",
                server.name,
                rsh_text()
            );
        }
        if !site_fs::is_dir(site, &self.dir) {
            bail!(
                "server `{}`: `dir` {} does not exist there; create it, or choose a `dir` that every server has",
                server.name,
                self.dir.display()
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
        if !self.root.is_host() {
            preflight::preflight(&self.root, Software::Gluster)?;
            return crate::targets::image::preflight_image_dir(&self.dir, &self.base, 0);
        }
        if !crate::host::is_root() {
            bail!("it needs root (glusterd, FUSE mount); run storlab as root");
        }
        if cmd::which("mount.glusterfs").is_none() {
            bail!("mount.glusterfs is not installed; install glusterfs-client");
        }
        if self.has_local_bricks() {
            self.preflight_local_server()?;
        }
        for server in &self.servers {
            check_resolves(&server.name)?;
        }
        for server in self.remote_servers() {
            self.preflight_remote_server(server)?;
        }
        crate::targets::image::preflight_image_dir(&self.dir, &self.base, 0)
    }

    fn provision(&mut self) -> Result<()> {
        if !self.root.is_host() {
            return self.provision_in_root();
        }
        if self.has_local_bricks() {
            self.claim = Some(daemon::claim("glusterd")?);
            self.ensure_glusterd()?;
        }
        if self.gluster(&["volume", "info", &self.volume]).is_ok() {
            bail!(
                "a Gluster volume named {} already exists on {}; storlab will not touch it",
                self.volume,
                self.anchor()
            );
        }
        self.held.make_dir(&self.base)?;
        self.make_remote_bases()?;
        self.probe_peers()?;
        self.serve_and_mount()
    }

    fn root(&self) -> &Path {
        &self.mnt
    }

    /// Another root's volume is served on an address only this host
    /// reaches.
    fn reach(&self) -> Reach {
        match self.root.is_host() {
            true => Reach::Mount(self.client_mount()),
            false => Reach::ThisHost,
        }
    }

    fn remount(&mut self) -> Result<()> {
        mount::umount_if_mounted(&self.mnt)?;
        self.mount().context("mounting again")
    }

    fn teardown(&mut self) -> Result<()> {
        watch::forget_all(&self.name);
        // The claim holds until the volume is gone: released earlier,
        // another campaign could stop the daemon under our teardown.
        self.held
            .undo_while(|r| !matches!(r, Resource::Daemon { .. }))?;
        // Our own claim must not keep the daemon running.
        let claimed = self.claim.take().is_some();
        self.held.undo_all()?;
        self.rooted = None;
        // The last campaign to leave stops a daemon storlab started, even
        // one another campaign started and had to leave running for this one.
        if claimed {
            daemon::stop_if_last(GLUSTERD, &volume_names)?;
        }
        Ok(())
    }

    fn facts(&self) -> Value {
        let info = self
            .gluster(&["volume", "info", &self.volume])
            .map(|t| parse_info(&t))
            .unwrap_or_default();
        let effective: BTreeMap<String, String> = self
            .gluster(&["volume", "get", &self.volume, "all"])
            .map(|t| parse_get(&t))
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| {
                k.starts_with("performance.")
                    || k.starts_with("features.cache")
                    || self.options.contains_key(k)
            })
            .collect();
        let specs: Vec<String> = self
            .bricks_on()
            .iter()
            .map(|(s, b)| format!("{}:{}", s.name, b.display()))
            .collect();
        // Each server's brick directory: its filesystem and disk there.
        let devices: BTreeMap<&str, Value> = self
            .servers
            .iter()
            .map(|s| (s.name.as_str(), site_fs::path_facts(&s.site, &self.dir)))
            .collect();
        json!({
            "volume": self.volume,
            "host": self.servers[0].name,
            "servers": self.servers.iter().map(|s| &s.name).collect::<Vec<_>>(),
            "bricks": self.brick_dirs().iter().map(|b| b.display().to_string()).collect::<Vec<_>>(),
            "brick_specs": specs,
            "brick_devices": devices,
            "peers_added": self.peers_added,
            "options_requested": self.options,
            "volume_info": info,
            "effective_options": effective,
            "gluster_version": self.version_line(),
            "software_version": { "gluster": self.version_line().as_deref().and_then(|l| Software::Gluster.version_of(l)) },
            "root": self.root.to_string(),
            "daemon_started_pid": self.started_daemon,
            "brick_dir_facts": crate::provision::facts::path_facts(&self.dir),
        })
    }

    /// Each brick online or not, with the pids of its glusterfsd and of
    /// the volume's self-heal daemon (`gluster volume status --xml`); a
    /// volume glusterd cannot report on is itself the problem.
    fn health(&self) -> crate::targets::health::Health {
        match self.gluster(&["volume", "status", &self.volume, "--xml"]) {
            Ok(xml) => crate::targets::health::gluster_status(&xml),
            Err(e) => crate::targets::health::Health {
                problems: vec![format!(
                    "gluster volume status {} failed ({})",
                    self.volume,
                    format!("{e:#}").lines().next().unwrap_or("")
                )],
                daemons: Vec::new(),
            },
        }
    }

    /// Profiling counts each brick's reads, which the bricks' layer reads
    /// (`gluster volume profile … info cumulative`). It costs (see
    /// docs/benchmarks.md): only a target whose layers are read starts it.
    fn watch_caches(&mut self) -> Result<()> {
        self.gluster(&["volume", "profile", &self.volume, "start"])
            .with_context(|| format!("starting profiling on volume {}", self.volume))?;
        Ok(())
    }

    /// The page cache of the FUSE mount, the client's translators (asked
    /// what the client's io-stats counted), the bricks' page cache (asked
    /// what each brick's profile counted), and under the bricks the
    /// devices their directories are on — when every brick is on this
    /// host; another host's devices are not read.
    fn layers(&self, _below: Option<&Stack>) -> Stack {
        let (site, volume) = (self.anchor().clone(), self.volume.clone());
        let profile: Profile = Arc::new(move || {
            gluster(
                &site,
                &["volume", "profile", &volume, "info", "cumulative", "--xml"],
            )
        });
        let stack = Stack::of_chain(&Chain::default()).then([
            Level::counted(
                Layer::GlusterClient,
                ClientStats {
                    mount: self.mnt.clone(),
                    volume: self.volume.clone(),
                },
            ),
            Level::counted(
                Layer::BrickPageCache,
                Bricks {
                    volume: self.volume.clone(),
                    profile,
                },
            ),
        ]);
        match self.servers.iter().all(|s| s.site.is_local()) {
            true => stack.then(below_cache(&Chain::of_paths(&self.brick_dirs()))),
            false => stack.then([Level::unknown(
                Layer::Device,
                "the bricks' devices are on other hosts, whose /proc/diskstats is not read",
            )]),
        }
    }

    /// The bricks' directories, each brick's glusterfsd and the volume's
    /// self-heal daemon as `gluster volume status` lists them, this host's
    /// glusterd (which manages them), and the FUSE client of the mount
    /// point storlab created.
    fn backing(&self) -> Backing {
        let mut serving = Vec::new();
        // Brick processes and directories are watched only when every
        // brick is on this host: a server's pids and paths are another
        // host's.
        let all_here = self.servers.iter().all(|s| s.site.is_local());
        let status = match all_here {
            true => self
                .gluster(&["volume", "status", &self.volume, "--xml"])
                .unwrap_or_default(),
            false => String::new(),
        };
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
        if all_here {
            serving.push(match self.started_daemon {
                Some(pid) => Served::pid(
                    GLUSTERD,
                    pid,
                    format!("{GLUSTERD}: pid {pid}, started by storlab"),
                ),
                None => Served {
                    label: GLUSTERD.into(),
                    locate: Locate::SocketOwner(GLUSTERD_SOCKET.into()),
                    why: format!("{GLUSTERD}: the process listening on {GLUSTERD_SOCKET}"),
                },
            });
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
            paths: if all_here {
                self.brick_dirs()
            } else {
                Vec::new()
            },
            serving,
            zfs: false,
            skip_root: false,
        }
    }
}

impl Drop for Gluster {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}

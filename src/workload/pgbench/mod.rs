//! Workload `pgbench`: PostgreSQL's own pgbench against a cluster storlab
//! creates inside the target (or an existing server by `dsn`).
//!
//! The runner builds a fresh instance per run and calls prepare → (cache
//! drop) → run → cleanup. `prepare` initialises when needed — initdb,
//! settings, a server started only for `pgbench -i -s SCALE` (timed as
//! `init_seconds`) and stopped again, so caches are dropped with no server
//! running. `run` starts the server, runs the optional prewarm and the
//! measured pgbench, counts pgbench_history, and stops the server through a
//! guard, so no postgres outlives a run. `reinit = "once"` keeps the
//! cluster on disk in the workload's directory across runs; the runner
//! removes that directory at teardown.

mod account;
mod binaries;
mod client;
mod cluster;
mod exec;
mod metrics;
mod parse;
mod server;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use self::account::Account;
use self::binaries::Binaries;
use self::client::{Conn, Length, RunSpec};
use self::cluster::Cluster;
use self::server::Server;
use super::{RunContext, Workload};
use crate::experiment::params::{ParamSpec, ParamType, Params};
use crate::measure::{RunOutput, StopFlag};

pub use self::cluster::check_setting;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "scale",
        ty: ParamType::Int { min: 1, max: 1_000_000 },
        default: Some("1"),
        help: "pgbench -i -s: scale factor (1 = 100,000 accounts, about 16 MB)",
    },
    ParamSpec {
        name: "clients",
        ty: ParamType::Int { min: 1, max: 10_000 },
        default: Some("1"),
        help: "pgbench -c: concurrent database sessions",
    },
    ParamSpec {
        name: "threads",
        ty: ParamType::Int { min: 1, max: 1024 },
        default: Some("1"),
        help: "pgbench -j: worker threads (at most clients)",
    },
    ParamSpec {
        name: "duration",
        ty: ParamType::Duration,
        default: None,
        help: "pgbench -T: run length; 60s when neither duration nor transactions is given",
    },
    ParamSpec {
        name: "transactions",
        ty: ParamType::Int { min: 1, max: i64::MAX },
        default: None,
        help: "pgbench -t: transactions per client, instead of duration",
    },
    ParamSpec {
        name: "mode",
        ty: ParamType::Choice(&["simple", "extended", "prepared"]),
        default: Some("simple"),
        help: "pgbench -M: query protocol",
    },
    ParamSpec {
        name: "builtin",
        ty: ParamType::Choice(&["tpcb-like", "simple-update", "select-only"]),
        default: Some("tpcb-like"),
        help: "pgbench -b: builtin script",
    },
    ParamSpec {
        name: "script",
        ty: ParamType::Str,
        default: None,
        help: "pgbench -f: a custom script file, instead of builtin",
    },
    ParamSpec {
        name: "progress",
        ty: ParamType::Duration,
        default: Some("1s"),
        help: "pgbench -P: progress interval in whole seconds, stored as series (0: none)",
    },
    ParamSpec {
        name: "per_statement",
        ty: ParamType::Bool,
        default: Some("true"),
        help: "pgbench -r: per-statement latencies",
    },
    ParamSpec {
        name: "prewarm",
        ty: ParamType::Duration,
        default: None,
        help: "an unmeasured pgbench run of this length before the measured one (its tps is kept as prewarm_tps)",
    },
    ParamSpec {
        name: "reinit",
        ty: ParamType::Choice(&["each-run", "once"]),
        default: Some("each-run"),
        help: "a fresh cluster and pgbench -i before every run, or once per campaign",
    },
    ParamSpec {
        name: "settings",
        ty: ParamType::Map,
        default: None,
        help: "postgresql.conf settings, e.g. { shared_buffers = \"256MB\", fsync = \"off\" }",
    },
    ParamSpec {
        name: "dsn",
        ty: ParamType::Str,
        default: None,
        help: "run against this existing server instead (libpq string); only pgbench_* tables are touched",
    },
    ParamSpec {
        name: "bindir",
        ty: ParamType::Str,
        default: None,
        help: "directory of initdb, postgres, pgbench, psql (default: pg_config, /usr/lib/postgresql/*/bin, PATH)",
    },
    ParamSpec {
        name: "os_user",
        ty: ParamType::Str,
        default: Some("postgres"),
        help: "the unprivileged user the server runs as when storlab runs as root",
    },
    ParamSpec {
        name: "port",
        ty: ParamType::Int { min: 1, max: 65535 },
        default: Some("5432"),
        help: "the server's port (names its socket file; TCP stays off)",
    },
];

/// Cross-parameter checks: the key at fault and why.
pub fn validate(p: &Params) -> Result<(), (&'static str, String)> {
    if p.duration("duration").is_some() && p.int("transactions").is_some() {
        return Err((
            "transactions",
            "give either duration (-T) or transactions (-t), not both".into(),
        ));
    }
    for key in ["duration", "prewarm"] {
        if let Some(d) = p.duration(key) {
            if d.as_secs() == 0 || d.subsec_nanos() != 0 {
                return Err((
                    key,
                    format!(
                        "pgbench runs whole seconds: {key} must be 1s or more, in whole seconds"
                    ),
                ));
            }
        }
    }
    if p.int("threads") > p.int("clients") {
        return Err(("threads", "threads must not exceed clients".into()));
    }
    let progress = p.duration("progress").unwrap_or_default();
    if progress.subsec_nanos() != 0 {
        return Err((
            "progress",
            "pgbench reports progress in whole seconds".into(),
        ));
    }
    if let Some(settings) = p.map("settings") {
        if p.str("dsn").is_some() && !settings.is_empty() {
            return Err((
                "settings",
                "settings apply to a server storlab starts; with dsn, configure your server yourself".into(),
            ));
        }
        for (k, v) in settings {
            check_setting(k, v).map_err(|m| ("settings", m))?;
        }
    }
    Ok(())
}

/// Rough wall time of one run, initialisation included.
pub fn estimate(p: &Params) -> Duration {
    let cfg = Config::from_params(p);
    let run = match cfg.spec.length {
        Length::Duration(d) => d,
        Length::Transactions(t) => {
            Duration::from_secs_f64(t as f64 * f64::from(cfg.spec.clients) / 500.0)
        }
    };
    let init = if cfg.reinit_each_run {
        Duration::from_secs(3 + u64::from(cfg.scale))
    } else {
        Duration::ZERO
    };
    run + cfg.prewarm.unwrap_or_default() + init + Duration::from_secs(2)
}

/// Bytes the cluster may take on the target (none with `dsn`).
pub fn bytes_needed(p: &Params) -> u64 {
    if p.str("dsn").is_some() {
        return 0;
    }
    (200 << 20) + p.int("scale").unwrap_or(1) as u64 * (24 << 20)
}

/// The resolved parameters of one pgbench workload.
#[derive(Debug, Clone)]
struct Config {
    scale: u32,
    spec: RunSpec,
    prewarm: Option<Duration>,
    reinit_each_run: bool,
    settings: std::collections::BTreeMap<String, String>,
    dsn: Option<String>,
    bindir: Option<String>,
    os_user: String,
    port: u16,
}

impl Config {
    fn from_params(p: &Params) -> Config {
        let length = match (p.int("transactions"), p.duration("duration")) {
            (Some(t), _) => Length::Transactions(t as u64),
            (None, Some(d)) => Length::Duration(d),
            (None, None) => Length::Duration(Duration::from_secs(60)),
        };
        let script = p.str("script").map(PathBuf::from);
        let spec = RunSpec {
            clients: p.int("clients").unwrap_or(1) as u32,
            threads: p.int("threads").unwrap_or(1) as u32,
            length,
            mode: p.str("mode").unwrap_or("simple").to_string(),
            builtin: match script {
                Some(_) => None,
                None => Some(p.str("builtin").unwrap_or("tpcb-like").to_string()),
            },
            script,
            progress_s: p.duration("progress").unwrap_or_default().as_secs() as u32,
            per_statement: p.bool("per_statement").unwrap_or(true),
        };
        Config {
            scale: p.int("scale").unwrap_or(1) as u32,
            spec,
            prewarm: p.duration("prewarm"),
            reinit_each_run: p.str("reinit") != Some("once"),
            settings: p.map("settings").cloned().unwrap_or_default(),
            dsn: p.str("dsn").map(String::from),
            bindir: p.str("bindir").map(String::from),
            os_user: p.str("os_user").unwrap_or("postgres").to_string(),
            port: p.int("port").unwrap_or(5432) as u16,
        }
    }

    /// Whether pgbench_history should hold exactly one row per transaction.
    fn writes_history(&self) -> bool {
        matches!(
            self.spec.builtin.as_deref(),
            Some("tpcb-like" | "simple-update")
        )
    }
}

pub struct Pgbench {
    cfg: Config,
    bins: Option<Binaries>,
    account: Option<Account>,
    init_seconds: Option<f64>,
}

impl Pgbench {
    pub fn new(p: &Params) -> Pgbench {
        Pgbench {
            cfg: Config::from_params(p),
            bins: None,
            account: None,
            init_seconds: None,
        }
    }

    fn bins(&self) -> Result<&Binaries> {
        self.bins.as_ref().context("pgbench: prepare did not run")
    }

    fn cluster(&self, dir: &Path) -> Cluster {
        Cluster::new(dir, self.cfg.port, self.account.clone())
    }

    fn conn(&self, dir: &Path) -> Conn {
        match &self.cfg.dsn {
            Some(dsn) => Conn::Dsn(dsn.clone()),
            None => Conn::managed(&self.cluster(dir)),
        }
    }

    /// A fresh cluster with pgbench's tables, the server stopped again.
    fn init_managed(&mut self, dir: &Path, stop: &StopFlag) -> Result<()> {
        let cluster = self.cluster(dir);
        let bins = self.bins()?.clone();
        cluster.create(&bins, &self.cfg.settings, stop)?;
        let mut server = Server::start(&cluster, &bins, stop)?;
        self.timed_init(&Conn::managed(&cluster), stop)?;
        server.stop()?;
        cluster.mark_initialized()
    }

    /// `pgbench -i -s SCALE`, its wall time kept as `init_seconds`.
    fn timed_init(&mut self, conn: &Conn, stop: &StopFlag) -> Result<()> {
        let t0 = Instant::now();
        exec::run(
            client::init(self.bins()?, conn, self.cfg.scale),
            "pgbench -i",
            stop,
        )?;
        self.init_seconds = Some(t0.elapsed().as_secs_f64());
        Ok(())
    }

    /// The prewarm, the measured run and the history count, on a live server.
    fn measure(&self, conn: &Conn, stop: &StopFlag) -> Result<RunOutput> {
        let bins = self.bins()?;
        let mut prewarm_tps = None;
        if let Some(d) = self.cfg.prewarm {
            let mut spec = self.cfg.spec.clone();
            spec.length = Length::Duration(d);
            spec.progress_s = 0;
            spec.per_statement = false;
            let out = exec::run(client::run(bins, conn, &spec), "prewarm pgbench", stop)?;
            prewarm_tps = Some(parse::summary(&out.stdout)?.tps);
        }
        let t0 = Instant::now();
        let out = exec::run(client::run(bins, conn, &self.cfg.spec), "pgbench", stop)?;
        let elapsed = t0.elapsed().as_secs_f64();
        let summary = parse::summary(&out.stdout)
            .with_context(|| format!("reading pgbench's output: {}", exec::tail(&out.stdout, 4)))?;
        let history = if self.cfg.writes_history() {
            Some(self.count_history(conn, stop)?)
        } else {
            None
        };
        let progress = parse::progress(&out.stderr);
        let mut run = metrics::output(&summary, &progress, self.cfg.spec.progress_s, elapsed);
        metrics::extras(&mut run, self.init_seconds, prewarm_tps, history);
        Ok(run)
    }

    fn count_history(&self, conn: &Conn, stop: &StopFlag) -> Result<u64> {
        let out = exec::run(
            client::count_history(self.bins()?, conn),
            "counting pgbench_history",
            stop,
        )?;
        out.stdout
            .trim()
            .parse()
            .with_context(|| format!("psql printed `{}`, not a row count", out.stdout.trim()))
    }

    fn check_script(&self) -> Result<()> {
        if let Some(s) = &self.cfg.spec.script {
            if !s.is_file() {
                bail!(
                    "pgbench script {} does not exist; fix `script`",
                    s.display()
                );
            }
        }
        Ok(())
    }
}

impl Workload for Pgbench {
    fn prepare(&mut self, dir: &Path) -> Result<()> {
        self.check_script()?;
        let managed = self.cfg.dsn.is_none();
        self.bins = Some(Binaries::find(self.cfg.bindir.as_deref(), managed)?);
        // prepare gets no stop flag from the runner: listen for signals here.
        let signals = exec::SignalStop::install();
        let stop = signals.flag.clone();
        if !managed {
            let marker = dir.join("storlab-dsn-initialized");
            if self.cfg.reinit_each_run || !marker.exists() {
                self.timed_init(&self.conn(dir), &stop)?;
                std::fs::write(&marker, b"pgbench -i completed\n")
                    .with_context(|| format!("writing {}", marker.display()))?;
            }
            return Ok(());
        }
        self.account = Account::for_server(&self.cfg.os_user)?;
        if self.cfg.reinit_each_run || !self.cluster(dir).is_initialized() {
            self.init_managed(dir, &stop)?;
        }
        Ok(())
    }

    fn run(&mut self, dir: &Path, cx: &RunContext) -> Result<RunOutput> {
        let conn = self.conn(dir);
        if self.cfg.dsn.is_some() {
            return self.measure(&conn, &cx.stop);
        }
        let cluster = self.cluster(dir);
        let mut server = Server::start(&cluster, self.bins()?, &cx.stop)?;
        let out = self.measure(&conn, &cx.stop);
        let stopped = server.stop();
        let out = out?;
        stopped?;
        Ok(out)
    }

    fn cleanup(&mut self, dir: &Path) -> Result<()> {
        if self.cfg.dsn.is_none() && self.cfg.reinit_each_run {
            self.cluster(dir).remove()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::params::Value;

    fn params(extra: &[(&str, Value)]) -> Params {
        let mut p = Params::defaults(PARAMS);
        for (k, v) in extra {
            p.set(k, v.clone());
        }
        p
    }

    #[test]
    fn contradictory_or_inexpressible_settings_point_at_their_key() {
        let secs = |s: f64| Value::Duration(Duration::from_secs_f64(s));
        let bad = |extra: &[(&str, Value)]| validate(&params(extra)).unwrap_err().0;
        assert_eq!(
            bad(&[("duration", secs(5.0)), ("transactions", Value::Int(10))]),
            "transactions"
        );
        assert_eq!(bad(&[("duration", secs(1.5))]), "duration");
        assert_eq!(bad(&[("prewarm", secs(0.0))]), "prewarm");
        assert_eq!(bad(&[("threads", Value::Int(4))]), "threads");
        assert_eq!(bad(&[("progress", secs(0.5))]), "progress");
        let mut fsync = std::collections::BTreeMap::new();
        fsync.insert("fsync".to_string(), "off".to_string());
        assert_eq!(
            bad(&[
                ("dsn", Value::Str("host=/tmp".into())),
                ("settings", Value::Map(fsync))
            ]),
            "settings"
        );
        assert!(validate(&params(&[("duration", secs(10.0))])).is_ok());
    }
}

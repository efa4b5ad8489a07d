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
mod config;
mod exec;
mod metrics;
mod parse;
mod server;

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use self::account::Account;
use self::binaries::Binaries;
use self::client::{Conn, Length};
use self::cluster::Cluster;
use self::config::Config;
use self::server::Server;
use super::{RunContext, Workload};
use crate::measure::{RunOutput, StopFlag};

pub use self::config::PgbenchParams;

pub struct Pgbench {
    cfg: Config,
    bins: Option<Binaries>,
    account: Option<Account>,
    init_seconds: Option<f64>,
}

impl Pgbench {
    pub fn new(cfg: Config) -> Pgbench {
        Pgbench {
            cfg,
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

//! Workload `pgbench`: PostgreSQL's own pgbench against a cluster storlab
//! creates inside the target (or an existing server by `dsn`).
//!
//! The runner builds a fresh instance per run and calls prepare → (cache
//! drop) → run → cleanup. `prepare` initialises when needed — initdb,
//! settings, a server started only for `pgbench -i -I STEPS -s SCALE`
//! (timed as `init_seconds`, each step as pgbench times it) and stopped
//! again, so caches are dropped with no server running. `run` starts the
//! server, runs the optional prewarm, reads the server's facts and
//! counters, runs the measured pgbench (with a per-transaction log in the
//! workload's directory, read into latency percentiles and removed), reads
//! the counters again once pgbench's backends have gone, counts
//! pgbench_history, and stops the server through a guard, so no postgres
//! outlives a run. `reinit = "once"` keeps the cluster on disk in the
//! workload's directory across runs; the runner removes that directory at
//! teardown.

mod account;
pub(crate) mod binaries;
mod client;
mod cluster;
mod config;
mod counters;
mod exec;
mod facts;
mod metrics;
mod parse;
mod server;
mod txlog;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{bail, Context, Result};

use self::account::Account;
use self::binaries::Binaries;
use self::client::{Conn, Length};
use self::cluster::Cluster;
use self::config::Config;
use self::counters::Snapshot;
use self::facts::ServerFacts;
use self::metrics::Init;
use self::server::Server;
use super::{RunContext, Workload};
use crate::measure::telemetry::checks::PGBENCH_BYTES_PER_SCALE;
use crate::measure::telemetry::Served;
use crate::measure::RunOutput;
use crate::process::StopFlag;
use crate::provision::journal::Held;
use crate::provision::root::{Jail, Root, Software};
use crate::warning::{Warning, WarningKind};
use std::sync::Arc;

pub use self::config::PgbenchParams;

/// How long pgbench's backends may take to end after it exits.
const CLIENTS_PATIENCE: Duration = Duration::from_secs(30);
/// With `dsn`, once the connections are back to their number before the
/// run: time for a backend that has left pg_stat_activity to hand its
/// last statistics over.
const DSN_GRACE: Duration = Duration::from_millis(500);

pub struct Pgbench {
    cfg: Config,
    bins: Option<Binaries>,
    account: Option<Account>,
    init: Option<Init>,
    /// The root's jail the server and its clients run in (`root`), with
    /// what was made for it, undone at cleanup.
    jailed: Option<(Arc<Jail>, Held)>,
}

/// The socket directory of a server in a root's jail, as it sees it.
const JAILED_SOCKET: &str = "/run/storlab-pg";

/// The server as it was before the measured run.
struct Before {
    facts: ServerFacts,
    counters: Snapshot,
}

impl Pgbench {
    pub fn new(cfg: Config) -> Pgbench {
        Pgbench {
            cfg,
            bins: None,
            account: None,
            init: None,
            jailed: None,
        }
    }

    fn bins(&self) -> Result<&Binaries> {
        self.bins.as_ref().context("pgbench: prepare did not run")
    }

    fn cluster(&self, dir: &Path) -> Cluster {
        let cluster = Cluster::new(dir, self.cfg.port, self.account.clone());
        match &self.jailed {
            Some((jail, _)) => {
                let inside = PathBuf::from(JAILED_SOCKET);
                let on_host = jail.host_path(&inside);
                cluster.in_jail(inside, on_host)
            }
            None => cluster,
        }
    }

    /// The server's programs and account: the host's, or a root's in a
    /// jail of this run's, the workload's directory shared into it.
    fn find_programs(&mut self, dir: &Path, cx: &RunContext) -> Result<()> {
        let managed = self.cfg.dsn.is_none();
        if !managed || self.cfg.root.is_host() {
            self.bins = Some(Binaries::find(self.cfg.bindir.as_deref(), managed)?);
            if managed {
                self.account = Account::for_server(&self.cfg.os_user)?;
            }
            return Ok(());
        }
        let root = Root::obtain(&self.cfg.root, Software::Postgres, &cx.journal, &cx.stop)?;
        let mut held = Held::new(&cx.journal);
        let opened = (|| {
            static JAILS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
            let n = JAILS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let jail = Jail::open(&root, &format!("pg{n}"), &mut held)?;
            let dir = std::path::absolute(dir)?;
            jail.share(&dir, &mut held)?;
            let account = Account::in_root(&root.tree, &self.cfg.os_user)?;
            let sock = jail.host_path(Path::new(JAILED_SOCKET));
            std::fs::create_dir_all(&sock)
                .with_context(|| format!("creating {}", sock.display()))?;
            account.chown(&sock)?;
            let jail = Arc::new(jail);
            self.bins = Some(Binaries::in_root(&root.tree, jail.clone())?);
            self.account = Some(account);
            Ok::<_, anyhow::Error>(jail)
        })();
        match opened {
            Ok(jail) => {
                self.jailed = Some((jail, held));
                Ok(())
            }
            Err(e) => {
                let _ = held.undo_all();
                Err(e.context(format!("running PostgreSQL from {}", root.describe())))
            }
        }
    }

    /// Undoes the jail of this run, if there is one.
    fn close_jail(&mut self) -> Result<()> {
        self.bins = None;
        match self.jailed.take() {
            Some((jail, mut held)) => {
                drop(jail);
                held.undo_all()
            }
            None => Ok(()),
        }
    }

    fn conn(&self, dir: &Path) -> Conn {
        match &self.cfg.dsn {
            Some(dsn) => Conn::Dsn(dsn.clone()),
            None => Conn::managed(&self.cluster(dir)),
        }
    }

    /// A fresh cluster with pgbench's tables, the server stopped again.
    fn init_managed(&mut self, dir: &Path, cx: &RunContext) -> Result<()> {
        let (stop, journal) = (&cx.stop, &cx.journal);
        let cluster = self.cluster(dir);
        let bins = self.bins()?.clone();
        cluster.create(&bins, &self.cfg.settings, stop, journal)?;
        let mut server = Server::start(&cluster, &bins, stop, &cx.target)?;
        self.timed_init(&Conn::managed(&cluster), stop)?;
        server.stop()?;
        cluster.mark_initialized()
    }

    /// `pgbench -i -I STEPS -s SCALE`: its wall time and pgbench's time of
    /// each step.
    fn timed_init(&mut self, conn: &Conn, stop: &StopFlag) -> Result<()> {
        let t0 = Instant::now();
        let cmd = client::init(self.bins()?, conn, self.cfg.scale, &self.cfg.init_steps)?;
        let out = exec::run(cmd, "pgbench -i", stop)?;
        self.init = Some(Init {
            seconds: t0.elapsed().as_secs_f64(),
            steps: parse::init_steps(&out.stderr),
        });
        Ok(())
    }

    /// The prewarm, the measured run, what the server wrote meanwhile and
    /// the history count, on a live server (`server` when storlab runs it).
    fn measure(
        &self,
        dir: &Path,
        conn: &Conn,
        server: Option<&Server>,
        stop: &StopFlag,
    ) -> Result<RunOutput> {
        let prewarm_tps = self.prewarm(conn, stop)?;
        let mut warnings = Vec::new();
        let before = self.server_before(conn, stop, &mut warnings);
        let mut spec = self.cfg.spec.clone();
        spec.log_prefix = self.fresh_log_prefix(dir)?;
        let origin_us = now_us();
        let t0 = Instant::now();
        let out = exec::run(client::run(self.bins()?, conn, &spec)?, "pgbench", stop)?;
        let elapsed = t0.elapsed().as_secs_f64();
        let summary = parse::summary(&out.stdout)
            .with_context(|| format!("reading pgbench's output: {}", exec::tail(&out.stdout, 4)))?;
        let after = before
            .as_ref()
            .and_then(|b| self.server_after(b, conn, server, stop, &mut warnings));
        let history = if self.cfg.writes_history() {
            Some(self.count_history(conn, stop)?)
        } else {
            None
        };
        let progress = parse::progress(&out.stderr);
        let mut run = metrics::output(&summary, &progress, self.cfg.spec.progress_s, elapsed);
        metrics::extras(&mut run, self.init.as_ref(), prewarm_tps, history);
        if let Some(prefix) = &spec.log_prefix {
            self.read_log(prefix, origin_us, &mut run)?;
        }
        if let Some(b) = before {
            add_server_figures(&mut run, b, after, summary.transactions, &mut warnings);
        }
        run.warnings.extend(warnings.into_iter().map(Warning::note));
        if let Some(rate) = spec.rate {
            let short = metrics::rate_shortfall(rate, &summary, elapsed);
            run.warnings
                .extend(short.map(|t| Warning::new(WarningKind::RateNotHeld, t)));
        }
        Ok(run)
    }

    /// The unmeasured prewarm run, if any: its tps.
    fn prewarm(&self, conn: &Conn, stop: &StopFlag) -> Result<Option<f64>> {
        let Some(d) = self.cfg.prewarm else {
            return Ok(None);
        };
        let mut spec = self.cfg.spec.clone();
        spec.length = Length::Duration(d);
        spec.progress_s = 0;
        spec.per_statement = false;
        spec.latency_limit = None;
        let out = exec::run(
            client::run(self.bins()?, conn, &spec)?,
            "prewarm pgbench",
            stop,
        )?;
        Ok(Some(parse::summary(&out.stdout)?.tps))
    }

    /// A new, empty directory for the transaction log, or none without one.
    fn fresh_log_prefix(&self, dir: &Path) -> Result<Option<PathBuf>> {
        if !self.cfg.transaction_log {
            return Ok(None);
        }
        let logs = log_dir(dir);
        if logs.exists() {
            std::fs::remove_dir_all(&logs)
                .with_context(|| format!("removing an old transaction log {}", logs.display()))?;
        }
        std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
        Ok(Some(logs.join("pgbench_log")))
    }

    /// The transaction log's latency figures into `run`; the log removed.
    fn read_log(&self, prefix: &Path, origin_us: u64, run: &mut RunOutput) -> Result<()> {
        let log = txlog::read_dir(prefix, origin_us, self.cfg.spec.rate.is_some())?;
        run.metrics.extend(log.metrics());
        run.histograms.extend(log.histograms());
        run.series.extend(log.series());
        if let Some(dir) = prefix.parent() {
            std::fs::remove_dir_all(dir)
                .with_context(|| format!("removing the transaction log {}", dir.display()))?;
        }
        Ok(())
    }

    /// The server's facts and counters before the run; a failure to read
    /// them is a warning, not a failed run.
    fn server_before(
        &self,
        conn: &Conn,
        stop: &StopFlag,
        warnings: &mut Vec<String>,
    ) -> Option<Before> {
        let read = || -> Result<Before> {
            let facts = ServerFacts::from_json(&self.psql(conn, facts::SQL, stop)?)?;
            let counters = self.snapshot(conn, facts.version_num, stop)?;
            Ok(Before { facts, counters })
        };
        read()
            .map_err(|e| {
                warnings.push(format!(
                    "the server's facts and counters were not read: {e:#}"
                ))
            })
            .ok()
    }

    /// The counters once pgbench's backends have gone.
    fn server_after(
        &self,
        before: &Before,
        conn: &Conn,
        server: Option<&Server>,
        stop: &StopFlag,
        warnings: &mut Vec<String>,
    ) -> Option<Snapshot> {
        let settled = match server {
            Some(s) => s.wait_for_clients(CLIENTS_PATIENCE),
            None => self.wait_for_dsn_clients(before.counters.clients, conn, stop),
        };
        if !settled {
            warnings.push(format!(
                "pgbench's connections had not all closed {}s after it ended: the server's counters may miss their last second",
                CLIENTS_PATIENCE.as_secs()
            ));
        }
        self.snapshot(conn, before.facts.version_num, stop)
            .map_err(|e| {
                warnings.push(format!(
                    "the server's counters after the run were not read: {e:#}"
                ))
            })
            .ok()
    }

    /// An existing server: until its client connections are back to
    /// `baseline`, then a grace period.
    fn wait_for_dsn_clients(&self, baseline: u64, conn: &Conn, stop: &StopFlag) -> bool {
        let t0 = Instant::now();
        let sql = "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()";
        loop {
            let now = self
                .psql(conn, sql, stop)
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok());
            if now.is_some_and(|n| n <= baseline) {
                std::thread::sleep(DSN_GRACE);
                return true;
            }
            if t0.elapsed() > CLIENTS_PATIENCE || stop.is_raised() {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn snapshot(&self, conn: &Conn, version_num: u32, stop: &StopFlag) -> Result<Snapshot> {
        Snapshot::from_json(&self.psql(conn, &counters::snapshot_sql(version_num), stop)?)
    }

    fn psql(&self, conn: &Conn, sql: &str, stop: &StopFlag) -> Result<String> {
        let out = exec::run(client::query(self.bins()?, conn, sql)?, "psql", stop)?;
        Ok(out.stdout)
    }

    fn count_history(&self, conn: &Conn, stop: &StopFlag) -> Result<u64> {
        let out = exec::run(
            client::count_history(self.bins()?, conn)?,
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

/// The server's facts, and what it wrote between `before` and `after`.
fn add_server_figures(
    run: &mut RunOutput,
    before: Before,
    after: Option<Snapshot>,
    transactions: u64,
    warnings: &mut Vec<String>,
) {
    if let Some(after) = after {
        let (figures, said) = counters::metrics(&before.counters, &after, transactions);
        run.metrics.extend(figures);
        warnings.extend(said);
    }
    run.facts = before.facts.to_facts();
}

/// Where a run's transaction log goes: inside the workload's directory.
fn log_dir(dir: &Path) -> PathBuf {
    dir.join("txlog")
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

impl Workload for Pgbench {
    /// The server of the cluster storlab created, by its `postmaster.pid`
    /// (read at every sample: the server starts during the run).
    fn serving(&self, dir: &Path) -> Vec<Served> {
        if self.cfg.dsn.is_some() {
            return Vec::new();
        }
        let pidfile = self.cluster(dir).data().join("postmaster.pid");
        let why = format!(
            "postgres: the postmaster in {} and its backends",
            pidfile.display()
        );
        vec![Served::pid_file("postgres", pidfile, why)]
    }

    fn prepare(&mut self, dir: &Path, cx: &RunContext) -> Result<()> {
        self.check_script()?;
        let managed = self.cfg.dsn.is_none();
        self.find_programs(dir, cx)?;
        let stop = &cx.stop;
        if !managed {
            let marker = dir.join("storlab-dsn-initialized");
            if self.cfg.reinit_each_run || !marker.exists() {
                self.timed_init(&self.conn(dir), stop)?;
                std::fs::write(&marker, b"pgbench -i completed\n")
                    .with_context(|| format!("writing {}", marker.display()))?;
            }
            return Ok(());
        }
        if self.cfg.reinit_each_run || !self.cluster(dir).is_initialized() {
            self.init_managed(dir, cx)?;
        }
        Ok(())
    }

    fn run(&mut self, dir: &Path, cx: &RunContext) -> Result<RunOutput> {
        let conn = self.conn(dir);
        let mut out = if self.cfg.dsn.is_some() {
            self.measure(dir, &conn, None, &cx.stop)?
        } else {
            let cluster = self.cluster(dir);
            let mut server = Server::start(&cluster, self.bins()?, &cx.stop, &cx.target)?;
            let out = self.measure(dir, &conn, Some(&server), &cx.stop);
            let stopped = server.stop();
            let out = out?;
            stopped?;
            out
        };
        // The database's size at its scale, for the shared_buffers check.
        let db = f64::from(self.cfg.scale) * PGBENCH_BYTES_PER_SCALE;
        out.metrics
            .push(crate::metric::catalogue::WORKING_SET_BYTES.value(db));
        Ok(out)
    }

    fn cleanup(&mut self, dir: &Path) -> Result<()> {
        let logs = log_dir(dir);
        if logs.exists() {
            std::fs::remove_dir_all(&logs)
                .with_context(|| format!("removing the transaction log {}", logs.display()))?;
        }
        if self.cfg.dsn.is_none() && self.cfg.reinit_each_run {
            self.cluster(dir).remove()?;
        }
        self.close_jail()
    }
}

impl Drop for Pgbench {
    fn drop(&mut self) {
        if let Err(e) = self.close_jail() {
            errln!("storlab: undoing PostgreSQL's jail: {e:#}");
        }
    }
}

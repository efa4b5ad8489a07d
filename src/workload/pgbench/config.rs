//! The pgbench workload's parameters, declared once (parsing, defaults,
//! help, stored rows), their cross-checks, and [`Config`], the resolved
//! form the workload runs from, with the run's estimates.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::client::{Length, RunSpec};
use super::cluster::check_setting;
use super::Pgbench;
use crate::params::units::saturating_secs;
use crate::params::{choices, declare, Fault, Params, Value};
use crate::provision::root::{RootNeed, RootSpec, Software};
use crate::workload::{Configure, OpenLoop, Workload, WorkloadConfig};

declare! {
    /// The parameters of a `pgbench` workload, with pgbench's meanings.
    pub struct PgbenchParams {
        scale: int(u32, 1, 1_000_000) = "1" => "pgbench -i -s: scale factor (1 = 100,000 accounts, about 16 MB)",
        clients: int(u32, 1, 10_000) = "1" => "pgbench -c: concurrent database sessions",
        threads: int(u32, 1, 1024) = "1" => "pgbench -j: worker threads (at most clients)",
        duration: duration => "pgbench -T: run length; 60s when neither duration nor transactions is given",
        transactions: int(u64, 1, i64::MAX) => "pgbench -t: transactions per client, instead of duration",
        mode: one_of(&["simple", "extended", "prepared"]) = "simple" => "pgbench -M: query protocol",
        builtin: one_of(&["tpcb-like", "simple-update", "select-only"]) = "tpcb-like" => "pgbench -b: builtin script",
        script: string => "pgbench -f: a custom script file, instead of builtin",
        progress: duration = "1s" => "pgbench -P: progress interval in whole seconds, stored as series (0: none)",
        per_statement: bool = "true" => "pgbench -r: per-statement latencies",
        rate: float(0.001, 1e9) => "pgbench -R: an open-loop run at this many transactions per second (a Poisson schedule); latency counts from the scheduled start",
        latency_limit: duration => "pgbench -L: transactions slower than this are counted as late_transactions; with rate, those already this far behind schedule are skipped",
        transaction_log: bool = "true" => "pgbench -l: a per-transaction log in the workload's directory, read into latency percentiles (lat_p50_ns … lat_max_ns) and removed",
        sampling_rate: float(0.0001, 1.0) => "pgbench --sampling-rate: log only this fraction of transactions (long runs); the sample size is stored as logged_transactions",
        init_steps: string = "dtgvp" => "pgbench -I: initialization steps, each timed (d drop, t tables, g client-side or G server-side generate, v vacuum, p primary keys, f foreign keys)",
        prewarm: duration => "an unmeasured pgbench run of this length before the measured one (its tps is kept as prewarm_tps); 0s: none",
        reinit: choice(Reinit) = "each-run" => "a fresh cluster and pgbench -i before every run, or once per campaign (shared by the variants of a sweep with the same scale and settings)",
        settings: map => "postgresql.conf settings, e.g. { shared_buffers = \"256MB\", fsync = \"off\" }",
        dsn: string => "run against this existing server instead (libpq string); only pgbench_* tables are touched",
        bindir: string => "directory of initdb, postgres, pgbench, psql (default: pg_config, /usr/lib/postgresql/*/bin, PATH)",
        os_user: string = "postgres" => "the unprivileged user the server runs as when storlab runs as root",
        port: int(u16, 1, 65535) = "5432" => "the server's port (names its socket file; TCP stays off)",
        root: string = "host" => "where PostgreSQL (server and clients) comes from: \"host\", \"debian:SUITE\" (a minimal Debian root storlab builds and caches, e.g. \"debian:trixie\" for PostgreSQL 17) or the path of a tree you made; its server runs chrooted in a network namespace of its own (docs/targets.md, roots)",
    }
}

choices! {
    /// When the cluster is initialised.
    pub enum Reinit { EachRun = "each-run", Once = "once" }
}

/// The run length when neither `duration` nor `transactions` is given, as
/// the help of `duration` says.
const DEFAULT_LENGTH: Duration = Duration::from_secs(60);

impl PgbenchParams {
    /// Cross-parameter checks: the key at fault and why.
    fn validate(&self) -> Result<(), Fault> {
        if self.duration.is_some() && self.transactions.is_some() {
            return Err((
                "transactions",
                "give either duration (-T) or transactions (-t), not both".into(),
            ));
        }
        // prewarm = "0s" is no prewarm: a sweep's level without one.
        let prewarm = self.prewarm.filter(|d| !d.is_zero());
        for (key, d) in [("duration", self.duration), ("prewarm", prewarm)] {
            if let Some(d) = d {
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
        if self.threads > self.clients {
            return Err(("threads", "threads must not exceed clients".into()));
        }
        if self.latency_limit.is_some_and(|d| d.is_zero()) {
            return Err(("latency_limit", "latency_limit must be above 0".into()));
        }
        if self.sampling_rate.is_some() && !self.transaction_log {
            return Err((
                "sampling_rate",
                "sampling_rate samples the transaction log; it needs transaction_log = true".into(),
            ));
        }
        check_init_steps(&self.init_steps).map_err(|m| ("init_steps", m))?;
        if self.progress.subsec_nanos() != 0 {
            return Err((
                "progress",
                "pgbench reports progress in whole seconds".into(),
            ));
        }
        self.validate_root()?;
        if let Some(settings) = &self.settings {
            if self.dsn.is_some() && !settings.is_empty() {
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

    /// `root`: a root storlab knows how to read, for the server storlab
    /// runs (not a `dsn`), with its own programs (no `bindir`).
    fn validate_root(&self) -> Result<(), Fault> {
        let root = RootSpec::parse(&self.root).map_err(|m| ("root", m))?;
        if root.is_host() {
            return Ok(());
        }
        let clash = [
            ("dsn", self.dsn.is_some(), "with dsn the server is yours"),
            (
                "bindir",
                self.bindir.is_some(),
                "the root's own programs run",
            ),
            (
                "script",
                self.script.is_some(),
                "a custom script is not carried into another root",
            ),
        ];
        match clash.iter().find(|(_, set, _)| *set) {
            Some((key, _, why)) => Err((
                "root",
                format!("root = \"{root}\" and `{key}` do not go together: {why}; leave one out"),
            )),
            None => Ok(()),
        }
    }

    /// Makes a custom `script` absolute against the experiment file's
    /// directory (`base`), so that it is found from inside the target, and
    /// refuses a script that is not there before anything is provisioned.
    fn resolve(&mut self, base: &Path, stored: &mut Params) -> Result<(), Fault> {
        let Some(script) = &self.script else {
            return Ok(());
        };
        let joined = base.join(script);
        let abs = std::fs::canonicalize(&joined).map_err(|e| {
            (
                "script",
                format!(
                    "cannot open the pgbench script `{script}` ({}: {e}); a relative path is resolved against the experiment file's directory",
                    joined.display()
                ),
            )
        })?;
        if !abs.is_file() {
            return Err((
                "script",
                format!("the pgbench script {} is not a file", abs.display()),
            ));
        }
        let abs = abs.display().to_string();
        stored.set("script", Value::Str(abs.clone()));
        self.script = Some(abs);
        Ok(())
    }
}

/// Checks `pgbench -I` steps: known letters, each once, one way to generate.
fn check_init_steps(steps: &str) -> Result<(), String> {
    if steps.is_empty() {
        return Err("give at least one step (pgbench's default is \"dtgvp\")".into());
    }
    for (i, c) in steps.char_indices() {
        if !"dtgGvpf".contains(c) {
            return Err(format!(
                "`{c}` is not a pgbench -I step; the steps are d (drop tables), t (create tables), g (generate client-side), G (generate server-side), v (vacuum), p (primary keys), f (foreign keys)"
            ));
        }
        if steps[..i].contains(c) {
            return Err(format!("step `{c}` is given twice"));
        }
    }
    if steps.contains('g') && steps.contains('G') {
        return Err("generate either client-side (g) or server-side (G), not both".into());
    }
    Ok(())
}

impl Configure for PgbenchParams {
    type Config = Config;

    fn configure(mut self, base: &Path, stored: &mut Params) -> Result<Config, Fault> {
        self.validate()?;
        self.resolve(base, stored)?;
        Ok(Config::from(self))
    }
}

/// The model of a run where the store has none to learn from, measured on
/// this project's 2-core machine (load average 6–12) with examples/000
/// and 001: commits a second with no storage in the way (a loop image of
/// ext4 ran 1.1k tx/s with barrier=0; the target kinds' slowdown makes it
/// 100 through a VM disk on Gluster, where 92–120 were measured).
const TPS_GUESS: f64 = 500.0;
/// `pgbench -i`: 2.2 s at scale 5 on ext4 on loop, 6.8 s on zfs-fuse,
/// 19–26 s at scale 10 through a VM disk on Gluster (× the kinds' slowdown).
const INIT_FIXED_S: f64 = 1.0;
const INIT_PER_SCALE_S: f64 = 0.3;
/// initdb and the extra server start and stop of a fresh cluster.
const CREATE_S: f64 = 5.0;
/// Starting the server, reading its counters and stopping it, every run.
const SERVER_S: f64 = 2.0;

/// The resolved parameters of one pgbench workload.
#[derive(Debug, Clone)]
pub struct Config {
    pub scale: u32,
    pub spec: RunSpec,
    pub prewarm: Option<Duration>,
    pub reinit_each_run: bool,
    pub settings: BTreeMap<String, String>,
    /// pgbench -I.
    pub init_steps: String,
    /// Whether the measured run writes a per-transaction log.
    pub transaction_log: bool,
    pub dsn: Option<String>,
    pub bindir: Option<String>,
    pub os_user: String,
    pub port: u16,
    /// Where PostgreSQL comes from (checked when the parameters were read).
    pub root: RootSpec,
}

impl From<PgbenchParams> for Config {
    fn from(p: PgbenchParams) -> Config {
        let length = match (p.transactions, p.duration) {
            (Some(t), _) => Length::Transactions(t),
            (None, Some(d)) => Length::Duration(d),
            (None, None) => Length::Duration(DEFAULT_LENGTH),
        };
        let script = p.script.map(PathBuf::from);
        let spec = RunSpec {
            clients: p.clients,
            threads: p.threads,
            length,
            mode: p.mode,
            builtin: match script {
                Some(_) => None,
                None => Some(p.builtin),
            },
            script,
            progress_s: p.progress.as_secs() as u32,
            per_statement: p.per_statement,
            rate: p.rate,
            latency_limit: p.latency_limit,
            log_prefix: None,
            sampling_rate: p.sampling_rate,
        };
        Config {
            scale: p.scale,
            spec,
            prewarm: p.prewarm.filter(|d| !d.is_zero()),
            reinit_each_run: p.reinit == Reinit::EachRun,
            settings: p.settings.unwrap_or_default(),
            init_steps: p.init_steps,
            transaction_log: p.transaction_log,
            dsn: p.dsn,
            bindir: p.bindir,
            os_user: p.os_user,
            port: p.port,
            root: RootSpec::parse(&p.root).unwrap_or(RootSpec::Host),
        }
    }
}

impl Config {
    /// Whether pgbench_history should hold exactly one row per transaction.
    pub fn writes_history(&self) -> bool {
        matches!(
            self.spec.builtin.as_deref(),
            Some("tpcb-like" | "simple-update")
        )
    }
}

impl WorkloadConfig for Config {
    /// PostgreSQL's programs are there (the server's only when storlab
    /// runs the server).
    fn preflight(&self) -> anyhow::Result<()> {
        if !self.root.is_host() {
            return crate::provision::root::preflight::preflight(&self.root, Software::Postgres);
        }
        super::binaries::Binaries::find(self.bindir.as_deref(), self.dsn.is_none()).map(|_| ())
    }

    /// PostgreSQL's root, for the server storlab runs.
    fn root(&self) -> Option<RootNeed> {
        self.dsn.is_none().then(|| RootNeed {
            spec: self.root.clone(),
            software: Software::Postgres,
        })
    }

    /// Rough wall time of one run, initialisation included when every run
    /// makes a fresh cluster; saturates for lengths no run could have
    /// (`transactions` near 2^63).
    fn estimate(&self) -> Duration {
        let length = match self.spec.length {
            Length::Duration(d) => d,
            Length::Transactions(_) => Duration::ZERO,
        };
        let create = if self.reinit_each_run {
            self.estimate_once()
        } else {
            Duration::ZERO
        };
        self.estimate_io()
            .saturating_add(length)
            .saturating_add(self.prewarm.unwrap_or_default())
            .saturating_add(create.saturating_sub(self.estimate_once_io()))
            .saturating_add(saturating_secs(SERVER_S))
    }

    /// The transactions of a run given by count (each commit waits for
    /// the storage; a run given by `duration` lasts what it is told), and
    /// `pgbench -i` when every run initialises.
    fn estimate_io(&self) -> Duration {
        let run = match self.spec.length {
            Length::Duration(_) => Duration::ZERO,
            Length::Transactions(t) => {
                saturating_secs(t as f64 * f64::from(self.spec.clients) / TPS_GUESS)
            }
        };
        let init = if self.reinit_each_run {
            self.estimate_once_io()
        } else {
            Duration::ZERO
        };
        run.saturating_add(init)
    }

    /// Creating a cluster: initdb and the server's extra start and stop,
    /// and `pgbench -i` (only that against an existing server).
    fn estimate_once(&self) -> Duration {
        if self.dsn.is_some() {
            return self.estimate_once_io();
        }
        self.estimate_once_io()
            .saturating_add(saturating_secs(CREATE_S))
    }

    /// `pgbench -i -s SCALE`: writing the tables, vacuum and keys.
    fn estimate_once_io(&self) -> Duration {
        saturating_secs(INIT_FIXED_S + INIT_PER_SCALE_S * f64::from(self.scale))
    }

    /// The server's `shared_buffers` (PostgreSQL's default 128MB), none
    /// with `dsn` (not a server storlab starts).
    fn memory_needed(&self) -> u64 {
        if self.dsn.is_some() {
            return 0;
        }
        self.settings
            .get("shared_buffers")
            .map_or(Some(128 << 20), |v| pg_size(v))
            .unwrap_or(0)
    }

    /// Bytes the cluster may take on the target (none with `dsn`), and the
    /// transaction log's (about 40 bytes a transaction, at the rate asked
    /// for or, closed-loop, a guess of 2,000 per second).
    fn bytes_needed(&self) -> u64 {
        let log = if self.transaction_log {
            let secs = match self.spec.length {
                Length::Duration(d) => d.as_secs_f64(),
                Length::Transactions(t) => t as f64 * f64::from(self.spec.clients) / 2000.0,
            };
            let tps = self.spec.rate.unwrap_or(2000.0);
            let bytes = secs * tps * 40.0 * self.spec.sampling_rate.unwrap_or(1.0);
            // `as` saturates: a run no disk could log asks for everything.
            bytes as u64
        } else {
            0
        };
        if self.dsn.is_some() {
            return log;
        }
        ((200 << 20) + u64::from(self.scale) * (24 << 20)).saturating_add(log)
    }

    /// A cluster initialised once stays in the workload's directory until
    /// the campaign's teardown, shared by the variants that would make the
    /// same one: the same scale, -I steps, settings, programs and account
    /// (a sweep of `transactions`, `clients` or `duration` runs on one
    /// database, initialised by whichever variant runs first).
    fn kept_files(&self) -> Option<String> {
        (!self.reinit_each_run && self.dsn.is_none()).then(|| {
            format!(
                "cluster scale={} steps={} settings={:?} bindir={:?} user={} port={} root={}",
                self.scale,
                self.init_steps,
                self.settings,
                self.bindir,
                self.os_user,
                self.port,
                self.root
            )
        })
    }

    /// pgbench -R; latency percentiles come from the transaction log.
    fn open_loop(&self) -> Result<OpenLoop, String> {
        if !self.transaction_log {
            return Err(
                "its latency percentiles come from the transaction log: set transaction_log = true"
                    .into(),
            );
        }
        Ok(OpenLoop {
            param: "rate",
            issuers: 1,
            value: self.spec.rate.unwrap_or(0.0),
            whole: false,
            achieved: &crate::metric::catalogue::TPS,
            served: Some(&crate::metric::catalogue::TRANSACTIONS),
        })
    }

    fn build(&self) -> Box<dyn Workload> {
        Box::new(Pgbench::new(self.clone()))
    }
}

/// A PostgreSQL memory setting in bytes: `256MB`, `1GB`, `8kB`, or a
/// bare number of 8 kB pages, as postgresql.conf reads it.
fn pg_size(v: &str) -> Option<u64> {
    let v = v.trim().trim_matches('\'');
    let digits = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let n: u64 = v[..digits].parse().ok()?;
    let unit: u64 = match v[digits..].trim() {
        "" => 8 << 10,
        "B" => 1,
        "kB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => return None,
    };
    Some(n.saturating_mul(unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(extra: &[(&str, Value)]) -> Params {
        let mut p = Params::defaults(PgbenchParams::PARAMS);
        for (k, v) in extra {
            p.set(k, v.clone());
        }
        p
    }

    fn validate(p: &Params) -> Result<(), Fault> {
        PgbenchParams::from_params(p)?.validate()
    }

    fn resolve(p: &mut Params, base: &Path) -> Result<(), Fault> {
        PgbenchParams::from_params(p)?.resolve(base, p)
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
        assert_eq!(bad(&[("prewarm", secs(0.5))]), "prewarm");
        // "0s" is none: the level of a sweep without prewarm.
        assert!(validate(&params(&[("prewarm", secs(0.0))])).is_ok());
        assert_eq!(bad(&[("threads", Value::Int(4))]), "threads");
        assert_eq!(bad(&[("progress", secs(0.5))]), "progress");
        assert_eq!(bad(&[("latency_limit", secs(0.0))]), "latency_limit");
        assert_eq!(
            bad(&[
                ("sampling_rate", Value::Float(0.1)),
                ("transaction_log", Value::Bool(false))
            ]),
            "sampling_rate"
        );
        for steps in ["", "dtx", "dtgGvp", "dtgvpp"] {
            assert_eq!(
                bad(&[("init_steps", Value::Str(steps.into()))]),
                "init_steps",
                "{steps}"
            );
        }
        assert!(validate(&params(&[("init_steps", Value::Str("dtGvpf".into()))])).is_ok());
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

    #[test]
    fn a_relative_script_is_found_beside_the_experiment_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tx.sql"), "SELECT 1;\n").unwrap();
        let mut p = params(&[("script", Value::Str("tx.sql".into()))]);
        resolve(&mut p, dir.path()).unwrap();
        let abs = std::fs::canonicalize(dir.path().join("tx.sql")).unwrap();
        assert_eq!(
            p.get("script"),
            Some(&Value::Str(abs.display().to_string()))
        );

        let mut missing = params(&[("script", Value::Str("nope.sql".into()))]);
        let (key, msg) = resolve(&mut missing, dir.path()).unwrap_err();
        assert_eq!(key, "script");
        assert!(
            msg.contains("nope.sql") && msg.contains("experiment file's directory"),
            "{msg}"
        );

        let mut builtin = params(&[]);
        assert!(resolve(&mut builtin, dir.path()).is_ok());
        assert_eq!(builtin.get("script"), None);
    }
}

#[cfg(test)]
mod estimates {
    use super::*;

    /// Issue #16: `transactions = 9223372036854775807, clients = 10000`
    /// panicked in the estimate, after provisioning.
    #[test]
    fn the_largest_transaction_count_saturates_the_estimate() {
        let mut p = Params::defaults(PgbenchParams::PARAMS);
        p.set("transactions", Value::Int(i64::MAX));
        p.set("clients", Value::Int(10_000));
        p.set(
            "prewarm",
            Value::Duration(Duration::from_secs(1_000_000_000)),
        );
        let cfg = PgbenchParams::from_params(&p).unwrap();
        let cfg = cfg.configure(Path::new("."), &mut p).unwrap();
        assert_eq!(cfg.estimate(), Duration::MAX);
    }
}

//! The pgbench workload's parameters, declared once (parsing, defaults,
//! help, stored rows), their cross-checks, the run's estimates, and
//! [`Config`], the resolved form the workload runs from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::client::{Length, RunSpec};
use super::cluster::check_setting;
use crate::experiment::params::{ParamSpec, ParamType, Params, Value};

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
        name: "rate",
        ty: ParamType::Float {
            min: 0.001,
            max: 1e9,
        },
        default: None,
        help: "pgbench -R: an open-loop run at this many transactions per second (a Poisson schedule); latency counts from the scheduled start",
    },
    ParamSpec {
        name: "latency_limit",
        ty: ParamType::Duration,
        default: None,
        help: "pgbench -L: transactions slower than this are counted as late_transactions; with rate, those already this far behind schedule are skipped",
    },
    ParamSpec {
        name: "transaction_log",
        ty: ParamType::Bool,
        default: Some("true"),
        help: "pgbench -l: a per-transaction log in the workload's directory, read into latency percentiles (lat_p50_ns … lat_max_ns) and removed",
    },
    ParamSpec {
        name: "sampling_rate",
        ty: ParamType::Float { min: 0.0001, max: 1.0 },
        default: None,
        help: "pgbench --sampling-rate: log only this fraction of transactions (long runs); the sample size is stored as logged_transactions",
    },
    ParamSpec {
        name: "init_steps",
        ty: ParamType::Str,
        default: Some("dtgvp"),
        help: "pgbench -I: initialization steps, each timed (d drop, t tables, g client-side or G server-side generate, v vacuum, p primary keys, f foreign keys)",
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
    if let Some(d) = p.duration("latency_limit") {
        if d.is_zero() {
            return Err(("latency_limit", "latency_limit must be above 0".into()));
        }
    }
    if p.float("sampling_rate").is_some() && p.bool("transaction_log") == Some(false) {
        return Err((
            "sampling_rate",
            "sampling_rate samples the transaction log; it needs transaction_log = true".into(),
        ));
    }
    check_init_steps(p.str("init_steps").unwrap_or("dtgvp")).map_err(|m| ("init_steps", m))?;
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

/// Makes a custom `script` absolute against the experiment file's directory
/// (`base`), so that it is found from inside the target, and refuses a
/// script that is not there before anything is provisioned.
pub fn resolve(p: &mut Params, base: &Path) -> Result<(), (&'static str, String)> {
    let Some(script) = p.str("script").map(String::from) else {
        return Ok(());
    };
    let joined = base.join(&script);
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
    p.set("script", Value::Str(abs.display().to_string()));
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

/// Bytes the cluster may take on the target (none with `dsn`), and the
/// transaction log's (about 40 bytes a transaction, at the rate asked for
/// or, closed-loop, a guess of 2,000 per second).
pub fn bytes_needed(p: &Params) -> u64 {
    let cfg = Config::from_params(p);
    let log = if cfg.transaction_log {
        let secs = match cfg.spec.length {
            Length::Duration(d) => d.as_secs_f64(),
            Length::Transactions(t) => t as f64 * f64::from(cfg.spec.clients) / 2000.0,
        };
        let tps = cfg.spec.rate.unwrap_or(2000.0);
        (secs * tps * 40.0 * cfg.spec.sampling_rate.unwrap_or(1.0)) as u64
    } else {
        0
    };
    if cfg.dsn.is_some() {
        return log;
    }
    (200 << 20) + u64::from(cfg.scale) * (24 << 20) + log
}

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
}

impl Config {
    pub fn from_params(p: &Params) -> Config {
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
            rate: p.float("rate"),
            latency_limit: p.duration("latency_limit"),
            log_prefix: None,
            sampling_rate: p.float("sampling_rate"),
        };
        Config {
            scale: p.int("scale").unwrap_or(1) as u32,
            spec,
            prewarm: p.duration("prewarm"),
            reinit_each_run: p.str("reinit") != Some("once"),
            settings: p.map("settings").cloned().unwrap_or_default(),
            init_steps: p.str("init_steps").unwrap_or("dtgvp").to_string(),
            transaction_log: p.bool("transaction_log").unwrap_or(true),
            dsn: p.str("dsn").map(String::from),
            bindir: p.str("bindir").map(String::from),
            os_user: p.str("os_user").unwrap_or("postgres").to_string(),
            port: p.int("port").unwrap_or(5432) as u16,
        }
    }

    /// Whether pgbench_history should hold exactly one row per transaction.
    pub fn writes_history(&self) -> bool {
        matches!(
            self.spec.builtin.as_deref(),
            Some("tpcb-like" | "simple-update")
        )
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
        assert_eq!(p.str("script"), Some(abs.to_str().unwrap()));

        let mut missing = params(&[("script", Value::Str("nope.sql".into()))]);
        let (key, msg) = resolve(&mut missing, dir.path()).unwrap_err();
        assert_eq!(key, "script");
        assert!(
            msg.contains("nope.sql") && msg.contains("experiment file's directory"),
            "{msg}"
        );

        let mut builtin = params(&[]);
        assert!(resolve(&mut builtin, dir.path()).is_ok());
        assert_eq!(builtin.str("script"), None);
    }
}

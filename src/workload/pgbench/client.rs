//! pgbench and psql command lines: where to connect (storlab's private
//! socket, or a user's `dsn`) and the options of an init, a prewarm and a
//! measured run. Builds argument vectors only; running them is `exec.rs`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use super::binaries::Binaries;
use super::cluster::{Cluster, DATABASE, SUPERUSER};

/// Where pgbench connects.
#[derive(Debug, Clone)]
pub enum Conn {
    /// The server storlab started: its private socket directory and port.
    Managed { socket_dir: PathBuf, port: u16 },
    /// A libpq connection string or URI to an existing server.
    Dsn(String),
}

impl Conn {
    pub fn managed(c: &Cluster) -> Conn {
        Conn::Managed {
            socket_dir: c.socket_dir(),
            port: c.port,
        }
    }

    /// Connection arguments; the database comes last, as pgbench and psql
    /// take it (a DSN is expanded by libpq as the database name).
    fn args(&self, cmd: &mut Command) {
        match self {
            Conn::Managed { socket_dir, port } => {
                cmd.arg("-h").arg(socket_dir).args([
                    "-p",
                    &port.to_string(),
                    "-U",
                    SUPERUSER,
                    DATABASE,
                ]);
            }
            Conn::Dsn(dsn) => {
                cmd.arg(dsn);
            }
        }
    }
}

/// How long a run lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    Duration(Duration),
    /// Transactions per client.
    Transactions(u64),
}

/// What a measured (or prewarm) run does.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub clients: u32,
    pub threads: u32,
    pub length: Length,
    pub mode: String,
    /// A builtin script name, or `None` when `script` is set.
    pub builtin: Option<String>,
    pub script: Option<PathBuf>,
    pub progress_s: u32,
    pub per_statement: bool,
    /// `-R`: transactions per second, open loop.
    pub rate: Option<f64>,
    /// `-L`.
    pub latency_limit: Option<Duration>,
    /// `-l --log-prefix`: where the per-transaction log goes.
    pub log_prefix: Option<PathBuf>,
    /// `--sampling-rate`, with a log.
    pub sampling_rate: Option<f64>,
}

/// `pgbench -i -I STEPS -s SCALE` (drops and recreates only the pgbench
/// tables); pgbench times each step.
pub fn init(bins: &Binaries, conn: &Conn, scale: u32, steps: &str) -> anyhow::Result<Command> {
    let mut cmd = bins.command(&bins.pgbench, None, None)?;
    cmd.args(["-i", "-I", steps, "-s", &scale.to_string()]);
    conn.args(&mut cmd);
    Ok(cmd)
}

/// A pgbench run as `spec` says.
pub fn run(bins: &Binaries, conn: &Conn, spec: &RunSpec) -> anyhow::Result<Command> {
    let mut cmd = bins.command(&bins.pgbench, None, None)?;
    cmd.args(run_args(spec));
    conn.args(&mut cmd);
    Ok(cmd)
}

/// The options of a run, without connection arguments (also what
/// bench/pgbench_vs_direct.sh types by hand).
pub fn run_args(spec: &RunSpec) -> Vec<String> {
    let mut a = vec![
        "-c".to_string(),
        spec.clients.to_string(),
        "-j".into(),
        spec.threads.to_string(),
    ];
    match spec.length {
        Length::Duration(d) => a.extend(["-T".into(), d.as_secs().max(1).to_string()]),
        Length::Transactions(t) => a.extend(["-t".into(), t.to_string()]),
    }
    a.extend(["-M".into(), spec.mode.clone()]);
    match (&spec.script, &spec.builtin) {
        (Some(f), _) => a.extend(["-f".into(), f.to_string_lossy().into_owned()]),
        (None, Some(b)) => a.extend(["-b".into(), b.clone()]),
        (None, None) => {}
    }
    if spec.progress_s > 0 {
        a.extend(["-P".into(), spec.progress_s.to_string()]);
    }
    if spec.per_statement {
        a.push("-r".into());
    }
    if let Some(r) = spec.rate {
        a.extend(["-R".into(), format!("{r}")]);
    }
    if let Some(l) = spec.latency_limit {
        a.extend(["-L".into(), ms(l)]);
    }
    if let Some(p) = &spec.log_prefix {
        a.extend(["-l".into(), "--log-prefix".into()]);
        a.push(p.to_string_lossy().into_owned());
        if let Some(s) = spec.sampling_rate {
            a.extend(["--sampling-rate".into(), format!("{s}")]);
        }
    }
    a
}

/// Milliseconds as pgbench takes them (`-L 5.5`).
fn ms(d: Duration) -> String {
    let text = format!("{:.3}", d.as_secs_f64() * 1e3);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// psql printing the one-line answer of `sql`.
pub fn query(bins: &Binaries, conn: &Conn, sql: &str) -> anyhow::Result<Command> {
    let mut cmd = bins.command(&bins.psql, None, None)?;
    cmd.args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql]);
    conn.args(&mut cmd);
    Ok(cmd)
}

/// psql printing one number: the rows in pgbench_history.
pub fn count_history(bins: &Binaries, conn: &Conn) -> anyhow::Result<Command> {
    query(bins, conn, "SELECT count(*) FROM pgbench_history")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_command_lines() {
        let spec = RunSpec {
            clients: 100,
            threads: 8,
            length: Length::Duration(Duration::from_secs(600)),
            mode: "prepared".into(),
            builtin: Some("tpcb-like".into()),
            script: None,
            progress_s: 10,
            per_statement: true,
            rate: None,
            latency_limit: None,
            log_prefix: None,
            sampling_rate: None,
        };
        assert_eq!(
            run_args(&spec).join(" "),
            "-c 100 -j 8 -T 600 -M prepared -b tpcb-like -P 10 -r"
        );
        let spec = RunSpec {
            clients: 10,
            threads: 1,
            length: Length::Transactions(500),
            mode: "simple".into(),
            builtin: None,
            script: Some("/x/my.sql".into()),
            progress_s: 0,
            per_statement: false,
            rate: Some(250.5),
            latency_limit: Some(Duration::from_micros(5500)),
            log_prefix: Some("/t/w/txlog/pgbench_log".into()),
            sampling_rate: Some(0.1),
        };
        assert_eq!(
            run_args(&spec).join(" "),
            "-c 10 -j 1 -t 500 -M simple -f /x/my.sql -R 250.5 -L 5.5 \
             -l --log-prefix /t/w/txlog/pgbench_log --sampling-rate 0.1"
        );
        assert_eq!(ms(Duration::from_millis(200)), "200");
    }
}

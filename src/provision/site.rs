//! Where a provisioning command runs: on this host, or on another one
//! through the remote shell — the one way storlab reaches another host,
//! when it builds a Gluster volume's bricks on its servers and when its
//! journal undoes them (`storlab cleanup` included).
//!
//! The remote shell is `$STORLAB_RSH` when set, else Open MPI's
//! `$OMPI_MCA_plm_rsh_agent` (a cluster set up for `mpirun` works as it
//! is), else `ssh -o BatchMode=yes`: a program and its leading arguments,
//! then the host, then the command as one line for the remote shell, as
//! ssh takes it. Each argument is quoted for that shell, so that a path
//! with a space or a quote stays one argument; nothing from an experiment
//! is ever pasted into a command line unquoted.

use std::fmt;

use anyhow::{bail, Context, Result};

use super::cmd;

/// The remote shell when the environment names none.
pub const DEFAULT_RSH: &str = "ssh -o BatchMode=yes";

/// Where a command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Site {
    /// This host.
    Local,
    /// Another host, reached through the remote shell.
    Remote(String),
}

impl Site {
    /// The site of host `name`: this host when it is this host's name.
    pub fn of(name: &str) -> Site {
        if name == crate::host::hostname() {
            Site::Local
        } else {
            Site::Remote(name.to_string())
        }
    }

    pub fn is_local(&self) -> bool {
        *self == Site::Local
    }

    /// The host's name (this host's own for [`Site::Local`]).
    pub fn host(&self) -> String {
        match self {
            Site::Local => crate::host::hostname(),
            Site::Remote(h) => h.clone(),
        }
    }

    /// Runs `program args…` there; its stdout, or an error naming the
    /// command, the host and what it printed.
    pub fn run<S: AsRef<str>>(&self, program: &str, args: &[S]) -> Result<String> {
        match self {
            Site::Local => cmd::run(program, &strs(args)),
            Site::Remote(host) => {
                let (rsh, rsh_args) = remote_argv(host, program, args)?;
                cmd::run(&rsh, &rsh_args).with_context(|| format!("on {host}"))
            }
        }
    }

    /// Whether `program args…` succeeds there.
    pub fn succeeds<S: AsRef<str>>(&self, program: &str, args: &[S]) -> bool {
        match self {
            Site::Local => cmd::succeeds(program, &strs(args)),
            Site::Remote(host) => match remote_argv(host, program, args) {
                Ok((rsh, rsh_args)) => cmd::succeeds(&rsh, &rsh_args),
                Err(_) => false,
            },
        }
    }

    /// Runs the fixed shell `script` there with `args` as `$1`, `$2`…
    /// (the script is storlab's own text; the arguments are quoted).
    pub fn script<S: AsRef<str>>(&self, script: &str, args: &[S]) -> Result<String> {
        let mut all = vec!["-c".to_string(), script.to_string(), "storlab".to_string()];
        all.extend(args.iter().map(|a| a.as_ref().to_string()));
        self.run("sh", &all)
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Site::Local => write!(f, "this host"),
            Site::Remote(h) => write!(f, "{h}"),
        }
    }
}

fn strs<S: AsRef<str>>(args: &[S]) -> Vec<&str> {
    args.iter().map(|a| a.as_ref()).collect()
}

/// The remote shell's words: `$STORLAB_RSH`, else Open MPI's agent, else
/// [`DEFAULT_RSH`]. Open MPI's agent may list alternatives (`ssh : rsh`):
/// the first is taken.
pub fn rsh() -> Result<Vec<String>> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let (from, text) = match (var("STORLAB_RSH"), var("OMPI_MCA_plm_rsh_agent")) {
        (Some(v), _) => ("STORLAB_RSH", v),
        (None, Some(v)) => (
            "OMPI_MCA_plm_rsh_agent",
            v.split(':').next().unwrap_or_default().to_string(),
        ),
        (None, None) => ("the default", DEFAULT_RSH.to_string()),
    };
    let Some(words) = shlex::split(&text) else {
        bail!("{from} `{text}` is not a command line (an unclosed quote?)");
    };
    if words.is_empty() {
        bail!("{from} names no program; set STORLAB_RSH, e.g. `ssh -o BatchMode=yes`");
    }
    Ok(words)
}

/// The remote shell's command line, for messages.
pub fn rsh_text() -> String {
    rsh()
        .map(|w| w.join(" "))
        .unwrap_or_else(|e| format!("{e:#}"))
}

/// The program and arguments that run `program args…` on `host`.
fn remote_argv<S: AsRef<str>>(
    host: &str,
    program: &str,
    args: &[S],
) -> Result<(String, Vec<String>)> {
    check_host(host)?;
    let mut words = rsh()?;
    let rsh = words.remove(0);
    let mut line = vec![program];
    line.extend(strs(args));
    words.push(host.to_string());
    words.push(
        shlex::try_join(line.iter().copied())
            .context("an argument for the remote shell holds a NUL byte")?,
    );
    Ok((rsh, words))
}

/// Fails unless `host` is a host name or address a remote shell takes as
/// one (letters, digits, `.`, `-`, `_`, `:` of IPv6; not starting with
/// `-`, which would be read as an option).
pub fn check_host(host: &str) -> Result<()> {
    let ok = !host.is_empty()
        && host.len() <= 253
        && !host.starts_with('-')
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'));
    if !ok {
        bail!("`{host}` is not a host name or address");
    }
    Ok(())
}

/// The environment is process-wide: the tests that set it take turns.
#[cfg(test)]
static ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `f` with a remote shell that runs the line it is given on this
/// host, as ssh would on another: what storlab sends to "another host" is
/// tested for real, quoting included.
#[cfg(test)]
pub(crate) fn with_loopback_rsh<T>(f: impl FnOnce() -> T) -> T {
    let _env = ENV.lock().unwrap_or_else(|e| e.into_inner());
    std::env::set_var("STORLAB_RSH", r#"sh -c 'shift; eval "$1"' rsh"#);
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::env::remove_var("STORLAB_RSH");
    out.unwrap_or_else(|p| std::panic::resume_unwind(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_commands_are_one_quoted_line_after_the_host() {
        let _env = ENV.lock().unwrap_or_else(|e| e.into_inner());
        std::env::set_var("STORLAB_RSH", "ssh -p 2222");
        let (rsh, args) = remote_argv("h1", "mkdir", &["--", "/b r/it's"]).unwrap();
        std::env::remove_var("STORLAB_RSH");
        assert_eq!(rsh, "ssh");
        assert_eq!(args[..3], ["-p", "2222", "h1"]);
        assert_eq!(
            shlex::split(&args[3]).unwrap(),
            ["mkdir", "--", "/b r/it's"]
        );
    }

    #[test]
    fn the_remote_shell_comes_from_storlab_then_open_mpi_then_ssh() {
        let _env = ENV.lock().unwrap_or_else(|e| e.into_inner());
        std::env::remove_var("STORLAB_RSH");
        std::env::set_var("OMPI_MCA_plm_rsh_agent", "/opt/agent lab : rsh");
        assert_eq!(rsh().unwrap(), ["/opt/agent", "lab"]);
        std::env::remove_var("OMPI_MCA_plm_rsh_agent");
        assert_eq!(rsh().unwrap(), ["ssh", "-o", "BatchMode=yes"]);
        std::env::set_var("STORLAB_RSH", "ssh 'unclosed");
        assert!(rsh().is_err());
        std::env::remove_var("STORLAB_RSH");
    }

    #[test]
    fn host_names_that_a_shell_would_misread_are_refused() {
        for good in ["h1", "node-2.lab", "10.0.0.1", "fd00::1"] {
            assert!(check_host(good).is_ok(), "{good}");
        }
        for bad in ["", "-oProxyCommand=x", "h 1", "h;rm", "a/b", "$(x)"] {
            assert!(check_host(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn this_host_runs_commands_itself() {
        let here = Site::of(&crate::host::hostname());
        assert!(here.is_local());
        assert_eq!(here.script("echo \"$1\"", &["a b"]).unwrap(), "a b\n");
        assert!(!Site::of("storlab-no-such-host").is_local());
    }
}

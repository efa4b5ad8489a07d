//! Workload `command`: any program run in storlab's working directory on
//! the target, timed.
//!
//! `command` is an argument vector run directly (no shell, so nothing in it
//! is interpreted); only `shell = true`, written explicitly, runs it as one
//! string with `sh -c`. `{dir}` in any argument becomes the working
//! directory, which is also the command's current directory and
//! `$STORLAB_DIR`. Optional `prepare` and `cleanup` commands run untimed
//! before (ahead of the cache drop) and after every run. The run is timed
//! from spawn to reap: wall time (the primary metric), user and system time
//! and peak resident memory from `wait4`'s rusage, which covers the child
//! and every descendant it waited for. The kernel folds the resident size
//! of the image a child replaces at exec (storlab's) into its peak, so a
//! peak not above storlab's own is left out, with a warning, rather than
//! stored as the command's. A non-zero exit fails the run with the tail of
//! stderr.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};

use super::{Configure, RunContext, Workload, WorkloadConfig};
use crate::measure::RunOutput;
use crate::metric::catalogue as m;
use crate::params::units::format_bytes;
use crate::params::{declare, Fault, Params, Value};
use crate::process::child::{self, describe_status, ChildOptions, Finished};
use crate::process::StopFlag;
use crate::warning::Warning;

/// Lines of stderr kept with a failed run.
const STDERR_LINES: usize = 10;

/// A run's length is unknown beforehand; estimates count this much.
const NOMINAL_RUN: Duration = Duration::from_secs(5);

declare! {
    /// The parameters of a `command` workload.
    pub struct CommandParams {
        command: args => "the program and its arguments, e.g. [\"tar\", \"-xf\", \"/data/src.tar\"], run without a shell in the working directory; {dir} becomes that directory",
        shell: bool = "false" => "run command, prepare and cleanup as one string each with sh -c ({dir} is pasted single-quoted)",
        prepare: args => "run before every run, untimed and before the cache drop; a failure fails the run",
        cleanup: args => "run after every run, untimed; a failure fails the run",
        timeout: duration => "kill a command (its whole process group) after this long; the run fails",
    }
}

impl CommandParams {
    /// The command lines, under their keys.
    fn commands(&self) -> [(&'static str, &Option<Vec<String>>); 3] {
        [
            ("command", &self.command),
            ("prepare", &self.prepare),
            ("cleanup", &self.cleanup),
        ]
    }

    fn validate(&self) -> Result<(), Fault> {
        if self.command.is_none() {
            return Err((
                "command",
                "a command workload needs `command`, e.g. command = [\"tar\", \"-xf\", \"/data/src.tar\"]".into(),
            ));
        }
        for (key, argv) in self.commands() {
            let Some(argv) = argv else { continue };
            if argv.first().map_or(true, |s| s.trim().is_empty()) {
                return Err((key, format!("`{key}` names no program")));
            }
            if self.shell && argv.len() > 1 {
                return Err((
                    key,
                    format!("with shell = true, `{key}` is one string for sh -c, e.g. {key} = \"cd {{dir}} && make\""),
                ));
            }
            if !self.shell && argv.len() == 1 && looks_like_shell(&argv[0]) {
                return Err((
                    key,
                    format!("`{key}` is one string with spaces but is not run by a shell: write it as an argument list such as [\"tar\", \"-xf\", \"a.tar\"], or set shell = true"),
                ));
            }
        }
        if self.timeout == Some(Duration::ZERO) {
            return Err(("timeout", "timeout must be longer than 0".into()));
        }
        Ok(())
    }

    /// A relative program path (`./bench.sh`, `tools/run`) is resolved
    /// against the experiment file's directory; bare names are searched on
    /// PATH.
    fn resolve(&mut self, base: &Path, stored: &mut Params) {
        if self.shell {
            return;
        }
        for (key, argv) in [
            ("command", &mut self.command),
            ("prepare", &mut self.prepare),
            ("cleanup", &mut self.cleanup),
        ] {
            let Some(argv) = argv else { continue };
            let program = Path::new(&argv[0]);
            if program.is_relative() && argv[0].contains('/') && !argv[0].contains("{dir}") {
                let joined = base.join(program);
                let abs = std::fs::canonicalize(&joined).unwrap_or_else(|_| absolute(&joined));
                argv[0] = abs.display().to_string();
                stored.set(key, Value::List(argv.clone()));
            }
        }
    }
}

/// One string holding what looks like several words, and not a program
/// that exists under that very name.
fn looks_like_shell(s: &str) -> bool {
    s.trim().contains(char::is_whitespace) && !Path::new(s).exists()
}

/// `p` made absolute against the current directory, `.` steps dropped.
fn absolute(p: &Path) -> PathBuf {
    let p = std::env::current_dir()
        .map(|cwd| cwd.join(p))
        .unwrap_or_else(|_| p.to_path_buf());
    p.components().collect()
}

impl Configure for CommandParams {
    type Config = CommandParams;

    fn configure(mut self, base: &Path, stored: &mut Params) -> Result<CommandParams, Fault> {
        self.validate()?;
        self.resolve(base, stored);
        Ok(self)
    }
}

impl WorkloadConfig for CommandParams {
    /// A run's length is unknown beforehand.
    fn estimate(&self) -> Duration {
        NOMINAL_RUN
    }

    /// A command's time is its own.
    fn estimate_io(&self) -> Duration {
        Duration::ZERO
    }

    /// Unknown beforehand: the command's own errors tell.
    fn bytes_needed(&self) -> u64 {
        0
    }

    fn build(&self) -> Box<dyn Workload> {
        Box::new(CommandWorkload::new(self))
    }
}

pub struct CommandWorkload {
    command: Vec<String>,
    prepare: Option<Vec<String>>,
    cleanup: Option<Vec<String>>,
    shell: bool,
    timeout: Option<Duration>,
}

impl CommandWorkload {
    pub fn new(p: &CommandParams) -> CommandWorkload {
        CommandWorkload {
            command: p.command.clone().unwrap_or_default(),
            prepare: p.prepare.clone(),
            cleanup: p.cleanup.clone(),
            shell: p.shell,
            timeout: p.timeout,
        }
    }

    /// Runs one of the commands in `dir`; an error if it cannot start.
    fn spawn(&self, argv: &[String], dir: &Path, stop: &StopFlag) -> Result<Finished> {
        let mut cmd = build(argv, self.shell, dir);
        child::run(
            &mut cmd,
            ChildOptions {
                stdin: None,
                capture_stdout: false,
                stop,
                stop_signal: libc::SIGTERM,
                timeout: self.timeout,
            },
        )
        .map_err(|e| anyhow!("cannot run `{}`: {e}", program_name(argv, self.shell)))
    }

    /// Runs an untimed hook (prepare or cleanup); fails on a non-zero exit.
    fn hook(
        &self,
        which: &str,
        argv: Option<&Vec<String>>,
        dir: &Path,
        stop: &StopFlag,
    ) -> Result<()> {
        let Some(argv) = argv else { return Ok(()) };
        let f = self.spawn(argv, dir, stop)?;
        check(&f, self.timeout).map_err(|e| anyhow!("{which} command {e}"))
    }
}

/// The process for `argv`: directly, or one string through `sh -c`, where
/// `{dir}` is pasted single-quoted, so that a path with spaces or shell
/// characters stays one word and runs nothing.
fn build(argv: &[String], shell: bool, dir: &Path) -> Command {
    let dir_text = dir.display().to_string();
    let subst = |s: &String| s.replace("{dir}", &dir_text);
    let mut cmd = if shell {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(argv[0].replace("{dir}", &shell_quote(&dir_text)));
        c
    } else {
        let mut c = Command::new(subst(&argv[0]));
        c.args(argv[1..].iter().map(subst));
        c
    };
    cmd.current_dir(dir).env("STORLAB_DIR", dir);
    cmd
}

/// `s` as one word for sh: single-quoted, a `'` inside as `'\''`.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn program_name(argv: &[String], shell: bool) -> String {
    if shell {
        "sh -c".into()
    } else {
        argv[0].clone()
    }
}

/// Ok for exit status 0; otherwise why, with the tail of stderr.
fn check(f: &Finished, timeout: Option<Duration>) -> Result<()> {
    if f.timed_out {
        let t = timeout.map(|t| t.as_secs_f64()).unwrap_or_default();
        bail!("timed out after {t} s and was killed");
    }
    if f.status.success() {
        return Ok(());
    }
    let tail = f.stderr_tail(STDERR_LINES);
    let said = if tail.is_empty() {
        "nothing on stderr".to_string()
    } else {
        format!("stderr: {tail}")
    };
    bail!("failed with {} ({said})", describe_status(f.status))
}

impl Workload for CommandWorkload {
    fn prepare(&mut self, dir: &Path, cx: &RunContext) -> Result<()> {
        self.hook("prepare", self.prepare.as_ref(), dir, &cx.stop)
    }

    fn run(&mut self, dir: &Path, cx: &RunContext) -> Result<RunOutput> {
        let f = self.spawn(&self.command, dir, &cx.stop)?;
        // Stopped by a signal: recorded as interrupted, whatever the exit.
        if !cx.stop.is_raised() {
            check(&f, self.timeout)
                .map_err(|e| anyhow!("`{}` {e}", program_name(&self.command, self.shell)))?;
        }
        let mut out = RunOutput {
            metrics: vec![
                m::WALL_S.value(f.wall.as_secs_f64()),
                m::CPU_USER_S.value(f.user_s),
                m::CPU_SYS_S.value(f.sys_s),
            ],
            ..Default::default()
        };
        if f.strays > 0 {
            out.warnings.push(Warning::note(format!(
                "the command left {} process(es) running when it ended; storlab killed them, since they would have kept the target busy",
                f.strays
            )));
        }
        match child::own_peak_rss_bytes() {
            Some(floor) if f.max_rss_bytes <= floor => out.warnings.push(Warning::note(format!(
                "peak memory not recorded: the kernel reports {}, which is storlab's own resident size carried over at exec; the command used at most that",
                format_bytes(f.max_rss_bytes as f64)
            ))),
            _ => out
                .metrics
                .push(m::MAX_RSS_BYTES.value(f.max_rss_bytes as f64)),
        }
        Ok(out)
    }

    fn cleanup(&mut self, dir: &Path) -> Result<()> {
        // Cleanup runs to its end even after an interrupt.
        self.hook("cleanup", self.cleanup.as_ref(), dir, &StopFlag::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, Value)]) -> Params {
        let mut p = Params::defaults(CommandParams::PARAMS);
        for (k, v) in pairs {
            p.set(k, v.clone());
        }
        p
    }

    fn validate(p: &Params) -> Result<(), Fault> {
        CommandParams::from_params(p)?.validate()
    }

    fn list(items: &[&str]) -> Value {
        Value::List(items.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn an_argument_vector_is_passed_verbatim_without_a_shell() {
        let dir = Path::new("/w/d");
        let argv: Vec<String> = ["echo", "a; rm -rf {dir}", "$HOME"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let cmd = build(&argv, false, dir);
        assert_eq!(cmd.get_program(), "echo");
        let args: Vec<_> = cmd.get_args().collect();
        assert_eq!(args, ["a; rm -rf /w/d", "$HOME"]);
        assert_eq!(cmd.get_current_dir(), Some(dir));
        let sh = build(&["cd {dir} && ls".to_string()], true, dir);
        assert_eq!(sh.get_program(), "sh");
        assert_eq!(sh.get_args().collect::<Vec<_>>(), ["-c", "cd '/w/d' && ls"]);
    }

    #[test]
    fn with_a_shell_dir_stays_one_word_whatever_it_holds() {
        let root = tempfile::tempdir().unwrap();
        let odd = root.path().join("it's a dir;$(touch pwned)");
        std::fs::create_dir(&odd).unwrap();
        let mut sh = build(&["printf %s {dir}".to_string()], true, &odd);
        let out = sh.output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            odd.display().to_string()
        );
        assert!(!odd.join("pwned").exists() && !root.path().join("pwned").exists());
    }

    #[test]
    fn shell_text_needs_shell_true_and_shell_needs_one_string() {
        let p = params(&[("command", list(&["tar -xf a.tar"]))]);
        assert!(validate(&p).unwrap_err().1.contains("shell = true"));
        let p = params(&[
            ("command", list(&["tar", "-xf"])),
            ("shell", Value::Bool(true)),
        ]);
        assert!(validate(&p).unwrap_err().1.contains("one string"));
        let p = params(&[
            ("command", list(&["tar -xf a.tar"])),
            ("shell", Value::Bool(true)),
        ]);
        assert!(validate(&p).is_ok());
        assert!(validate(&params(&[])).is_err());
    }

    #[test]
    fn relative_programs_resolve_against_the_experiment_directory() {
        let mut p = params(&[
            ("command", list(&["./bench.sh", "x"])),
            ("prepare", list(&["tar", "x"])),
        ]);
        let c = CommandParams::from_params(&p).unwrap();
        let c = c.configure(Path::new("/srv/exp"), &mut p).unwrap();
        assert_eq!(c.command.unwrap()[0], "/srv/exp/bench.sh");
        assert_eq!(c.prepare.unwrap()[0], "tar");
        // The stored rows hold the resolved path; resolving them again
        // (as a sweep's variant is) changes nothing.
        assert_eq!(p.get("command"), Some(&list(&["/srv/exp/bench.sh", "x"])));
        let again = CommandParams::from_params(&p).unwrap();
        let again = again.configure(Path::new("/elsewhere"), &mut p).unwrap();
        assert_eq!(again.command.unwrap()[0], "/srv/exp/bench.sh");
    }
}

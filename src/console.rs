//! Every word storlab says to a person goes through here: results to
//! stdout, everything else (progress, notes, warnings, errors, and with
//! `-v` the external commands it runs) to stderr, at the level `-q`/`-v`
//! chose.
//!
//! Colour (verdicts, warnings, errors) is written as ANSI styles
//! (anstyle) through anstream, which passes them on or strips them per
//! stream: `--color always|never`, else NO_COLOR, CLICOLOR_FORCE, and
//! whether the stream is a terminal. Data (exports, reports, JSON) is
//! written as it is, never stripped.
//!
//! Nothing here panics on a closed stream, as `println!` and `errln!`
//! do. Results are printed once everything is recorded, so a reader that
//! went away (`storlab show | head`) ends the process quietly with status
//! 0. A closed stderr during a campaign (`storlab run 2>&1 | head -1`)
//! means nobody is watching any more: the running campaign is interrupted
//! as by SIGTERM — its finished runs stay stored, its targets are torn down
//! and it is marked interrupted, resumable — instead of dying mid-run.

use std::ffi::OsStr;
use std::io::Write;
use std::process::Command;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

/// How much storlab says on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Results, errors and notes that change what the numbers mean.
    Quiet = 0,
    /// Also progress and "wrote FILE".
    Normal = 1,
    /// Also every external command, as a line to paste into a shell.
    Verbose = 2,
}

static LEVEL: AtomicU8 = AtomicU8::new(Level::Normal as u8);

/// The narrowest width results are laid out for: narrower (`COLUMNS=1`, a
/// split pane) gets this layout, which the terminal wraps, rather than
/// one character per line.
pub const MIN_COLUMNS: usize = 40;

/// The width results are fitted to: `COLUMNS` when set to a number (so
/// that `COLUMNS=100 storlab show | less` fits too), else the terminal's
/// when stdout is one, at least [`MIN_COLUMNS`]; none for a file or a
/// pipe, which get everything.
pub fn columns() -> Option<usize> {
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
    {
        return (n > 0).then_some(n.max(MIN_COLUMNS));
    }
    terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| (w.0 as usize).max(MIN_COLUMNS))
}

/// Called when a write to stderr finds its reader gone: the running
/// campaign's interruption, registered by whoever runs one (this module
/// sits below the campaign and knows nothing of it).
static READER_GONE: OnceLock<fn()> = OnceLock::new();

/// Registers what a closed stderr does (the first registration holds).
pub fn when_reader_gone(hook: fn()) {
    let _ = READER_GONE.set(hook);
}

pub fn set_level(level: Level) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

pub fn level() -> Level {
    match LEVEL.load(Ordering::Relaxed) {
        0 => Level::Quiet,
        1 => Level::Normal,
        _ => Level::Verbose,
    }
}

pub fn quiet() -> bool {
    level() == Level::Quiet
}

/// The `--color` of the command line, read before clap parses it so that
/// clap's own help and errors follow it too: `Some` for `--color always`
/// or `never` (`--color=WHEN` too), `None` for `auto` or none given.
pub fn color_in_args<I, S>(args: I) -> Option<anstream::ColorChoice>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<String> = args
        .into_iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .take_while(|a| a != "--")
        .collect();
    let mut when = None;
    for (i, a) in args.iter().enumerate() {
        let value = match a.strip_prefix("--color") {
            Some("") => args.get(i + 1).map(String::as_str),
            Some(v) => v.strip_prefix('='),
            None => None,
        };
        if let Some(v) = value {
            when = Some(v.to_string());
        }
    }
    match when.as_deref() {
        Some("always") => Some(anstream::ColorChoice::Always),
        Some("never") => Some(anstream::ColorChoice::Never),
        _ => None,
    }
}

/// Colours every stream (`always`) or none (`never`) from now on; `None`
/// leaves it to each stream's terminal and NO_COLOR / CLICOLOR_FORCE.
pub fn set_color(choice: Option<anstream::ColorChoice>) {
    choice.unwrap_or(anstream::ColorChoice::Auto).write_global();
}

/// Writes command output to stdout as it is (data: exports, reports,
/// JSON). A closed pipe ends the process with status 0, as `head` expects
/// of its writer; everything is recorded before a command prints its
/// results, so nothing is lost.
pub fn to_stdout(text: &str) {
    write_stdout(std::io::stdout().lock(), text)
}

/// Writes to stdout what a command says while it works on something that
/// must be finished (`cleanup`'s undoing): when the reader has gone (`|
/// head -1`, `| grep -q`) or stdout fails otherwise, the text is lost and
/// the work goes on to its end and its own exit status.
pub fn to_stdout_while_working(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Writes text for people to stdout (tables, verdicts), its styles passed
/// on or stripped as the colour choice says.
pub fn to_stdout_styled(text: &str) {
    write_stdout(anstream::stdout().lock(), text)
}

fn write_stdout(mut out: impl Write, text: &str) {
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        to_stderr(&format!("error: writing to stdout: {e}\n"));
        std::process::exit(1);
    }
}

/// Writes to stderr and never fails. When the reader has gone (a broken
/// pipe), a running campaign is interrupted; other errors (a terminal that
/// hung up, a full disk behind `2>file`) lose the text and nothing else.
/// Everything on stderr is for people: styles are passed on or stripped
/// as the colour choice says.
pub fn to_stderr(text: &str) {
    let mut err = anstream::stderr().lock();
    if let Err(e) = err.write_all(text.as_bytes()).and_then(|()| err.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            if let Some(hook) = READER_GONE.get() {
                hook();
            }
        }
    }
}

/// `print!` for results, with [`to_stdout`]'s behaviour on a closed pipe.
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => { $crate::console::to_stdout(&format!($($t)*)) };
}

/// `println!` for results, with [`to_stdout`]'s behaviour on a closed pipe.
#[macro_export]
macro_rules! outln {
    () => { $crate::console::to_stdout("\n") };
    ($($t:tt)*) => { $crate::console::to_stdout(&format!("{}\n", format_args!($($t)*))) };
}

/// `errln!` that never panics (see [`to_stderr`]).
#[macro_export]
macro_rules! errln {
    ($($t:tt)*) => { $crate::console::to_stderr(&format!("{}\n", format_args!($($t)*))) };
}

/// Says "wrote FILE" unless `-q`.
pub fn wrote(path: &std::path::Path) {
    if !quiet() {
        errln!("wrote {}", path.display());
    }
}

/// With `-v`, prints `cmd` on stderr as a line a person can paste into a
/// shell: its working directory and environment first when it sets them.
pub fn echo(cmd: &Command) {
    if level() >= Level::Verbose {
        errln!("{}", shell_line(cmd));
    }
}

/// With `-v`, prints `program args…` as [`echo`] does.
pub fn echo_args<S: AsRef<OsStr>>(program: &str, args: &[S]) {
    if level() >= Level::Verbose {
        let mut cmd = Command::new(program);
        cmd.args(args);
        errln!("{}", shell_line(&cmd));
    }
}

/// `cd DIR && VAR=value program 'arg with space'`, quoted for sh.
pub fn shell_line(cmd: &Command) -> String {
    let mut parts = Vec::new();
    if let Some(dir) = cmd.get_current_dir() {
        parts.push(format!("cd {} &&", quote(dir.as_os_str())));
    }
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => parts.push(format!("{}={}", k.to_string_lossy(), quote(v))),
            None => parts.push(format!("-u {}", k.to_string_lossy())),
        }
    }
    if parts.iter().any(|p| p.starts_with("-u ")) {
        // `env -u VAR` is how a shell line unsets one variable for a command.
        let at = parts.iter().position(|p| !p.ends_with("&&")).unwrap_or(0);
        parts.insert(at, "env".into());
    }
    parts.push(quote(cmd.get_program()));
    parts.extend(cmd.get_args().map(quote));
    parts.join(" ")
}

fn quote(s: &OsStr) -> String {
    let s = s.to_string_lossy();
    shlex::try_quote(&s)
        .map(|q| q.into_owned())
        .unwrap_or_else(|_| format!("'{}'", s.replace('\0', "")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn color_is_read_from_the_command_line_before_clap() {
        use anstream::ColorChoice::{Always, Never};
        assert_eq!(
            color_in_args(["storlab", "show", "--color", "always"]),
            Some(Always)
        );
        assert_eq!(
            color_in_args(["storlab", "--color=never", "show"]),
            Some(Never)
        );
        assert_eq!(color_in_args(["storlab", "--color=auto"]), None);
        assert_eq!(color_in_args(["storlab", "show"]), None);
        // The last one holds; after `--` it is an argument, not the option.
        assert_eq!(
            color_in_args(["s", "--color=never", "--color", "always"]),
            Some(Always)
        );
        assert_eq!(color_in_args(["s", "--", "--color=never"]), None);
    }

    #[test]
    fn commands_are_shown_as_shell_lines() {
        let mut cmd = Command::new("mount");
        cmd.args(["-t", "tmpfs", "-o", "size=1G", "storlab tmpfs", "/mnt/a b"]);
        assert_eq!(
            shell_line(&cmd),
            "mount -t tmpfs -o 'size=1G' 'storlab tmpfs' '/mnt/a b'"
        );
        let mut cmd = Command::new("pg_ctl");
        cmd.current_dir("/srv/x")
            .env("PGDATA", "/srv/x/data")
            .arg("start");
        assert_eq!(
            shell_line(&cmd),
            "cd /srv/x && PGDATA=/srv/x/data pg_ctl start"
        );
        let mut cmd = Command::new("fio");
        cmd.env_remove("FIO_X").arg("--name=it's");
        assert_eq!(shell_line(&cmd), "env -u FIO_X fio \"--name=it's\"");
    }
}

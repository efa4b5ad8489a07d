//! Running a program of another root: chrooted into it and, for what serves
//! or reaches a target, inside a network namespace of its own — only the
//! network namespace (setns), never a new mount namespace as `ip netns
//! exec` makes, so that a mount the program makes (the FUSE client's) is
//! one the workload sees. The environment is cleared to what a Debian
//! root expects: the host's `LD_*` or `PATH` must not reach its programs.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

/// The PATH of a program run in a root.
const ROOT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Who a program of a root runs as, and where: an unprivileged user of
/// the root's own (`postgres`, by its uid in the root's /etc/passwd) and a
/// working directory as the root sees it. Set after the chroot, since the
/// chroot itself needs root.
#[derive(Debug, Clone, Default)]
pub struct Within {
    /// uid and gid.
    pub user: Option<(u32, u32)>,
    pub cwd: Option<std::path::PathBuf>,
}

/// `p` for a system call.
fn c_path(p: &Path) -> Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .with_context(|| format!("{} is no path a chroot takes", p.display()))
}

/// `program` with the environment a Debian root expects, and only that.
fn in_root_env(program: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear()
        .env("PATH", ROOT_PATH)
        .env("LANG", "C.UTF-8")
        .env("HOME", "/root");
    cmd
}

/// A command running `program` (a path as the root sees it) chrooted into
/// `dir`, in the network namespace `netns` (its file, /run/netns/NAME)
/// when given.
pub fn command(dir: &Path, netns: Option<&Path>, program: &Path) -> Result<Command> {
    command_within(dir, netns, program, &Within::default())
}

/// As [`command`], as `within` says.
pub fn command_within(
    dir: &Path,
    netns: Option<&Path>,
    program: &Path,
    within: &Within,
) -> Result<Command> {
    let root = c_path(dir)?;
    let cwd = c_path(within.cwd.as_deref().unwrap_or(Path::new("/")))?;
    let user = within.user;
    let ns = match netns {
        Some(p) => Some(
            File::open(p).with_context(|| format!("opening network namespace {}", p.display()))?,
        ),
        None => None,
    };
    let mut cmd = in_root_env(program);
    // SAFETY: between fork and exec only async-signal-safe system calls
    // (setns, chroot, chdir, setgroups, setgid, setuid) on memory
    // allocated before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let fail = || Err(std::io::Error::last_os_error());
            if let Some(ns) = &ns {
                if libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) != 0 {
                    return fail();
                }
            }
            if libc::chroot(root.as_ptr()) != 0 || libc::chdir(cwd.as_ptr()) != 0 {
                return fail();
            }
            if let Some((uid, gid)) = user {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0
                {
                    return fail();
                }
            }
            Ok(())
        });
    }
    Ok(cmd)
}

/// A command running `program` chrooted into the tree at `dir` in a
/// mount namespace of its own, where the host's /proc and /dev are bound
/// into the tree: what a program needs to run at all (gluster's command
/// line dies without /proc), with nothing left mounted in the tree once
/// it ends — the namespace, and its mounts, end with it.
pub fn isolated(dir: &Path, program: &Path) -> Result<Command> {
    let root = c_path(dir)?;
    let binds = [
        (c_path(Path::new("/proc"))?, c_path(&dir.join("proc"))?),
        (c_path(Path::new("/dev"))?, c_path(&dir.join("dev"))?),
    ];
    let mut cmd = in_root_env(program);
    // SAFETY: between fork and exec only async-signal-safe system calls
    // (unshare, mount, chroot, chdir) on memory allocated before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let fail = || Err(std::io::Error::last_os_error());
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return fail();
            }
            let none = std::ptr::null();
            if libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                none.cast(),
            ) != 0
            {
                return fail();
            }
            for (from, to) in &binds {
                if libc::mount(from.as_ptr(), to.as_ptr(), none, libc::MS_BIND, none.cast()) != 0 {
                    return fail();
                }
            }
            if libc::chroot(root.as_ptr()) != 0 || libc::chdir(c"/".as_ptr()) != 0 {
                return fail();
            }
            Ok(())
        });
    }
    Ok(cmd)
}

/// The first line `program --version` prints in the tree at `dir`, run
/// [`isolated`] (a version needs no network).
pub fn version_line(dir: &Path, program: &Path) -> Result<String> {
    let mut cmd = isolated(dir, program)?;
    cmd.arg("--version");
    let shown = format!("chroot {} {} --version", dir.display(), program.display());
    let out = crate::provision::cmd::run_command(&mut cmd)
        .with_context(|| format!("running `{shown}`"))?;
    out.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(String::from)
        .with_context(|| format!("`{shown}` printed nothing"))
}

//! The unprivileged OS account PostgreSQL runs as when storlab runs as root
//! (the server refuses to run as root): looking it up, handing files to it,
//! checking it can reach the cluster's directory, and making a `Command`
//! run as it. Without root, everything runs as the invoking user.

use std::ffi::{CStr, CString};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

/// An OS account to run the server as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

impl Account {
    /// The account to run as: `name` when storlab is root, none otherwise.
    pub fn for_server(name: &str) -> Result<Option<Account>> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Ok(None);
        }
        match lookup(name)? {
            Some(a) if a.uid == 0 => bail!(
                "os_user `{name}` is root, and PostgreSQL refuses to run as root; name an unprivileged user"
            ),
            Some(a) => Ok(Some(a)),
            None => bail!(
                "storlab runs as root and PostgreSQL must run as an unprivileged user, but user `{name}` \
                 does not exist; install PostgreSQL (it creates `postgres`), create one with \
                 `useradd --system {name}`, or set `os_user`"
            ),
        }
    }

    /// The account `name` of the root at `tree` (its own /etc/passwd: the
    /// uid Debian gave `postgres` there need not be the host's).
    pub fn in_root(tree: &Path, name: &str) -> Result<Account> {
        let passwd = tree.join("etc/passwd");
        let text = std::fs::read_to_string(&passwd)
            .with_context(|| format!("reading {}", passwd.display()))?;
        let found = text.lines().find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() >= 4 && f[0] == name).then(|| (f[2].parse().ok(), f[3].parse().ok()))
        });
        match found {
            Some((Some(uid), Some(gid))) if uid != 0 => Ok(Account {
                name: name.to_string(),
                uid,
                gid,
            }),
            Some((Some(0), _)) => bail!("os_user `{name}` is root in {}; PostgreSQL refuses to run as root", tree.display()),
            _ => bail!(
                "the root {} has no user `{name}` (its postgresql package creates `postgres`); set `os_user` to a user of that root",
                tree.display()
            ),
        }
    }

    /// Makes `cmd` run as this account (uid, gid, no supplementary groups).
    pub fn apply(&self, cmd: &mut Command) {
        cmd.uid(self.uid).gid(self.gid);
    }

    /// Hands `path` (one file or directory, not recursive) to this account.
    pub fn chown(&self, path: &Path) -> Result<()> {
        std::os::unix::fs::chown(path, Some(self.uid), Some(self.gid))
            .with_context(|| format!("handing {} to user `{}`", path.display(), self.name))
    }

    /// Fails, naming the directory at fault, unless this account can reach
    /// `path` (search permission on every ancestor).
    pub fn check_reachable(&self, path: &Path) -> Result<()> {
        let path = path
            .canonicalize()
            .with_context(|| format!("resolving {}", path.display()))?;
        for dir in path.ancestors().collect::<Vec<_>>().into_iter().rev() {
            let meta =
                std::fs::metadata(dir).with_context(|| format!("reading {}", dir.display()))?;
            let mode = meta.mode();
            let ok = if meta.uid() == self.uid {
                mode & 0o100 != 0
            } else if meta.gid() == self.gid {
                mode & 0o010 != 0
            } else {
                mode & 0o001 != 0
            };
            if !ok {
                bail!(
                    "user `{}` cannot reach {}: {} has mode {:o} and belongs to uid {}; \
                     PostgreSQL runs as `{}` (storlab runs as root), so grant search permission \
                     (`chmod o+x {}`) or choose a target path it can reach",
                    self.name,
                    path.display(),
                    dir.display(),
                    mode & 0o7777,
                    meta.uid(),
                    self.name,
                    dir.display()
                );
            }
        }
        Ok(())
    }
}

/// Looks a user up in the password database.
fn lookup(name: &str) -> Result<Option<Account>> {
    let cname = CString::new(name).with_context(|| format!("user name `{name}`"))?;
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0u8; 16384];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; buf outlives the use of pwd's strings.
    let rc = unsafe {
        libc::getpwnam_r(
            cname.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 {
        bail!(
            "looking up user `{name}`: {}",
            std::io::Error::from_raw_os_error(rc)
        );
    }
    if result.is_null() {
        return Ok(None);
    }
    // SAFETY: pw_name points into buf, NUL-terminated by getpwnam_r.
    let found = unsafe { CStr::from_ptr(pwd.pw_name) }
        .to_string_lossy()
        .into_owned();
    Ok(Some(Account {
        name: found,
        uid: pwd.pw_uid,
        gid: pwd.pw_gid,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_exists_and_a_made_up_user_does_not() {
        assert_eq!(lookup("root").unwrap().map(|a| a.uid), Some(0));
        assert_eq!(lookup("storlab-no-such-user").unwrap(), None);
        assert!(lookup("bad\0name").is_err());
    }

    #[test]
    fn an_unreachable_ancestor_is_named() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let inner = d.path().join("a/b");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(d.path().join("a"), std::fs::Permissions::from_mode(0o700))
            .unwrap();
        let nobody = Account {
            name: "nobody".into(),
            uid: 65534,
            gid: 65534,
        };
        let err = nobody.check_reachable(&inner).unwrap_err().to_string();
        assert!(err.contains("/a has mode 700"), "{err}");
    }

    #[test]
    fn a_root_s_user_is_read_from_its_own_passwd() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("etc")).unwrap();
        std::fs::write(
            d.path().join("etc/passwd"),
            "root:x:0:0:root:/root:/bin/sh\npostgres:x:100:102:PostgreSQL administrator:/var/lib/postgresql:/bin/bash\n",
        )
        .unwrap();
        let a = Account::in_root(d.path(), "postgres").unwrap();
        assert_eq!((a.uid, a.gid), (100, 102));
        assert!(Account::in_root(d.path(), "root").is_err());
        let e = Account::in_root(d.path(), "pg").unwrap_err();
        assert!(format!("{e:#}").contains("no user `pg`"), "{e:#}");
    }
}

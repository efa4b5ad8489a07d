//! Software from another root: a target's daemons (glusterd) or a
//! workload's server (PostgreSQL) taken from a Debian release other than
//! the host's, or from a tree the user made, beside the host's own — two
//! releases of one system side by side in one campaign.
//!
//! - [`spec`]: what `root = "host" | "debian:SUITE" | "/path"` says;
//! - [`software`]: each system's packages, programs and version;
//! - [`cache`] and [`build`]: Debian roots built by debootstrap, cached
//!   under the state directory by suite and package set, reused;
//! - [`preflight`]: what `check` and `run` refuse before anything is made;
//! - [`jail`], [`enter`]: a root at work — overlay, bind mounts, a network
//!   namespace and address ([`crate::provision::netns`]), programs chrooted
//!   into it; what `storlab cleanup` does with an unfinished build is
//!   [`crate::provision::unfinished`]'s.
//!
//! [`Root`] is a root ready for use: its tree, the version its programs
//! report, and (for a cached root) a shared lock that keeps `storlab
//! cleanup --roots` from removing it while the campaign lives.

pub mod build;
pub mod cache;
pub mod enter;
pub mod jail;
pub mod preflight;
pub mod software;
pub mod spec;

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

pub use cache::Cache;
pub use jail::Jail;
pub use software::Software;
pub use spec::RootSpec;

use crate::process::StopFlag;
use crate::provision::hostlock::flock;
use crate::provision::journal::Journal;

/// The Debian mirror roots are built from: `$STORLAB_DEBIAN_MIRROR`, else
/// Debian's own redirector.
pub fn mirror() -> String {
    std::env::var("STORLAB_DEBIAN_MIRROR")
        .ok()
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| "http://deb.debian.org/debian".into())
}

/// What a target or workload takes from a root: which root, for which
/// software.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RootNeed {
    pub spec: RootSpec,
    pub software: Software,
}

/// The debootstrap that builds roots: `$STORLAB_DEBOOTSTRAP` (another
/// build of it, one that knows a newer suite), else `debootstrap`.
pub fn debootstrap() -> String {
    std::env::var("STORLAB_DEBOOTSTRAP")
        .ok()
        .filter(|d| !d.trim().is_empty())
        .unwrap_or_else(|| "debootstrap".into())
}

/// A root ready for use by one kind of software.
#[derive(Debug)]
pub struct Root {
    pub spec: RootSpec,
    pub software: Software,
    /// Its tree (`/` for the host).
    pub tree: PathBuf,
    /// The release its programs report (`11.1`).
    pub version: String,
    /// Held shared while the root is in use (a cached root).
    _lock: Option<File>,
}

impl Root {
    /// The root `spec` for `software`, built first when it is a Debian
    /// root not in the cache yet (journaled in `journal`, stopped by
    /// `stop`), and checked: its programs are there and run.
    pub fn obtain(
        spec: &RootSpec,
        software: Software,
        journal: &Journal,
        stop: &StopFlag,
    ) -> Result<Root> {
        match spec {
            RootSpec::Host => Root::host(software),
            RootSpec::Tree(tree) => Root::tree(tree, software),
            RootSpec::Debian { suite } => cached_or_built(suite, software, journal, stop),
        }
    }

    /// The root `spec` for `software` if it is ready without building:
    /// the host, a tree, or a Debian root in the cache. What `check` and
    /// a resumed campaign name variants by.
    pub fn ready(spec: &RootSpec, software: Software) -> Option<Root> {
        match spec {
            RootSpec::Debian { suite } => {
                let cache = Cache::here();
                let key = Cache::key(suite, software);
                let manifest = cache.manifest(&key)?;
                Some(Root {
                    spec: spec.clone(),
                    software,
                    tree: cache.root_dir(&key).join("tree"),
                    version: manifest.version,
                    _lock: None,
                })
            }
            RootSpec::Host => Root::host(software).ok(),
            RootSpec::Tree(tree) => Root::tree(tree, software).ok(),
        }
    }

    /// A tree the user made, checked.
    fn tree(tree: &Path, software: Software) -> Result<Root> {
        Ok(Root {
            version: check_tree(tree, software)?,
            spec: RootSpec::Tree(tree.to_path_buf()),
            software,
            tree: tree.to_path_buf(),
            _lock: None,
        })
    }

    /// The host's own programs and their version.
    fn host(software: Software) -> Result<Root> {
        let program = software.version_program(Path::new("/"))?;
        let line = crate::provision::cmd::version(&program.to_string_lossy(), &["--version"])
            .with_context(|| format!("{} --version printed nothing", program.display()))?;
        Ok(Root {
            version: software
                .version_of(&line)
                .with_context(|| format!("no version in `{line}`"))?,
            spec: RootSpec::Host,
            software,
            tree: PathBuf::from("/"),
            _lock: None,
        })
    }

    /// `Gluster 11.1`.
    pub fn release(&self) -> String {
        self.software.named(&self.version)
    }

    /// `root debian:trixie (Gluster 11.1)`, for messages.
    pub fn describe(&self) -> String {
        format!("root {} ({})", self.spec, self.release())
    }
}

/// A Debian root from the cache, built first if it is not there; held
/// shared for as long as the [`Root`] lives.
fn cached_or_built(
    suite: &str,
    software: Software,
    journal: &Journal,
    stop: &StopFlag,
) -> Result<Root> {
    let cache = Cache::here();
    let key = Cache::key(suite, software);
    let lock = cache.lock_file(&key)?;
    flock(&lock, libc::LOCK_SH).context("locking the roots' cache")?;
    if cache.manifest(&key).is_none() {
        // Built once: another campaign building it meanwhile is waited for.
        flock(&lock, libc::LOCK_EX).context("locking the roots' cache")?;
        if cache.manifest(&key).is_none() {
            outln!(
                "building root debian:{suite} for {} (debootstrap from {}; once, cached in {})",
                software.display(),
                mirror(),
                cache.dir().display()
            );
            let m = build::build(&cache, suite, software, journal, stop)?;
            outln!(
                "built root debian:{suite}: {} in {:.0} s, {}",
                software.named(&m.version),
                m.build_seconds,
                crate::params::units::format_bytes(m.bytes as f64)
            );
        }
        flock(&lock, libc::LOCK_SH).context("locking the roots' cache")?;
    }
    let manifest = cache
        .manifest(&key)
        .context("the built root has no manifest")?;
    let tree = cache.root_dir(&key).join("tree");
    let version = check_tree(&tree, software).with_context(|| {
        format!("the cached root {key} no longer works; remove it (`storlab cleanup --roots --remove {key}`) and it is built again")
    })?;
    if version != manifest.version {
        bail!(
            "the cached root {key} reports {} {version}, not {} as when it was built; remove it (`storlab cleanup --roots --remove {key}`)",
            software.display(),
            manifest.version
        );
    }
    Ok(Root {
        spec: RootSpec::Debian {
            suite: suite.to_string(),
        },
        software,
        tree,
        version,
        _lock: Some(lock),
    })
}

/// Checks that `tree` holds `software`'s programs and that they run:
/// the version they report.
pub fn check_tree(tree: &Path, software: Software) -> Result<String> {
    if !tree.is_dir() {
        bail!(
            "{} is not a directory; give the path of a root tree (see docs/targets.md, roots)",
            tree.display()
        );
    }
    software.programs_in(tree)?;
    let program = software.version_program(tree)?;
    let line = enter::version_line(tree, &program)?;
    software.version_of(&line).with_context(|| {
        format!(
            "`{} --version` in {} printed `{line}`, which names no {} release",
            program.display(),
            tree.display(),
            software.display()
        )
    })
}

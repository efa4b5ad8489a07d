//! Where the commands write files: never over the results store (or the
//! files SQLite and storlab keep beside it), however the path reaches it
//! (the same name, a symlink, a hard link); and files storlab makes of its
//! own (`init`, `man DIR`) replace what is at their name rather than write
//! through a symlink found there.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::store::files;

/// The directory a path's file is in (`.` for a bare name).
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `path` with its directory resolved (the file itself need not exist).
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = std::fs::canonicalize(path) {
        return Some(p);
    }
    Some(
        std::fs::canonicalize(dir_of(path))
            .ok()?
            .join(path.file_name()?),
    )
}

/// What `output` is to the store at `db`, if it is part of it: by its
/// name (the store, its journals, lock, spools, an import's copy — see
/// [`crate::store::files`]) or as the same file as one of them (a
/// symlink, a hard link).
fn store_part(output: &Path, db: &Path) -> Option<(&'static str, PathBuf)> {
    let db_name = db.file_name()?;
    let db_dir = std::fs::canonicalize(dir_of(db)).ok()?;
    if let Some(out) = resolved(output) {
        if out.parent() == Some(db_dir.as_path()) {
            if let Some(what) = out.file_name().and_then(|n| files::part(db_name, n)) {
                return Some((what, out));
            }
        }
    }
    let out_id = std::fs::metadata(output).ok().map(|m| (m.dev(), m.ino()))?;
    std::fs::read_dir(&db_dir).ok()?.flatten().find_map(|e| {
        let what = files::part(db_name, &e.file_name())?;
        let id = std::fs::metadata(e.path()).ok().map(|m| (m.dev(), m.ino()));
        (id == Some(out_id)).then(|| (what, e.path()))
    })
}

/// Refuses `output` when writing it would overwrite the store at `db`.
pub fn refuse_store(output: &Path, db: &Path) -> Result<()> {
    let Some((what, file)) = store_part(output, db) else {
        return Ok(());
    };
    let what = match what == "the results store" {
        true => what.to_string(),
        false => format!("part of the results store ({}: {what})", file.display()),
    };
    bail!(
        "{} is {what}; writing there would destroy recorded results. Name another output file (e.g. report.html)",
        output.display(),
    );
}

/// Refuses an `-o` file that is the store, before any work is done.
pub fn refuse_output_store(output: Option<&Path>, db: &Path) -> Result<()> {
    output.map_or(Ok(()), |p| refuse_store(p, db))
}

/// Writes `bytes` as the file `path`: into a new file beside it, then
/// renamed over it, so that a symlink at `path` is replaced, never
/// followed, and a failed write leaves what was there.
pub fn replace_file(path: &Path, bytes: &[u8]) -> Result<()> {
    write_replacing(path, |out| Ok(out.write_all(bytes)?))
}

/// Writes what `write` makes as the file `path`, as [`replace_file`]
/// does: into a new file beside it (`.storlab-…`, removed if anything
/// fails), renamed over `path` only once all of it is written, so that a
/// write that fails midway (a full disk, a store that cannot be read
/// further) leaves no partial file and keeps what `path` held.
pub fn write_replacing(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let dir = dir_of(path);
    let mut tmp = tempfile::Builder::new()
        .prefix(".storlab-")
        .tempfile_in(dir)
        .with_context(|| format!("creating a file in {}", dir.display()))?;
    {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, tmp.as_file_mut());
        write(&mut out)
            .and_then(|()| Ok(out.flush()?))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o644);
    tmp.as_file()
        .set_permissions(mode)
        .with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_is_refused_by_name_link_and_companion() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("s.db");
        std::fs::write(&db, b"store").unwrap();
        std::os::unix::fs::symlink(&db, d.path().join("link.db")).unwrap();
        std::fs::hard_link(&db, d.path().join("hard.db")).unwrap();
        std::fs::write(d.path().join("s.db.spool-3"), b"spooled").unwrap();
        std::os::unix::fs::symlink(d.path().join("s.db.spool-3"), d.path().join("sp")).unwrap();
        for bad in [
            "s.db",
            "link.db",
            "hard.db",
            "s.db-wal",
            "s.db.lock",
            // #40 item 9: a spool was not on the list.
            "s.db.spool-1",
            "s.db.spool-3",
            "sp",
            ".s.db.import-abc",
        ] {
            let err = refuse_store(&d.path().join(bad), &db).unwrap_err();
            assert!(err.to_string().contains("results store"), "{bad}: {err}");
        }
        // The same store named through another path.
        let dotted = d.path().join(".").join("s.db");
        assert!(refuse_store(&dotted, &db).is_err());
        assert!(refuse_store(&d.path().join("report.html"), &db).is_ok());
    }

    #[test]
    fn a_symlink_is_replaced_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = d.path().join("page.1");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        replace_file(&link, b"new").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(std::fs::read(&link).unwrap(), b"new");
        assert!(!std::fs::symlink_metadata(&link).unwrap().is_symlink());
    }
}

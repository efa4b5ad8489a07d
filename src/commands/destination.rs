//! Where the commands write files: never over the results store (or the
//! files SQLite and storlab keep beside it), however the path reaches it
//! (the same name, a symlink, a hard link); and files storlab makes of its
//! own (`init`, `man DIR`) replace what is at their name rather than write
//! through a symlink found there.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The files that make up the store at `db`: the database, SQLite's
/// journals and storlab's lock file.
fn store_files(db: &Path) -> Vec<PathBuf> {
    ["", "-wal", "-shm", "-journal", ".lock"]
        .iter()
        .map(|suffix| {
            let mut p = db.as_os_str().to_owned();
            p.push(suffix);
            PathBuf::from(p)
        })
        .collect()
}

/// `path` with its directory resolved (the file itself need not exist).
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = std::fs::canonicalize(path) {
        return Some(p);
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(parent).ok()?.join(path.file_name()?))
}

/// Refuses `output` when writing it would overwrite the store at `db`.
pub fn refuse_store(output: &Path, db: &Path) -> Result<()> {
    let out_id = std::fs::metadata(output).ok().map(|m| (m.dev(), m.ino()));
    let out_name = resolved(output);
    for file in store_files(db) {
        let same_file =
            out_id.is_some() && std::fs::metadata(&file).ok().map(|m| (m.dev(), m.ino())) == out_id;
        let same_name = out_name.is_some() && resolved(&file) == out_name;
        if same_file || same_name {
            let what = match file.as_path() == db {
                true => "the results store".to_string(),
                false => format!("part of the results store ({})", file.display()),
            };
            bail!(
                "{} is {what}; writing there would destroy every recorded result. Name another output file (e.g. report.html)",
                output.display(),
            );
        }
    }
    Ok(())
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
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
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
        for bad in ["s.db", "link.db", "hard.db", "s.db-wal", "s.db.lock"] {
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

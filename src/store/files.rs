//! The files that make up a store beside its database `NAME`: SQLite's
//! journals (`NAME-wal`, `NAME-shm`, `NAME-journal`), storlab's lock
//! (`NAME.lock`), a running campaign's spool (`NAME.spool-ID`) and an
//! import's copy (`.NAME.import-…`). Named here once, for whoever must not
//! write over them.

use std::ffi::OsStr;

/// What follows the database's name in a spool's (`NAME.spool-ID`).
pub(super) const SPOOL: &str = ".spool-";

/// How the names of an import's copies beside the database `db_name`
/// begin: `.NAME.import-`.
pub(super) fn import_prefix(db_name: &OsStr) -> String {
    format!(".{}.import-", db_name.to_string_lossy())
}

/// What the file `name` beside the store's database `db_name` is to the
/// store (`None`: nothing).
pub fn part(db_name: &OsStr, name: &OsStr) -> Option<&'static str> {
    let (db, name) = (db_name.to_string_lossy(), name.to_string_lossy());
    if name == db {
        return Some("the results store");
    }
    if let Some(rest) = name.strip_prefix(&*import_prefix(db_name)) {
        return (!rest.is_empty()).then_some("an import's copy of another store");
    }
    let suffix = name.strip_prefix(&*db)?;
    match suffix {
        "-wal" | "-shm" | "-journal" => Some("SQLite's journal"),
        ".lock" => Some("storlab's lock"),
        s => s
            .strip_prefix(SPOOL)
            .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
            .map(|_| "a campaign's spool of runs not yet stored"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_companion_is_named() {
        let part = |n: &str| part(OsStr::new("s.db"), OsStr::new(n));
        for name in [
            "s.db",
            "s.db-wal",
            "s.db-shm",
            "s.db-journal",
            "s.db.lock",
            "s.db.spool-1",
            "s.db.spool-42",
            ".s.db.import-x1",
        ] {
            assert!(part(name).is_some(), "{name}");
        }
        for name in [
            "s.db.csv",
            "s.db.spool-",
            "s.db.spool-1.csv",
            "t.db",
            "s.dbx",
            ".s.db.import-",
        ] {
            assert_eq!(part(name), None, "{name}");
        }
    }
}

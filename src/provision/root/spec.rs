//! What a `root` parameter says: the host's own software, a minimal Debian
//! root storlab builds (`debian:SUITE`), or a tree the user made. Pure:
//! parsing and naming only; whether the suite exists, the registry answers
//! or the tree holds the programs is [`super::preflight`]'s.

use std::fmt;
use std::path::PathBuf;

/// Where a target's (or a workload's server's) software comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RootSpec {
    /// The host's installed programs, as without `root`.
    Host,
    /// A minimal root of this Debian suite (`trixie`, `bookworm`, `sid`),
    /// built by debootstrap with the packages the software needs and
    /// cached under storlab's state directory.
    Debian { suite: String },
    /// An existing tree (packages unpacked, a container image exported);
    /// storlab only reads it.
    Tree(PathBuf),
}

/// What `root` says when the file does not set it.
pub const DEFAULT: &str = "host";

impl RootSpec {
    /// Reads `host`, `debian:SUITE` or an absolute path; the error says
    /// what is accepted.
    pub fn parse(text: &str) -> Result<RootSpec, String> {
        let text = text.trim();
        if text == "host" {
            return Ok(RootSpec::Host);
        }
        if let Some(suite) = text.strip_prefix("debian:") {
            check_suite_name(suite)?;
            return Ok(RootSpec::Debian {
                suite: suite.to_string(),
            });
        }
        if text.starts_with('/') {
            let path = PathBuf::from(text);
            if path
                .components()
                .any(|c| c == std::path::Component::ParentDir)
            {
                return Err(format!("`{text}`: write the tree's path without `..`"));
            }
            return Ok(RootSpec::Tree(path));
        }
        Err(format!(
            "`{text}` is not a root: write \"host\" (the host's own programs), \"debian:SUITE\" (a minimal Debian root storlab builds, e.g. \"debian:trixie\") or the absolute path of a tree you made"
        ))
    }

    pub fn is_host(&self) -> bool {
        *self == RootSpec::Host
    }
}

impl fmt::Display for RootSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RootSpec::Host => f.write_str("host"),
            RootSpec::Debian { suite } => write!(f, "debian:{suite}"),
            RootSpec::Tree(p) => write!(f, "{}", p.display()),
        }
    }
}

/// A suite's name as Debian writes them (`trixie`, `bookworm-backports`,
/// `stable`): lower-case letters, digits, `-` and `.`; it becomes part of
/// a directory name and of debootstrap's argument vector.
fn check_suite_name(suite: &str) -> Result<(), String> {
    let ok = !suite.is_empty()
        && suite.len() <= 40
        && suite.starts_with(|c: char| c.is_ascii_lowercase())
        && suite
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`debian:{suite}`: a suite is a name such as trixie, bookworm or sid (lower-case letters, digits, - and .)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms_and_their_text() {
        assert_eq!(RootSpec::parse("host"), Ok(RootSpec::Host));
        let trixie = RootSpec::parse("debian:trixie").unwrap();
        assert_eq!(
            trixie,
            RootSpec::Debian {
                suite: "trixie".into()
            }
        );
        assert_eq!(trixie.to_string(), "debian:trixie");
        let tree = RootSpec::parse("/srv/roots/gl9").unwrap();
        assert_eq!(tree, RootSpec::Tree("/srv/roots/gl9".into()));
        assert_eq!(tree.to_string(), "/srv/roots/gl9");
    }

    #[test]
    fn what_is_not_a_root_says_what_is() {
        for bad in [
            "trixie",
            "debian:",
            "debian:Trixie",
            "debian:a b",
            "roots/x",
        ] {
            let e = RootSpec::parse(bad).unwrap_err();
            assert!(e.contains("debian:") || e.contains("suite"), "{bad}: {e}");
        }
        assert!(RootSpec::parse("/srv/../etc").unwrap_err().contains(".."));
        assert!(RootSpec::parse("debian:trixie;rm").is_err());
    }
}

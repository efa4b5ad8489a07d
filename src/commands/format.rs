//! Which format `export` and `report` write: `--format` when given, else
//! the output file's extension, else the command's default. A `--format`
//! that contradicts the extension (`-o x.json --format csv`) is refused
//! rather than writing one format under another's name, and so is an
//! extension no format claims (`-o results.db`) without `--format`.

use std::path::Path;

use crate::cli::{ExportFormat, ReportFormat};

/// A format some command writes, known by its file extensions.
pub trait Format: Copy + PartialEq {
    fn from_extension(ext: &str) -> Option<Self>;
    fn name(self) -> &'static str;
    /// The extension a file of this format takes.
    fn extension(self) -> &'static str;
}

impl Format for ExportFormat {
    fn from_extension(ext: &str) -> Option<Self> {
        match ext {
            "csv" => Some(ExportFormat::Csv),
            "json" => Some(ExportFormat::Json),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ExportFormat::Csv => "csv",
            ExportFormat::Json => "json",
        }
    }

    fn extension(self) -> &'static str {
        self.name()
    }
}

impl Format for ReportFormat {
    fn from_extension(ext: &str) -> Option<Self> {
        match ext {
            "html" | "htm" => Some(ReportFormat::Html),
            "md" | "markdown" => Some(ReportFormat::Md),
            "json" => Some(ReportFormat::Json),
            "csv" => Some(ReportFormat::Csv),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ReportFormat::Html => "html",
            ReportFormat::Md => "md",
            ReportFormat::Json => "json",
            ReportFormat::Csv => "csv",
        }
    }

    fn extension(self) -> &'static str {
        self.name()
    }
}

/// The format to write, or why the command line contradicts itself.
pub fn choose<F: Format>(given: Option<F>, output: Option<&Path>, default: F) -> Result<F, String> {
    let ext = output
        .and_then(Path::extension)
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let implied = ext.as_deref().and_then(F::from_extension);
    match (given, implied) {
        (Some(g), Some(i)) if g != i => {
            let path = output.expect("an extension implies a path");
            Err(format!(
                "--format {} contradicts the file name {}, which says {}; drop --format, or name the file {}",
                g.name(),
                path.display(),
                i.name(),
                path.with_extension(g.extension()).display()
            ))
        }
        (Some(g), _) => Ok(g),
        (None, Some(i)) => Ok(i),
        // `-o results.db` is no reason to write HTML: a name that says no
        // format this command writes needs --format.
        (None, None) if ext.is_some() => {
            let path = output.expect("an extension implies a path");
            Err(format!(
                "the file name {} says no format this command writes; name it {} (or another known extension), or say --format {}",
                path.display(),
                path.with_extension(default.extension()).display(),
                default.name()
            ))
        }
        (None, None) => Ok(default),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_decides_and_a_contradiction_is_refused() {
        let json = Some(Path::new("out/x.json"));
        assert_eq!(
            choose(None, json, ExportFormat::Csv),
            Ok(ExportFormat::Json)
        );
        assert_eq!(
            choose(Some(ExportFormat::Json), json, ExportFormat::Csv),
            Ok(ExportFormat::Json)
        );
        let err = choose(Some(ExportFormat::Csv), json, ExportFormat::Csv).unwrap_err();
        assert!(err.contains("out/x.csv"), "{err}");
        assert_eq!(choose(None, None, ExportFormat::Csv), Ok(ExportFormat::Csv));
        // An extension no format claims needs --format; no extension
        // (`-o /dev/null`) takes the default.
        let txt = Some(Path::new("x.txt"));
        let err = choose(None, txt, ExportFormat::Csv).unwrap_err();
        assert!(err.contains("--format csv"), "{err}");
        assert!(choose(None, Some(Path::new("x.db")), ReportFormat::Html).is_err());
        assert_eq!(
            choose(None, Some(Path::new("/dev/null")), ExportFormat::Csv),
            Ok(ExportFormat::Csv)
        );
        assert_eq!(
            choose(Some(ExportFormat::Json), txt, ExportFormat::Csv),
            Ok(ExportFormat::Json)
        );
        assert_eq!(
            choose(None, Some(Path::new("r.MD")), ReportFormat::Html),
            Ok(ReportFormat::Md)
        );
        assert!(choose(
            Some(ReportFormat::Html),
            Some(Path::new("r.md")),
            ReportFormat::Html
        )
        .is_err());
    }
}

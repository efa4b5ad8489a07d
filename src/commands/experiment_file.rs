//! Which experiment `run` and `check` take when no file is given, as cargo
//! finds Cargo.toml: `./experiment.toml` when there is one (what `storlab
//! init` writes), else the built-in quick experiment. Either way they say
//! which, so that nobody runs one believing it the other.

use std::path::Path;

use crate::experiment::{self, builtin, Experiment, ExperimentError};

/// The file `run` and `check` look for in the current directory.
pub const DEFAULT: &str = "experiment.toml";

/// The experiment `file` names, else `./experiment.toml`, else the
/// built-in quick experiment; says on stderr which one when none was named.
pub fn load(file: Option<&Path>, root: bool) -> Result<Experiment, ExperimentError> {
    if let Some(f) = file {
        return experiment::load(f);
    }
    let here = Path::new(DEFAULT);
    if here.is_file() {
        note(&format!("using ./{DEFAULT} (no experiment file given)"));
        return experiment::load(here);
    }
    note(&format!(
        "no ./{DEFAULT} here: the built-in quick experiment (`storlab init` writes it to edit)"
    ));
    builtin::quick(root)
}

/// Prints an error with its line and caret; exit status [`super::EXIT_INVALID`].
pub fn refuse(e: &ExperimentError) {
    crate::console::to_stderr(&e.render());
}

fn note(text: &str) {
    if !crate::console::quiet() {
        errln!("{text}");
    }
}

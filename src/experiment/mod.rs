//! The experiment file format: parsing and validation against the kinds'
//! registries (their parameters declared in [`crate::params`]), sweeps and
//! the variants they make, targets stacked on targets, and the built-in
//! experiments.

pub mod builtin;
pub mod capacity;
pub mod error;
pub mod kinds;
pub mod parse;
pub mod releases;
pub mod schema;
mod searches;
mod stacks;
pub mod sweep;
mod variants;

use std::path::Path;

pub use error::ExperimentError;
pub use parse::parse_experiment;
pub use schema::{Experiment, Order, Plan, Remount, Repetitions, TargetSpec, WorkloadSpec};

/// How an experiment read from stdin (`-`) is named in messages; its
/// relative paths resolve against the current directory.
pub const STDIN: &str = "<stdin>";

/// Reads and validates an experiment file; `-` reads it from stdin.
pub fn load(path: &Path) -> Result<Experiment, ExperimentError> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| ExperimentError::Read(STDIN.into(), e))?;
        return parse_experiment(STDIN, &text);
    }
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ExperimentError::Read(name.clone(), e))?;
    parse_experiment(&name, &text)
}

//! The command line, declarations only: parsing lives in clap, behaviour in
//! `commands/`.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "storlab",
    version,
    about = "A laboratory for storage experiments: provision configurations, run real workloads, compare with confidence intervals."
)]
pub struct Cli {
    /// The results store (SQLite).
    #[arg(long, global = true, env = "STORLAB_DB", default_value = "storlab.db")]
    pub db: PathBuf,

    /// No progress output; results and errors still print.
    #[arg(long, short, global = true)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a campaign; without a file, the built-in quick experiment
    /// (the current directory's filesystem against tmpfs).
    Run {
        /// The experiment file (TOML).
        experiment: Option<PathBuf>,
    },
    /// Validate an experiment file and print its planned runs with an estimate.
    Check { experiment: PathBuf },
    /// List the campaigns in the store.
    List,
    /// Print a campaign's summary table (latest when omitted).
    Show { campaign: Option<String> },
    /// Write every run of a campaign as CSV or JSON (latest when omitted).
    Export {
        campaign: Option<String>,
        #[arg(long, short, value_enum, default_value_t = ExportFormat::Csv)]
        format: ExportFormat,
        /// Write to this file instead of stdout.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// The target kinds and their parameters.
    Targets,
    /// The workload kinds and their parameters.
    Workloads,
    /// The environment facts storlab records with every campaign.
    Env,
    /// Undo what killed campaigns left provisioned (mounts, loop devices,
    /// pools, volumes, daemons, images), from the journals in the state
    /// directory ($STORLAB_STATE_DIR, else /var/lib/storlab for root).
    Cleanup,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Csv,
    Json,
}

//! The command line, declarations only: parsing lives in clap, behaviour in
//! `commands/`. Each subcommand's arguments are one struct (`RunArgs`,
//! `CompareArgs`, …), typed once here and taken as they are by its
//! command: `commands::dispatch` is a table from subcommand to module,
//! with nothing copied on the way.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "storlab",
    version = crate::VERSION,
    about = "A laboratory for storage experiments: provision configurations, run real workloads, compare with confidence intervals.",
    after_help = "Environment: STORLAB_DB (the store, as --db), STORLAB_STATE_DIR (provisioning journals), STORLAB_COMMAND_TIMEOUT (seconds an external command may run, default 300). Reference: docs/ in storlab's source."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,

    #[command(subcommand)]
    pub command: Command,
}

/// The options every subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct Global {
    /// The results store (SQLite).
    #[arg(long, global = true, env = "STORLAB_DB", default_value = "storlab.db")]
    pub db: PathBuf,

    /// No progress output and no "wrote FILE"; results, warnings and
    /// errors still print.
    #[arg(long, short, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Also print every external command storlab runs (mkfs, losetup,
    /// mount, zpool, gluster, initdb, postgres, pgbench, fio…) on stderr, as a line to
    /// paste into a shell.
    #[arg(long, short, global = true)]
    pub verbose: bool,

    /// Colour verdicts, warnings and errors: `auto` on a terminal unless
    /// NO_COLOR is set (or CLICOLOR_FORCE asks for it), `always`, `never`.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a campaign; without a file, ./experiment.toml when there is
    /// one, else the built-in quick experiment (the current directory's
    /// filesystem against tmpfs).
    Run(RunArgs),
    /// Run a campaign's experiment again into the same store, as its next
    /// replica (its rounds in another order): `show`, `report` and
    /// `compare` then say per comparison whether the replicas agree.
    Replicate(ReplicateArgs),
    /// Validate an experiment file, print its planned runs with an
    /// estimate learned from the store's past runs, and say what `run`
    /// would refuse on this host.
    Check(CheckArgs),
    /// Write a commented starter experiment to edit: the built-in quick
    /// experiment (the current directory against a tmpfs).
    Init(InitArgs),
    /// List the campaigns in the store, with their tags.
    List(ListArgs),
    /// Print a campaign's summary table (latest when omitted), and for
    /// swept workloads their tables by swept value.
    Show(ShowArgs),
    /// Write every run of a campaign as CSV or JSON (latest when omitted),
    /// or of every campaign with --all.
    Export(ExportArgs),
    /// Write a report of a campaign: HTML (default), Markdown, JSON or CSV;
    /// or, given two campaigns, a report comparing the second against the
    /// first (HTML, Markdown or JSON).
    Report(ReportArgs),
    /// Compare targets within a campaign against its baseline, or the same
    /// targets and workloads in two campaigns (A is the baseline).
    Compare(CompareArgs),
    /// The campaigns of one experiment over time (or by a tag): each
    /// workload's primary metric per campaign, the change from the previous
    /// one, and where a step (a regression or an improvement) began.
    History(HistoryArgs),
    /// Copy the campaigns of other stores (another host's, a CI artifact)
    /// into this one, migrating older schemas; a campaign already here
    /// (same UUID) is not copied again. The other stores are only read.
    Import(ImportArgs),
    /// Remove a campaign from the store with every run, metric, series,
    /// histogram, warning and fact it recorded (asks first, unless --yes).
    Forget(ForgetArgs),
    /// The target kinds and their parameters.
    Targets,
    /// The workload kinds and their parameters.
    Workloads,
    /// The environment facts storlab records with every campaign.
    Env,
    /// Undo what killed campaigns left provisioned (mounts, loop devices,
    /// pools, volumes, daemons, images), from the journals in the state
    /// directory ($STORLAB_STATE_DIR, else /var/lib/storlab for root).
    /// With --roots: list the cached roots (`root = "debian:SUITE"`) with
    /// their sizes; with --roots --remove KEY|all: remove them.
    Cleanup(CleanupArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Print the man page, or write one page per command into DIR.
    Man(ManArgs),
}

/// What `storlab run` is asked.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The experiment file (TOML); `-` reads it from stdin; default
    /// ./experiment.toml, else the built-in quick experiment.
    pub experiment: Option<PathBuf>,
    /// Continue a killed or interrupted campaign (id or name): provision
    /// again and run only what is missing.
    #[arg(long, value_name = "CAMPAIGN", conflicts_with = "experiment")]
    pub resume: Option<String>,
    /// A fact of your own recorded with the campaign (repeatable), shown
    /// by show/export and matched by list/compare/history:
    /// `--tag gluster=10.3 --tag host=node3`.
    #[arg(long, value_name = "KEY=VALUE", conflicts_with = "resume")]
    pub tag: Vec<String>,
    /// Exit 3 when any run failed (without it, only when every run
    /// failed; some failed runs exit 0 and are counted on stderr).
    #[arg(long)]
    pub fail_on_failure: bool,
}

/// What `storlab replicate` is asked.
#[derive(Debug, Clone, Args)]
pub struct ReplicateArgs {
    /// The campaign (id or name) to replicate; default the latest. A
    /// replica of a replica replicates the first campaign of its group.
    pub campaign: Option<String>,
    /// A fact of your own recorded with the replica (repeatable), as
    /// `run --tag`.
    #[arg(long, value_name = "KEY=VALUE")]
    pub tag: Vec<String>,
    /// Exit 3 when any run failed, as `run --fail-on-failure`.
    #[arg(long)]
    pub fail_on_failure: bool,
}

/// What `storlab check` is asked.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// The experiment file (TOML); `-` reads it from stdin; default
    /// ./experiment.toml, else the built-in quick experiment.
    pub experiment: Option<PathBuf>,
}

/// What `storlab init` is asked.
#[derive(Debug, Clone, Args)]
pub struct InitArgs {
    /// Where to write it; `-` prints it.
    #[arg(default_value = "experiment.toml")]
    pub file: PathBuf,
    /// Replace FILE if it exists.
    #[arg(long)]
    pub force: bool,
}

/// What `storlab list` is asked.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Only campaigns with this tag, version or host fact (repeatable;
    /// all must match): `--where gluster=10.3`, `--where kernel=6.1.0-13-amd64`.
    #[arg(long = "where", value_name = "NAME=VALUE")]
    pub filter: Vec<String>,
}

/// What `storlab show` is asked.
#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    pub campaign: Option<String>,
    /// Also compare the levels of this swept parameter with its first
    /// value on every target (as the experiment's `compare_levels`).
    #[arg(long, value_name = "FACTOR")]
    pub compare_levels: Vec<String>,
    /// Every warning with its evidence, rather than a line per kind
    /// (as -v does, which also prints the versions and host facts).
    #[arg(long)]
    pub warnings: bool,
    /// Output format: the table for people, or JSON (the campaign,
    /// each workload's statistics and verdicts, every warning with
    /// its kind).
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,
}

/// What `storlab export` is asked.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    pub campaign: Option<String>,
    /// Every campaign in the store: one CSV under one header (the
    /// union of their columns), or a JSON array of campaigns.
    #[arg(long, conflicts_with = "campaign")]
    pub all: bool,
    /// For spreadsheets: CSV text cells starting with = + - @ (a
    /// formula to Excel or LibreOffice) get a ' in front; numbers are
    /// never changed. Without it, every cell is as stored.
    #[arg(long)]
    pub excel_safe: bool,
    /// The format; without it, the output file's extension decides
    /// (.csv or .json), and CSV otherwise.
    #[arg(long, short, value_enum)]
    pub format: Option<ExportFormat>,
    /// Write to this file instead of stdout.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// What `storlab report` is asked.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    pub campaign: Option<String>,
    /// A second campaign: the report compares it against CAMPAIGN, as
    /// `storlab compare A B` does, saying first what differs.
    pub b: Option<String>,
    /// Output file; the format follows its extension unless --format says.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    #[arg(long, short, value_enum)]
    pub format: Option<ReportFormat>,
    /// Compare against this target instead of the campaign's baseline.
    #[arg(long)]
    pub baseline: Option<String>,
    /// Also compare the levels of this swept parameter with its first
    /// value on every target (as the experiment's `compare_levels`).
    #[arg(long, value_name = "FACTOR")]
    pub compare_levels: Vec<String>,
    /// Also chart this series over time, beside the primary metric's
    /// (e.g. lat_p99_ns); repeat or separate with commas.
    #[arg(long, value_name = "METRIC", value_delimiter = ',')]
    pub series: Vec<String>,
    /// Lay out the sections of this workload only (a variant's name, as
    /// `m[bs=4k]`, or a workload table's, for every variant of it);
    /// repeatable. Without it a report lays out at most 100 variants of
    /// each table, evenly spaced along the sweep.
    #[arg(long, value_name = "NAME")]
    pub workload: Vec<String>,
    /// With two campaigns: compare even when the workloads' parameters
    /// differ (the difference is a caveat at the top).
    #[arg(long)]
    pub allow_different: bool,
    /// With two campaigns: metrics to compare (repeatable): catalogue
    /// names, or `all` for every metric measured on both sides;
    /// default the primary.
    #[arg(long, value_name = "NAME")]
    pub metric: Vec<String>,
}

/// What `storlab compare` is asked.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// A campaign (latest when omitted).
    pub a: Option<String>,
    /// A second campaign, compared against A.
    pub b: Option<String>,
    /// Within one campaign: the target to compare against.
    #[arg(long)]
    pub baseline: Option<String>,
    /// Exit 1 when a primary metric is significantly worse by more than PCT percent.
    #[arg(long, value_name = "PCT")]
    pub fail_on_regression: Option<f64>,
    /// With --fail-on-regression: how a regression whose verdict carries
    /// a validity caveat (page cache, durability not measured, noisy
    /// host, …) counts. `fail`: it fails the gate like any other,
    /// printed with its caveat; `warn`: it is printed with its caveat
    /// and the gate passes unless another regression fails it.
    #[arg(long, value_enum, default_value_t = CaveatedRegressions::Fail, value_name = "fail|warn")]
    pub caveated_regressions: CaveatedRegressions,
    /// With --fail-on-regression: how an inconclusive primary comparison
    /// counts whose interval reaches a regression beyond PCT (it may hide
    /// one). `warn`: printed with what would settle it, the gate passes;
    /// `fail`: it fails the gate; `pass`: counted in the gate's last line
    /// only.
    #[arg(long, value_enum, default_value_t = InconclusiveComparisons::Warn, value_name = "warn|fail|pass")]
    pub inconclusive: InconclusiveComparisons,
    /// Across campaigns: the baseline is the latest campaign of the same
    /// experiment carrying this tag (or version/host fact), and the
    /// candidate is A (latest when omitted).
    #[arg(long, value_name = "KEY=VALUE")]
    pub baseline_tag: Option<String>,
    /// Across campaigns: compare even when the workloads' parameters
    /// differ (the difference is printed as a caveat).
    #[arg(long)]
    pub allow_different: bool,
    /// Metrics to compare (repeatable): catalogue names, or `all` for
    /// every metric measured on both sides; default the primary.
    #[arg(long, value_name = "NAME")]
    pub metric: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,
}

/// What `storlab history` is asked.
#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    /// The experiment's name (that of the latest campaign when omitted).
    pub experiment: Option<String>,
    /// Order: `date`, or `tag:NAME` (by the value of a tag or version).
    #[arg(long, default_value = "date", value_name = "date|tag:NAME")]
    pub by: String,
    /// Metrics to follow (repeatable); default each workload's primary.
    #[arg(long, value_name = "NAME")]
    pub metric: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,
    /// Write to this file instead of stdout; `.html` writes a page with
    /// a chart per series (mean and 95% band over campaigns, the step).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// What `storlab import` is asked.
#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// The stores to import from.
    #[arg(required = true, value_name = "OTHER.db")]
    pub stores: Vec<PathBuf>,
}

/// What `storlab forget` is asked.
#[derive(Debug, Clone, Args)]
pub struct ForgetArgs {
    /// The campaign (id or name; a name means its latest campaign).
    pub campaign: String,
    /// Do not ask: remove it.
    #[arg(long, short)]
    pub yes: bool,
}

/// What `storlab cleanup` is asked.
#[derive(Debug, Clone, Args)]
pub struct CleanupArgs {
    /// List the roots storlab built and cached, with their sizes.
    #[arg(long)]
    pub roots: bool,
    /// With --roots: remove the cached root KEY (as listed), or `all`;
    /// a root a running campaign uses is kept.
    #[arg(long, value_name = "KEY", requires = "roots")]
    pub remove: Vec<String>,
}

/// What `storlab completions` is asked.
#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// What `storlab man` is asked.
#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// A directory such as ~/.local/share/man/man1.
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

/// How `compare --fail-on-regression` counts a regression whose verdict
/// carries a validity caveat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CaveatedRegressions {
    /// It fails the gate, printed with its caveat: a flawed measurement
    /// does not clear a release.
    Fail,
    /// It is printed with its caveat and does not fail the gate.
    Warn,
}

/// How `compare --fail-on-regression` counts an inconclusive comparison
/// that may hide a regression beyond the gate's percentage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InconclusiveComparisons {
    /// Printed with what would settle it; the gate passes.
    Warn,
    /// It fails the gate: a release must show it did not regress.
    Fail,
    /// Counted in the gate's last line only.
    Pass,
}

impl InconclusiveComparisons {
    /// The flag's word for it.
    pub fn word(self) -> &'static str {
        match self {
            InconclusiveComparisons::Warn => "warn",
            InconclusiveComparisons::Fail => "fail",
            InconclusiveComparisons::Pass => "pass",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Text,
    Json,
}

impl CompareFormat {
    pub fn json(self) -> bool {
        self == CompareFormat::Json
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Csv,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Html,
    Md,
    Json,
    Csv,
}

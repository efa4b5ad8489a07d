//! The fact catalogue: what storlab reads back about a host, a target and
//! a run — as the metric catalogue does for what a run measures — declared
//! once with its name (stable snake_case, stored), its unit, whether it
//! takes a new value with every campaign of the same configuration, which
//! parameter of the experiment it reads back, and what it means.
//!
//! Code reads facts through [`catalogue`]'s declarations and the typed
//! views of [`view`] ([`TargetFacts`], [`Environment`]), never a JSON
//! object by a name typed in place. [`reference`] renders `docs/facts.md`.

pub mod catalogue;
pub mod readback;
pub mod reference;
pub mod view;

use serde_json::Value;

pub use view::{BlockDevice, Environment, TargetFacts, ZfsProperty};

/// What a fact is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// The host a campaign ran on (the campaign's environment).
    Host,
    /// A target, read back once it was provisioned.
    Target,
    /// One run (versions of the programs it used, what telemetry watched).
    Run,
}

/// How a fact's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactUnit {
    Text,
    /// A size in bytes.
    Bytes,
    Count,
    /// true or false.
    Flag,
    /// An object of names and values (ZFS properties, Gluster options).
    Table,
    /// A block device: name, model, rotational, scheduler.
    Device,
    /// The facts of another path (the directory holding an image).
    Facts,
}

impl FactUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            FactUnit::Text => "text",
            FactUnit::Bytes => "bytes",
            FactUnit::Count => "count",
            FactUnit::Flag => "flag",
            FactUnit::Table => "table",
            FactUnit::Device => "device",
            FactUnit::Facts => "facts",
        }
    }
}

/// Whether a fact takes a new value with every campaign of the same
/// configuration: such a fact is no difference between two campaigns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changes {
    /// Only when the configuration or the host changes.
    Never,
    /// With every campaign (the space left, the pid of a daemon).
    Always,
    /// With every campaign where storlab creates and names the thing (a
    /// tmpfs's mount point, a loop device), not where the user named it
    /// (a `dir` target's path): each target kind lists its own.
    WhereStorlabNamesIt,
}

/// One fact, declared once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FactDef {
    /// The stored name: a key of the facts object (a prefix for
    /// `*_version` and `telemetry_process.*`).
    pub name: &'static str,
    pub subject: Subject,
    pub unit: FactUnit,
    pub changes: Changes,
    /// The experiment's parameter this fact reads back, to check that what
    /// was asked for took (`mount_options` reads back `mount_options`).
    pub reads_back: Option<&'static str>,
    pub about: &'static str,
}

impl FactDef {
    /// The fact in `facts`, unless absent or null.
    pub fn get<'a>(&self, facts: &'a Value) -> Option<&'a Value> {
        facts.get(self.name).filter(|v| !v.is_null())
    }

    /// The fact as text, unless absent or empty.
    pub fn text(&self, facts: &Value) -> Option<String> {
        self.get(facts)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(String::from)
    }

    /// The fact as a number (bytes, a count).
    pub fn number(&self, facts: &Value) -> Option<f64> {
        self.get(facts).and_then(Value::as_f64)
    }

    /// The fact as a flag.
    pub fn flag(&self, facts: &Value) -> Option<bool> {
        self.get(facts).and_then(Value::as_bool)
    }
}

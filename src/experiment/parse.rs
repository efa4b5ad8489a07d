//! Reads an experiment file: TOML → [`Experiment`], validated before anything
//! runs. Every error names file:line:column and, for an unknown key or kind,
//! the closest valid one.

use std::collections::BTreeMap;
use std::ops::Range;

use toml_edit::{Document, Item, Table, TableLike};

use super::error::{did_you_mean, ExperimentError, Location};
use super::schema::{
    AdaptiveParams, Experiment, Order, Plan, PlanParams, Remount, Repetitions, TargetSpec,
    WorkloadSpec,
};
use crate::params::units::{parse_duration, parse_size};
use crate::params::{split_list, Declared, Fault, ParamSpec, ParamType, Params, Value};
use crate::provision::naming::collision_key;
use crate::workload::WorkloadKind;

type Span = Option<Range<usize>>;

/// The longest name of a target or workload, in characters: it becomes
/// part of path components (`storlab-tmpfs-NAME-PID`,
/// `storlab-PID-NAME-N`) and of Gluster's volume files, which name the
/// volume and its bricks' paths in one component of at most 255 bytes.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest experiment name, in characters.
pub const MAX_EXPERIMENT_NAME_CHARS: usize = 128;

const TOP_KEYS: &[&str] = &["name", "description", "plan", "target", "workload"];
pub(super) const TARGET_COMMON: &[&str] =
    &["name", "kind", "baseline", "caches", "sweep", "sweep_mode"];
pub(super) const WORKLOAD_COMMON: &[&str] = &[
    "name",
    "kind",
    "targets",
    "shared",
    "sweep",
    "sweep_mode",
    "compare_levels",
    "equivalence_margin",
    "capacity",
];

/// Parses and validates an experiment from its text. `file` names it in errors.
pub fn parse_experiment(file: &str, source: &str) -> Result<Experiment, ExperimentError> {
    let doc = Document::parse(source).map_err(|e| ExperimentError::Syntax {
        at: Location::of_span(file, source, e.span()),
        message: first_line(e.message()),
    })?;
    let cx = Cx { file, source };
    let root = doc.as_table();
    cx.check_keys(root, TOP_KEYS, "top level")?;
    let name = match root.get("name") {
        Some(item) => cx.experiment_name(item)?,
        None => file_stem(file),
    };
    let description = match root.get("description") {
        Some(item) => cx.printable(item, "description", true)?,
        None => String::new(),
    };
    let (plan, remount_span) = cx.plan(root.get("plan"))?;
    let targets = cx.targets(root, plan.max_variants)?;
    let workloads = cx.workloads(root, &targets, plan.max_variants)?;
    let exp = Experiment {
        name,
        description,
        plan,
        targets,
        workloads,
        source: source.to_string(),
        origin: file.to_string(),
    };
    cx.check_remount(&exp, remount_span)?;
    Ok(exp)
}

/// `; fio's `blocksize` is `bs` here` for a key that has another name.
pub(super) fn alias_hint(key: &str, aliases: &[(&str, &str)]) -> Option<String> {
    let lower = key.to_lowercase();
    aliases
        .iter()
        .find(|(alias, _)| *alias == lower)
        .map(|(alias, name)| format!("; `{alias}` is written `{name}` here"))
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or(s).trim().to_string()
}

fn file_stem(file: &str) -> String {
    if file == super::STDIN {
        return "stdin".into();
    }
    std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "experiment".into())
}

/// What every reading step needs: the file's name and text, to locate
/// errors. Its methods are split between this module (the plan, values)
/// and [`super::variants`] (targets, workloads, sweeps).
pub(super) struct Cx<'a> {
    file: &'a str,
    source: &'a str,
}

impl Cx<'_> {
    /// The experiment file's directory: relative paths in it (a fio job
    /// file, a command's program) are resolved against it.
    pub(super) fn base_dir(&self) -> std::path::PathBuf {
        match std::path::Path::new(self.file).parent() {
            Some(p) if !p.as_os_str().is_empty() && self.file != super::STDIN => p.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        }
    }

    pub(super) fn err(&self, span: Span, message: impl Into<String>) -> ExperimentError {
        ExperimentError::invalid(Location::of_span(self.file, self.source, span), message)
    }

    /// Rejects keys that are neither common nor declared, suggesting the nearest.
    pub(super) fn check_keys(
        &self,
        table: &dyn TableLike,
        allowed: &[&str],
        what: &str,
    ) -> Result<(), ExperimentError> {
        self.check_keys_or_aliases(table, allowed, &[], what)
    }

    /// [`Self::check_keys`], naming the key to write for another name of
    /// it (`blocksize` → `bs`) rather than the nearest in spelling.
    pub(super) fn check_keys_or_aliases(
        &self,
        table: &dyn TableLike,
        allowed: &[&str],
        aliases: &[(&str, &str)],
        what: &str,
    ) -> Result<(), ExperimentError> {
        for (key, _) in table.iter() {
            if !allowed.contains(&key) {
                let span = table.key(key).and_then(|k| k.span());
                let hint = alias_hint(key, aliases)
                    .unwrap_or_else(|| did_you_mean(key, allowed.iter().copied()));
                return Err(self.err(span, format!("unknown key `{key}` in {what}{hint}")));
            }
        }
        Ok(())
    }

    pub(super) fn string(&self, item: &Item, key: &str) -> Result<String, ExperimentError> {
        item.as_str()
            .map(String::from)
            .ok_or_else(|| self.err(item.span(), format!("`{key}` must be a string")))
    }

    fn plan(&self, item: Option<&Item>) -> Result<(Plan, Span), ExperimentError> {
        let Some(item) = item else {
            let defaults = Params::defaults(PlanParams::PARAMS);
            return Ok((Plan::from(self.typed::<PlanParams>(&defaults, None)?), None));
        };
        let table = item
            .as_table_like()
            .ok_or_else(|| self.err(item.span(), "`plan` must be a table: write [plan]"))?;
        let names: Vec<&str> = PlanParams::PARAMS.iter().map(|s| s.name).collect();
        self.check_keys(table, &names, "[plan]")?;
        let adaptive = match table.get("repetitions") {
            Some(rep) if rep.is_table_like() => Some(self.adaptive(rep)?),
            _ => None,
        };
        // Adaptive repetitions were read above; the declared integer keeps
        // its default.
        let skip: &[&str] = if adaptive.is_some() {
            &["repetitions"]
        } else {
            &[]
        };
        let (params, spans) = self.params(table, PlanParams::PARAMS, skip, "[plan]")?;
        let mut plan = Plan::from(self.typed::<PlanParams>(&params, item.span())?);
        if let Some(a) = adaptive {
            plan.repetitions = a;
        }
        if let (Repetitions::Decided { .. }, Order::Sequential) = (plan.repetitions, plan.order) {
            let at = table.get("order").and_then(|o| o.span());
            return Err(self.err(at, "order = \"sequential\" runs each pair's repetitions back to back, so no comparison can be judged round by round: with repetitions until decided, use balanced, interleaved or randomized rounds, or give a count (repetitions = 3)"));
        }
        Ok((plan, spans.get("remount").cloned().flatten()))
    }

    /// Reads declared parameters into their typed struct.
    pub(super) fn typed<K: Declared>(&self, p: &Params, span: Span) -> Result<K, ExperimentError> {
        K::from_params(p).map_err(|(_, msg)| self.err(span, msg))
    }

    /// `{ min = 3, max = 20, until_ci = "2%" }` or `{ min = 3, max = 10,
    /// until = "decided" }`.
    fn adaptive(&self, item: &Item) -> Result<Repetitions, ExperimentError> {
        let t = item.as_table_like().expect("checked by the caller");
        self.check_keys(t, &["min", "max", "until_ci", "until"], "repetitions")?;
        let (params, _) = self.params(t, AdaptiveParams::PARAMS, &[], "repetitions")?;
        let AdaptiveParams { min, max } = self.typed(&params, item.span())?;
        if max < min {
            return Err(self.err(
                t.get("max").and_then(|v| v.span()),
                format!("repetitions: max ({max}) is below min ({min})"),
            ));
        }
        match (t.get("until"), t.get("until_ci")) {
            (Some(until), None) => self.until(until, min, max),
            (None, Some(ci)) => self.until_ci(ci, min, max),
            (Some(until), Some(_)) => Err(self.err(until.span(), "repetitions: `until` and `until_ci` are two ways to stop; keep one")),
            (None, None) => Err(self.err(item.span(), "repetitions: adaptive repetitions need `until = \"decided\"` (rounds until every comparison is different or equivalent) or `until_ci`, the target CI half-width such as \"2%\"")),
        }
    }

    /// `until = "decided"`.
    fn until(&self, until: &Item, min: u32, max: u32) -> Result<Repetitions, ExperimentError> {
        match until.as_str() {
            Some("decided") => Ok(Repetitions::Decided { min, max }),
            _ => Err(self.err(until.span(), "repetitions: `until` takes \"decided\": rounds until every comparison with the baseline is different or equivalent")),
        }
    }

    /// `until_ci = "2%"` (or a fraction, 0.02).
    fn until_ci(&self, ci: &Item, min: u32, max: u32) -> Result<Repetitions, ExperimentError> {
        match percent(ci) {
            Some(p) if p > 0.0 && p < 100.0 => Ok(Repetitions::Adaptive { min, max, until_ci_pct: p }),
            _ => Err(self.err(ci.span(), "repetitions: `until_ci` must be a percentage such as \"2%\" (or a fraction such as 0.02)")),
        }
    }

    pub(super) fn tables<'d>(
        &self,
        root: &'d Table,
        key: &str,
    ) -> Result<Vec<&'d Table>, ExperimentError> {
        match root.get(key) {
            None => Ok(Vec::new()),
            Some(Item::ArrayOfTables(a)) => Ok(a.iter().collect()),
            Some(other) => Err(self.err(
                other.span(),
                format!("`{key}` must be written as [[{key}]] tables"),
            )),
        }
    }

    pub(super) fn only_targets(
        &self,
        t: &Table,
        name: &str,
        targets: &[TargetSpec],
    ) -> Result<Vec<String>, ExperimentError> {
        let Some(item) = t.get("targets") else {
            return Ok(Vec::new());
        };
        let list = self
            .list(item)
            .map_err(|m| self.err(item.span(), format!("workload `{name}`: `targets` {m}")))?;
        for entry in &list {
            if !targets
                .iter()
                .any(|x| &x.name == entry || &x.family == entry)
            {
                // A table's name, or one variant's as `check` prints it.
                let names = targets
                    .iter()
                    .flat_map(|x| [x.family.as_str(), x.name.as_str()]);
                let hint = did_you_mean(entry, names);
                return Err(self.err(item.span(), format!("workload `{name}` names target `{entry}`, which the experiment does not define{hint}")));
            }
        }
        Ok(list)
    }

    /// `shared = true`: under MPI every rank works on one set of files
    /// (rank 0 lays them out and removes them). Only where ranks cannot
    /// overwrite each other's work by accident: `io` (reading or writing the
    /// same files) and `command` (which can divide the work by its rank).
    pub(super) fn shared(
        &self,
        t: &Table,
        name: &str,
        kind: WorkloadKind,
    ) -> Result<bool, ExperimentError> {
        let Some(item) = t.get("shared") else {
            return Ok(false);
        };
        let Some(shared) = item.as_value().and_then(|v| v.as_bool()) else {
            return Err(self.err(
                item.span(),
                format!("workload `{name}`: `shared` must be true or false"),
            ));
        };
        if shared && !kind.entry().shareable {
            return Err(self.err(item.span(), format!(
                "workload `{name}`: `shared` is for io and command workloads; the ranks of a {} workload would create and delete the same files",
                kind.name()
            )));
        }
        Ok(shared)
    }

    /// `equivalence_margin = "5%"`: a comparison whose whole interval lies
    /// within ±this of the baseline is called equivalent.
    pub(super) fn margin(&self, t: &Table, name: &str) -> Result<f64, ExperimentError> {
        let Some(item) = t.get("equivalence_margin") else {
            return Ok(crate::stats::DEFAULT_MARGIN_PCT);
        };
        match percent(item) {
            Some(p) if crate::stats::equivalence::valid_margin(p) => Ok(p),
            _ => Err(self.err(item.span(), format!("workload `{name}`: `equivalence_margin` must be a percentage between 0 and 100 such as \"5%\" (or a fraction such as 0.05): differences within ±it are called equivalent"))),
        }
    }

    /// A workload must be able to run on every one of its targets (a
    /// `block` target takes io workloads only); `targets = [...]` narrows
    /// the targets a workload runs on.
    pub(super) fn check_runnable(
        &self,
        t: &Table,
        w: &WorkloadSpec,
        targets: &[TargetSpec],
    ) -> Result<(), ExperimentError> {
        let reasons: Vec<String> = targets
            .iter()
            .filter(|x| w.runs_on(x))
            .filter_map(|target| {
                w.kind
                    .supports(&w.params, target.kind, &target.params)
                    .err()
                    .map(|why| format!("`{}`: {why}", target.name))
            })
            .collect();
        if reasons.is_empty() {
            return Ok(());
        }
        Err(self.err(
            t.span(),
            format!(
                "workload `{}` cannot run on every target it is given ({}); list the ones it can with targets = [...]",
                w.name,
                reasons.join("; ")
            ),
        ))
    }

    fn check_remount(&self, exp: &Experiment, span: Span) -> Result<(), ExperimentError> {
        if exp.plan.remount != Remount::BetweenRuns {
            return Ok(());
        }
        for t in &exp.targets {
            if let Err(why) = t.kind.can_remount() {
                return Err(self.err(
                    span,
                    format!(
                        "remount = \"between-runs\" but target `{}` cannot be remounted: {why}",
                        t.name
                    ),
                ));
            }
        }
        Ok(())
    }

    pub(super) fn name_of<'n>(
        &self,
        t: &Table,
        what: &str,
        mut taken: impl Iterator<Item = &'n str>,
    ) -> Result<String, ExperimentError> {
        let item = t
            .get("name")
            .ok_or_else(|| self.err(t.span(), format!("this [[{what}]] has no `name`")))?;
        let name = self.printable(item, "name", false)?;
        if name.trim().is_empty() {
            return Err(self.err(item.span(), format!("a {what} name must not be empty")));
        }
        let chars = name.chars().count();
        if chars > MAX_NAME_CHARS {
            return Err(self.err(item.span(), format!(
                "this {what}'s name has {chars} characters, more than the {MAX_NAME_CHARS} a name may have: it becomes part of directory, mount, pool and volume names (at most 255 bytes each); shorten it"
            )));
        }
        if let Some(other) = taken.find(|n| collision_key(n) == collision_key(&name)) {
            let message = if other == name {
                format!("duplicate {what} name `{name}`; names must be unique")
            } else {
                format!(
                    "{what} names `{other}` and `{name}` both become `{}` in the names storlab gives directories, mounts, pools and volumes, so they would share them; rename one",
                    collision_key(&name)
                )
            };
            return Err(self.err(item.span(), message));
        }
        Ok(name)
    }

    /// The experiment's `name`: printable, and short enough to head a
    /// listing's line.
    fn experiment_name(&self, item: &Item) -> Result<String, ExperimentError> {
        let name = self.printable(item, "name", false)?;
        let chars = name.chars().count();
        if chars > MAX_EXPERIMENT_NAME_CHARS {
            return Err(self.err(item.span(), format!(
                "the experiment's name has {chars} characters, more than the {MAX_EXPERIMENT_NAME_CHARS} it may have (it names the campaign in every listing, report and export); shorten it, and say more in `description`"
            )));
        }
        Ok(name)
    }

    /// A string without control characters (which would reach terminals
    /// and reports raw); `multiline` allows newlines and tabs.
    fn printable(
        &self,
        item: &Item,
        key: &str,
        multiline: bool,
    ) -> Result<String, ExperimentError> {
        let text = self.string(item, key)?;
        // A description may break lines; nothing may hold an escape, a
        // bidirectional override or a Unicode line separator.
        let checked = if multiline {
            text.replace(['\n', '\t', '\r'], " ")
        } else {
            text.clone()
        };
        match crate::foreign::unprintable(&checked) {
            Some(c) => Err(self.err(
                item.span(),
                format!("`{key}` holds {c}; use printable text"),
            )),
            None => Ok(text),
        }
    }

    pub(super) fn kind_of(
        &self,
        t: &Table,
        what: &str,
        known: &[&'static str],
    ) -> Result<String, ExperimentError> {
        let item = t.get("kind").ok_or_else(|| {
            self.err(
                t.span(),
                format!(
                    "this [[{what}]] has no `kind`; one of: {}",
                    known.join(", ")
                ),
            )
        })?;
        let kind = self.string(item, "kind")?;
        if !known.contains(&kind.as_str()) {
            let hint = did_you_mean(&kind, known.iter().copied());
            return Err(self.err(
                item.span(),
                format!(
                    "unknown {what} kind `{kind}` (known: {}){hint}",
                    known.join(", ")
                ),
            ));
        }
        Ok(kind)
    }

    /// A kind's fault, at the key it names (or the whole table).
    pub(super) fn fault(
        &self,
        t: &Table,
        spans: &BTreeMap<&'static str, Span>,
        owner: &str,
        (key, msg): Fault,
    ) -> ExperimentError {
        let span = spans.get(key).cloned().flatten().or_else(|| t.span());
        self.err(span, format!("{owner}: {msg}"))
    }

    /// Reads every declared parameter present in `t` but those in `skip`;
    /// the rest keep defaults.
    pub(super) fn params(
        &self,
        t: &dyn TableLike,
        specs: &[ParamSpec],
        skip: &[&str],
        owner: &str,
    ) -> Result<(Params, BTreeMap<&'static str, Span>), ExperimentError> {
        let mut params = Params::defaults(specs);
        let mut spans = BTreeMap::new();
        for spec in specs.iter().filter(|s| !skip.contains(&s.name)) {
            let Some(item) = t.get(spec.name) else {
                continue;
            };
            let value = self
                .value(spec, item)
                .map_err(|m| self.err(item.span(), format!("{owner}: `{}` {m}", spec.name)))?;
            params.set(spec.name, value);
            spans.insert(spec.name, item.span());
        }
        Ok((params, spans))
    }

    /// One value as its spec says, numbers checked against their declared
    /// range by the parameter layer.
    pub(super) fn value(&self, spec: &ParamSpec, item: &Item) -> Result<Value, String> {
        let v = item.as_value();
        let numeric = match v {
            Some(toml_edit::Value::Integer(i)) => spec.ty.integer(*i.value()),
            Some(toml_edit::Value::Float(f)) => spec.ty.number(*f.value()),
            _ => None,
        };
        if let Some(read) = numeric {
            return read;
        }
        let text = v.and_then(|v| v.as_str());
        let wrong = || spec.ty.expected();
        Ok(match spec.ty {
            ParamType::Size => Value::Size(parse_size(text.ok_or_else(wrong)?)?),
            ParamType::Duration => Value::Duration(parse_duration(text.ok_or_else(wrong)?)?),
            ParamType::Int { .. } | ParamType::Float { .. } => return Err(wrong()),
            ParamType::Bool => Value::Bool(v.and_then(|v| v.as_bool()).ok_or_else(wrong)?),
            ParamType::Str => Value::Str(text.ok_or_else(wrong)?.to_string()),
            ParamType::Choice(options) => {
                let s = text.ok_or_else(wrong)?;
                if !options.contains(&s) {
                    let hint = did_you_mean(s, options.iter().copied());
                    return Err(format!(
                        "must be one of {}, not `{s}`{hint}",
                        options.join(", ")
                    ));
                }
                Value::Str(s.to_string())
            }
            ParamType::List => Value::List(self.list(item)?),
            ParamType::Args => Value::List(args(item)?),
            ParamType::Map => Value::Map(map(item)?),
        })
    }

    pub(super) fn list(&self, item: &Item) -> Result<Vec<String>, String> {
        if let Some(s) = item.as_str() {
            return Ok(split_list(s));
        }
        let array = item
            .as_array()
            .ok_or("must be a list of strings, e.g. [\"a\", \"b\"]")?;
        array
            .iter()
            .map(|v| {
                v.as_str()
                    .map(String::from)
                    .ok_or_else(|| "must hold only strings".to_string())
            })
            .collect()
    }
}

/// An argument vector: one string kept whole, or a non-empty array of strings.
fn args(item: &Item) -> Result<Vec<String>, String> {
    if let Some(s) = item.as_str() {
        return Ok(vec![s.to_string()]);
    }
    let wrong = "must be an argument list such as [\"tar\", \"-xf\", \"a.tar\"] or one string";
    let array = item.as_array().ok_or(wrong)?;
    let out: Vec<String> = array
        .iter()
        .map(|v| v.as_str().map(String::from).ok_or(wrong))
        .collect::<Result<_, _>>()?;
    if out.is_empty() {
        return Err("must not be empty".into());
    }
    Ok(out)
}

/// A percentage written `"2%"`, or as a fraction (`0.02`): the number of
/// percent.
pub(super) fn percent(item: &Item) -> Option<f64> {
    match (item.as_str(), item.as_value().and_then(number)) {
        (Some(s), _) => s
            .trim()
            .strip_suffix('%')
            .and_then(|n| n.trim().parse::<f64>().ok()),
        (_, Some(f)) => Some(f * 100.0),
        _ => None,
    }
}

fn number(v: &toml_edit::Value) -> Option<f64> {
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64))
}

/// A table of scalars, kept as text (`{ recordsize = "8k", atime = "off" }`).
fn map(item: &Item) -> Result<BTreeMap<String, String>, String> {
    let table = item
        .as_table_like()
        .ok_or("must be a table, e.g. { key = \"value\" }")?;
    let mut out = BTreeMap::new();
    for (k, v) in table.iter() {
        let v = v
            .as_value()
            .ok_or_else(|| format!("entry `{k}` must be a plain value"))?;
        let text = scalar_text(v)
            .ok_or_else(|| format!("entry `{k}` must be a string, number or boolean"))?;
        out.insert(k.to_string(), text);
    }
    Ok(out)
}

/// A scalar as a table parameter keeps it: strings as written, numbers in
/// decimal, booleans as `on`/`off`; `None` for arrays and tables.
pub(super) fn scalar_text(v: &toml_edit::Value) -> Option<String> {
    Some(match v {
        toml_edit::Value::String(s) => s.value().clone(),
        toml_edit::Value::Integer(i) => i.value().to_string(),
        toml_edit::Value::Float(f) => f.value().to_string(),
        toml_edit::Value::Boolean(b) => if *b.value() { "on" } else { "off" }.into(),
        _ => return None,
    })
}

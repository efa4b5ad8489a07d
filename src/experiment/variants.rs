//! From the tables a file writes to the targets and workloads that run:
//! each `[[target]]` or `[[workload]]` table is a family, expanded into one
//! spec per variant of its `sweep` ([`super::sweep`]); a target standing on
//! another (`on = "gl"`) is made once per variant of that one, which it
//! carries the factors of, or on one variant (`on = "gl[k=v]"`): what
//! stands on what is [`super::stacks`]'s. Every refusal names the place in
//! the file: an unknown swept key, a parameter the kind does not have, an
//! empty list, a value swept twice.

use std::collections::BTreeMap;
use std::ops::Range;

use toml_edit::{Item, Table};

use super::error::{did_you_mean, ExperimentError};
use super::parse::{scalar_text, Cx};
use super::schema::{TargetSpec, WorkloadSpec};
use super::stacks::{stack_order, stands_on, Carrier, TargetFamily, STANDS_ON};
use super::sweep::{
    label_value, variant_name, Axis, Factor, Level, Scale, Setting, Sweep, SweepMode,
};
use crate::metric::labels::LABELS;
use crate::params::{Fault, ParamSpec, ParamType, Params, Value};
use crate::provision::naming::collision_key;
use crate::targets::TargetKind;
use crate::workload::WorkloadKind;

type Span = Option<Range<usize>>;

/// Keys of a table that are not parameters and cannot be swept.
const NOT_SWEPT: &[&str] = &[
    "name",
    "kind",
    "baseline",
    "caches",
    "targets",
    "shared",
    "sweep",
    "sweep_mode",
    "compare_levels",
    "equivalence_margin",
    "capacity",
    "on",
    "gluster",
    "export_of",
];

impl Cx<'_> {
    /// Every target of the file, its variants in place of a swept table.
    pub(super) fn targets(
        &self,
        root: &Table,
        limit: u64,
    ) -> Result<Vec<TargetSpec>, ExperimentError> {
        let tables = self.tables(root, "target")?;
        if tables.is_empty() {
            return Err(self.err(None, "the experiment has no [[target]]; add at least one"));
        }
        let mut families: Vec<TargetFamily> = Vec::new();
        for t in tables {
            let family = self.target_family(t, &families)?;
            families.push(family);
        }
        let carriers = self.carriers(&families)?;
        self.check_target_count(&families, &carriers, limit)?;
        let mut expanded: Vec<Vec<TargetSpec>> = vec![Vec::new(); families.len()];
        for f in stack_order(&carriers) {
            let under = match &carriers[f] {
                Some(c) => Some(self.carried(&families, &carriers, f, &expanded[c.family])?),
                None => None,
            };
            expanded[f] = self.expand_target(&families[f], under.as_deref())?;
        }
        let mut out: Vec<TargetSpec> = expanded.into_iter().flatten().collect();
        let names: Vec<String> = out.iter().map(|t| t.name.clone()).collect();
        for t in &mut out {
            if let Some((_, c)) = stands_on(&t.params) {
                t.on = names.iter().position(|n| n == c);
            }
        }
        self.check_shared_room(&families, &out)?;
        self.check_one_re_export(&families, &out)?;
        self.check_unique(
            out.iter().map(|t| {
                let table = families.iter().find(|f| f.name == t.family);
                (
                    t.name.as_str(),
                    t.slug.as_str(),
                    table.and_then(|f| f.table.span()),
                )
            }),
            "target",
        )?;
        Ok(out)
    }

    /// Refuses target sweeps that would make more than `limit` variants,
    /// counted before any is made (a target standing on a swept one is made
    /// once per variant of it).
    fn check_target_count(
        &self,
        families: &[TargetFamily],
        carriers: &[Option<Carrier>],
        limit: u64,
    ) -> Result<(), ExperimentError> {
        let mut counts = vec![0u64; families.len()];
        for f in stack_order(carriers) {
            let under = match &carriers[f] {
                Some(c) if c.variant.is_none() => counts[c.family],
                _ => 1,
            };
            counts[f] = families[f].sweep.count().saturating_mul(under);
        }
        let total = counts.iter().fold(0u64, |a, b| a.saturating_add(*b));
        if total <= limit {
            return Ok(());
        }
        let (largest, _) = counts
            .iter()
            .enumerate()
            .max_by_key(|(_, n)| **n)
            .expect("a target at least");
        let f = &families[largest];
        Err(self.err(
            f.table
                .get("sweep")
                .and_then(|s| s.span())
                .or(f.table.span()),
            too_many(
                "target variants",
                total,
                limit,
                &format!("target `{}` makes {}", f.name, counts[largest]),
            ),
        ))
    }

    fn target_family<'d>(
        &self,
        t: &'d Table,
        before: &[TargetFamily],
    ) -> Result<TargetFamily<'d>, ExperimentError> {
        let name = self.name_of(t, "target", before.iter().map(|x| x.name.as_str()))?;
        let kind_name = self.kind_of(t, "target", &TargetKind::names())?;
        let kind = TargetKind::parse(&kind_name).expect("checked by kind_of");
        let mut allowed: Vec<&str> = super::parse::TARGET_COMMON.to_vec();
        allowed.extend(kind.params().iter().map(|s| s.name));
        let owner = format!("target `{name}` (kind {kind_name})");
        self.check_keys(t, &allowed, &owner)?;
        let baseline = match t.get("baseline") {
            Some(item) => item
                .as_bool()
                .ok_or_else(|| self.err(item.span(), "`baseline` must be true or false"))?,
            None => false,
        };
        let caches = match t.get("caches") {
            Some(item) => item
                .as_bool()
                .ok_or_else(|| self.err(item.span(), "`caches` must be true or false"))?,
            None => true,
        };
        if baseline && before.iter().any(|f| f.baseline) {
            return Err(self.err(
                t.get("baseline").and_then(|i| i.span()),
                format!(
                    "target `{name}` is a second baseline; only one target may say baseline = true"
                ),
            ));
        }
        let (params, spans) = self.params(t, kind.params(), &[], &format!("target `{name}`"))?;
        let others = |key: &str| {
            TargetKind::all()
                .filter(|k| k.params().iter().any(|s| s.name == key))
                .map(|k| k.name())
                .collect::<Vec<_>>()
        };
        let sweep = self.sweep(t, (kind.params(), &[]), &owner, "targets", &others)?;
        Ok(TargetFamily {
            table: t,
            name,
            kind,
            baseline,
            caches,
            params,
            spans,
            sweep,
        })
    }

    /// A family's variants: its sweep's, once per variant of the target
    /// it stands on, whose factors (as [`Cx::carried`] keys them) come
    /// first.
    fn expand_target(
        &self,
        f: &TargetFamily,
        under: Option<&[(TargetSpec, Vec<Factor>)]>,
    ) -> Result<Vec<TargetSpec>, ExperimentError> {
        let carriers: Vec<Option<&(TargetSpec, Vec<Factor>)>> = match under {
            Some(c) => c.iter().map(Some).collect(),
            None => vec![None],
        };
        let variants = f.sweep.variants();
        let total = carriers.len() * variants.len();
        let mut out = Vec::with_capacity(total);
        for carrier in carriers {
            for levels in &variants {
                let mut factors = carrier.map(|c| c.1.clone()).unwrap_or_default();
                for l in levels {
                    if factors.iter().any(|x| x.key == l.factor.key) {
                        return Err(self.err(l.span.clone(), format!(
                            "target `{}` sweeps `{}`, which the target it stands on sweeps too; a metric's labels could not tell the two apart: sweep it in one of them",
                            f.name, l.factor.key
                        )));
                    }
                }
                factors.extend(levels.iter().map(|l| l.factor.clone()));
                let mut params = f.params.clone();
                self.apply(levels, &mut params)?;
                if let Some((c, _)) = carrier {
                    self.check_room(f, &params, c)?;
                    params.set(f.on_key().0, Value::Str(c.name.clone()));
                }
                let name = variant_name(&f.name, &factors);
                let config = f.kind.configure(&params).map_err(|fault| {
                    self.variant_fault(
                        f.table,
                        &f.spans,
                        levels,
                        &format!("target `{name}`"),
                        fault,
                    )
                })?;
                out.push(TargetSpec {
                    slug: slug(&f.name, total, out.len()),
                    name,
                    family: f.name.clone(),
                    factors,
                    kind: f.kind,
                    baseline: f.baseline && out.is_empty(),
                    caches: f.caches,
                    on: None,
                    params,
                    config,
                });
            }
        }
        Ok(out)
    }

    /// Every workload of the file, its variants in place of a swept table.
    pub(super) fn workloads(
        &self,
        root: &Table,
        targets: &[TargetSpec],
        limit: u64,
    ) -> Result<Vec<WorkloadSpec>, ExperimentError> {
        let tables = self.tables(root, "workload")?;
        if tables.is_empty() {
            return Err(self.err(None, "the experiment has no [[workload]]; add at least one"));
        }
        let mut out: Vec<WorkloadSpec> = Vec::new();
        let mut families: Vec<(String, &Table)> = Vec::new();
        let mut pairs = Pairs { made: 0, limit };
        for t in tables {
            let specs = self.workload_family(t, &families, targets, &mut pairs)?;
            families.push((specs[0].family.clone(), t));
            out.extend(specs);
        }
        self.check_unique(
            out.iter().map(|w| {
                let table = families.iter().find(|f| f.0 == w.family);
                (
                    w.name.as_str(),
                    w.slug.as_str(),
                    table.and_then(|f| f.1.span()),
                )
            }),
            "workload",
        )?;
        Ok(out)
    }

    fn workload_family(
        &self,
        t: &Table,
        before: &[(String, &Table)],
        targets: &[TargetSpec],
        pairs: &mut Pairs,
    ) -> Result<Vec<WorkloadSpec>, ExperimentError> {
        let name = self.name_of(t, "workload", before.iter().map(|x| x.0.as_str()))?;
        let kind_name = self.kind_of(t, "workload", &WorkloadKind::names())?;
        let kind = WorkloadKind::parse(&kind_name).expect("checked by kind_of");
        let mut allowed: Vec<&str> = super::parse::WORKLOAD_COMMON.to_vec();
        allowed.extend(kind.params().iter().map(|s| s.name));
        let owner = format!("workload `{name}` (kind {kind_name})");
        self.check_keys_or_aliases(t, &allowed, kind.aliases(), &owner)?;
        let (params, spans) = self.params(t, kind.params(), &[], &format!("workload `{name}`"))?;
        let others = |key: &str| {
            WorkloadKind::all()
                .filter(|k| k.params().iter().any(|s| s.name == key))
                .map(|k| k.name())
                .collect::<Vec<_>>()
        };
        let keys = (kind.params(), kind.aliases());
        let sweep = self.sweep(t, keys, &owner, "workloads", &others)?;
        let only_targets = self.only_targets(t, &name, targets)?;
        let shared = self.shared(t, &name, kind)?;
        let margin_pct = self.margin(t, &name)?;
        self.count_pairs(t, &name, &sweep, &only_targets, targets, pairs)?;
        let variants = sweep.variants();
        let mut out = Vec::with_capacity(variants.len());
        for levels in &variants {
            let factors: Vec<Factor> = levels.iter().map(|l| l.factor.clone()).collect();
            let mut params = params.clone();
            self.apply(levels, &mut params)?;
            let variant = variant_name(&name, &factors);
            let config = kind
                .configure(&mut params, &self.base_dir())
                .map_err(|fault| {
                    self.variant_fault(t, &spans, levels, &format!("workload `{variant}`"), fault)
                })?;
            let capacity = self.capacity(t, &variant, config.as_ref(), &factors)?;
            let spec = WorkloadSpec {
                slug: slug(&name, variants.len(), out.len()),
                name: variant,
                family: name.clone(),
                factors,
                kind,
                params,
                config,
                only_targets: only_targets.clone(),
                compare_levels: Vec::new(),
                shared,
                margin_pct,
                capacity,
                probe_of: None,
            };
            self.check_runnable(t, &spec, targets)?;
            self.check_label_keys(levels, &spec, targets)?;
            out.push(spec);
        }
        let compare = self.compare_levels(t, &name, &out, targets)?;
        for w in &mut out {
            w.compare_levels = compare.clone();
        }
        Ok(out)
    }

    /// Counts the target–workload pairs a workload family makes (its
    /// variants times the targets it runs on) before making them, and
    /// refuses them past the limit.
    fn count_pairs(
        &self,
        t: &Table,
        name: &str,
        sweep: &Sweep,
        only: &[String],
        targets: &[TargetSpec],
        pairs: &mut Pairs,
    ) -> Result<(), ExperimentError> {
        let on = if only.is_empty() {
            targets.len()
        } else {
            targets
                .iter()
                .filter(|x| only.iter().any(|n| *n == x.family || *n == x.name))
                .count()
        } as u64;
        let mine = sweep.count().saturating_mul(on.max(1));
        pairs.made = pairs.made.saturating_add(mine);
        if pairs.made <= pairs.limit {
            return Ok(());
        }
        Err(self.err(
            t.get("sweep").and_then(|s| s.span()).or(t.span()),
            too_many(
                "target-workload pairs",
                pairs.made,
                pairs.limit,
                &format!(
                    "workload `{name}` makes {} variants on {on} target variant{}",
                    sweep.count(),
                    if on == 1 { "" } else { "s" }
                ),
            ),
        ))
    }

    /// A workload's factors must not share a key with the factors of a
    /// target it runs on: a metric's labels could not tell them apart.
    fn check_label_keys(
        &self,
        levels: &[&Level],
        w: &WorkloadSpec,
        targets: &[TargetSpec],
    ) -> Result<(), ExperimentError> {
        for l in levels {
            let clash = targets
                .iter()
                .filter(|t| w.runs_on(t))
                .find(|t| t.factors.iter().any(|f| f.key == l.factor.key));
            if let Some(t) = clash {
                return Err(self.err(l.span.clone(), format!(
                    "workload `{}` sweeps `{}`, which target `{}` sweeps too; a metric's labels could not tell the two apart: sweep it in one of them",
                    w.family, l.factor.key, t.family
                )));
            }
        }
        Ok(())
    }

    /// `compare_levels = ["compress"]`: factors of this workload or of its
    /// targets whose levels the report compares on every target.
    fn compare_levels(
        &self,
        t: &Table,
        name: &str,
        variants: &[WorkloadSpec],
        targets: &[TargetSpec],
    ) -> Result<Vec<String>, ExperimentError> {
        let Some(item) = t.get("compare_levels") else {
            return Ok(Vec::new());
        };
        let list = self.list(item).map_err(|m| {
            self.err(
                item.span(),
                format!("workload `{name}`: `compare_levels` {m}"),
            )
        })?;
        let mut swept: Vec<&str> = Vec::new();
        let keys = variants[0].factors.iter().chain(
            targets
                .iter()
                .filter(|x| variants[0].runs_on(x))
                .flat_map(|x| x.factors.iter()),
        );
        for f in keys {
            if !swept.contains(&f.key.as_str()) {
                swept.push(&f.key);
            }
        }
        for key in &list {
            if !swept.contains(&key.as_str()) {
                let known = if swept.is_empty() {
                    "nothing is swept".to_string()
                } else {
                    format!("swept: {}", swept.join(", "))
                };
                let hint = did_you_mean(key, swept.iter().copied());
                return Err(self.err(item.span(), format!(
                    "workload `{name}`: `compare_levels` names `{key}`, which neither it nor its targets sweep ({known}){hint}"
                )));
            }
        }
        Ok(list)
    }

    /// Applies a variant's settings to its parameters.
    fn apply(&self, levels: &[&Level], params: &mut Params) -> Result<(), ExperimentError> {
        for l in levels {
            l.setting
                .apply(params)
                .map_err(|m| self.err(l.span.clone(), m))?;
        }
        Ok(())
    }

    /// A variant's fault: at the swept value when a swept parameter is at
    /// fault, else where the table sets the key (or the table itself).
    fn variant_fault(
        &self,
        t: &Table,
        spans: &BTreeMap<&'static str, Span>,
        levels: &[&Level],
        owner: &str,
        fault: Fault,
    ) -> ExperimentError {
        match levels.iter().find(|l| l.setting.param() == fault.0) {
            Some(l) => self.err(l.span.clone(), format!("{owner}: {}", fault.1)),
            None => self.fault(t, spans, owner, fault),
        }
    }

    /// Names and slugs are unique among what runs.
    fn check_unique<'t>(
        &self,
        items: impl Iterator<Item = (&'t str, &'t str, Span)>,
        what: &str,
    ) -> Result<(), ExperimentError> {
        let mut names: std::collections::HashSet<&str> = std::collections::HashSet::new();
        let mut slugs: std::collections::HashSet<String> = std::collections::HashSet::new();
        for (name, slug, span) in items {
            // Paths, mounts, pools and volumes are named by the slug's
            // collision key: `a-1` and `a_1` would share them.
            let key = collision_key(slug);
            let clash = if names.contains(&name) {
                Some(format!("two {what}s are named `{name}` (a variant's name is NAME[key=value,…]); rename one"))
            } else if slugs.contains(&key) {
                Some(format!("the {what} name `{slug}` is also how storlab names a variant in paths (NAME-N); rename one"))
            } else {
                None
            };
            if let Some(message) = clash {
                return Err(self.err(span, message));
            }
            names.insert(name);
            slugs.insert(key);
        }
        Ok(())
    }

    /// Reads `sweep` and `sweep_mode`: for each key (a declared parameter,
    /// or for a table parameter its entries), a non-empty list of values of
    /// the parameter's type, none twice, none also set outside the sweep.
    fn sweep(
        &self,
        t: &Table,
        (specs, aliases): (&[ParamSpec], &[(&str, &str)]),
        owner: &str,
        plural: &str,
        others: &dyn Fn(&str) -> Vec<&'static str>,
    ) -> Result<Sweep, ExperimentError> {
        let mode = self.sweep_mode(t)?;
        let Some(item) = t.get("sweep") else {
            return Ok(Sweep::none());
        };
        let table = item.as_table_like().ok_or_else(|| {
            self.err(
                item.span(),
                format!("{owner}: `sweep` must be a table of lists, e.g. sweep = {{ clients = [1, 8, 64] }}"),
            )
        })?;
        if table.is_empty() {
            return Err(self.err(
                item.span(),
                format!(
                    "{owner}: `sweep` is empty; list at least one parameter's values, or remove it"
                ),
            ));
        }
        let mut axes: Vec<Axis> = Vec::new();
        for (key, value) in table.iter() {
            let span = table.key(key).and_then(|k| k.span());
            if let Some(hint) = super::parse::alias_hint(key, aliases) {
                return Err(self.err(span, format!("{owner}: unknown swept key `{key}`{hint}")));
            }
            let spec = self.swept_spec(key, span.clone(), specs, owner, plural, others)?;
            if t.contains_key(key) && spec.ty != ParamType::Map {
                return Err(self.err(
                    span,
                    format!("{owner}: `{key}` is both set and swept; remove one"),
                ));
            }
            let new = match spec.ty {
                ParamType::Map => self.entry_axes(t, spec, value, owner)?,
                _ => vec![self.axis(spec, value, owner)?],
            };
            for axis in new {
                self.check_axis_key(&axis, &axes, owner)?;
                axes.push(axis);
            }
        }
        if mode == SweepMode::Zip {
            let lens: Vec<usize> = axes.iter().map(|a| a.levels.len()).collect();
            if lens.iter().any(|&n| n != lens[0]) {
                let span = t.get("sweep_mode").and_then(|i| i.span());
                let listed: Vec<String> = axes
                    .iter()
                    .map(|a| format!("{} has {}", a.key, a.levels.len()))
                    .collect();
                return Err(self.err(span, format!("{owner}: sweep_mode = \"zip\" pairs the lists value by value, so they need one length ({})", listed.join(", "))));
            }
        }
        Ok(Sweep { axes, mode })
    }

    fn sweep_mode(&self, t: &Table) -> Result<SweepMode, ExperimentError> {
        let Some(item) = t.get("sweep_mode") else {
            return Ok(SweepMode::Product);
        };
        if !t.contains_key("sweep") {
            return Err(self.err(
                item.span(),
                "`sweep_mode` says how a `sweep` combines its lists, but there is no `sweep`",
            ));
        }
        let word = item.as_str().unwrap_or("");
        SweepMode::parse(word).ok_or_else(|| {
            let hint = did_you_mean(word, SweepMode::NAMES.iter().copied());
            self.err(
                item.span(),
                format!("`sweep_mode` must be one of product, zip{hint}"),
            )
        })
    }

    /// The declared parameter a swept key names, or a located refusal.
    fn swept_spec<'s>(
        &self,
        key: &str,
        span: Span,
        specs: &'s [ParamSpec],
        owner: &str,
        plural: &str,
        others: &dyn Fn(&str) -> Vec<&'static str>,
    ) -> Result<&'s ParamSpec, ExperimentError> {
        if let Some(spec) = specs.iter().find(|s| s.name == key) {
            if STANDS_ON.contains(&key) {
                return Err(self.err(
                    span,
                    format!(
                        "{owner}: `{key}` cannot be swept; write one target per target it stands on"
                    ),
                ));
            }
            return Ok(spec);
        }
        if NOT_SWEPT.contains(&key) {
            return Err(self.err(
                span,
                format!("{owner}: `{key}` cannot be swept, only the kind's parameters"),
            ));
        }
        let elsewhere = others(key);
        if !elsewhere.is_empty() {
            return Err(self.err(
                span,
                format!(
                "{owner} sweeps `{key}`, a parameter of {} {plural} that this kind does not have",
                elsewhere.join(", ")
            ),
            ));
        }
        let hint = did_you_mean(key, specs.iter().map(|s| s.name));
        Err(self.err(span, format!("{owner}: unknown swept key `{key}`{hint}")))
    }

    /// A swept parameter's list of values.
    fn axis(&self, spec: &ParamSpec, item: &Item, owner: &str) -> Result<Axis, ExperimentError> {
        let what = format!("`sweep.{}`", spec.name);
        let array = self.swept_list(item, &what, owner)?;
        let mut levels: Vec<Level> = Vec::new();
        for v in array.iter() {
            let value = self
                .value(spec, &Item::Value(v.clone()))
                .map_err(|m| self.err(v.span(), format!("{owner}: {what} {m}")))?;
            let text = match scalar_text(v) {
                Some(t) if !matches!(v, toml_edit::Value::Boolean(_)) => t,
                _ => label_value(&value),
            };
            let factor = Factor {
                key: spec.name.to_string(),
                value: label_value(&value),
                text,
                scale: Scale::of(spec.ty),
            };
            self.check_twice(&levels, &factor, v.span(), &what, owner)?;
            levels.push(Level {
                setting: Setting::Whole {
                    param: spec.name,
                    value,
                },
                factor,
                span: v.span(),
            });
        }
        Ok(Axis {
            key: spec.name.to_string(),
            levels,
        })
    }

    /// A table parameter's swept entries: `{ "performance.write-behind" = ["on", "off"] }`.
    fn entry_axes(
        &self,
        t: &Table,
        spec: &ParamSpec,
        item: &Item,
        owner: &str,
    ) -> Result<Vec<Axis>, ExperimentError> {
        let param = spec.name;
        let entries = item.as_table_like().ok_or_else(|| {
            self.err(item.span(), format!(
                "{owner}: `sweep.{param}` sweeps entries of the table `{param}`: write sweep = {{ {param} = {{ key = [\"a\", \"b\"] }} }}"
            ))
        })?;
        if entries.is_empty() {
            return Err(self.err(item.span(), format!("{owner}: `sweep.{param}` names no entry; give at least one, e.g. {{ key = [\"a\", \"b\"] }}")));
        }
        let set = t.get(param).and_then(|i| i.as_table_like());
        let mut axes = Vec::new();
        for (entry, value) in entries.iter() {
            let span = entries.key(entry).and_then(|k| k.span());
            if set.is_some_and(|s| s.contains_key(entry)) {
                return Err(self.err(
                    span,
                    format!("{owner}: `{param}.{entry}` is both set and swept; remove one"),
                ));
            }
            let what = format!("`sweep.{param}.{entry}`");
            let array = self.swept_list(value, &what, owner)?;
            let mut levels: Vec<Level> = Vec::new();
            for v in array.iter() {
                let text = scalar_text(v).ok_or_else(|| {
                    self.err(
                        v.span(),
                        format!("{owner}: {what} must hold strings, numbers or booleans"),
                    )
                })?;
                let factor = Factor {
                    key: entry.to_string(),
                    value: text.clone(),
                    text: text.clone(),
                    scale: Scale::Category,
                };
                self.check_twice(&levels, &factor, v.span(), &what, owner)?;
                levels.push(Level {
                    setting: Setting::Entry {
                        param,
                        entry: entry.to_string(),
                        text,
                    },
                    factor,
                    span: v.span(),
                });
            }
            axes.push(Axis {
                key: entry.to_string(),
                levels,
            });
        }
        Ok(axes)
    }

    /// A non-empty array of values.
    fn swept_list<'i>(
        &self,
        item: &'i Item,
        what: &str,
        owner: &str,
    ) -> Result<&'i toml_edit::Array, ExperimentError> {
        let array = item.as_array().ok_or_else(|| {
            self.err(
                item.span(),
                format!("{owner}: {what} must be a list of values, e.g. [1, 8, 64]"),
            )
        })?;
        if array.is_empty() {
            return Err(self.err(
                item.span(),
                format!("{owner}: {what} is an empty list; give at least one value"),
            ));
        }
        Ok(array)
    }

    fn check_twice(
        &self,
        levels: &[Level],
        factor: &Factor,
        span: Span,
        what: &str,
        owner: &str,
    ) -> Result<(), ExperimentError> {
        if levels.iter().any(|l| l.factor.value == factor.value) {
            return Err(self.err(
                span,
                format!("{owner}: {what} lists `{}` twice", factor.text),
            ));
        }
        Ok(())
    }

    /// A factor's key is its label: one per sweep, and none of the labels
    /// storlab's metrics carry already.
    fn check_axis_key(
        &self,
        axis: &Axis,
        before: &[Axis],
        owner: &str,
    ) -> Result<(), ExperimentError> {
        let span = axis.levels.first().and_then(|l| l.span.clone());
        if before.iter().any(|a| a.key == axis.key) {
            return Err(self.err(span, format!("{owner}: `{}` is swept twice (two tables have an entry of that name); a metric's labels could not tell them apart", axis.key)));
        }
        if LABELS.iter().any(|d| d.key == axis.key) {
            return Err(self.err(span, format!("{owner}: `{}` is a label storlab's metrics carry already; sweeping it would hide it", axis.key)));
        }
        Ok(())
    }
}

/// The target–workload pairs made so far, and how many may be.
struct Pairs {
    made: u64,
    limit: u64,
}

/// The refusal of sweeps past `[plan] max_variants`.
fn too_many(what: &str, count: u64, limit: u64, largest: &str) -> String {
    format!(
        "the sweeps make {count} {what} ({largest}), more than [plan] max_variants = {limit}; sweep fewer values (or `sweep_mode = \"zip\"`), or raise `max_variants` in [plan] if the study really has that many"
    )
}

/// `NAME` for a family of one, `NAME-N` for the N-th of several variants.
fn slug(family: &str, total: usize, index: usize) -> String {
    if total == 1 {
        family.to_string()
    } else {
        format!("{family}-{}", index + 1)
    }
}

#[cfg(test)]
mod tests;

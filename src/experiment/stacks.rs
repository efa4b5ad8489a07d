//! Targets standing on targets: `on = "gl"` (every variant of a swept
//! table, one stacked target each) or `on = "gl[k=v]"` (the one variant
//! `check` names so), a `vm-disk`'s `gluster` and an `nfs` target's
//! `export_of`. Here: which family and
//! variant each table stands on (refusing unknown names, itself, circles),
//! the factors a stacked variant carries from what it stands on — keyed by
//! that table's name where its own parameter of the same name would read
//! as its own value —, and the room an image needs in the target under it.

use std::collections::BTreeMap;
use std::ops::Range;

use toml_edit::Table;

use super::error::{did_you_mean, ExperimentError};
use super::parse::Cx;
use super::schema::TargetSpec;
use super::sweep::{Factor, Sweep};
use crate::params::units::format_bytes;
use crate::params::{Params, Value};
use crate::targets::TargetKind;

type Span = Option<Range<usize>>;

/// The keys by which a target stands on another: `on` (its image in that
/// target's working directory), a `vm-disk`'s `gluster` (the same, but
/// reached through QEMU's gluster driver) and an `nfs` target's
/// `export_of` (the gluster target's volume, re-exported over NFS).
pub(super) const STANDS_ON: &[&str] = &["on", "gluster", "export_of"];

/// The key by which a target with `params` stands on another, and that
/// target's name.
pub(super) fn stands_on(params: &Params) -> Option<(&'static str, &str)> {
    STANDS_ON.iter().find_map(|k| match params.get(k) {
        Some(Value::Str(s)) => Some((*k, s.as_str())),
        _ => None,
    })
}

/// One `[[target]]` table, read, before its variants are made.
pub(super) struct TargetFamily<'d> {
    pub table: &'d Table,
    pub name: String,
    pub kind: TargetKind,
    pub baseline: bool,
    /// `caches`: whether its runs read where their reads came from.
    pub caches: bool,
    pub params: Params,
    pub spans: BTreeMap<&'static str, Span>,
    pub sweep: Sweep,
}

impl TargetFamily<'_> {
    /// The target this one stands on (`on`), as written, if any.
    pub fn on(&self) -> Option<&str> {
        stands_on(&self.params).map(|(_, name)| name)
    }

    /// The key that says what it stands on, and where it is written.
    pub fn on_key(&self) -> (&'static str, Span) {
        let key = stands_on(&self.params).map_or("on", |(k, _)| k);
        (key, self.spans.get(key).cloned().flatten())
    }
}

/// What a family stands on: another family and, when `on` names one of
/// its variants (`gl[performance.cache-invalidation=on]`), that variant.
#[derive(Debug, Clone)]
pub(super) struct Carrier {
    pub family: usize,
    pub variant: Option<String>,
}

/// The family a name in `on` means: a family's own name, else the part
/// before `[` of a variant's name `NAME[k=v,…]`.
fn family_of<'a>(on: &'a str, families: &[TargetFamily]) -> Option<(usize, Option<&'a str>)> {
    if let Some(i) = families.iter().position(|x| x.name == on) {
        return Some((i, None));
    }
    let (family, _) = on.strip_suffix(']')?.split_once('[')?;
    let i = families.iter().position(|x| x.name == family)?;
    Some((i, Some(on)))
}

impl Cx<'_> {
    /// For each family, what it stands on; refuses unknown targets, a
    /// target on itself, circles, and `dir` beside `on`.
    pub(super) fn carriers(
        &self,
        families: &[TargetFamily],
    ) -> Result<Vec<Option<Carrier>>, ExperimentError> {
        let mut out = Vec::new();
        for f in families {
            let Some(on) = f.on() else {
                out.push(None);
                continue;
            };
            let (key, span) = f.on_key();
            let Some((c, variant)) = family_of(on, families) else {
                let hint = did_you_mean(on, families.iter().map(|x| x.name.as_str()));
                return Err(self.err(
                    span,
                    format!(
                        "target `{}` stands on `{on}`, which the experiment does not define{hint}",
                        f.name
                    ),
                ));
            };
            let carrier = &families[c];
            if carrier.name == f.name {
                return Err(self.err(span, format!("target `{}` cannot stand on itself", f.name)));
            }
            if let Some(dir) = f.table.get("dir") {
                return Err(self.err(dir.span(), format!("target `{}` stands on `{on}`: its image lives in that target's working directory, so `dir` does not apply; remove it", f.name)));
            }
            if key == "gluster" && carrier.kind != TargetKind::Gluster {
                return Err(self.err(span, format!(
                    "target `{}` reaches `{on}` through QEMU's gluster driver, but `{on}` is a {} target; name a gluster target, or stand on it with `on = \"{on}\"`",
                    f.name,
                    carrier.kind.name()
                )));
            }
            if key == "export_of" && carrier.kind != TargetKind::Gluster {
                return Err(self.err(span, format!(
                    "target `{}` re-exports `{on}` over NFS, but `{on}` is a {} target; storlab re-exports gluster targets (an existing NFS export is an `nfs` target with `server` and `export`)",
                    f.name,
                    carrier.kind.name()
                )));
            }
            out.push(Some(Carrier {
                family: c,
                variant: variant.map(str::to_string),
            }));
        }
        self.check_circles(families, &out)?;
        Ok(out)
    }

    fn check_circles(
        &self,
        families: &[TargetFamily],
        carriers: &[Option<Carrier>],
    ) -> Result<(), ExperimentError> {
        for (i, f) in families.iter().enumerate() {
            let mut seen = vec![i];
            let mut at = carriers[i].as_ref().map(|c| c.family);
            while let Some(c) = at {
                if seen.contains(&c) {
                    let (_, span) = f.on_key();
                    return Err(self.err(
                        span,
                        format!(
                            "target `{}` stands on a circle of targets (each on the next); break it",
                            f.name
                        ),
                    ));
                }
                seen.push(c);
                at = carriers[c].as_ref().map(|c| c.family);
            }
        }
        Ok(())
    }

    /// The variants of what family `f` stands on, each with the factors
    /// `f`'s variants on it carry: all of them for a table (`on = "d"`),
    /// the one named for a variant (`on = "d[size=128M]"`), which carries
    /// none (its name says which it is).
    pub(super) fn carried(
        &self,
        families: &[TargetFamily],
        carriers: &[Option<Carrier>],
        f: usize,
        under: &[TargetSpec],
    ) -> Result<Vec<(TargetSpec, Vec<Factor>)>, ExperimentError> {
        let Some(carrier) = &carriers[f] else {
            return Ok(Vec::new());
        };
        let Some(name) = &carrier.variant else {
            return Ok(under
                .iter()
                .map(|c| (c.clone(), self.keyed(families, carriers, f, &c.factors)))
                .collect());
        };
        match under.iter().find(|c| c.name == *name) {
            Some(c) => Ok(vec![(c.clone(), Vec::new())]),
            None => Err(self.unknown_variant(&families[f], &families[carrier.family], name, under)),
        }
    }

    fn unknown_variant(
        &self,
        f: &TargetFamily,
        carrier: &TargetFamily,
        name: &str,
        under: &[TargetSpec],
    ) -> ExperimentError {
        let (_, span) = f.on_key();
        let names = || under.iter().map(|c| c.name.as_str());
        let message = if under.len() == 1 {
            format!(
                "target `{}` stands on `{name}`, but `{}` is not swept: it has no variants; write `{} = \"{}\"`",
                f.name,
                carrier.name,
                f.on_key().0,
                carrier.name
            )
        } else {
            let shown: Vec<&str> = names().take(6).collect();
            let more = if under.len() > shown.len() {
                ", …"
            } else {
                ""
            };
            format!(
                "target `{}` stands on `{name}`, which is not a variant of `{}` (its variants, as `storlab check` lists them: {}{more}); name one of them exactly, or write `{} = \"{}\"` to stand on each of them{}",
                f.name,
                carrier.name,
                shown.join(", "),
                f.on_key().0,
                carrier.name,
                did_you_mean(name, names()),
            )
        };
        self.err(span, message)
    }

    /// The factors of a variant `f` stands on, as `f`'s variants carry
    /// them: a key that is also one of `f`'s own parameters (a tmpfs's
    /// swept `size` under a loop image that has a `size` of its own) is
    /// keyed by the table that swept it (`d.size`), so that neither the
    /// name nor a metric's labels say the stacked target has that value.
    fn keyed(
        &self,
        families: &[TargetFamily],
        carriers: &[Option<Carrier>],
        f: usize,
        factors: &[Factor],
    ) -> Vec<Factor> {
        let own = &families[f];
        let mine = |key: &str| {
            own.kind.params().iter().any(|p| p.name == key)
                || own.sweep.axes.iter().any(|a| a.key == key)
        };
        factors
            .iter()
            .map(|x| match mine(&x.key) {
                false => x.clone(),
                true => Factor {
                    key: format!("{}.{}", sweeper(families, carriers, f, &x.key), x.key),
                    ..x.clone()
                },
            })
            .collect()
    }

    /// Refuses an image that cannot fit in the target it stands on, when
    /// both say their size (a tmpfs, a loop image, a pool), as swept: the
    /// image may grow to its whole size, and the filesystem below keeps
    /// some room for itself. Beneath a directory or a volume, the free
    /// space is checked when the image is made.
    pub(super) fn check_room(
        &self,
        f: &TargetFamily,
        params: &Params,
        carrier: &TargetSpec,
    ) -> Result<(), ExperimentError> {
        let (Some(image), Some(room)) = (size(params), size(&carrier.params)) else {
            return Ok(());
        };
        if image < room {
            return Ok(());
        }
        let span = f.spans.get("size").cloned().flatten().or(f.on_key().1);
        Err(self.err(
            span,
            format!(
                "target `{}` needs room for an image of {}, but `{}` ({}) holds only {}; raise that target's `size` or lower this one's",
                f.name,
                format_bytes(image as f64),
                carrier.name,
                carrier.kind.name(),
                format_bytes(room as f64),
            ),
        ))
    }

    /// Refuses images that fit one by one in the target they stand on but
    /// not together: every variant standing on it is provisioned for the
    /// whole campaign, and each image may grow to its whole size (`run`
    /// fails on the first that finds no room).
    pub(super) fn check_shared_room(
        &self,
        families: &[TargetFamily],
        targets: &[TargetSpec],
    ) -> Result<(), ExperimentError> {
        for (c, carrier) in targets.iter().enumerate() {
            let Some(room) = size(&carrier.params) else {
                continue;
            };
            let on: Vec<&TargetSpec> = targets.iter().filter(|t| t.on == Some(c)).collect();
            let total: u64 = on.iter().filter_map(|t| size(&t.params)).sum();
            if on.len() < 2 || total < room {
                continue;
            }
            let last = on.last().expect("two at least");
            let f = families
                .iter()
                .find(|f| f.name == last.family)
                .expect("a target's family");
            let names: Vec<String> = on.iter().take(4).map(|t| format!("`{}`", t.name)).collect();
            let more = match on.len() - names.len() {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            return Err(self.err(
                f.on_key().1,
                format!(
                    "{} images stand on `{}` ({}): {}{more} need {} together, but it holds only {}; raise its `size`, lower theirs, or stand some on another target",
                    on.len(),
                    carrier.name,
                    carrier.kind.name(),
                    names.join(", "),
                    format_bytes(total as f64),
                    format_bytes(room as f64),
                ),
            ));
        }
        Ok(())
    }
}

impl Cx<'_> {
    /// Refuses more than one re-export (`export_of`) in a campaign, also
    /// when a swept gluster table gives one `nfs` table several volumes to
    /// stand on: every target is provisioned for the whole campaign, and
    /// NFS-Ganesha serves port 2049, one server per host.
    pub(super) fn check_one_re_export(
        &self,
        families: &[TargetFamily],
        targets: &[TargetSpec],
    ) -> Result<(), ExperimentError> {
        let re: Vec<&TargetSpec> = targets
            .iter()
            .filter(|t| matches!(t.params.get("export_of"), Some(Value::Str(_))))
            .collect();
        if re.len() < 2 {
            return Ok(());
        }
        let names: Vec<String> = re.iter().take(4).map(|t| format!("`{}`", t.name)).collect();
        let f = families
            .iter()
            .find(|f| f.name == re[1].family)
            .expect("a target's family");
        Err(self.err(
            f.on_key().1,
            format!(
                "{} targets re-export a Gluster volume over NFS ({}), but this host serves one: NFS-Ganesha listens on port 2049, and every target is provisioned for the whole campaign; re-export one volume per campaign",
                re.len(),
                names.join(", ")
            ),
        ))
    }
}

/// A target's `size`, when its kind has one.
fn size(params: &Params) -> Option<u64> {
    match params.get("size") {
        Some(Value::Size(b)) => Some(*b),
        _ => None,
    }
}

/// The table below family `f` whose sweep made the factor `key` that `f`
/// carries: the nearest one sweeping it.
fn sweeper<'f>(
    families: &'f [TargetFamily],
    carriers: &[Option<Carrier>],
    f: usize,
    key: &str,
) -> &'f str {
    let mut at = carriers[f].as_ref().map(|c| c.family);
    while let Some(c) = at {
        if families[c].sweep.axes.iter().any(|a| a.key == key) {
            return &families[c].name;
        }
        at = carriers[c].as_ref().map(|c| c.family);
    }
    &families[f].name
}

/// Families in an order where each comes after the one it stands on
/// (circles were refused before).
pub(super) fn stack_order(carriers: &[Option<Carrier>]) -> Vec<usize> {
    fn place(i: usize, carriers: &[Option<Carrier>], done: &mut Vec<usize>) {
        if done.contains(&i) {
            return;
        }
        if let Some(c) = &carriers[i] {
            place(c.family, carriers, done);
        }
        done.push(i);
    }
    let mut done = Vec::new();
    for i in 0..carriers.len() {
        place(i, carriers, &mut done);
    }
    done
}

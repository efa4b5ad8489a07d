//! Reading a workload's `capacity` table ([`super::capacity`]): its
//! keys, against how the workload's kind offers load.

use toml_edit::Table;

use super::capacity::{Capacity, CapacityParams};
use super::error::ExperimentError;
use super::parse::{percent, Cx};
use super::sweep::Factor;
use crate::workload::WorkloadConfig;

impl Cx<'_> {
    /// The `capacity` table of workload table `t` for its variant
    /// `name` (configured as `config`, made by the sweep's `factors`).
    pub(super) fn capacity(
        &self,
        t: &Table,
        name: &str,
        config: &dyn WorkloadConfig,
        factors: &[Factor],
    ) -> Result<Option<Capacity>, ExperimentError> {
        let Some(item) = t.get("capacity") else {
            return Ok(None);
        };
        let owner = format!("workload `{name}`: capacity");
        let Some(table) = item.as_table_like() else {
            return Err(self.err(
                item.span(),
                format!("{owner} must be a table such as {{ latency = \"p99\", max = \"10ms\" }}"),
            ));
        };
        let mut allowed: Vec<&str> = CapacityParams::PARAMS.iter().map(|s| s.name).collect();
        allowed.push("resolution");
        self.check_keys(table, &allowed, &owner)?;
        let open_loop = config.open_loop().map_err(|why| {
            self.err(
                item.span(),
                format!("{owner}: a capacity search sets the offered rate, and this workload has none to set: {why}"),
            )
        })?;
        if let Some(f) = factors.iter().find(|f| f.key == open_loop.param) {
            return Err(self.err(
                t.get("sweep").and_then(|s| s.span()),
                format!(
                    "{owner}: the search sets `{}` itself; do not sweep it too (swept to {})",
                    f.key, f.text
                ),
            ));
        }
        let resolution = match table.get("resolution") {
            None => None,
            Some(r) => Some(percent(r).ok_or_else(|| {
                self.err(
                    r.span(),
                    format!("{owner}: `resolution` must be a percentage such as \"5%\" (or a fraction such as 0.05)"),
                )
            })? / 100.0),
        };
        let (params, spans) = self.params(table, CapacityParams::PARAMS, &[], &owner)?;
        let p: CapacityParams = self.typed(&params, item.span())?;
        Capacity::new(p, resolution, open_loop)
            .map_err(|(key, why)| {
                let span = match key {
                    "resolution" => table.get("resolution").and_then(|r| r.span()),
                    k => spans.get(k).cloned().flatten(),
                };
                self.err(span.or(item.span()), format!("{owner}: {why}"))
            })
            .map(Some)
    }
}

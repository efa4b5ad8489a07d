//! The parameters each kind declares, by the kind's name as an experiment
//! file writes it: what a stored target's or workload's parameters are read
//! against (their order, defaults, types) where only the stored name of
//! the kind is known. The declarations stay with the kinds.

use crate::params::ParamSpec;
use crate::targets::TargetKind;
use crate::workload::WorkloadKind;

/// The parameters of target kind `kind`; none for a kind storlab does not
/// know (a store written by another version).
pub fn target_params(kind: &str) -> &'static [ParamSpec] {
    TargetKind::parse(kind).map_or(&[], |k| k.params())
}

/// The parameters of workload kind `kind`; none for an unknown kind.
pub fn workload_params(kind: &str) -> &'static [ParamSpec] {
    WorkloadKind::parse(kind).map_or(&[], |k| k.params())
}

//! What each kind declares, by the kind's name as an experiment file
//! writes it: its parameters (what a stored target's or workload's
//! parameters are read against: their order, defaults, types) and which of
//! a target's facts take a new value with every campaign — for the layers
//! that know only the stored name of the kind. The declarations stay with
//! the kinds.

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

/// Whether fact `name` of a target of kind `kind` takes a new value with
/// every campaign of the same configuration (a tmpfs's mount point, a
/// loop device's name): not a difference between two campaigns.
pub fn volatile_target_fact(kind: &str, name: &str) -> bool {
    TargetKind::parse(kind).is_some_and(|k| k.volatile_fact(name))
}

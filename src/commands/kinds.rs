//! `storlab targets` and `storlab workloads`: the registries' help, drawn
//! from the same parameter tables that parse experiment files.

use std::process::ExitCode;

use anyhow::Result;

use crate::params::help_table;
use crate::targets::TargetKind;
use crate::workload::WorkloadKind;

pub fn targets() -> Result<ExitCode> {
    outln!("Target kinds ([[target]] tables; every target also takes name, kind, baseline):\n");
    for k in TargetKind::all() {
        outln!("  {} — {}", k.name(), k.about());
        out!("{}", help_table(k.params()));
        outln!();
    }
    Ok(ExitCode::SUCCESS)
}

pub fn workloads() -> Result<ExitCode> {
    let shareable: Vec<&str> = WorkloadKind::all()
        .filter(|k| k.entry().shareable)
        .map(WorkloadKind::name)
        .collect();
    outln!(
        "Workload kinds ([[workload]] tables; every workload also takes name, kind, targets, and shared = true for {}: under MPI every rank in one directory):\n",
        shareable.join(" and ")
    );
    for k in WorkloadKind::all() {
        let p = k.primary();
        outln!(
            "  {} — {} (primary metric: {}, {} is better)",
            k.name(),
            k.about(),
            p.name,
            p.direction.as_str()
        );
        out!("{}", help_table(k.params()));
        outln!();
    }
    Ok(ExitCode::SUCCESS)
}

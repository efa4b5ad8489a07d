//! The figures a campaign's analysis reads of its runs, as each section
//! declares them beside the code that reads them, so that a reader that
//! lays out some sections reads only their figures from the store. A run
//! records dozens of figures (each device's, each process's, the host's
//! telemetry): `storlab show` and `run`'s closing summary judge a handful
//! of them, and at 10^5 runs reading the rest was most of their time.
//!
//! A section that reads a figure it does not declare here sees it as not
//! recorded: `every_row_tests` checks that the summary read this way is
//! the summary read whole.

use std::collections::BTreeSet;

use super::campaign::{laid_out, Options, PAIR_FIGURES};
use super::{attribution, capacity, chosen, matrix, model, reads, steady, telemetry, warnings};
use crate::store::{CampaignData, Parts};

/// What of its runs the analysis of campaign `head` (read without its
/// runs, [`crate::store::Store::load_campaign_head`]) reads for `options`:
/// the figures its sections declare; for the report, beside them, the
/// telemetry panels' figures per pair ([`Parts::columns`]: the panels
/// show statistics of them all, and read nothing else of them); every
/// figure for a matrix, whose cells are every figure its runs recorded.
pub fn parts(head: &CampaignData, options: &Options) -> Parts {
    let every = Parts::terminal();
    if head.workloads.iter().any(|w| w.kind == matrix::KIND) {
        return every;
    }
    let mut names: BTreeSet<String> = BTreeSet::new();
    for w in &head.workloads {
        names.extend(model::figures(w, &chosen::choose(w)));
    }
    let declared = [
        reads::FIGURES,
        attribution::FIGURES,
        steady::FIGURES,
        PAIR_FIGURES,
    ];
    names.extend(
        declared
            .iter()
            .flat_map(|f| f.iter())
            .map(|d| d.name.to_string()),
    );
    names.extend(warnings::figures().map(|d| d.name.to_string()));
    names.extend(capacity::figures(head));
    if options.summary_only {
        return Parts {
            metrics: Some(names.into_iter().collect()),
            ..every
        };
    }
    names.extend(telemetry::RUN_FIGURES.iter().map(|d| d.name.to_string()));
    let columns = (telemetry::figures_read())
        .filter(|n| !names.contains(*n))
        .map(String::from)
        .collect::<BTreeSet<_>>();
    // The telemetry of the workloads the report lays out only.
    let columns_of = laid_out(&head.workloads, options).only(&head.workloads);
    Parts {
        metrics: Some(names.into_iter().collect()),
        columns: columns.into_iter().collect(),
        columns_of,
        ..every
    }
}

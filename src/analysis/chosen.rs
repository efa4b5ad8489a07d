//! What the model summarises of a workload beyond its stored primary
//! metric and the catalogue's headlines, per workload kind: a matrix's
//! verdict concerns the geometric mean of its `primary_test`, beside each
//! test's ([`super::matrix`]). Other kinds choose nothing of their own.

use super::matrix;
use super::model::Chosen;
use crate::store::WorkloadRow;

/// The metric `w`'s verdict and the regression gate concern, in place of
/// its stored primary metric, and the metrics summarised beside it.
pub fn choose(w: &WorkloadRow) -> Chosen {
    Chosen {
        primary: matrix::primary_metric(w),
        beside: matrix::summary_metrics(w),
    }
}

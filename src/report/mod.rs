//! Report generation: turning stored runs into a self-contained HTML report.

pub mod svg;

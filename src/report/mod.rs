//! Reports laid out for people, from the analysis of the store
//! ([`crate::analysis`]: the statistics, verdicts, comparisons, studies
//! and histories) — never from the filesystem under test.
//!
//! Layers, each using only those below it: [`sections`] and [`contrib`]
//! (what a workload kind or a feature adds) turn the analysis into the
//! sections of one [`document::Document`], in the order [`outline`] gives;
//! [`render`] lays that document out for the terminal, Markdown and HTML,
//! drawing [`svg`] charts. Every verdict, in every output, is worded by
//! [`verdict::words`]. Beside them: the history page
//! ([`history_page`]). The exports of every run for pandas, R and
//! spreadsheets are not a layout of the analysis: they live in
//! [`crate::export`]. Formatting for people happens only here.

pub mod contrib;
pub mod document;
#[cfg(test)]
mod every_row_tests;
pub mod format;
pub mod history_page;
pub mod json;
pub mod outline;
pub mod provenance;
pub mod render;
pub mod sections;
pub mod svg;
pub mod table;
pub mod text;
pub mod verdict;

//! Reports built from the store — never from the filesystem under test.
//!
//! Layers, each using only those below it: [`model`] computes the
//! statistics and verdicts; [`sections`] and [`contrib`] (what a workload
//! kind or a feature adds) turn them into the sections of one
//! [`document::Document`], in the order [`outline`] gives; [`render`] lays
//! that document out for the terminal, Markdown and HTML. Beside them:
//! `storlab compare` ([`compare`]) and the exports ([`export`]), which read
//! the store directly. Formatting for people happens only here.

pub mod compare;
pub mod contrib;
pub mod differences;
pub mod document;
pub mod export;
pub mod format;
pub mod history;
pub mod history_page;
pub mod latency;
pub mod model;
pub mod outline;
pub mod provenance;
pub mod ranks;
pub mod render;
pub mod sections;
pub mod steady;
pub mod svg;
pub mod table;
pub mod text;

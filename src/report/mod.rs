//! Reports built from the store — never from the filesystem under test:
//! the model (statistics and verdicts), terminal, Markdown and HTML
//! renderings, comparisons, exports; formatting for people happens only here.

pub mod compare;
pub mod differences;
pub mod export;
pub mod format;
pub mod history;
pub mod history_page;
pub mod html;
pub mod latency;
pub mod markdown;
pub mod markup;
pub mod matrix;
pub mod model;
pub mod provenance;
pub mod ranks;
pub mod sections;
pub mod steady;
pub mod summary;
pub mod svg;
pub mod table;

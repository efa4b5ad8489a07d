//! Reports built from the store: terminal summary, exports; formatting of
//! values for people happens only here.

pub mod export;
pub mod format;
pub mod summary;
pub mod table;

//! Exports for pandas, R and spreadsheets, built from the store: a tidy CSV
//! (one row per run and metric, values in stored base units, a column per
//! label and per parameter) and the whole campaign as JSON under a schema
//! version, its layout published as a JSON Schema in
//! `docs/export.schema.json`.

mod csv;
mod json;

pub use self::csv::{excel_safe, to_csv, to_csv_all, Columns, CsvOptions, CsvWriter};
pub use self::json::{to_json, Document, StreamedDocument, JSON_SCHEMA_VERSION};

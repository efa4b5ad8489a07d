//! Parameter declarations, declared once per target and workload kind.
//!
//! As fio's `options.c`, one table per kind drives parsing, defaults, help
//! (`storlab targets`, `storlab workloads`) and the parameter rows stored with
//! every run. A kind's table is a `&'static [ParamSpec]`; parsing turns the
//! user's TOML into [`Params`], typed values in base units.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use super::units::{parse_duration, parse_size};

/// The type of a parameter, which decides how its TOML value is read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamType {
    /// Bytes, written `4k`, `256M` or as an integer number of bytes.
    Size,
    /// A duration, written `500ms`, `20s` or as a number of seconds.
    Duration,
    /// A whole number within an inclusive range.
    Int {
        min: i64,
        max: i64,
    },
    /// A real number within an inclusive range.
    Float {
        min: f64,
        max: f64,
    },
    Bool,
    Str,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    /// A list of strings; a single comma-separated string is accepted too.
    List,
    /// An argument vector (a list of strings) or one string kept whole, as
    /// a command is written; never split.
    Args,
    /// A table of scalar settings (`{ recordsize = "8k" }`), kept as text.
    Map,
}

impl ParamType {
    pub fn describe(&self) -> String {
        match self {
            ParamType::Size => "size".into(),
            ParamType::Duration => "duration".into(),
            ParamType::Int { .. } => "integer".into(),
            ParamType::Float { .. } => "number".into(),
            ParamType::Bool => "boolean".into(),
            ParamType::Str => "string".into(),
            ParamType::Choice(options) => options.join("|"),
            ParamType::List => "list of strings".into(),
            ParamType::Args => "argument list or string".into(),
            ParamType::Map => "table".into(),
        }
    }
}

/// One declared parameter of a kind.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub name: &'static str,
    pub ty: ParamType,
    /// Default as the user would write it; `None` means optional with no value.
    pub default: Option<&'static str>,
    pub help: &'static str,
}

/// A parsed parameter value, in base units.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Size(u64),
    Duration(Duration),
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    List(Vec<String>),
    Map(BTreeMap<String, String>),
}

impl Value {
    /// The JSON echo of a value, in base units (bytes, seconds).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Size(b) => json!(b),
            Value::Duration(d) => json!(d.as_secs_f64()),
            Value::Int(i) => json!(i),
            Value::Float(f) => json!(f),
            Value::Bool(b) => json!(b),
            Value::Str(s) => json!(s),
            Value::List(l) => json!(l),
            Value::Map(m) => json!(m),
        }
    }

    /// Parses the textual form used for defaults.
    pub fn from_default(ty: ParamType, text: &str) -> Result<Value, String> {
        Ok(match ty {
            ParamType::Size => Value::Size(parse_size(text)?),
            ParamType::Duration => Value::Duration(parse_duration(text)?),
            ParamType::Int { .. } => Value::Int(text.parse().map_err(|e| format!("{e}"))?),
            ParamType::Float { .. } => Value::Float(text.parse().map_err(|e| format!("{e}"))?),
            ParamType::Bool => Value::Bool(text == "true"),
            ParamType::Str | ParamType::Choice(_) => Value::Str(text.to_string()),
            ParamType::List => Value::List(split_list(text)),
            ParamType::Args => Value::List(vec![text.to_string()]),
            ParamType::Map => Value::Map(BTreeMap::new()),
        })
    }
}

/// Splits `a,b,c` into words, dropping empty ones.
pub fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Resolved parameters of one target or workload: every declared parameter
/// with a default is present.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    values: BTreeMap<String, Value>,
}

impl Params {
    /// Parameters holding only the declared defaults.
    pub fn defaults(specs: &[ParamSpec]) -> Params {
        let mut p = Params::default();
        for spec in specs {
            if let Some(text) = spec.default {
                if let Ok(v) = Value::from_default(spec.ty, text) {
                    p.values.insert(spec.name.to_string(), v);
                }
            }
        }
        p
    }

    pub fn set(&mut self, name: &str, value: Value) {
        self.values.insert(name.to_string(), value);
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    pub fn size(&self, name: &str) -> Option<u64> {
        match self.get(name)? {
            Value::Size(b) => Some(*b),
            _ => None,
        }
    }

    pub fn duration(&self, name: &str) -> Option<Duration> {
        match self.get(name)? {
            Value::Duration(d) => Some(*d),
            _ => None,
        }
    }

    pub fn int(&self, name: &str) -> Option<i64> {
        match self.get(name)? {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn float(&self, name: &str) -> Option<f64> {
        match self.get(name)? {
            Value::Float(f) => Some(*f),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }

    pub fn bool(&self, name: &str) -> Option<bool> {
        match self.get(name)? {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn str(&self, name: &str) -> Option<&str> {
        match self.get(name)? {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn list(&self, name: &str) -> Option<&[String]> {
        match self.get(name)? {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    pub fn map(&self, name: &str) -> Option<&BTreeMap<String, String>> {
        match self.get(name)? {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The parameter rows stored with each run, in base units.
    pub fn to_json(&self) -> serde_json::Value {
        let map: serde_json::Map<String, serde_json::Value> = self
            .values
            .iter()
            .map(|(k, v)| (k.clone(), v.to_json()))
            .collect();
        serde_json::Value::Object(map)
    }
}

/// Renders a kind's parameter table for `storlab targets` / `storlab workloads`.
pub fn help_table(specs: &[ParamSpec]) -> String {
    let width = specs.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for s in specs {
        let default = s
            .default
            .map(|d| format!(" [default: {d}]"))
            .unwrap_or_default();
        out.push_str(&format!(
            "    {:width$}  {} ({}){}\n",
            s.name,
            s.help,
            s.ty.describe(),
            default
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec {
            name: "bs",
            ty: ParamType::Size,
            default: Some("4k"),
            help: "block size",
        },
        ParamSpec {
            name: "runtime",
            ty: ParamType::Duration,
            default: None,
            help: "time",
        },
    ];

    #[test]
    fn defaults_are_resolved_in_base_units() {
        let p = Params::defaults(SPECS);
        assert_eq!(p.size("bs"), Some(4096));
        assert_eq!(p.duration("runtime"), None);
        assert_eq!(p.to_json(), json!({"bs": 4096}));
    }
}

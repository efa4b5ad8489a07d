//! Parameter values as parsed, in base units (bytes, seconds), and the
//! resolved set of one target or workload: what is stored with each run,
//! what a sweep overrides, and what a kind's typed struct is read from.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use super::units::{parse_duration, parse_size};
use super::{ParamSpec, ParamType};

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

    /// Replaces one entry of a table parameter (`options`, `settings`,
    /// `properties`), as a sweep of a nested key does; the table is
    /// created when the parameter had none.
    pub fn set_entry(&mut self, name: &str, key: &str, text: &str) -> Result<(), String> {
        let entry = self
            .values
            .entry(name.to_string())
            .or_insert_with(|| Value::Map(BTreeMap::new()));
        match entry {
            Value::Map(m) => {
                m.insert(key.to_string(), text.to_string());
                Ok(())
            }
            _ => Err(format!("`{name}` is not a table")),
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

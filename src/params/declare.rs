//! [`declare!`]: a kind's parameters, written once.
//!
//! ```text
//! declare! {
//!     /// The parameters of an `io` workload.
//!     pub struct IoParams {
//!         rw: choice(Rw) = "read" => "access pattern, as fio's rw",
//!         bs: size = "4k" => "block size of each operation",
//!         numjobs: int(usize, 1, 1024) = "1" => "threads, each with its own file",
//!         runtime: duration => "time-based run length",
//!         image: flatten(ImageParams),
//!     }
//! }
//! ```
//!
//! Each line is a parameter: its name, its type, its default as a user
//! would write it, and its help. The macro makes the struct (a field per
//! parameter, `Option<_>` where there is no default) and its [`Declared`]
//! impl: the table `PARAMS`, in the order written, and `from_params`. The
//! types and the field each gives:
//!
//! | declared                 | [`ParamType`]       | field                      |
//! |--------------------------|---------------------|----------------------------|
//! | `size`                   | `Size`              | `u64` (bytes)              |
//! | `duration`               | `Duration`          | `std::time::Duration`      |
//! | `int(T, MIN, MAX)`       | `Int { MIN, MAX }`  | `T` (the range must fit T) |
//! | `float(MIN, MAX)`        | `Float { MIN, MAX }`| `f64`                      |
//! | `bool`                   | `Bool`              | `bool`                     |
//! | `string`                 | `Str`               | `String`                   |
//! | `choice(E)`              | `Choice(E::NAMES)`  | `E`, a [`choices!`] enum   |
//! | `one_of(NAMES)`          | `Choice(NAMES)`     | `String`                   |
//! | `list`                   | `List`              | `Vec<String>`              |
//! | `args`                   | `Args`              | `Vec<String>`              |
//! | `map`                    | `Map`               | `BTreeMap<String, String>` |
//! | `flatten(G)`             | `G`'s rows, in place| `G`, another declared struct |
//!
//! `flatten` lets kinds share a group of parameters (the image of `loop`
//! and `zfs`) with one declaration.
//!
//! [`Declared`]: super::Declared
//! [`ParamType`]: super::ParamType
//! [`choices!`]: super::choices

use super::{Fault, ParamSpec, ParamType, Params, Value};

/// Declares a kind's parameters; see the module documentation.
macro_rules! declare {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident { $($body:tt)* }
    ) => {
        $crate::params::declare!(@munch [p] [$(#[$meta])* $vis struct $name]
            fields[] specs[] reads[] $($body)*);
    };

    // A group of parameters declared elsewhere, in place.
    (@munch [$p:ident] [$($head:tt)*] fields[$($f:tt)*] specs[$($s:tt)*] reads[$($r:tt)*]
        $field:ident : flatten($group:ty) $(, $($rest:tt)*)?
    ) => {
        $crate::params::declare!(@munch [$p] [$($head)*]
            fields[$($f)* pub $field: $group,]
            specs[$($s)* <$group as $crate::params::Declared>::PARAMS,]
            reads[$($r)* $field: <$group as $crate::params::Declared>::from_params($p)?,]
            $($($rest)*)?);
    };

    // A parameter with a default: the field holds the value itself.
    (@munch [$p:ident] [$($head:tt)*] fields[$($f:tt)*] specs[$($s:tt)*] reads[$($r:tt)*]
        $field:ident : $kind:ident $(($($arg:tt)*))? = $default:literal => $help:literal
        $(, $($rest:tt)*)?
    ) => {
        $crate::params::declare!(@munch [$p] [$($head)*]
            fields[$($f)* #[doc = $help] pub $field: $crate::params::declare!(@ty $kind $(($($arg)*))?),]
            specs[$($s)* &[$crate::params::ParamSpec {
                name: stringify!($field),
                ty: $crate::params::declare!(@spec $kind $(($($arg)*))?),
                default: Some($default),
                help: $help,
            }],]
            reads[$($r)* $field: $crate::params::required($p, stringify!($field),
                |v| $crate::params::declare!(@read $kind $(($($arg)*))?, v))?,]
            $($($rest)*)?);
    };

    // A parameter without a default: the field is `None` when not given.
    (@munch [$p:ident] [$($head:tt)*] fields[$($f:tt)*] specs[$($s:tt)*] reads[$($r:tt)*]
        $field:ident : $kind:ident $(($($arg:tt)*))? => $help:literal
        $(, $($rest:tt)*)?
    ) => {
        $crate::params::declare!(@munch [$p] [$($head)*]
            fields[$($f)* #[doc = $help] pub $field: Option<$crate::params::declare!(@ty $kind $(($($arg)*))?)>,]
            specs[$($s)* &[$crate::params::ParamSpec {
                name: stringify!($field),
                ty: $crate::params::declare!(@spec $kind $(($($arg)*))?),
                default: None,
                help: $help,
            }],]
            reads[$($r)* $field: $crate::params::optional($p, stringify!($field),
                |v| $crate::params::declare!(@read $kind $(($($arg)*))?, v))?,]
            $($($rest)*)?);
    };

    // Every line read: the struct and its table.
    (@munch [$p:ident] [$(#[$meta:meta])* $vis:vis struct $name:ident]
        fields[$($f:tt)*] specs[$($s:tt)*] reads[$($r:tt)*]
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        $vis struct $name {
            $($f)*
        }

        impl $name {
            /// The table: parsing, defaults, help and the stored rows.
            pub const PARAMS: &'static [$crate::params::ParamSpec] = {
                const PARTS: &[&[$crate::params::ParamSpec]] = &[$($s)*];
                const TABLE: [$crate::params::ParamSpec; $crate::params::total_len(PARTS)] =
                    $crate::params::concat(PARTS);
                &TABLE
            };

            /// Reads every declared parameter from resolved values.
            pub fn from_params($p: &$crate::params::Params) -> Result<Self, $crate::params::Fault> {
                Ok($name { $($r)* })
            }
        }

        impl $crate::params::Declared for $name {
            const PARAMS: &'static [$crate::params::ParamSpec] = $name::PARAMS;

            fn from_params(p: &$crate::params::Params) -> Result<Self, $crate::params::Fault> {
                $name::from_params(p)
            }
        }
    };

    (@ty size) => { u64 };
    (@ty duration) => { ::std::time::Duration };
    (@ty int($t:ty, $min:expr, $max:expr)) => { $t };
    (@ty float($min:expr, $max:expr)) => { f64 };
    (@ty bool) => { bool };
    (@ty string) => { String };
    (@ty choice($t:ty)) => { $t };
    (@ty one_of($names:expr)) => { String };
    (@ty list) => { Vec<String> };
    (@ty args) => { Vec<String> };
    (@ty map) => { ::std::collections::BTreeMap<String, String> };

    (@spec size) => { $crate::params::ParamType::Size };
    (@spec duration) => { $crate::params::ParamType::Duration };
    (@spec int($t:ty, $min:expr, $max:expr)) => {{
        // The declared range must fit the field's type, so that reading
        // a checked value can never fail or wrap.
        const _: () = assert!(
            ($min as i128) >= (<$t>::MIN as i128) && ($max as i128) <= (<$t>::MAX as i128),
            "an int parameter's range must fit its type"
        );
        $crate::params::ParamType::Int { min: $min, max: $max }
    }};
    (@spec float($min:expr, $max:expr)) => {
        $crate::params::ParamType::Float { min: $min, max: $max }
    };
    (@spec bool) => { $crate::params::ParamType::Bool };
    (@spec string) => { $crate::params::ParamType::Str };
    (@spec choice($t:ty)) => {
        $crate::params::ParamType::Choice(<$t as $crate::params::Choice>::NAMES)
    };
    (@spec one_of($names:expr)) => { $crate::params::ParamType::Choice($names) };
    (@spec list) => { $crate::params::ParamType::List };
    (@spec args) => { $crate::params::ParamType::Args };
    (@spec map) => { $crate::params::ParamType::Map };

    (@read size, $v:ident) => {
        match $v { $crate::params::Value::Size(b) => Some(*b), _ => None }
    };
    (@read duration, $v:ident) => {
        match $v { $crate::params::Value::Duration(d) => Some(*d), _ => None }
    };
    (@read int($t:ty, $min:expr, $max:expr), $v:ident) => {
        match $v { $crate::params::Value::Int(i) => <$t>::try_from(*i).ok(), _ => None }
    };
    (@read float($min:expr, $max:expr), $v:ident) => {
        match $v {
            $crate::params::Value::Float(f) => Some(*f),
            $crate::params::Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    };
    (@read bool, $v:ident) => {
        match $v { $crate::params::Value::Bool(b) => Some(*b), _ => None }
    };
    (@read string, $v:ident) => {
        match $v { $crate::params::Value::Str(s) => Some(s.clone()), _ => None }
    };
    (@read choice($t:ty), $v:ident) => {
        match $v {
            $crate::params::Value::Str(s) => <$t as $crate::params::Choice>::from_name(s),
            _ => None,
        }
    };
    (@read one_of($names:expr), $v:ident) => {
        match $v {
            $crate::params::Value::Str(s) if $names.contains(&s.as_str()) => Some(s.clone()),
            _ => None,
        }
    };
    (@read list, $v:ident) => {
        match $v { $crate::params::Value::List(l) => Some(l.clone()), _ => None }
    };
    (@read args, $v:ident) => {
        match $v { $crate::params::Value::List(l) => Some(l.clone()), _ => None }
    };
    (@read map, $v:ident) => {
        match $v { $crate::params::Value::Map(m) => Some(m.clone()), _ => None }
    };
}

pub(crate) use declare;

/// A parameter that has a default, read from resolved values.
pub fn required<T>(
    p: &Params,
    name: &'static str,
    read: impl Fn(&Value) -> Option<T>,
) -> Result<T, Fault> {
    match p.get(name) {
        Some(v) => read(v).ok_or_else(|| mistyped(name, v)),
        None => Err((
            name,
            format!("`{name}` has no value (not even its default)"),
        )),
    }
}

/// A parameter without a default, read from resolved values.
pub fn optional<T>(
    p: &Params,
    name: &'static str,
    read: impl Fn(&Value) -> Option<T>,
) -> Result<Option<T>, Fault> {
    match p.get(name) {
        Some(v) => read(v).map(Some).ok_or_else(|| mistyped(name, v)),
        None => Ok(None),
    }
}

fn mistyped(name: &'static str, v: &Value) -> Fault {
    (
        name,
        format!("`{name}` holds {v:?}, which is not a value of its declared type"),
    )
}

/// The rows of a table made of parts (a kind's own rows and flattened groups).
pub const fn total_len(parts: &[&[ParamSpec]]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < parts.len() {
        n += parts[i].len();
        i += 1;
    }
    n
}

/// The parts of a table, in order, as one array of `N` rows.
pub const fn concat<const N: usize>(parts: &[&[ParamSpec]]) -> [ParamSpec; N] {
    const BLANK: ParamSpec = ParamSpec {
        name: "",
        ty: ParamType::Bool,
        default: None,
        help: "",
    };
    let mut out = [BLANK; N];
    let (mut k, mut i) = (0, 0);
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            out[k] = parts[i][j];
            k += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(k == N, "a parameter table's length is the sum of its parts");
    out
}

//! Parameters that take one of a fixed set of words, read as an enum: the
//! words are written once, in [`choices!`], and give the table's
//! `Choice(NAMES)` (help, parsing, "did you mean") and the enum's parse.

/// An enum whose values are the words of a choice parameter.
pub trait Choice: Sized + Copy {
    /// The words, in the order help lists them.
    const NAMES: &'static [&'static str];
    fn from_name(name: &str) -> Option<Self>;
    fn name(self) -> &'static str;
}

/// Declares an enum of words:
///
/// ```text
/// choices! {
///     /// How the data is made durable.
///     pub enum Sync { Fsync = "fsync", Sync = "sync" }
/// }
/// ```
///
/// gives the enum (`Debug, Clone, Copy, PartialEq, Eq`), `NAMES`,
/// `parse(&str)`, `name()` and the [`Choice`] impl that `declare!`'s
/// `choice(E)` reads.
macro_rules! choices {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $word:literal),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            pub const NAMES: &'static [&'static str] = &[$($word),+];

            pub fn parse(word: &str) -> Option<$name> {
                match word {
                    $($word => Some($name::$variant),)+
                    _ => None,
                }
            }

            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }
        }

        impl $crate::params::Choice for $name {
            const NAMES: &'static [&'static str] = $name::NAMES;

            fn from_name(word: &str) -> Option<$name> {
                $name::parse(word)
            }

            fn name(self) -> &'static str {
                $name::name(self)
            }
        }
    };
}

pub(crate) use choices;

//! The programs storlab starts and how they end: a measured child process
//! (its own process group, rusage, output kept, stopped or timed out as a
//! group), what such a child leaves running (killed and reaped), which
//! processes hold a file open, and the
//! stop flag that SIGINT, SIGTERM, SIGHUP or a closed stderr raise.

pub mod child;
pub mod holders;
pub mod stat;
pub mod stop;
pub mod strays;
pub mod watch;

pub use stop::StopFlag;

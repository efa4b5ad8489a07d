//! A process as `/proc/PID/stat` tells it: its command name (the kernel
//! keeps 15 bytes of it), its state and the time it started (clock ticks
//! since boot; a pid reused by another process has another start time).

/// One process's stat line, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub comm: String,
    /// `R`, `S`, `D`, `T` (stopped by a signal), `t` (stopped by a
    /// tracer), `Z` (a zombie), …
    pub state: char,
    pub start: u64,
}

impl Stat {
    /// Stopped by SIGSTOP (or SIGTSTP…) or held by a tracer.
    pub fn stopped(&self) -> bool {
        matches!(self.state, 'T' | 't')
    }

    pub fn zombie(&self) -> bool {
        self.state == 'Z'
    }
}

/// `pid`'s stat, if it exists.
pub fn of(pid: u32) -> Option<Stat> {
    parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// A stat line: the command name may hold spaces and parentheses, so the
/// fields are counted from the last `)`.
pub fn parse(text: &str) -> Option<Stat> {
    let (left, rest) = text.rsplit_once(')')?;
    let comm = left.split_once('(')?.1.to_string();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); starttime is field 22.
    Some(Stat {
        comm,
        state: fields.first()?.chars().next()?,
        start: fields.get(22 - 3)?.parse().ok()?,
    })
}

/// Whether `pid` runs `program` (by its command name, as the kernel
/// truncates it) and is no zombie.
pub fn alive_as(pid: u32, program: &str) -> bool {
    let want: String = program.chars().take(15).collect();
    of(pid).is_some_and(|s| s.comm == want && !s.zombie())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_with_spaces_and_parentheses_is_read_whole() {
        let line = "42 (a (b) c) T 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 777 0 0";
        let s = parse(line).unwrap();
        assert_eq!((s.comm.as_str(), s.state, s.start), ("a (b) c", 'T', 777));
        assert!(s.stopped() && !s.zombie());
        let me = of(std::process::id()).unwrap();
        assert!(!me.stopped() && me.start > 0);
    }
}

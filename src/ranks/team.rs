//! The ranks of a job as storlab uses them: the start-up handshake (every
//! rank parses rank 0's experiment and says hello with its host), rank 0's
//! instructions, and the small agreements of each run. Every rank reaches
//! every collective in the same order whatever fails, so that an error on
//! one rank is reported, never a hang.

use anyhow::{bail, Result};
use serde::{de::DeserializeOwned, Serialize};

use super::protocol::{decode, encode, Hello, Instruction, Opening, Start};
use super::Ranks;
use crate::experiment::{self, Experiment};

const VERSION: &str = crate::VERSION;

pub struct Team {
    ranks: Ranks,
    /// Every rank's host name, known on every rank after the handshake.
    hosts: Vec<String>,
}

impl Team {
    /// A single process: storlab without MPI.
    pub fn single() -> Team {
        Team {
            ranks: Ranks::single(),
            hosts: vec![crate::host::hostname()],
        }
    }

    /// Joins the launcher's job, or is a single process without one.
    pub fn join() -> Result<Team> {
        let ranks = Ranks::from_launcher()?;
        let host = crate::host::hostname();
        Ok(Team {
            hosts: vec![host; ranks.size()],
            ranks,
        })
    }

    pub fn rank(&self) -> usize {
        self.ranks.rank()
    }

    pub fn size(&self) -> usize {
        self.ranks.size()
    }

    pub fn is_root(&self) -> bool {
        self.ranks.is_root()
    }

    /// More than one rank: runs go through [`super::turn`].
    pub fn is_multi(&self) -> bool {
        self.ranks.size() > 1
    }

    pub fn host(&self, rank: usize) -> &str {
        self.hosts.get(rank).map(String::as_str).unwrap_or("?")
    }

    /// The lowest rank on its host does what is done once per host
    /// (dropping the page cache).
    pub fn leads_host(&self) -> bool {
        let me = self.host(self.rank());
        self.hosts.iter().position(|h| h == me) == Some(self.rank())
    }

    /// The first rank of a host other than rank 0's: it mounts there what
    /// rank 0 provisioned, and drops that host's caches.
    pub fn leads_other_host(&self) -> bool {
        self.leads_host() && self.host(self.rank()) != self.host(0)
    }

    /// The hosts of the job other than rank 0's, each once, in rank order.
    pub fn other_hosts(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for h in &self.hosts {
            if h != self.host(0) && !out.contains(h) {
                out.push(h.clone());
            }
        }
        out
    }

    /// Rank 0: offers `exp` to the other ranks and waits for every one to
    /// have parsed it. An error names each rank that could not.
    pub fn open(&mut self, exp: &Experiment) -> Result<()> {
        if !self.is_multi() {
            return Ok(());
        }
        let refusal = refuse(exp).err();
        let opening = match &refusal {
            None => Opening::Experiment {
                origin: exp.origin.clone(),
                source: exp.source.clone(),
                version: VERSION.into(),
            },
            Some(_) => Opening::Abort,
        };
        self.ranks.broadcast(encode(&opening));
        if let Some(why) = refusal {
            return Err(why);
        }
        let hellos: Vec<Hello> = self.gather(&Hello {
            host: crate::host::hostname(),
            error: None,
        });
        let errors: Vec<String> = hellos
            .iter()
            .enumerate()
            .filter_map(|(r, h)| Some(format!("rank {r} on {}: {}", h.host, h.error.as_ref()?)))
            .collect();
        let start = Start {
            go: errors.is_empty(),
            hosts: hellos.into_iter().map(|h| h.host).collect(),
        };
        self.ranks.broadcast(encode(&start));
        self.hosts = start.hosts;
        if !errors.is_empty() {
            bail!(
                "not every rank can run the experiment: {}",
                errors.join("; ")
            );
        }
        Ok(())
    }

    /// Rank 0, when it has no experiment to offer: releases the others.
    pub fn abort(&self) {
        if self.is_multi() && self.is_root() {
            self.ranks.broadcast(encode(&Opening::Abort));
        }
    }

    /// The other ranks: the experiment rank 0 offers, or `None` when the job
    /// ends before any run (rank 0 reports why).
    pub fn accept(&mut self) -> Result<Option<Experiment>> {
        let opening: Opening = decode(&self.ranks.broadcast(Vec::new()))?;
        let Opening::Experiment {
            origin,
            source,
            version,
        } = opening
        else {
            return Ok(None);
        };
        let parsed = experiment::parse_experiment(&origin, &source);
        let error = if version != VERSION {
            Some(format!(
                "storlab {VERSION} here but {version} on rank 0; install the same storlab on every host"
            ))
        } else {
            parsed.as_ref().err().map(|e| e.to_string())
        };
        self.gather(&Hello {
            host: crate::host::hostname(),
            error,
        });
        let start: Start = decode(&self.ranks.broadcast(Vec::new()))?;
        self.hosts = start.hosts;
        match parsed {
            Ok(exp) if start.go => Ok(Some(exp)),
            _ => Ok(None),
        }
    }

    /// Rank 0 sends, the others receive.
    pub fn instruct(&self, i: &Instruction) {
        self.ranks.broadcast(encode(i));
    }

    pub fn instruction(&self) -> Result<Instruction> {
        decode(&self.ranks.broadcast(Vec::new()))
    }

    /// Ends the campaign for the other ranks, on every path out of rank 0's
    /// campaign (the guard sends [`Instruction::Over`] when dropped).
    pub fn over_on_drop(&self) -> OverGuard<'_> {
        OverGuard(self)
    }

    pub fn barrier(&self) {
        self.ranks.barrier();
    }

    /// On rank 0 every rank's `mine`, in rank order; elsewhere empty. A
    /// message that does not decode is a bug, reported as that rank's error
    /// by the caller's own types; here it panics with the reason.
    pub fn gather<T: Serialize + DeserializeOwned>(&self, mine: &T) -> Vec<T> {
        self.ranks
            .gather(&encode(mine))
            .iter()
            .map(|b| decode(b).expect("a message from another storlab rank of this build"))
            .collect()
    }

    /// Every rank's error, if any, known on every rank: `(rank, error)`.
    pub fn failures(&self, mine: Option<String>) -> Vec<(usize, String)> {
        let all: Vec<Option<String>> = self.gather(&mine);
        let failed: Vec<(usize, String)> = all
            .into_iter()
            .enumerate()
            .filter_map(|(r, e)| Some((r, e?)))
            .collect();
        decode(&self.ranks.broadcast(encode(&failed))).expect("rank 0's own encoding")
    }
}

/// Sends [`Instruction::Over`] to the other ranks when dropped.
pub struct OverGuard<'a>(&'a Team);

impl Drop for OverGuard<'_> {
    fn drop(&mut self) {
        if self.0.is_multi() && self.0.is_root() {
            self.0.instruct(&Instruction::Over);
        }
    }
}

/// Workload kinds that cannot run once per rank.
fn refuse(exp: &Experiment) -> Result<()> {
    for w in &exp.workloads {
        if !w.kind.entry().per_rank {
            bail!(
                "workload `{}` ({}) cannot run on several MPI ranks: each rank would run its own database, which measures neither a shared server nor the storage's scaling; run it without mpirun, in an experiment of its own",
                w.name,
                w.kind.name()
            );
        }
    }
    Ok(())
}

//! bpftrace's output read back: its JSON lines (`-f json`) gathered into
//! [`Dump`]s, one per mark, each the maps' cumulative counts at that
//! moment; [`Dump::since`] is what happened between two of them.

use std::collections::BTreeMap;

use serde_json::Value;

use super::script::{END, MARK, READY, RESET};

/// A device (its kernel number) and an operation (its number in
/// [`super::script::OPS`]).
pub type DevOp = (u64, u8);

/// Per device, operation and sampling shift `w` (each request stands for
/// 2^w), a bucket `(shift, m)` → requests timed.
pub type Buckets = BTreeMap<(u64, u8, u32, u32, u64), u64>;

/// The maps at one mark.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dump {
    /// The mark's number (the sampler's sample) and its time (CLOCK_MONOTONIC ns).
    pub seq: u64,
    pub ns: u64,
    /// Issue → completion of the sampled requests, by bucket.
    pub latency: Buckets,
    /// Per device: flushes (flush requests and writes with a preflush), FUA writes.
    pub flushes: BTreeMap<u64, u64>,
    pub fua: BTreeMap<u64, u64>,
}

fn minus<K: Ord + Clone>(a: &BTreeMap<K, u64>, b: &BTreeMap<K, u64>) -> BTreeMap<K, u64> {
    a.iter()
        .filter_map(|(k, v)| {
            let d = v.saturating_sub(b.get(k).copied().unwrap_or(0));
            (d > 0).then(|| (k.clone(), d))
        })
        .collect()
}

impl Dump {
    /// What was counted after `earlier` up to this dump.
    pub fn since(&self, earlier: &Dump) -> Dump {
        Dump {
            seq: self.seq,
            ns: self.ns,
            latency: minus(&self.latency, &earlier.latency),
            flushes: minus(&self.flushes, &earlier.flushes),
            fua: minus(&self.fua, &earlier.fua),
        }
    }

    /// Per device and operation, the requests timed.
    pub fn timed(&self) -> BTreeMap<DevOp, u64> {
        let mut out = BTreeMap::new();
        for (&(dev, op, ..), &n) in &self.latency {
            *out.entry((dev, op)).or_insert(0) += n;
        }
        out
    }

    /// This dump's counts of `devices` (kernel numbers) alone.
    pub fn only(mut self, devices: &[u64]) -> Dump {
        let keep = |d: &u64| devices.contains(d);
        self.latency.retain(|k, _| keep(&k.0));
        self.flushes.retain(|k, _| keep(k));
        self.fua.retain(|k, _| keep(k));
        self
    }

    fn add_map(&mut self, name: &str, entries: &serde_json::Map<String, Value>) {
        for (key, value) in entries {
            let Some(v) = value.as_i64().map(|v| v.max(0) as u64) else {
                continue;
            };
            let k: Vec<u64> = key
                .split(',')
                .filter_map(|x| x.trim().parse().ok())
                .collect();
            match (name, k.as_slice()) {
                ("@latency", &[d, o, w, s, m]) => {
                    self.latency.insert((d, o as u8, w as u32, s as u32, m), v);
                }
                ("@flushes", &[d]) => {
                    self.flushes.insert(d, v);
                }
                ("@fua", &[d]) => {
                    self.fua.insert(d, v);
                }
                _ => {}
            }
        }
    }
}

/// What one line of output said.
#[derive(Debug, PartialEq)]
pub enum Event {
    /// The program is attached.
    Ready,
    /// A dump is complete.
    Dump(Box<Dump>),
    /// The counts were cleared for reset `n`.
    Reset(u64),
}

/// Gathers bpftrace's JSON lines into events.
#[derive(Debug, Default)]
pub struct Reader {
    open: Option<Dump>,
}

impl Reader {
    /// Reads one line; an event when it completes one.
    pub fn line(&mut self, line: &str) -> Option<Event> {
        let v: Value = serde_json::from_str(line.trim()).ok()?;
        match v["type"].as_str()? {
            "printf" => self.printf(v["data"].as_str()?),
            "map" => {
                let open = self.open.as_mut()?;
                for (name, entries) in v["data"].as_object()? {
                    if let Some(e) = entries.as_object() {
                        open.add_map(name, e);
                    }
                }
                None
            }
            _ => None,
        }
    }

    fn printf(&mut self, text: &str) -> Option<Event> {
        let mut words = text.split_whitespace();
        match words.next()? {
            w if w == READY => Some(Event::Ready),
            w if w == MARK => {
                let seq = words.next()?.parse().ok()?;
                let ns = words.next()?.parse().ok()?;
                self.open = Some(Dump {
                    seq,
                    ns,
                    ..Dump::default()
                });
                None
            }
            w if w == END => self.open.take().map(|d| Event::Dump(Box::new(d))),
            w if w == RESET => Some(Event::Reset(words.next()?.parse().ok()?)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bpftrace 0.17's output for two marks, as it printed it here.
    const OUTPUT: &str = r#"{"type": "attached_probes", "data": {"probes": 6}}
{"type": "printf", "data": "storlab-ready\n"}
{"type": "printf", "data": "storlab-reset 4\n"}
{"type": "printf", "data": "storlab-mark 0 824318571382\n"}
{"type": "map", "data": {"@latency": {"266338304,0,4,12,473": 1}}}
{"type": "map", "data": {"@flushes": {"266338304": 3}}}
{"type": "printf", "data": "storlab-end\n"}

{"type": "printf", "data": "storlab-mark 1 825318821892\n"}
{"type": "map", "data": {"@latency": {"266338304,0,4,12,473": 5, "266338304,0,5,9,447": 2}}}
{"type": "map", "data": {"@flushes": {"266338304": 3}}}
{"type": "map", "data": {"@fua": {"266338304": 1}}}
{"type": "printf", "data": "storlab-end\n"}
"#;

    #[test]
    fn dumps_are_read_and_subtracted() {
        let mut r = Reader::default();
        let events: Vec<Event> = OUTPUT.lines().filter_map(|l| r.line(l)).collect();
        assert_eq!(events[0], Event::Ready);
        assert_eq!(events[1], Event::Reset(4));
        let (Event::Dump(a), Event::Dump(b)) = (&events[2], &events[3]) else {
            panic!("{events:?}");
        };
        assert_eq!((a.seq, a.ns), (0, 824318571382));
        assert_eq!(a.flushes[&266338304], 3);
        let d = b.since(a);
        assert_eq!(d.seq, 1);
        assert_eq!(d.latency[&(266338304, 0, 4, 12, 473)], 4);
        assert_eq!(d.latency[&(266338304, 0, 5, 9, 447)], 2);
        assert_eq!(d.timed()[&(266338304, 0)], 6);
        assert!(d.flushes.is_empty(), "no new flush");
        assert_eq!(d.fua[&266338304], 1);
    }

    #[test]
    fn a_dump_keeps_only_the_devices_asked_for() {
        let mut r = Reader::default();
        let events: Vec<Event> = OUTPUT.lines().filter_map(|l| r.line(l)).collect();
        let Event::Dump(b) = &events[3] else {
            panic!("{events:?}");
        };
        let none = (**b).clone().only(&[7 << 20]);
        assert!(none.latency.is_empty() && none.fua.is_empty());
        assert!(none.flushes.is_empty());
        assert_eq!((**b).clone().only(&[266338304, 7 << 20]), **b);
    }
}

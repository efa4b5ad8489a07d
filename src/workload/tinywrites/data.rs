//! The data tinywrites writes, of chosen compressibility: `zeros`, `text`
//! (words from a small vocabulary, like a program's log lines), `random`
//! (incompressible) and `ratio:F` (each 4 KiB block 1/F random, the rest
//! zeros, so that a compressor gets about F:1: the io engine's generator of
//! `buffer_compress_percentage`, with the fraction given as a ratio).
//! Generated once, untimed, into a pool the writes cycle through.

use crate::workload::io::fill::{fill_random, fill_segments};
use crate::workload::io::rng::Rng;

/// How compressible the generated data is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Data {
    Zeros,
    Text,
    Random,
    Ratio(f64),
}

const BLOCK: usize = 4096;

const WORDS: &[&str] = &[
    "the",
    "read",
    "of",
    "sample",
    "and",
    "to",
    "quality",
    "in",
    "a",
    "sequence",
    "is",
    "that",
    "chr1",
    "for",
    "it",
    "gene",
    "as",
    "with",
    "was",
    "on",
    "alignment",
    "score",
    "at",
    "by",
    "ACGT",
    "TTGA",
    "position",
    "from",
    "or",
    "an",
    "they",
    "coverage",
    "which",
    "one",
    "you",
    "all",
    "were",
    "her",
    "would",
    "there",
    "their",
    "will",
    "when",
    "who",
    "him",
    "been",
    "has",
    "more",
    "if",
    "no",
    "out",
    "so",
    "said",
    "what",
    "up",
    "its",
    "about",
    "into",
    "than",
    "them",
    "can",
    "only",
    "other",
    "new",
];

impl Data {
    pub fn parse(s: &str) -> Result<Data, String> {
        match s {
            "zeros" => Ok(Data::Zeros),
            "text" => Ok(Data::Text),
            "random" => Ok(Data::Random),
            _ => match s.strip_prefix("ratio:").map(str::parse::<f64>) {
                Some(Ok(f)) if (1.0..=4096.0).contains(&f) => Ok(Data::Ratio(f)),
                Some(_) => Err(format!(
                    "`{s}`: F in ratio:F is a number from 1 to 4096, like ratio:3"
                )),
                None => Err(format!(
                    "unknown data `{s}`; data is zeros, text, random or ratio:F (like ratio:3)"
                )),
            },
        }
    }
}

/// `len` bytes of `data`, the same for the same seed.
pub fn generate(data: Data, len: usize, seed: u64) -> Vec<u8> {
    let mut out = vec![0u8; len];
    let mut rng = Rng::new(seed);
    match data {
        Data::Zeros => {}
        Data::Random => fill_random(&mut out, seed),
        Data::Text => text(&mut out, &mut rng),
        Data::Ratio(f) => {
            let noisy = ((BLOCK as f64 / f).round() as usize).clamp(1, BLOCK);
            fill_segments(&mut out, noisy, BLOCK, seed);
        }
    }
    out
}

fn text(buf: &mut [u8], rng: &mut Rng) {
    let mut i = 0;
    let mut words = 0;
    while i < buf.len() {
        let w = WORDS[rng.below(WORDS.len() as u64) as usize].as_bytes();
        for &c in w.iter().chain(b" ") {
            if i == buf.len() {
                return;
            }
            buf[i] = c;
            i += 1;
        }
        words += 1;
        if words % 12 == 0 && i < buf.len() {
            buf[i - 1] = b'\n';
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form_and_refuses_the_rest() {
        assert_eq!(Data::parse("zeros"), Ok(Data::Zeros));
        assert_eq!(Data::parse("ratio:2.5"), Ok(Data::Ratio(2.5)));
        assert!(Data::parse("ratio:0.5").is_err());
        assert!(Data::parse("rand").unwrap_err().contains("random"));
    }

    #[test]
    fn generation_is_reproducible_and_shaped() {
        assert_eq!(generate(Data::Text, 1000, 1), generate(Data::Text, 1000, 1));
        assert!(generate(Data::Zeros, 100, 1).iter().all(|&b| b == 0));
        let r = generate(Data::Ratio(4.0), 8192, 1);
        assert!(r[1024..4096].iter().all(|&b| b == 0));
        assert!(r[..1024].iter().any(|&b| b != 0));
        let t = generate(Data::Text, 4096, 2);
        assert!(t.iter().all(|b| b.is_ascii()));
    }
}

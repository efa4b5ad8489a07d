//! Workload `mock`: synthetic, seeded metrics for testing storlab itself, as
//! fio's null engine exists to test fio. It touches no storage: a run sleeps
//! for `duration` (so that timing, signals and interruption can be tested)
//! and reports `value` perturbed by Gaussian noise of relative size `noise`.
//! The same seed and run always give the same number.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::{Configure, RunContext, Workload, WorkloadConfig};
use crate::measure::RunOutput;
use crate::metric::catalogue as m;
use crate::params::{declare, Fault, Params};

declare! {
    /// The parameters of a `mock` workload.
    pub struct MockParams {
        value: float(0.0, 1e18) = "1000" => "mean of the reported ops_per_s",
        noise: float(0.0, 10.0) = "0" => "relative standard deviation of the noise",
        duration: duration = "0s" => "how long each run sleeps",
        seed: int(u64, 0, i64::MAX) = "1" => "seed of the noise",
    }
}

impl Configure for MockParams {
    type Config = MockParams;

    fn configure(self, _: &Path, _: &mut Params) -> Result<MockParams, Fault> {
        Ok(self)
    }
}

impl WorkloadConfig for MockParams {
    fn estimate(&self) -> Duration {
        self.duration
    }

    fn bytes_needed(&self) -> u64 {
        0
    }

    fn build(&self) -> Box<dyn Workload> {
        Box::new(Mock::new(self))
    }
}

pub struct Mock {
    value: f64,
    noise: f64,
    duration: Duration,
    seed: u64,
}

impl Mock {
    pub fn new(p: &MockParams) -> Mock {
        Mock {
            value: p.value,
            noise: p.noise,
            duration: p.duration,
            seed: p.seed,
        }
    }
}

/// A standard normal draw from two splitmix64 outputs (Box–Muller).
fn gaussian(seed: u64) -> f64 {
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let (u1, u2) = (next().max(1e-300), next());
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

impl Workload for Mock {
    fn prepare(&mut self, _dir: &Path) -> Result<()> {
        Ok(())
    }

    fn run(&mut self, _dir: &Path, cx: &RunContext) -> Result<RunOutput> {
        let t0 = Instant::now();
        while t0.elapsed() < self.duration && !cx.stop.is_raised() {
            std::thread::sleep(Duration::from_millis(5).min(self.duration));
        }
        let v = self.value
            * (1.0
                + self.noise
                    * gaussian(self.seed ^ cx.run_seed.wrapping_mul(0x2545_F491_4F6C_DD1D)));
        Ok(RunOutput {
            metrics: vec![m::OPS_PER_S.value(v.max(0.0))],
            ..Default::default()
        })
    }

    fn cleanup(&mut self, _dir: &Path) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn gaussian_draws_have_unit_spread() {
        let xs: Vec<f64> = (0..20_000u64).map(|i| super::gaussian(i * 7919)).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!(
            mean.abs() < 0.03 && (var - 1.0).abs() < 0.05,
            "{mean} {var}"
        );
    }
}

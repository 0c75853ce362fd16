//! The live progress line on stderr.

use std::time::Duration;

use crate::workload::WorkloadSpec;

use super::result::SeriesPoint;

/// The live progress line.
pub(super) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    warmup_s: f64,
}

impl Progress {
    pub(super) fn new(show: bool, spec: &WorkloadSpec) -> Progress {
        let total_s = (spec.duration + spec.warmup).as_secs_f64();
        let warmup_s = spec.warmup.as_secs_f64();
        if !show {
            return Progress {
                bar: None,
                warmup_s,
            };
        }
        let bar = indicatif::ProgressBar::new((total_s * 10.0) as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{elapsed:>4} [{bar:20}] {msg} (eta {eta})")
                .expect("static template")
                .progress_chars("=> "),
        );
        bar.set_message(format!("{} warming up", spec.describe()));
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress {
            bar: Some(bar),
            warmup_s,
        }
    }

    pub(super) fn update(&self, p: &SeriesPoint) {
        if let Some(b) = &self.bar {
            b.set_position(((self.warmup_s + p.t_s) * 10.0) as u64);
            b.set_message(format!(
                "{:>10.0} IOPS {:>9.1} MiB/s p99 {:>9.1} us",
                p.total.iops, p.total.mib_per_sec, p.total.lat_p99_us
            ));
        }
    }

    pub(super) fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

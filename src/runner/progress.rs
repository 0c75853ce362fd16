//! The live progress line on stderr, cut to the terminal's width.

use std::time::Duration;

use crate::workload::WorkloadSpec;

use super::result::SeriesPoint;

/// The line's layouts, widest first: elapsed time, bar, message (cut to
/// what is left of the width by indicatif) and the time left; narrower
/// terminals drop the time left, then the bar.
const TEMPLATES: [(u16, &str); 3] = [
    (72, "{elapsed:>4} [{bar:20}] {wide_msg} (eta {eta})"),
    (44, "{elapsed:>4} [{bar:10}] {wide_msg}"),
    (0, "{elapsed:>4} {wide_msg}"),
];

/// Below this width the figures are written without padding.
const COMPACT_BELOW: u16 = 100;

/// The live progress line.
pub(super) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    warmup_s: f64,
    compact: bool,
}

impl Progress {
    pub(super) fn new(show: bool, spec: &WorkloadSpec) -> Progress {
        let total_s = (spec.time_cap() + spec.warmup).as_secs_f64();
        let warmup_s = spec.warmup.as_secs_f64();
        if !show {
            return Progress {
                bar: None,
                warmup_s,
                compact: false,
            };
        }
        let bar = indicatif::ProgressBar::new((total_s * 10.0) as u64);
        bar.set_style(crate::term::style(&TEMPLATES));
        bar.set_message(format!("{} warming up", spec.describe()));
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress {
            bar: Some(bar),
            warmup_s,
            compact: crate::term::width() < COMPACT_BELOW,
        }
    }

    pub(super) fn update(&self, p: &SeriesPoint) {
        if let Some(b) = &self.bar {
            b.set_position(((self.warmup_s + p.t_s) * 10.0) as u64);
            b.set_message(figures(p, self.compact));
        }
    }

    pub(super) fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// One interval's figures: in aligned columns, or compact for a narrow terminal.
fn figures(p: &SeriesPoint, compact: bool) -> String {
    let t = &p.total;
    if compact {
        format!(
            "{:.0} IOPS {:.1} MiB/s p99 {:.1} us",
            t.iops, t.mib_per_sec, t.lat_p99_us
        )
    } else {
        format!(
            "{:>10.0} IOPS {:>9.1} MiB/s p99 {:>9.1} us",
            t.iops, t.mib_per_sec, t.lat_p99_us
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layout_leaves_room_and_compact_figures_are_short() {
        // The fixed parts of each layout fit its minimum width with room
        // for the message (which indicatif cuts to what is left).
        for (min, t) in TEMPLATES {
            let fixed = t
                .replace("{elapsed:>4}", "1m2s")
                .replace("{bar:20}", &"=".repeat(20))
                .replace("{bar:10}", &"=".repeat(10))
                .replace("{wide_msg}", "")
                .replace("{eta}", "99s");
            assert!(
                fixed.len() + 10 <= usize::from(min.max(24)),
                "{t}: {} columns of fixed text",
                fixed.len()
            );
        }
        let mut p = SeriesPoint::default();
        p.total.iops = 123_456.0;
        p.total.mib_per_sec = 482.3;
        p.total.lat_p99_us = 35.2;
        assert_eq!(figures(&p, true), "123456 IOPS 482.3 MiB/s p99 35.2 us");
        assert!(figures(&p, false).len() > figures(&p, true).len());
    }
}

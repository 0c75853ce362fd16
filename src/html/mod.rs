//! `iosim report`: one self-contained HTML file (inline SVG charts and a few
//! lines of inline JavaScript, nothing loaded from the network), or single
//! charts as SVG or PNG to paste into a ticket.
//!
//! Charts: latency percentile curve (log scale), latency histogram,
//! IOPS/MiB/s/latency over time, CPU (and device) counters, sweep curves
//! (IOPS and latency against queue depth or threads, knee marked), and every
//! chart overlays all the runs given.
//!
//! By job: `data` finds what to draw, `charts` draws it (with [`svg`]),
//! `page` lays out the HTML (its CSS and JavaScript are files in `assets/`),
//! `png` rasterises single charts.

mod charts;
mod data;
pub mod kinds;
mod page;
mod png;
pub mod qualify;
pub mod svg;

pub use charts::{
    charts, counter_charts, cpu_bars, histogram_chart, latency_over_time, latency_time_chart,
    legend_table, percentile_chart, sweep_charts, time_chart, Figure, LegendPlace, MAX_LEGEND_ROWS,
};
pub use data::{
    document_sweeps, entries, histogram, knee, nines, sweeps, Entry, Sweep, SweepPoint,
};
pub use page::{hist_log_html, html, JS_CHECK, JS_ERRORS};
pub use png::png;

#[cfg(test)]
mod tests {
    use super::charts::{counter_lines, percentile_ticks};
    use super::*;
    use crate::document::Document;
    use crate::runner::RunResult;

    /// A real (null-engine) result whose monitor saw two intervals of CPU
    /// and device counters.
    fn with_counters() -> RunResult {
        use crate::sysmon::cpu::CoreUtil;
        use crate::sysmon::diskstats::DeviceCounters;
        use crate::sysmon::sampler::{CpuPoint, DeviceSeries};
        let spec = crate::workload::WorkloadSpec {
            engine: crate::workload::EngineKind::Null,
            duration: std::time::Duration::from_millis(20),
            ..Default::default()
        };
        let mut r = crate::runner::run(&spec, &Default::default()).unwrap();
        let cpu = |t_s, busy, core| CpuPoint {
            t_s,
            duration_s: 1.0,
            cores: vec![
                CoreUtil {
                    busy_pct: busy,
                    user_pct: busy / 2.0,
                    ..CoreUtil::default()
                },
                CoreUtil {
                    cpu: Some(0),
                    busy_pct: core,
                    ..CoreUtil::default()
                },
            ],
        };
        r.monitor.cpu_series = vec![cpu(1.0, 50.0, 70.0), cpu(2.0, 60.0, 80.0)];
        let dev = |t_s, tps, busy, q| DeviceCounters {
            t_s,
            transfers_per_sec: tps,
            busy_pct: busy,
            avg_queue_len: q,
            ..DeviceCounters::default()
        };
        r.monitor.devices = vec![DeviceSeries {
            name: "vda".into(),
            whole: DeviceCounters::default(),
            series: vec![dev(1.0, 1000.0, 40.0, 2.0), dev(2.0, 1200.0, 45.0, 2.5)],
        }];
        r
    }

    #[test]
    fn monitor_counters_become_time_series() {
        let r = with_counters();
        let cpu = counter_lines(&r, "cpu");
        let names: Vec<&str> = cpu.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "cpu0 busy_pct",
                "machine busy_pct",
                "machine iowait_pct",
                "machine irq_pct",
                "machine system_pct",
                "machine user_pct"
            ]
        );
        assert_eq!(cpu[1].1, vec![(1.0, 50.0), (2.0, 60.0)]);
        assert_eq!(cpu[0].1, vec![(1.0, 70.0), (2.0, 80.0)]);
        let dev = counter_lines(&r, "device");
        assert_eq!(dev.len(), 1, "utilisation goes on its own chart");
        assert_eq!(dev[0].0, "vda transfers_per_sec");
        assert_eq!(dev[0].1[1], (2.0, 1200.0));
        let util = counter_lines(&r, "device_util");
        assert_eq!(util[0].0, "vda avg_queue_len");
        assert_eq!(util[0].1[0], (1.0, 2.0));
        let mut quiet = r.clone();
        quiet.monitor = Default::default();
        assert!(counter_lines(&quiet, "cpu").is_empty());
    }

    #[test]
    fn the_report_and_the_sweep_find_the_same_knee() {
        // IOPS saturates at qd 8 while latency keeps growing.
        let pts = [
            SweepPoint::new(1.0, 10_000.0, 100.0, 150.0),
            SweepPoint::new(2.0, 19_000.0, 105.0, 160.0),
            SweepPoint::new(4.0, 34_000.0, 118.0, 190.0),
            SweepPoint::new(8.0, 45_000.0, 178.0, 300.0),
            SweepPoint::new(16.0, 47_000.0, 340.0, 700.0),
            SweepPoint::new(32.0, 47_500.0, 673.0, 1500.0),
        ];
        let series: Vec<_> = pts
            .iter()
            .map(|p| crate::sweep::analysis::SeriesPoint::single(p.load, p.iops, p.mean_us))
            .collect();
        let sweep = crate::sweep::analysis::find_knee(
            &series,
            crate::sweep::analysis::DEFAULT_KNEE_ELASTICITY,
        )
        .unwrap();
        assert_eq!(knee(&pts), Some(sweep.index));
        assert_eq!(
            sweep.index, 3,
            "qd 8: going to 16 adds 4% IOPS for 100% load"
        );
        // A curve that never flattens has no knee in either.
        let rising = [
            SweepPoint::new(1.0, 1.0, 10.0, 10.0),
            SweepPoint::new(2.0, 2.0, 10.0, 10.0),
            SweepPoint::new(4.0, 4.0, 10.0, 10.0),
        ];
        assert_eq!(knee(&rising), None);
    }

    #[test]
    fn counters_are_charted_when_present() {
        let mut r = with_counters();
        r.histograms = Default::default();
        r.series = Default::default();
        r.total.total.latency_us.percentiles.clear();
        let run = crate::store::StoredRun {
            row: crate::store::RunRow {
                id: 1,
                kind: "run".into(),
                started_at: "t".into(),
                label: None,
                host: None,
                targets: vec![],
                device: None,
                profile: None,
                iosim_version: None,
                group: None,
                environment: None,
            },
            doc: Document::run(r).to_value(),
        };
        let typed = kinds::typed(std::slice::from_ref(&run));
        let es = entries(&typed);
        let cs = counter_charts(&es);
        assert_eq!(cs.len(), 3);
        assert_eq!(
            cs[0].lines.len(),
            6,
            "the machine's five shares and one core"
        );
        assert_eq!(cs[1].lines.len(), 1, "transfers per second");
        assert_eq!(cs[2].lines.len(), 3, "busy, queue length, ms per transfer");
        let ids: Vec<String> = charts(&es, Vec::new(), 600.0, 300.0, LegendPlace::InChart)
            .into_iter()
            .map(|c| c.id)
            .collect();
        assert!(ids.contains(&"counters-cpu".to_string()), "{ids:?}");
        // No histogram, series or sweep: those charts are left out, not drawn empty.
        assert!(!ids.contains(&"percentiles".to_string()));
        assert!(!ids.contains(&"iops".to_string()));
    }

    #[test]
    fn percentile_axis() {
        assert!((nines(0.99) - 2.0).abs() < 1e-12);
        let t = percentile_ticks(4.0);
        assert_eq!(t.last().unwrap().1, "p99.99");
    }
}

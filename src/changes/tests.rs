use super::*;

/// `n` one-second intervals at `iops` with a mean latency of `lat_ms`, from `t0`.
fn flat(t0: f64, n: usize, iops: f64, lat_ms: f64) -> Vec<Interval> {
    (0..n)
        .map(|i| Interval {
            t_s: t0 + (i + 1) as f64,
            duration_s: 1.0,
            iops: iops * (1.0 + 0.01 * ((i * 7 % 5) as f64 - 2.0)),
            mib_per_sec: iops * 4096.0 / 1048576.0,
            lat_mean_us: lat_ms * 1000.0,
            ..Default::default()
        })
        .collect()
}

fn throttled() -> Context {
    Context {
        outstanding: Some(16.0),
        device: Some(DeviceView {
            name: "loop0".into(),
            await_ms: 0.2,
            transfers: 20_000,
        }),
        iosim_ios: 20_000,
        cpu_limited: false,
        cpu_finding: false,
    }
}

/// The measurement: 2,000 IOPS at QD 16, 7.7 ms ≈ 16 / 2,000 s.
#[test]
fn a_throttle_is_named_with_its_value() {
    let c = detect(&flat(0.0, 10, 2000.0, 7.9), &throttled());
    assert_eq!(c.rate_limits.len(), 1, "{c:?}");
    let l = &c.rate_limits[0];
    assert_eq!(l.metric, LimitMetric::Iops);
    assert!((l.iops - 2000.0).abs() < 20.0);
    assert!(c.events.is_empty(), "{c:?}");
    let w = rate_limit_warning(&c.rate_limits).unwrap();
    assert!(
        w.message.starts_with("IOPS held at 2,000 with latency = QD / IOPS (7.90 ms ≈ 16 / 2,000): a rate limit (a provisioned or throttled volume), not the device's capability; loop0 itself answered in 0.20 ms."),
        "{}",
        w.message
    );
}

#[test]
fn a_device_at_its_own_limit_is_not_a_throttle() {
    // The device's own await is the latency: it is the device.
    let mut ctx = throttled();
    ctx.device.as_mut().unwrap().await_ms = 7.5;
    assert!(detect(&flat(0.0, 10, 2000.0, 7.9), &ctx)
        .rate_limits
        .is_empty());
    // A paced run, a CPU-bound one, one the device did not see, or one
    // without a device say nothing of a queue.
    for ctx in [
        Context {
            outstanding: None,
            ..throttled()
        },
        Context {
            cpu_limited: true,
            ..throttled()
        },
        Context {
            iosim_ios: 100_000,
            ..throttled()
        },
        Context {
            device: None,
            ..throttled()
        },
    ] {
        assert!(detect(&flat(0.0, 10, 2000.0, 7.9), &ctx)
            .rate_limits
            .is_empty());
    }
    // Latency far from QD / IOPS: the queue was not full.
    assert!(detect(&flat(0.0, 10, 2000.0, 2.0), &throttled())
        .rate_limits
        .is_empty());
    // Too short.
    assert!(detect(&flat(0.0, 2, 2000.0, 7.9), &throttled())
        .rate_limits
        .is_empty());
}

#[test]
fn an_uneven_series_is_not_flat() {
    let mut s = flat(0.0, 12, 2000.0, 7.9);
    for (i, p) in s.iter_mut().enumerate() {
        p.iops *= if i % 2 == 0 { 1.12 } else { 0.88 };
    }
    assert!(detect(&s, &throttled()).rate_limits.is_empty());
}

#[test]
fn large_transfers_make_it_a_bandwidth_limit() {
    let mut s = flat(0.0, 10, 800.0, 20.0);
    for p in &mut s {
        p.mib_per_sec = p.iops * 65536.0 / 1048576.0;
    }
    let c = detect(&s, &throttled());
    assert_eq!(c.rate_limits[0].metric, LimitMetric::Bandwidth);
    let w = rate_limit_warning(&c.rate_limits).unwrap();
    assert!(
        w.message.starts_with("throughput held at 50.0 MiB/s"),
        "{}",
        w.message
    );
}

/// A credit running out: 2,000 IOPS for 7 s, then 500.
#[test]
fn a_limit_that_drops_is_a_step_and_two_limits() {
    let mut s = flat(0.0, 7, 2000.0, 8.0);
    s.extend(flat(7.0, 8, 500.0, 32.0));
    let c = detect(&s, &throttled());
    assert_eq!(c.events.len(), 1, "{c:?}");
    let e = &c.events[0];
    assert_eq!(e.kind, ChangeKind::StepDown);
    assert!((e.at_s - 7.0).abs() < 0.01, "{}", e.at_s);
    assert!((e.change_pct + 75.0).abs() < 2.0);
    assert!(e.describe().starts_with("at 7.0 s, after 7.0 s at 2,000 IOPS, throughput fell 75% to 500 IOPS: usually burst credits"), "{}", e.describe());
    assert_eq!(c.rate_limits.len(), 2, "{c:?}");
    let w = rate_limit_warning(&c.rate_limits).unwrap();
    assert!(
        w.message
            .starts_with("IOPS held at 1,993 from 0.0 s to 7.0 s, then 501 from 7.0 s to 15.0 s"),
        "{}",
        w.message
    );
}

#[test]
fn a_warming_cache_is_a_step_up_and_a_ramp_a_drift() {
    let mut s = flat(0.0, 10, 1000.0, 1.0);
    s.extend(flat(10.0, 10, 3000.0, 0.3));
    let c = detect(&s, &Context::default());
    assert_eq!(c.events.len(), 1);
    assert_eq!(c.events[0].kind, ChangeKind::StepUp);
    assert!(c.rate_limits.is_empty());
    // Three levels down one after another: a drift.
    let mut s = flat(0.0, 8, 3000.0, 1.0);
    s.extend(flat(8.0, 8, 2400.0, 1.0));
    s.extend(flat(16.0, 8, 1800.0, 1.0));
    s.extend(flat(24.0, 8, 1300.0, 1.0));
    let c = detect(&s, &Context::default());
    assert_eq!(c.events.len(), 1, "{c:?}");
    assert_eq!(c.events[0].kind, ChangeKind::Drift);
    assert!(c.events[0]
        .describe()
        .contains("drifted down from 3,000 to 1,300 IOPS"));
}

#[test]
fn regular_stalls_are_periodic_and_a_single_dip_is_nothing() {
    let mut s = flat(0.0, 30, 1000.0, 1.0);
    for i in [4, 9, 14, 19, 24] {
        s[i].iops = 200.0;
    }
    let c = detect(&s, &Context::default());
    assert_eq!(c.events.len(), 1, "{c:?}");
    let e = &c.events[0];
    assert_eq!(e.kind, ChangeKind::PeriodicStalls);
    assert_eq!(e.count, Some(5));
    assert!((e.period_s.unwrap() - 5.0).abs() < 0.01);
    // Irregular stalls, or a single one, say nothing.
    let mut s = flat(0.0, 30, 1000.0, 1.0);
    for i in [2, 3, 11, 25] {
        s[i].iops = 200.0;
    }
    assert!(detect(&s, &Context::default()).events.is_empty());
    let mut s = flat(0.0, 30, 1000.0, 1.0);
    for p in &mut s[12..15] {
        p.iops = 100.0;
    }
    assert!(detect(&s, &Context::default()).events.is_empty());
}

#[test]
fn a_short_cut_last_interval_and_short_runs_are_left_out() {
    let mut s = flat(0.0, 10, 2000.0, 7.9);
    s.push(Interval {
        t_s: 10.05,
        duration_s: 0.05,
        iops: 100.0,
        mib_per_sec: 0.4,
        lat_mean_us: 7900.0,
        ..Default::default()
    });
    let c = detect(&s, &throttled());
    assert!(c.events.is_empty() && c.rate_limits.len() == 1, "{c:?}");
    assert!(detect(&flat(0.0, 2, 2000.0, 7.9), &throttled()).is_empty());
    // A 5 s run at the default 1 s intervals is long enough.
    assert_eq!(
        detect(&flat(0.0, 5, 2000.0, 7.9), &throttled())
            .rate_limits
            .len(),
        1
    );
}

fn sweep(points: &[(f64, f64, f64)]) -> Vec<LoadPoint> {
    points
        .iter()
        .map(|&(load, iops, lat_ms)| LoadPoint {
            load,
            iops,
            mib_per_sec: iops * 4096.0 / 1048576.0,
            lat_mean_us: lat_ms * 1000.0,
        })
        .collect()
}

#[test]
fn a_sweep_against_a_throttle_shows_the_ceiling() {
    // QD 1 and 2 below the limit, then 2,000 IOPS from QD 4 to QD 32.
    let p = sweep(&[
        (1.0, 1200.0, 0.8),
        (2.0, 1900.0, 1.05),
        (4.0, 2000.0, 2.0),
        (8.0, 1990.0, 4.0),
        (16.0, 2010.0, 8.0),
        (32.0, 2000.0, 16.1),
    ]);
    let c = ceiling(&p).unwrap();
    assert_eq!(c.points, vec![2, 3, 4, 5]);
    assert!((c.iops - 2000.0).abs() < 5.0);
    assert!(
        c.describe()
            .starts_with("IOPS held at 2,000 (within 0.5%) from 4 to 32 I/Os in flight"),
        "{}",
        c.describe()
    );
}

#[test]
fn a_device_that_keeps_scaling_or_wobbles_has_no_ceiling() {
    // Still scaling.
    let p = sweep(&[
        (1.0, 10_000.0, 0.1),
        (4.0, 35_000.0, 0.11),
        (16.0, 60_000.0, 0.27),
        (64.0, 64_000.0, 1.0),
    ]);
    assert_eq!(ceiling(&p), None);
    // Saturated but uneven (a device's own limit moves with the load).
    let p = sweep(&[
        (4.0, 50_000.0, 0.08),
        (8.0, 53_000.0, 0.15),
        (16.0, 49_000.0, 0.33),
        (32.0, 55_000.0, 0.58),
    ]);
    assert_eq!(ceiling(&p), None);
    // Flat, but over loads too close together.
    let p = sweep(&[(8.0, 2000.0, 4.0), (10.0, 2000.0, 5.0), (12.0, 2000.0, 6.0)]);
    assert_eq!(ceiling(&p), None);
    // Flat while latency stayed put: not a queue (a CPU limit, a paced run).
    let p = sweep(&[(4.0, 2000.0, 2.0), (8.0, 2000.0, 2.0), (16.0, 2000.0, 2.0)]);
    assert_eq!(ceiling(&p), None);
}

#[test]
fn a_run_the_cpu_held_reports_no_changes() {
    let mut s = flat(0.0, 10, 1000.0, 1.0);
    s.extend(flat(10.0, 10, 3000.0, 0.3));
    let ctx = Context {
        cpu_finding: true,
        ..Context::default()
    };
    assert!(detect(&s, &ctx).events.is_empty());
}

/// The default 1 s intervals: a limit that drops after 6 s of a 12 s run
/// (the interval it dropped in is between the levels).
#[test]
fn a_short_run_at_one_second_intervals_shows_its_step() {
    let iops = [
        2200.0, 2000.0, 2000.0, 2000.0, 2000.0, 2000.0, 358.0, 500.0, 500.0, 500.0, 500.0, 500.0,
    ];
    let s: Vec<Interval> = iops
        .iter()
        .enumerate()
        .map(|(i, &v)| Interval {
            t_s: (i + 1) as f64,
            duration_s: 1.0,
            iops: v,
            mib_per_sec: v * 4096.0 / 1048576.0,
            lat_mean_us: 16.0 / v * 1e6,
            ..Default::default()
        })
        .collect();
    let c = detect(&s, &throttled());
    assert_eq!(c.events.len(), 1, "{c:?}");
    assert_eq!(c.events[0].kind, ChangeKind::StepDown);
    assert!((5.0..=6.0).contains(&c.events[0].at_s), "{c:?}");
    assert_eq!(c.rate_limits.len(), 2, "{c:?}");
}

/// Issue 37: at one I/O in flight latency = 1 / IOPS holds for any device
/// (Little's law), so a flat QD 1 run is no evidence of a limit.
#[test]
fn a_qd1_run_never_shows_a_rate_limit() {
    let qd1 = Context {
        outstanding: Some(1.0),
        ..throttled()
    };
    // 2,000 IOPS at 0.5 ms: latency = 1 / IOPS, flat, the device fast.
    assert!(detect(&flat(0.0, 10, 2000.0, 0.5), &qd1)
        .rate_limits
        .is_empty());
    // The same at 16 in flight is a limit.
    assert_eq!(
        detect(&flat(0.0, 10, 2000.0, 8.0), &throttled())
            .rate_limits
            .len(),
        1
    );
}

/// Issue 37: a 70/30 mix whose reads a limit holds at 2,000 IOPS: the
/// warning gives each direction, not only the total of 2,857.
#[test]
fn a_mix_s_limit_is_given_per_direction() {
    let s: Vec<Interval> = flat(0.0, 10, 2857.0, 16.0 / 2857.0 * 1000.0)
        .into_iter()
        .map(|p| Interval {
            read_iops: 2000.0,
            write_iops: p.iops - 2000.0,
            ..p
        })
        .collect();
    let c = detect(&s, &throttled());
    assert_eq!(c.rate_limits.len(), 1, "{c:?}");
    let l = &c.rate_limits[0];
    assert!((l.read_iops - 2000.0).abs() < 1.0, "{l:?}");
    let w = rate_limit_warning(&c.rate_limits).unwrap().message;
    assert!(
        w.contains("reads held at 2,000 IOPS and writes at 8"),
        "{w}"
    );
}

/// Measured under a new blkio throttle of 2,000 read IOPS, a 70/30 mix at
/// QD 16 in 250 ms intervals: the bucket let 4,368 IOPS through in the first
/// interval, then every second held 2,857 (reads 2,000). The first second's
/// burst no longer hides the limit; a burst later in the run still does.
#[test]
fn a_burst_before_the_limit_holds_does_not_hide_it() {
    let measured = [
        4368.0, 2736.0, 3488.0, 2144.0, 3464.0, 2376.0, 3500.0, 2308.0, 3468.0, 2224.0, 3356.0,
        2252.0, 3360.0, 2192.0, 3388.0, 2212.0, 2584.0, 3196.0, 3256.0, 2304.0,
    ];
    let series = |iops: &[f64]| -> Vec<Interval> {
        iops.iter()
            .enumerate()
            .map(|(i, &v)| Interval {
                t_s: (i + 1) as f64 * 0.25,
                duration_s: 0.25,
                iops: v,
                mib_per_sec: v * 4096.0 / 1048576.0,
                lat_mean_us: 16.0 / 2857.0 * 1e6,
                read_iops: 0.7 * v,
                write_iops: 0.3 * v,
            })
            .collect()
    };
    let c = detect(&series(&measured), &throttled());
    assert_eq!(c.rate_limits.len(), 1, "{c:?}");
    assert!(
        (c.rate_limits[0].iops - 2857.0).abs() < 0.05 * 2857.0,
        "{c:?}"
    );
    // The same burst in the middle of the run: not flat, no limit.
    let mut middle = measured;
    middle.swap(0, 8);
    middle.swap(1, 9);
    middle.swap(2, 10);
    middle.swap(3, 11);
    assert!(detect(&series(&middle), &throttled())
        .rate_limits
        .is_empty());
}

/// Issue 37's probe: a cap holds its rate at twice the depth, a device at
/// its own limit goes past it; a mix's limit is refuted only when both
/// directions go past it.
#[test]
fn a_probe_past_the_limit_refutes_it() {
    let limit = detect(&flat(0.0, 10, 2000.0, 7.9), &throttled()).rate_limits[0].clone();
    let probe = |iops: f64, read: f64, write: f64| Probe {
        outstanding: 32.0,
        duration_s: 2.0,
        iops,
        read_iops: read,
        write_iops: write,
        mib_per_sec: iops * 4096.0 / 1048576.0,
        refuted: false,
    };
    assert!(!probe(2040.0, 2040.0, 0.0).refutes(&limit), "held");
    assert!(probe(3500.0, 3500.0, 0.0).refutes(&limit), "went past");
    assert_eq!(probe(2004.0, 2004.0, 0.0).figure(&limit), "2,004 IOPS");
    let mix = RateLimit {
        read_iops: 2000.0,
        write_iops: 857.0,
        iops: 2857.0,
        ..limit
    };
    // Reads capped: both directions stay where they were.
    assert!(!probe(2860.0, 2001.0, 859.0).refutes(&mix));
    // Writes rose, reads held: still the reads' cap holding the mix.
    assert!(!probe(3100.0, 2000.0, 1100.0).refutes(&mix));
    // Both rose: no cap.
    assert!(probe(5000.0, 3500.0, 1500.0).refutes(&mix));
    assert_eq!(
        probe(2860.0, 2001.0, 859.0).figure(&mix),
        "reads 2,001 and writes 859 IOPS"
    );
}

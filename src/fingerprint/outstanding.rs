//! I/Os in flight over time (the concurrency the application really had),
//! from each I/O's submission to its completion: time-weighted, so a level
//! held for a second counts a thousand times as much as one held for a
//! millisecond. An I/O whose completion the trace lacks (still in flight
//! when the capture stopped) counts until the stream's last event.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::LayerIo;

/// I/Os in flight, time-weighted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Outstanding {
    /// Mean over the time from the first submission to the last event.
    pub mean: f64,
    /// Median level.
    pub p50: u64,
    /// Level at or under which 99% of the time was spent.
    pub p99: u64,
    /// Highest level.
    pub max: u64,
    /// Share of the time with nothing in flight.
    pub idle_share: f64,
}

/// The in-flight levels of `ios` (data I/Os and flushes; discards apart).
pub fn of(ios: &[LayerIo]) -> Outstanding {
    let counted: Vec<&LayerIo> = ios
        .iter()
        .filter(|i| i.op != crate::replay::events::EventOp::Discard)
        .collect();
    let end = counted
        .iter()
        .map(|i| i.done_ns.unwrap_or(i.at_ns).max(i.at_ns))
        .max()
        .unwrap_or(0);
    let mut steps: Vec<(u64, i64)> = Vec::with_capacity(counted.len() * 2);
    for i in &counted {
        steps.push((i.at_ns, 1));
        steps.push((i.done_ns.unwrap_or(end).max(i.at_ns), -1));
    }
    // Completions before submissions at one instant.
    steps.sort_unstable();
    let Some(&(start, _)) = steps.first() else {
        return Outstanding::default();
    };
    let mut time_at: BTreeMap<u64, u64> = BTreeMap::new();
    let (mut level, mut prev, mut max) = (0i64, start, 0u64);
    for (t, d) in steps {
        if t > prev {
            *time_at.entry(level.max(0) as u64).or_default() += t - prev;
            prev = t;
        }
        level += d;
        max = max.max(level.max(0) as u64);
    }
    let total: u64 = time_at.values().sum();
    if total == 0 {
        return Outstanding {
            max,
            ..Outstanding::default()
        };
    }
    let weighted: f64 = time_at.iter().map(|(l, t)| *l as f64 * *t as f64).sum();
    let quantile = |q: f64| {
        let mut acc = 0u64;
        for (l, t) in &time_at {
            acc += t;
            if acc as f64 >= q * total as f64 {
                return *l;
            }
        }
        max
    };
    Outstanding {
        mean: weighted / total as f64,
        p50: quantile(0.5),
        p99: quantile(0.99),
        max,
        idle_share: time_at.get(&0).copied().unwrap_or(0) as f64 / total as f64,
    }
}

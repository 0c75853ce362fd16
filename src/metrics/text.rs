//! What a scrape is answered in: OpenMetrics (what `prometheus-client`
//! encodes and Prometheus asks for first), or the classic Prometheus text
//! format 0.0.4 for a scraper whose `Accept` header prefers `text/plain`
//! (`promtool check metrics`, older Prometheus servers and exporters'
//! tooling), made from the OpenMetrics text by [`classic`].

use std::sync::Arc;

use super::Live;

/// The content type of the OpenMetrics text format.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// The content type of the Prometheus text format 0.0.4.
pub const TEXT_0_0_4: &str = "text/plain; version=0.0.4; charset=utf-8";

/// An exposition format iosim serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// OpenMetrics 1.0 text.
    OpenMetrics,
    /// The Prometheus text format 0.0.4.
    Text,
}

impl Format {
    /// The format an `Accept` header prefers: the one with the higher
    /// quality, each judged by its most specific media range
    /// (`text/plain` over `text/*` over `*/*`); OpenMetrics on a tie, with
    /// no header, or when neither is acceptable.
    pub fn negotiate(accept: Option<&str>) -> Format {
        let Some(accept) = accept else {
            return Format::OpenMetrics;
        };
        let om = quality(accept, "application", "openmetrics-text");
        let text = quality(accept, "text", "plain");
        if text > om {
            Format::Text
        } else {
            Format::OpenMetrics
        }
    }

    /// Its `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => OPENMETRICS,
            Format::Text => TEXT_0_0_4,
        }
    }

    /// The metrics of `live` now, in this format.
    pub fn render(self, live: &Arc<Live>) -> String {
        let om = live.render();
        match self {
            Format::OpenMetrics => om,
            Format::Text => classic(&om),
        }
    }
}

/// The quality (0 to 1) `accept` gives `kind/sub`: that of its most
/// specific matching media range, 0 when none matches.
fn quality(accept: &str, kind: &str, sub: &str) -> f64 {
    let mut best: (u8, f64) = (0, 0.0);
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let Some((t, s)) = media.split_once('/') else {
            continue;
        };
        let specificity = match (t == kind, s == sub, t == "*", s == "*") {
            (true, true, _, _) => 3,
            (true, false, _, true) => 2,
            (false, false, true, true) => 1,
            _ => continue,
        };
        let q = parts
            .filter_map(|p| p.split_once('='))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case("q"))
            .and_then(|(_, v)| v.trim().parse::<f64>().ok())
            .unwrap_or(1.0)
            .clamp(0.0, 1.0);
        if specificity > best.0 || (specificity == best.0 && q > best.1) {
            best = (specificity, q);
        }
    }
    best.1
}

/// The Prometheus text format 0.0.4 of an OpenMetrics text: `# EOF` and
/// `# UNIT` lines dropped; a counter family's `# HELP`/`# TYPE` name its
/// samples' `_total` name; an `info` family becomes a gauge named as its
/// `_info` sample (0.0.4 has no info type); HELP text keeps only the
/// escapes 0.0.4 knows (`\\` and `\n`). Samples are the same lines.
pub fn classic(openmetrics: &str) -> String {
    // Each family's type, from its TYPE line (HELP comes before it).
    let types: Vec<(&str, &str)> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|r| r.split_once(' '))
        .collect();
    let rename = |name: &str| -> (String, Option<&str>) {
        match types.iter().find(|(n, _)| *n == name).map(|(_, t)| *t) {
            Some("counter") if !name.ends_with("_total") => (format!("{name}_total"), None),
            Some("info") => (format!("{name}_info"), Some("gauge")),
            _ => (name.to_string(), None),
        }
    };
    let mut out = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            let help = help.replace("\\\"", "\"");
            out.push_str(&format!("# HELP {} {help}\n", rename(name).0));
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, "untyped"));
            let (name, as_kind) = rename(name);
            out.push_str(&format!("# TYPE {name} {}\n", as_kind.unwrap_or(kind)));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scraper_s_preference_decides() {
        use Format::{OpenMetrics as Om, Text};
        let n = |a: &str| Format::negotiate(Some(a));
        assert_eq!(Format::negotiate(None), Om);
        assert_eq!(n("text/plain;version=0.0.4"), Text);
        assert_eq!(n("text/plain; version=0.0.4; q=0.9, */*; q=0.1"), Text);
        assert_eq!(n("*/*"), Om);
        assert_eq!(n(""), Om);
        // Prometheus's own scrape header: OpenMetrics first.
        assert_eq!(
            n("application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"),
            Om
        );
        assert_eq!(
            n("application/openmetrics-text;q=0.2,text/plain;q=0.3"),
            Text
        );
        assert_eq!(n("text/*"), Text);
        assert_eq!(n("text/plain;q=0, */*"), Om);
        assert_eq!(n("application/json"), Om);
        assert_eq!(
            Text.content_type(),
            "text/plain; version=0.0.4; charset=utf-8"
        );
    }

    #[test]
    fn openmetrics_becomes_classic_text() {
        let om = "# HELP iosim_up 1 while iosim serves metrics.\n# TYPE iosim_up gauge\niosim_up 1\n\
# HELP iosim_command the iosim command \\\"being\\\" run.\n# TYPE iosim_command info\niosim_command_info{command=\"run\"} 1\n\
# HELP iosim_start_time_seconds when.\n# TYPE iosim_start_time_seconds gauge\n# UNIT iosim_start_time_seconds seconds\niosim_start_time_seconds 1.5\n\
# HELP iosim_ios I/Os.\n# TYPE iosim_ios counter\niosim_ios_total{direction=\"read\"} 4\n\
# HELP iosim_latency_seconds latency.\n# TYPE iosim_latency_seconds histogram\n# UNIT iosim_latency_seconds seconds\n\
iosim_latency_seconds_sum 0.5\niosim_latency_seconds_count 2\niosim_latency_seconds_bucket{le=\"+Inf\"} 2\n# EOF\n";
        assert_eq!(
            classic(om),
            "# HELP iosim_up 1 while iosim serves metrics.\n# TYPE iosim_up gauge\niosim_up 1\n\
# HELP iosim_command_info the iosim command \"being\" run.\n# TYPE iosim_command_info gauge\niosim_command_info{command=\"run\"} 1\n\
# HELP iosim_start_time_seconds when.\n# TYPE iosim_start_time_seconds gauge\niosim_start_time_seconds 1.5\n\
# HELP iosim_ios_total I/Os.\n# TYPE iosim_ios_total counter\niosim_ios_total{direction=\"read\"} 4\n\
# HELP iosim_latency_seconds latency.\n# TYPE iosim_latency_seconds histogram\n\
iosim_latency_seconds_sum 0.5\niosim_latency_seconds_count 2\niosim_latency_seconds_bucket{le=\"+Inf\"} 2\n"
        );
    }
}

//! `--metrics-listen`: the live-metrics option of the long commands (run,
//! sim, replay, qualify, crash write), in one place (docs/metrics.md).

use clap::Args;

use crate::metrics::listen::listen_arg;
use crate::metrics::{ListenAddr, Live, MetricsError, Server};

/// Live metrics for Prometheus.
#[derive(Debug, Clone, Default, Args)]
pub struct MetricsArgs {
    /// Serve live metrics (OpenMetrics/Prometheus text at http://ADDR/metrics) while the command
    /// runs: PORT or :PORT (loopback only), or HOST:PORT (e.g. 0.0.0.0:9464 for every interface).
    #[arg(long, value_name = "ADDR", value_parser = listen_arg)]
    pub metrics_listen: Option<ListenAddr>,
}

impl MetricsArgs {
    /// Starts the endpoint of `command` when asked for; it serves until the
    /// returned server is dropped (the command's end).
    pub fn serve(&self, command: &str, quiet: bool) -> Result<Option<Server>, MetricsError> {
        let Some(addr) = self.metrics_listen else {
            return Ok(None);
        };
        let server = Server::start(addr, std::sync::Arc::new(Live::new(command)))?;
        // Said whatever --quiet says: it is about who can read the figures.
        if let Some(w) = addr.exposure_warning() {
            crate::say!("iosim: warning: {w}");
        }
        if !quiet {
            crate::say!("iosim: live metrics at http://{}/metrics", server.addr());
        }
        Ok(Some(server))
    }
}

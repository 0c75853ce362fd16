//! The `--metrics-listen` HTTP server: `GET /metrics` (or `/`) answers the
//! OpenMetrics text of a [`Live`], on a thread of its own that only reads the
//! state (under its lock, a copy, for microseconds), so a scrape never slows
//! the I/O. Dropping the [`Server`] stops the thread and closes the port.

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::listen::{ListenAddr, MetricsError};
use super::Live;

/// The content type of the OpenMetrics text format, which Prometheus asks for first.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How long the thread waits for a request before it looks at its stop flag.
const POLL: Duration = Duration::from_millis(100);

/// A running metrics endpoint.
pub struct Server {
    live: Arc<Live>,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Listens on `addr` and serves `live` until dropped.
    pub fn start(addr: ListenAddr, live: Arc<Live>) -> Result<Server, MetricsError> {
        let listener = TcpListener::bind(addr.0).map_err(|e| match e.kind() {
            std::io::ErrorKind::AddrInUse => {
                MetricsError::InUse(addr.0, addr.0.port().wrapping_add(1).max(1), addr.0.port())
            }
            _ => MetricsError::Bind(addr.0, e),
        })?;
        let bound = listener.local_addr().unwrap_or(addr.0);
        let http = tiny_http::Server::from_listener(listener, None)
            .map_err(|e| MetricsError::Bind(addr.0, std::io::Error::other(e.to_string())))?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (live, stop) = (live.clone(), stop.clone());
            std::thread::Builder::new()
                .name("iosim-metrics".into())
                .spawn(move || serve(&http, &live, &stop))
                .map_err(|e| MetricsError::Bind(addr.0, e))?
        };
        Ok(Server {
            live,
            addr: bound,
            stop,
            thread: Some(thread),
        })
    }

    /// The state it serves.
    pub fn live(&self) -> Arc<Live> {
        self.live.clone()
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Answers requests until `stop` is set.
fn serve(http: &tiny_http::Server, live: &Arc<Live>, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let req = match http.recv_timeout(POLL) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(_) => break,
        };
        let path = req.url().split('?').next().unwrap_or("");
        let ok =
            *req.method() == tiny_http::Method::Get || *req.method() == tiny_http::Method::Head;
        let resp = if ok && (path == "/metrics" || path == "/") {
            let header = tiny_http::Header::from_bytes("Content-Type", OPENMETRICS)
                .expect("a static header is valid");
            tiny_http::Response::from_string(live.render()).with_header(header)
        } else {
            tiny_http::Response::from_string("iosim serves its metrics at GET /metrics\n")
                .with_status_code(404)
        };
        // A client that went away is its own business.
        let _ = req.respond(resp);
    }
}

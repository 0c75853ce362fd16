//! The `--metrics-listen` HTTP server: `GET /metrics` (or `/`) answers the
//! metrics of a [`Live`] in the format the scraper asks for (OpenMetrics, or
//! the classic Prometheus text when its `Accept` header prefers
//! `text/plain`: [`super::text`]). The state is only read (under its lock, a
//! copy, for microseconds), so a scrape never slows the I/O.
//!
//! Each connection is served on a thread of its own, at most
//! [`MAX_CONNECTIONS`] at once (one more is answered 503 and closed), and
//! every write to a client has a timeout: a client that sends requests and
//! never reads the answers (a pipelining client whose socket buffers fill)
//! holds its own thread until the timeout closes its connection, never
//! another scraper's. Requests are HTTP/1.0 and 1.1 `GET`/`HEAD` with
//! keep-alive; a request head over [`MAX_HEAD`] bytes closes the connection.
//! Dropping the [`Server`] stops accepting and closes the port; connection
//! threads end within [`READ_POLL`].
//!
//! This replaces tiny_http, which answered every connection's requests from
//! one thread with no write timeout (one non-reading client stopped every
//! scrape) and started a thread per connection without a bound.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::listen::{ListenAddr, MetricsError};
use super::text::Format;
use super::Live;

/// Connections served at once; one more is answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 16;
/// How long a write to a client may block before its connection is closed.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a kept-alive connection may wait for its next request.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// How often a waiting connection looks at the stop flag.
pub const READ_POLL: Duration = Duration::from_millis(200);
/// The largest request head (request line and headers) read.
pub const MAX_HEAD: usize = 16 << 10;
/// How often the accepting thread looks for a connection and at its stop flag.
const ACCEPT_POLL: Duration = Duration::from_millis(20);

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
        listener
            .set_nonblocking(true)
            .map_err(|e| MetricsError::Bind(addr.0, e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (live, stop) = (live.clone(), stop.clone());
            std::thread::Builder::new()
                .name("iosim-metrics".into())
                .spawn(move || accept(&listener, &live, &stop))
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

/// Counts a connection thread while it lives.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Accepts connections until `stop` is set, each on a thread of its own.
fn accept(listener: &TcpListener, live: &Arc<Live>, stop: &Arc<AtomicBool>) {
    let open = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::Relaxed) {
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(ACCEPT_POLL);
                continue;
            }
            // A connection that went away before it was accepted, or no
            // descriptors left for a moment: the next one may do.
            Err(_) => {
                std::thread::sleep(ACCEPT_POLL);
                continue;
            }
        };
        if stream.set_nonblocking(false).is_err()
            || stream.set_write_timeout(Some(WRITE_TIMEOUT)).is_err()
            || stream.set_read_timeout(Some(READ_POLL)).is_err()
        {
            continue;
        }
        if open.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::AcqRel);
            busy(stream);
            continue;
        }
        let slot = Slot(open.clone());
        let (live, stop) = (live.clone(), stop.clone());
        let spawned = std::thread::Builder::new()
            .name("iosim-metrics-conn".into())
            .spawn(move || {
                let _slot = slot;
                serve(stream, &live, &stop);
            });
        // No thread to be had: that connection is closed (its slot with it).
        drop(spawned);
    }
}

/// Too many connections: 503, and closed.
fn busy(mut stream: TcpStream) {
    let _ = stream.set_write_timeout(Some(Duration::from_millis(200)));
    let body =
        format!("iosim serves at most {MAX_CONNECTIONS} metrics connections at once; try again\n");
    let _ = write!(
        stream,
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nRetry-After: 1\r\n\r\n{body}",
        body.len()
    );
}

/// One request, as far as the server cares.
#[derive(Debug, Default, PartialEq)]
struct Request {
    method: String,
    path: String,
    accept: Option<String>,
    /// The connection stays open after the answer.
    keep_alive: bool,
    /// Bytes of body that follow the head (discarded).
    body: u64,
}

/// Why a connection ends.
enum End {
    /// The client closed it, went quiet, or the server is stopping.
    Quiet,
    /// What the client sent is not a request this server can read.
    Bad(&'static str),
}

/// Serves one connection's requests in order until it closes, goes idle,
/// fails a write or the server stops.
fn serve(stream: TcpStream, live: &Arc<Live>, stop: &AtomicBool) {
    let Ok(mut out) = stream.try_clone() else {
        return;
    };
    let mut input = BufReader::new(stream);
    loop {
        let head = match read_head(&mut input, stop) {
            Ok(h) => h,
            Err(End::Quiet) => return,
            Err(End::Bad(why)) => {
                let _ = respond(
                    &mut out,
                    400,
                    "text/plain; charset=utf-8",
                    why,
                    false,
                    false,
                );
                return;
            }
        };
        let Some(req) = parse(&head) else {
            let _ = respond(
                &mut out,
                400,
                "text/plain; charset=utf-8",
                "not an HTTP request\n",
                false,
                false,
            );
            return;
        };
        if req.body > 0 && skip(&mut input, req.body).is_err() {
            return;
        }
        let head_only = req.method == "HEAD";
        let written =
            if (req.method == "GET" || head_only) && (req.path == "/metrics" || req.path == "/") {
                let format = Format::negotiate(req.accept.as_deref());
                let body = format.render(live);
                respond(
                    &mut out,
                    200,
                    format.content_type(),
                    &body,
                    req.keep_alive,
                    head_only,
                )
            } else {
                respond(
                    &mut out,
                    404,
                    "text/plain; charset=utf-8",
                    "iosim serves its metrics at GET /metrics\n",
                    req.keep_alive,
                    head_only,
                )
            };
        if written.is_err() || !req.keep_alive {
            return;
        }
    }
}

/// Reads one request head (through the blank line), skipping blank lines
/// before it; waits at most [`IDLE_TIMEOUT`] for it to start.
fn read_head(input: &mut BufReader<TcpStream>, stop: &AtomicBool) -> Result<Vec<u8>, End> {
    let started = Instant::now();
    let mut head: Vec<u8> = Vec::new();
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(End::Quiet);
        }
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                if started.elapsed() > IDLE_TIMEOUT {
                    return Err(End::Quiet);
                }
                continue;
            }
            Err(_) => return Err(End::Quiet),
        };
        if buf.is_empty() {
            return Err(End::Quiet);
        }
        let mut used = 0;
        let mut done = false;
        for &b in buf {
            used += 1;
            if head.is_empty() && (b == b'\r' || b == b'\n') {
                continue;
            }
            head.push(b);
            if head.ends_with(b"\r\n\r\n") || head.ends_with(b"\n\n") {
                done = true;
                break;
            }
        }
        input.consume(used);
        if done {
            return Ok(head);
        }
        if head.len() > MAX_HEAD {
            return Err(End::Bad("request head too large\n"));
        }
    }
}

/// The request line and the headers the server uses.
fn parse(head: &[u8]) -> Option<Request> {
    let text = std::str::from_utf8(head).ok()?;
    let mut lines = text.lines();
    let mut parts = lines.next()?.split_whitespace();
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    let http11 = match version {
        "HTTP/1.1" => true,
        "HTTP/1.0" => false,
        _ => return None,
    };
    let mut req = Request {
        method: method.to_string(),
        path: target.split('?').next().unwrap_or("").to_string(),
        keep_alive: http11,
        ..Request::default()
    };
    for line in lines.take_while(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':')?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("accept") {
            req.accept = Some(match req.accept.take() {
                Some(a) => format!("{a},{value}"),
                None => value.to_string(),
            });
        } else if name.eq_ignore_ascii_case("connection") {
            let v = value.to_ascii_lowercase();
            if v.contains("close") {
                req.keep_alive = false;
            } else if v.contains("keep-alive") {
                req.keep_alive = true;
            }
        } else if name.eq_ignore_ascii_case("content-length") {
            req.body = value.parse().ok()?;
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            // A chunked body on a GET: nothing this server reads.
            return None;
        }
    }
    Some(req)
}

/// Reads and drops `n` bytes of a request body.
fn skip(input: &mut BufReader<TcpStream>, n: u64) -> std::io::Result<u64> {
    std::io::copy(&mut std::io::Read::take(input, n), &mut std::io::sink())
}

/// Writes one answer (the head only, for HEAD).
fn respond(
    out: &mut TcpStream,
    status: u16,
    content_type: &str,
    body: &str,
    keep_alive: bool,
    head_only: bool,
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        _ => "",
    };
    let mut msg = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: {}\r\n\r\n",
        body.len(),
        if keep_alive { "keep-alive" } else { "close" }
    );
    if !head_only {
        msg.push_str(body);
    }
    out.write_all(msg.as_bytes())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_heads_are_read_for_what_the_server_uses() {
        let r = parse(
            b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\naccept: text/plain;version=0.0.4\r\n\r\n",
        )
        .unwrap();
        assert_eq!(
            r,
            Request {
                method: "GET".into(),
                path: "/metrics".into(),
                accept: Some("text/plain;version=0.0.4".into()),
                keep_alive: true,
                body: 0,
            }
        );
        let r = parse(b"HEAD / HTTP/1.0\r\nContent-Length: 3\r\n\r\n").unwrap();
        assert!(!r.keep_alive && r.body == 3 && r.method == "HEAD");
        let r = parse(b"GET / HTTP/1.1\r\nConnection: close\r\nAccept: a\r\nAccept: b\r\n\r\n")
            .unwrap();
        assert!(!r.keep_alive);
        assert_eq!(r.accept.as_deref(), Some("a,b"));
        for bad in [
            &b"GET /\r\n\r\n"[..],
            b"GET / HTTP/2\r\n\r\n",
            b"GET / HTTP/1.1\r\nno colon\r\n\r\n",
            b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
            b"\xff / HTTP/1.1\r\n\r\n",
        ] {
            assert_eq!(parse(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }
}

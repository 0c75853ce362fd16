//! Where `--metrics-listen` serves: `PORT`, `:PORT` or `HOST:PORT`. A bare
//! port (or `:PORT`) binds the loopback address only, so a benchmark never
//! exposes its metrics to the network unless the user names an address.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};

use thiserror::Error;

/// The address `--metrics-listen` binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenAddr(pub SocketAddr);

/// Why the metrics endpoint could not start.
#[derive(Debug, Error)]
pub enum MetricsError {
    /// The address does not parse.
    #[error("--metrics-listen '{0}': give PORT (loopback), :PORT (loopback) or HOST:PORT, e.g. 9464 or 127.0.0.1:9464 or 0.0.0.0:9464 to serve every interface")]
    BadAddress(String),
    /// Port 0 would pick a port nobody knows.
    #[error("--metrics-listen '{0}': port 0 would pick a port Prometheus cannot know; give a port such as 9464")]
    PortZero(String),
    /// Another process (or another iosim) holds the port.
    #[error("--metrics-listen {0}: the port is in use by another process; choose another port (e.g. --metrics-listen {1}) or stop the process that holds it (ss -ltnp 'sport = :{2}' names it)")]
    InUse(SocketAddr, u16, u16),
    /// The address is not one of this machine's, or binding is not allowed.
    #[error("--metrics-listen {0}: cannot listen there ({1}); give an address of this machine (ip -brief address lists them), or a bare port for the loopback address")]
    Bind(SocketAddr, std::io::Error),
}

impl ListenAddr {
    /// Parses `PORT`, `:PORT` or `HOST:PORT` (`[::1]:PORT` for IPv6, a host
    /// name is resolved to its first address).
    pub fn parse(s: &str) -> Result<ListenAddr, MetricsError> {
        let t = s.trim();
        let bad = || MetricsError::BadAddress(s.to_string());
        let port_only = t.strip_prefix(':').unwrap_or(t);
        let addr = if let Ok(port) = port_only.parse::<u16>() {
            SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)
        } else if let Ok(a) = t.parse::<SocketAddr>() {
            a
        } else if t.contains(':') && !t.ends_with(':') {
            t.to_socket_addrs()
                .map_err(|_| bad())?
                .next()
                .ok_or_else(bad)?
        } else {
            return Err(bad());
        };
        if addr.port() == 0 {
            return Err(MetricsError::PortZero(s.to_string()));
        }
        Ok(ListenAddr(addr))
    }
}

impl ListenAddr {
    /// The warning to print when the address is not a loopback one: the
    /// endpoint (which has no authentication) is open to the network.
    pub fn exposure_warning(&self) -> Option<String> {
        let ip = self.0.ip();
        if ip.is_loopback() {
            return None;
        }
        let reach = if ip.is_unspecified() {
            "every network interface of this machine"
        } else {
            "the network that address is on"
        };
        Some(format!(
            "--metrics-listen {self}: the metrics endpoint is open to {reach}, without authentication: anyone who can reach port {} sees the targets' paths and the figures. Give a bare port (--metrics-listen {}) to serve the loopback address only, or keep the port behind a firewall",
            self.0.port(),
            self.0.port()
        ))
    }
}

impl std::fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// clap's value parser for `--metrics-listen`.
pub fn listen_arg(s: &str) -> Result<ListenAddr, String> {
    ListenAddr::parse(s).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_port_is_loopback_and_a_named_host_is_kept() {
        let p = |s: &str| ListenAddr::parse(s).map(|a| a.0.to_string());
        assert_eq!(p("9464").unwrap(), "127.0.0.1:9464");
        assert_eq!(p(":9464").unwrap(), "127.0.0.1:9464");
        assert_eq!(p("0.0.0.0:9464").unwrap(), "0.0.0.0:9464");
        assert_eq!(p("[::1]:9464").unwrap(), "[::1]:9464");
        assert_eq!(
            p("localhost:9464").unwrap().rsplit(':').next(),
            Some("9464")
        );
        for bad in ["", "abc", "99999", "1.2.3.4", "1.2.3.4:", "host:port"] {
            assert!(
                matches!(ListenAddr::parse(bad), Err(MetricsError::BadAddress(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            ListenAddr::parse("0"),
            Err(MetricsError::PortZero(_))
        ));
        assert!(listen_arg("x").unwrap_err().contains("HOST:PORT"));
    }

    #[test]
    fn only_a_loopback_address_is_private() {
        let w = |s: &str| ListenAddr::parse(s).unwrap().exposure_warning();
        assert_eq!(w("9464"), None);
        assert_eq!(w("[::1]:9464"), None);
        assert_eq!(w("127.0.0.2:9464"), None);
        let all = w("0.0.0.0:9464").unwrap();
        assert!(
            all.contains("open to every network interface")
                && all.contains("--metrics-listen 9464"),
            "{all}"
        );
        assert!(w("[::]:9464").unwrap().contains("every network interface"));
        assert!(w("192.0.2.10:9464")
            .unwrap()
            .contains("the network that address is on"));
    }
}

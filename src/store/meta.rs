//! The indexed facts stored beside a document, read from the typed
//! [`crate::document::Document`].

use super::env::TargetPlace;

/// Indexed columns stored beside a document ([`Meta::of`] reads them from a
/// typed document; callers may override any field).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Meta {
    /// Start time, RFC 3339 UTC (default: now).
    pub started_at: Option<String>,
    /// Host name.
    pub host: Option<String>,
    /// Target paths.
    pub targets: Vec<String>,
    /// Device model (or name) the targets live on, when the document says.
    pub device: Option<String>,
    /// Workload profile name, when the document has one.
    pub profile: Option<String>,
    /// iosim version that produced the document.
    pub iosim_version: Option<String>,
    /// Repetition group: runs of one group are repetitions of one test.
    pub group: Option<i64>,
    /// Where the targets live (see [`super::env::collect`]): filesystem, mount
    /// options, device, model, size; recorded when the run is saved.
    pub environment: Option<Vec<TargetPlace>>,
}

/// A target path as the history keeps it: absolute and canonical when it
/// exists, so `history --target` finds it whatever directory it was given
/// from; as given otherwise (the null engine's `null`, a file already gone).
pub fn canonical_target(p: &std::path::Path) -> String {
    std::fs::canonicalize(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

impl Meta {
    /// Everything a typed document says about itself.
    pub fn of(doc: &crate::document::Document) -> Meta {
        let h = doc.header();
        Meta {
            started_at: Some(h.started_at).filter(|s| !s.is_empty()),
            host: Some(h.host).filter(|s| !s.is_empty()),
            targets: doc.targets().iter().map(|p| canonical_target(p)).collect(),
            device: doc.device(),
            profile: doc.profile(),
            iosim_version: Some(h.iosim_version).filter(|s| !s.is_empty()),
            group: None,
            environment: None,
        }
    }
}

//! The report's references: every public source the rules and the latency
//! tables cite ([`super::rules::SOURCES`]), and any other a stored reason
//! names, each with its tag, full title and absolute address, and what in
//! this qualification cites it. A source without an address (a rule of
//! thumb whose original was not located, iosim's own self-checks) is listed
//! by its title alone: nothing in a report links to a file beside it.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::rules::is_absolute;
use super::QualifyResult;
use crate::text::escape_xml as esc;

/// One source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// Tag, as the reasons cite it (`[Randal]`).
    pub tag: String,
    /// Author, title and what it says.
    pub title: String,
    /// Absolute address; empty when the source has none.
    pub url: String,
    /// What cites it in this qualification: the rule ids of the reasons,
    /// and `latency tables` (the database workloads' table words). Empty:
    /// a rule that uses it passed.
    pub cited_by: Vec<String>,
}

/// The in-page anchor of a tag: `ref-randal` for `[Randal]`.
pub fn anchor(tag: &str) -> String {
    let mut s = String::from("ref-");
    for c in tag.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    s.trim_end_matches('-').to_string()
}

/// The references of a qualification: those stored with it, every source
/// the rules of its database use, the documentation of the settings it
/// assumed, and any a reason names that none of these lists.
pub fn collect(r: &QualifyResult) -> Vec<Reference> {
    let mut out: Vec<Reference> = r.references.clone();
    let mut add = |tag: &str, title: &str, url: &str| {
        if !out.iter().any(|x| x.tag == tag) {
            out.push(Reference {
                tag: tag.to_string(),
                title: title.to_string(),
                url: if is_absolute(url) {
                    url.to_string()
                } else {
                    String::new()
                },
                cited_by: Vec::new(),
            });
        }
    };
    for s in super::rules::sources_for(r.dbms) {
        add(s.tag, s.title, s.url);
    }
    for s in super::databases::doc_sources(r.dbms) {
        if r.settings.iter().any(|x| x.source_tag == s.tag) {
            add(s.tag, s.title, s.url);
        }
    }
    for x in r
        .verdicts
        .iter()
        .flat_map(|v| v.reasons.iter().chain(&v.passed))
    {
        add(&x.source_tag, &x.source, &x.url);
    }
    for refr in &mut out {
        let mut by: Vec<String> = Vec::new();
        for x in r
            .verdicts
            .iter()
            .flat_map(|v| v.reasons.iter().chain(&v.passed))
        {
            if x.source_tag == refr.tag && !by.iter().any(|b| b == x.rule.as_str()) {
                by.push(x.rule.to_string());
            }
        }
        if r.profiles
            .iter()
            .flat_map(|p| &p.tables)
            .any(|t| t.contains(&refr.tag))
        {
            by.push("latency tables".into());
        }
        if r.settings.iter().any(|x| x.source_tag == refr.tag) {
            by.push("settings assumed".into());
        }
        refr.cited_by = by;
    }
    out
}

fn cited(x: &Reference) -> String {
    if x.cited_by.is_empty() {
        // Passing rules cite their sources too: a source no rule cites is
        // one of a rule nothing here measured (or, in a qualification
        // stored before iosim kept passing rules, one that passed).
        "no rule judged here".into()
    } else {
        x.cited_by.join(", ")
    }
}

/// The text section.
pub fn text(refs: &[Reference]) -> String {
    let mut s = String::from("References (the sources the rules and tables cite):\n");
    for x in refs {
        let _ = writeln!(
            s,
            "  {:<20} {}{} (cited by: {})",
            x.tag,
            x.title,
            if x.url.is_empty() {
                String::new()
            } else {
                format!(" <{}>", x.url)
            },
            cited(x)
        );
    }
    s
}

/// The HTML section: `id="{prefix}references"`, each source's row
/// `id="{prefix}ref-..."` (the reasons link to it).
pub fn html(refs: &[Reference], prefix: &str) -> String {
    let mut s = format!(
        "<section id=\"{prefix}references\"><h2>References</h2>\
         <table><tr><th class=\"l\">tag</th><th class=\"l\">source</th><th class=\"l\">address</th><th class=\"l\">cited here by</th></tr>"
    );
    for x in refs {
        let _ = write!(
            s,
            "<tr id=\"{prefix}{}\"><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            anchor(&x.tag),
            esc(&x.tag),
            esc(&x.title),
            if x.url.is_empty() {
                "no public address".to_string()
            } else {
                format!("<a href=\"{0}\">{0}</a>", esc(&x.url))
            },
            esc(&cited(x))
        );
    }
    s.push_str("</table></section>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_plain() {
        assert_eq!(anchor("[Randal]"), "ref-randal");
        assert_eq!(anchor("[iosim self-check]"), "ref-iosim-self-check");
        assert_eq!(anchor("[MS-2012]"), "ref-ms-2012");
    }

    #[test]
    fn every_rule_source_is_listed_and_old_relative_addresses_are_dropped() {
        let mut r: QualifyResult = serde_json::from_value(serde_json::json!({
            "overall": "FIT WITH WARNINGS", "trustworthy": false,
            "verdicts": [{"role": "data", "verdict": "FIT WITH WARNINGS", "reasons": [
                {"role": "data", "level": "warning", "rule": "untrusted", "measured": "m",
                 "limit": "l", "source_tag": "[iosim self-check]", "source": "old words",
                 "url": "docs/sysmon.md"},
                {"role": "data", "level": "warning", "rule": "future-rule", "measured": "m",
                 "limit": "l", "source_tag": "[Later]", "source": "A later source",
                 "url": "docs/later.md"}]}],
            "recommendations": [], "time_budget_s": 60.0, "setup_s": 0.0, "measure_s": 60.0,
            "locations": [], "stages": [], "quick": [], "sweeps": [], "profiles": [],
            "sim": null, "checks": [], "baseline": null, "notes": [], "left_on_disk": [],
            "interrupted": false
        }))
        .expect("a document stored before the report kept its system and references loads");
        r.profiles.clear();
        let refs = collect(&r);
        for s in super::super::rules::sources_for(crate::dbms::Dbms::SQLSERVER) {
            assert!(refs.iter().any(|x| x.tag == s.tag), "{} missing", s.tag);
        }
        assert!(
            !refs
                .iter()
                .any(|x| x.tag == "[iosim-bands]" || x.tag == "[etcd-fio]"),
            "another database's sources are not a SQL Server qualification's"
        );
        let sc = refs.iter().find(|x| x.tag == "[iosim self-check]").unwrap();
        assert_eq!(sc.cited_by, ["untrusted"]);
        assert!(sc.url.is_empty());
        let later = refs.iter().find(|x| x.tag == "[Later]").unwrap();
        assert_eq!(later.url, "", "a relative address does not travel");
        assert_eq!(later.cited_by, ["future-rule"]);
        for x in &refs {
            assert!(x.url.is_empty() || is_absolute(&x.url), "{x:?}");
        }
        let h = html(&refs, "");
        assert!(h.contains("<tr id=\"ref-randal\">"), "{h}");
        assert!(!h.contains("href=\"docs/"), "{h}");
        let t = text(&refs);
        assert!(
            t.contains(
                "[Randal]             Paul Randal, Are I/O latencies killing your performance?"
            ),
            "{t}"
        );
        assert!(t.contains("(cited by: no rule judged here)"), "{t}");
    }
}

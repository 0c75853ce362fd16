//! The verdict part of a qualification in HTML: every role's verdict with
//! its reasons and sources, the recommendations, and the comparison with
//! an earlier qualification: the head of the qualification's page, in its
//! own report (`iosim qualify --html`) and in `iosim report` ([`super`]).

use std::fmt::Write as _;

use crate::qualify::QualifyResult;
use crate::text::escape_xml as esc;

/// The CSS of the verdict badges.
pub const CSS: &str = ".v{font-weight:bold;padding:2px 8px;border-radius:3px}.FIT{background:#d8f0d8;color:#060}.WARN{background:#fff0c0;color:#750}.NOT{background:#f8d0d0;color:#900}.PRELIM{background:#dde3f8;color:#223a8a}";

/// A verdict as a coloured badge.
pub fn badge(v: crate::qualify::rules::Verdict) -> String {
    let class = match v {
        crate::qualify::rules::Verdict::Fit => "FIT",
        crate::qualify::rules::Verdict::FitWithWarnings => "WARN",
        crate::qualify::rules::Verdict::NotFit => "NOT",
    };
    format!("<span class=\"v {class}\">{}</span>", v.label())
}

/// The overall verdict as badges: PRELIMINARY (under the minimum budget) before the verdict.
pub fn overall_badge(r: &QualifyResult) -> String {
    let v = badge(r.overall);
    if r.preliminary {
        format!("<span class=\"v PRELIM\" data-preliminary=\"true\">PRELIMINARY</span> {v}")
    } else {
        v
    }
}

/// The verdict section: roles, reasons, recommendations, baseline. Each
/// reason's source tag links to its row in the references section, whose
/// ids start with `prefix` ([`crate::qualify::references::html`]); a source's own
/// address is linked only when it is absolute.
pub fn section(r: &QualifyResult, prefix: &str) -> String {
    let mut s = format!("<section id=\"{prefix}verdict\"><h2>Verdict</h2>\n");
    intro(&mut s, r, prefix);
    roles_table(&mut s, r, prefix);
    if !r.recommendations.is_empty() {
        s.push_str("<h3>Recommendations</h3><ul>");
        for x in &r.recommendations {
            let _ = write!(s, "<li>{}</li>", esc(x));
        }
        s.push_str("</ul>\n");
    }
    if let Some(b) = &r.baseline {
        baseline(&mut s, b);
    }
    s.push_str("</section>\n");
    s
}

/// The verdict's head: PRELIMINARY, the database and its settings, the
/// latency table, and whether the numbers can be trusted.
fn intro(s: &mut String, r: &QualifyResult, prefix: &str) {
    if r.preliminary {
        let note = crate::qualify::preliminary_note(
            std::time::Duration::from_secs_f64(r.time_budget_s),
            std::time::Duration::from_secs_f64(r.minimum_budget_s),
        );
        let _ = writeln!(s, "<p class=\"v PRELIM\">{}</p>", esc(&note));
    }
    let settings: Vec<String> = r
        .settings
        .iter()
        .map(|x| {
            format!(
                "<code title=\"{}\">{}</code> <a href=\"#{prefix}{}\">{}</a>",
                esc(&x.means),
                esc(&x.pair()),
                crate::qualify::references::anchor(&x.source_tag),
                esc(&x.source_tag)
            )
        })
        .collect();
    let _ = writeln!(
        s,
        "<p data-dbms=\"{}\">Qualified for <b>{}</b> (<code>--dbms {}</code>){}.</p>",
        r.dbms.name(),
        esc(r.dbms.title()),
        r.dbms.name(),
        if settings.is_empty() {
            String::new()
        } else {
            format!("; settings assumed: {}", settings.join(", "))
        }
    );
    let _ = writeln!(
        s,
        "<p>Judged by the <b>{}</b> latency table (<code>--rules {}</code>){}.</p>",
        r.rules.name(),
        r.rules.name(),
        crate::qualify::databases::latency_limits(r.dbms)
            .map(|l| format!("; latency limits: {}", esc(&l)))
            .unwrap_or_default()
    );
    if !r.trustworthy {
        s.push_str("<p class=\"v NOT\">The numbers are not trustworthy: a self-check failed (see below). Fix it and qualify again before deciding.</p>\n");
    }
}

/// Each role's verdict with the rules judged, one row a role.
fn roles_table(s: &mut String, r: &QualifyResult, prefix: &str) {
    s.push_str("<table><tr><th class=\"l\">role</th><th class=\"l\">location</th><th class=\"l\">verdict</th><th class=\"l\">rules judged (measured figure: limit (rule id, source))</th></tr>\n");
    for v in &r.verdicts {
        let loc = r
            .locations
            .iter()
            .find(|l| l.role == v.role)
            .map(|l| l.target.display().to_string())
            .unwrap_or_default();
        // The source's tag links to its row in the references, where its
        // title and address are given once.
        let reasons: Vec<String> = v
            .reasons
            .iter()
            .chain(&v.passed)
            .map(|x| {
                format!(
                    "<li class=\"{}\">{} {}: {} ({} <a href=\"#{prefix}{}\">{}</a>)</li>",
                    x.mark().to_lowercase(),
                    x.mark(),
                    esc(&x.measured),
                    esc(&x.limit),
                    esc(x.rule.as_str()),
                    crate::qualify::references::anchor(&x.source_tag),
                    esc(&x.source_tag),
                )
            })
            .collect();
        let _ = writeln!(
            s,
            "<tr class=\"role\" data-role=\"{}\" data-verdict=\"{}\"><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\"><ul>{}</ul></td></tr>",
            v.role.name(),
            v.verdict.label(),
            r.dbms.role_name(v.role),
            esc(&loc),
            badge(v.verdict),
            reasons.join("")
        );
    }
    s.push_str("</table>\n");
}

/// The comparison with an earlier qualification (`--baseline`).
fn baseline(s: &mut String, b: &crate::qualify::BaselineComparison) {
    let _ = write!(
        s,
        "<h3>Against qualification {} ({})</h3><ul>",
        b.id,
        esc(&b.started_at)
    );
    for (role, then, now) in &b.roles {
        let _ = write!(
            s,
            "<li>{}: {} &rarr; {}</li>",
            role.name(),
            badge(*then),
            badge(*now)
        );
    }
    for c in &b.changes {
        let _ = write!(s, "<li>{}</li>", esc(c));
    }
    s.push_str("</ul>");
    if let Some(t) = b.threshold_pct {
        if b.regressions.is_empty() {
            let _ = write!(s, "<p>No regression beyond {t}%.</p>");
        } else {
            let _ = write!(
                s,
                "<p class=\"v NOT\">Regressions beyond {t}%:</p><ul class=\"regressions\">"
            );
            for r in &b.regressions {
                let _ = write!(s, "<li>{}</li>", esc(r));
            }
            s.push_str("</ul>");
        }
    }
    let _ = write!(s, "<p class=\"note\">{}</p>", esc(&b.caveat));
}

/// The stages table (name, budget, time taken, runs, what it measured):
/// the qualification's own report and `iosim report` show the same one.
pub fn stages_table(r: &QualifyResult) -> String {
    let mut s = String::from("<table><tr><th class=\"l\">stage</th><th>budget (s)</th><th>took (s)</th><th>runs</th><th class=\"l\">what</th></tr>");
    for st in &r.stages {
        let _ = write!(
            s,
            "<tr><td class=\"l\">{}</td><td>{:.1}</td><td>{:.1}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            esc(st.name.name()),
            st.budget_s,
            st.elapsed_s,
            st.runs,
            esc(&st.summary)
        );
    }
    let _ = write!(
        s,
        "<tr><th class=\"l\">total</th><th>{:.1}</th><th>{:.1}</th><th>{}</th><th class=\"l\">set-up {} the budget: {:.1} s</th></tr></table>",
        r.time_budget_s,
        r.stages.iter().map(|st| st.elapsed_s).sum::<f64>(),
        r.stages.iter().map(|st| st.runs).sum::<usize>(),
        if r.budget.is_some() { "paid from" } else { "before" },
        r.setup_s
    );
    if let Some(b) = &r.budget {
        s.push_str(&budget_html(b));
    }
    s
}

/// How the budget was kept: the wall time against it and each overrun with
/// its cause (the text report's budget lines, as a list).
fn budget_html(b: &crate::qualify::BudgetAccount) -> String {
    let lines = crate::qualify::budget_lines(b);
    let mut s = format!(
        "<div class=\"budget\" id=\"budget\"><p class=\"{}\">{}</p>",
        if b.overrun_s > 0.0 { "warn" } else { "note" },
        esc(&lines[0])
    );
    if lines.len() > 1 {
        s.push_str("<ul>");
        for l in &lines[1..] {
            let _ = write!(s, "<li>{}</li>", esc(l.trim_start()));
        }
        s.push_str("</ul>");
    }
    s.push_str("</div>");
    s
}

/// Who used the CPU in a run with a CPU finding, as an expandable table:
/// iosim's threads, the kernel's I/O path and other processes by name.
pub fn cpu_detail(a: &crate::sysmon::procs::CpuAttribution) -> String {
    let mut s = String::from("<details class=\"cpu\"><summary>who used the CPU</summary><table><tr><th class=\"l\">who</th><th>% of the machine</th></tr>");
    let mut row = |who: &str, pct: f64, part: bool| {
        let _ = write!(
            s,
            "<tr><td class=\"l\"{}>{}</td><td>{pct:.1}</td></tr>",
            if part {
                " style=\"padding-left:1.5em\""
            } else {
                ""
            },
            esc(who)
        );
    };
    row("iosim's own threads", a.iosim_pct, false);
    row("the kernel's I/O path", a.io_path_pct, false);
    row("interrupts", a.irq_pct, true);
    for t in &a.io_path {
        row(&format!("{} ({})", t.name, t.tasks), t.pct, true);
    }
    row("other processes", a.others_pct, false);
    for t in &a.others {
        row(&format!("{} ({})", t.name, t.tasks), t.pct, true);
    }
    let _ = write!(
        s,
        "</table><p class=\"note\">{} core(s), {:.1} s measured, machine {:.0}% busy{}.</p></details>",
        a.cores,
        a.window_s,
        a.busy_pct,
        a.worker_wait_pct
            .map(|w| format!("; iosim's {} worker thread(s) waited for a core {w:.0}% of their time", a.workers))
            .unwrap_or_default()
    );
    s
}

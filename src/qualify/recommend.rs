//! What a qualification recommends, computed from its facts: the
//! verdict's findings in the database's own terms (its settings, its
//! files), each only when the measurement behind it repeats.

use super::rules::*;
use crate::dbms::Dbms;
use crate::verdict::Role;

/// A sweep's knee in the database's own terms (issue 37: "run with QD<=16"
/// is advice a SQL Server DBA has no setting for). Given only for a knee
/// whose plateau the repetitions prove (`KneeFact::proven`), so the number
/// moves only on a difference beyond the run-to-run spread.
fn knee_advice(dbms: Dbms, role: Role, k: &KneeFact) -> String {
    let what = if k.param == crate::sweep::Param::Threads {
        format!("{} concurrent threads", k.at)
    } else {
        format!("{} outstanding I/Os", k.at)
    };
    let name = dbms.role_name(role);
    let finding = format!(
        "the {name}'s {} gain nothing past {what}: beyond it latency grows {:.1}x for {:.0}% more IOPS",
        if role == Role::Log { "writes" } else { "I/Os" },
        k.growth_after,
        (k.max_iops / k.iops - 1.0).max(0.0) * 100.0
    );
    let means = dbms.knee_advice(role, k.at, &what).unwrap_or_else(|| {
        "more concurrent commits or connections on this volume add only latency".to_string()
    });
    format!("{finding}; {means}")
}

/// Top recommendations, computed from the measurements.
pub fn recommendations(f: &Facts) -> Vec<String> {
    let mut out = Vec::new();
    if !f.sim_errors_by_class.is_empty() {
        let classes: Vec<String> = f
            .sim_errors_by_class
            .iter()
            .map(|(c, n)| format!("{n} {c}"))
            .collect();
        out.push(format!(
            "do not put a database here until the simulator's errors are explained ({}): check firmware, drivers, controller cache settings and cabling, then run iosim sim on this location again",
            classes.join(", ")
        ));
    }
    if let (true, Some(alone), Some(with)) =
        (f.log_shares_data, f.commit_alone_us, f.commit_with_data_us)
    {
        if alone > 0.0 && with > alone * SHARED_LOG_RATIO {
            out.push(format!(
                "put the log on its own device: commit latency {:.0} -> {:.0} us measured (beside data I/O -> alone)",
                with, alone
            ));
        }
    }
    for r in &f.roles {
        if let Some(k) = &r.knee {
            // The knee rule's own margin (one rule): a knee the sweep found
            // always passes; one stored by an older iosim far below the best
            // IOPS is noise in the curve and recommends nothing.
            if k.before_last
                && k.proven
                && k.iops > 0.0
                && k.max_iops <= k.iops * (1.0 + crate::sweep::analysis::KNEE_MARGIN)
            {
                out.push(knee_advice(f.dbms, r.role, k));
            }
        }
    }
    // One recommendation per size of test file (data and log files are alike).
    let mut small: Vec<(&CacheFact, u64, String, Vec<&str>)> = Vec::new();
    for r in &f.roles {
        let Some(c) = &r.cache else { continue };
        let Some((limit, what)) = c.fires() else {
            continue;
        };
        match small
            .iter_mut()
            .find(|x| x.0.device == c.device && x.0.size == c.size && x.1 == limit)
        {
            Some(x) => x.3.push(f.dbms.role_name(r.role)),
            None => small.push((c, limit, what, vec![f.dbms.role_name(r.role)])),
        }
    }
    for (c, limit, what, roles) in small {
        let or_give = if c.given.is_none() {
            ", or give the array's cache with --cache-size"
        } else {
            ""
        };
        let (s, each, are) = if roles.len() > 1 {
            ("s", " each", "are")
        } else {
            ("", "", "is")
        };
        let size = crate::units::format_size(c.size);
        let roles = roles.join(" and ");
        out.push(if c.device {
            format!("the {roles} device{s} ({size}{each}) {are} smaller than {what}: the numbers may be the cache's; qualify a larger device{or_give}")
        } else {
            let unit = if limit >= 1 << 30 { 1 << 30 } else { 1 << 20 };
            format!(
                "qualify again with --size {} or more: the {roles} test file{s} ({size}{each}) {are} smaller than {what}{or_give}",
                crate::units::format_size_arg(limit.next_multiple_of(unit))
            )
        });
    }
    // Once per set of findings: roles with the same ones share the line.
    let mut untrusted: Vec<(Vec<&str>, String)> = Vec::new();
    for r in &f.roles {
        let codes: Vec<&str> = r.untrusted.iter().map(|(c, _)| c.as_str()).collect();
        if codes.is_empty() {
            continue;
        }
        match untrusted.iter_mut().find(|(c, _)| *c == codes) {
            Some((_, roles)) => *roles = format!("{roles} and {}", f.dbms.role_name(r.role)),
            None => untrusted.push((codes, f.dbms.role_name(r.role).to_string())),
        }
    }
    for (codes, roles) in untrusted {
        out.push(format!(
            "the numbers for {roles} are not trustworthy ({}): fix what the self-check says and qualify again before deciding",
            codes.join(", ")
        ));
    }
    out
}

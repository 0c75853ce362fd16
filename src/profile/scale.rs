//! Scaling a profile to the user's database: `--commit-rate` and
//! `--clients` change the rates of the workloads that follow the commits
//! or the client sessions (and a group-committed log's write sizes);
//! periodic bursts keep their period.

use super::{bad, Profile, ProfileWorkload};

impl Profile {
    /// This profile at `commits` a second (`--commit-rate`): each
    /// `per_commit` workload's `rate_iops` multiplied by `commits` over the
    /// rate it was measured at (at least 1 a second), and a note saying so;
    /// refused for a profile that does not say its commit rate.
    pub fn at_commit_rate(mut self, commits: f64) -> anyhow::Result<(Profile, String)> {
        let Some(measured) = self.commit_rate else {
            return Err(bad(format!(
                "--commit-rate {commits}: profile '{}' does not say the commit rate its workloads were measured at (no commit_rate key), so there is nothing to scale: leave --commit-rate out, or give a copy commit_rate and per_commit (iosim profile show {} > my.toml)",
                self.name, self.name
            )));
        };
        let factor = commits / measured;
        let mut scaled = Vec::new();
        for w in self.workloads.iter_mut().filter(|w| w.per_commit) {
            if let Some(r) = w.rate_iops {
                w.set_rate(r as f64 * factor);
                scaled.push(format!("{} {} a second", w.name, w.rate_iops.unwrap_or(r)));
            }
        }
        self.commit_rate = Some(commits);
        let note = format!(
            "--commit-rate {commits}: {} measured at {measured} commits a second, run at {commits} ({}); its other workloads keep their measured rates",
            self.name,
            scaled.join(", ")
        );
        Ok((self, note))
    }

    /// This profile at `clients` client sessions (`--clients`), from the
    /// `clients` it was measured with (K):
    /// - a `per_client` workload runs `threads * clients / K` threads (at
    ///   least 1), each at the rate that keeps the workload's total: the
    ///   sessions' own I/O, as many waiting at once as there are sessions,
    ///   no more of it (that follows the commits, `--commit-rate`);
    /// - a `per_client` log (`per_commit`) keeps its threads, and the
    ///   commits each of its writes (and flush) serves, `commit_rate` over
    ///   its writes a second, scale with the clients and stay at least one
    ///   (or the measured share, where it is under one): group commit, one
    ///   flush for the committers waiting on it. PostgreSQL 15 under
    ///   pgbench: 2.2 commits a flush with 8 clients, 1.0 with 2 (the
    ///   postgresql-oltp profile; docs/profiles.md).
    ///
    /// Refused for a profile that does not say its clients.
    pub fn at_clients(mut self, clients: u32) -> anyhow::Result<(Profile, String)> {
        let (Some(measured), true) = (self.clients, clients > 0) else {
            return Err(bad(if clients == 0 {
                "--clients 0: give the client sessions your database serves (1 or more)".to_string()
            } else {
                format!(
                    "--clients {clients}: profile '{}' does not say the client sessions its workloads were measured with (no clients key), so there is nothing to scale: leave --clients out, or give a copy clients and per_client (iosim profile show {} > my.toml)",
                    self.name, self.name
                )
            }));
        };
        let factor = f64::from(clients) / f64::from(measured);
        let commits = self.commit_rate;
        let mut changed = Vec::new();
        for w in self.workloads.iter_mut().filter(|w| w.per_client) {
            match (w.per_commit, commits, w.rate_iops) {
                (true, Some(c), Some(r)) => {
                    let writes = (r * u64::from(w.threads.max(1))) as f64;
                    let per_write = c / writes.max(1.0);
                    let now = (per_write * factor).max(per_write.min(1.0));
                    w.set_rate(r as f64 * per_write / now);
                    let rate = w.rate_iops.unwrap_or(r);
                    let sizes = scale_log_sizes(w, now / per_write);
                    changed.push(format!(
                        "{} {rate} a second ({now:.2} commits a write{sizes})",
                        w.name
                    ));
                }
                _ => {
                    let threads = ((f64::from(w.threads) * factor).round() as u32).max(1);
                    if let Some(r) = w.rate_iops {
                        let total = r * u64::from(w.threads);
                        w.set_rate(((total / u64::from(threads)).max(1)) as f64);
                    }
                    w.threads = threads;
                    changed.push(format!("{} {threads} threads", w.name));
                }
            }
        }
        self.clients = Some(clients);
        let note = format!(
            "--clients {clients}: {} measured with {measured} clients, run with {clients} ({}); its other workloads are as measured",
            self.name,
            changed.join(", ")
        );
        Ok((self, note))
    }
}

impl ProfileWorkload {
    /// Sets `rate_iops` to `rate` (at least 1); periodic bursts keep their
    /// period and scale with it (the burst's I/Os and its rate), so the
    /// workload's shape over time stays as measured.
    fn set_rate(&mut self, rate: f64) {
        let rate = (rate.round() as u64).max(1);
        let Some(old) = self.rate_iops.replace(rate) else {
            return;
        };
        if self.burst_every.is_some() {
            let k = rate as f64 / old as f64;
            if let Some(b) = self.burst.as_mut() {
                *b = ((f64::from(*b) * k).round() as u32).max(1);
            }
            if let Some(b) = self.burst_rate_iops.as_mut() {
                *b = ((*b as f64 * k).round() as u64).max(1);
            }
        }
    }
}

/// A per-commit log's write sizes for `ratio` times the commits each write
/// carries (`--clients`): its tail page again and `ratio` times the rest
/// ([`crate::workload::BsSplit::scaled_past`]); returns the note's words
/// (the mean write before and after), or nothing for a log without a
/// `bssplit` and a `tail_rewrite` page.
fn scale_log_sizes(w: &mut ProfileWorkload, ratio: f64) -> String {
    let page = w
        .tail_rewrite
        .as_deref()
        .and_then(|t| crate::workload::TailRewrite::parse(t).ok())
        .map(|t| t.page);
    let bs = crate::units::parse_size(&w.bs).unwrap_or(4096);
    let (Some(page), Some(split)) = (page, w.bssplit.as_mut()) else {
        return String::new();
    };
    let before = split.mean(true, bs);
    *split = split.scaled_past(page, ratio);
    format!(
        ", writes of {:.1} KiB on average against {:.1} KiB measured",
        split.mean(true, bs) / 1024.0,
        before / 1024.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::WorkloadSpec;

    #[test]
    fn a_commit_rate_scales_only_the_workloads_that_follow_the_commits() {
        let p = Profile::load("mysql-oltp").unwrap();
        assert_eq!(p.commit_rate, Some(170.0));
        let rate =
            |p: &Profile, n: &str| p.workloads.iter().find(|w| w.name == n).unwrap().rate_iops;
        let (q, note) = p.clone().at_commit_rate(569.0).unwrap();
        assert_eq!(q.commit_rate, Some(569.0));
        // 143 and 110 a second at 170 commits: 3.35 times at 569.
        assert_eq!(rate(&q, "redo-commit"), Some(479));
        assert_eq!(rate(&q, "binlog-commit"), Some(368));
        assert_eq!(rate(&q, "pages-16k"), rate(&p, "pages-16k"));
        assert_eq!(rate(&q, "doublewrite-batch"), rate(&p, "doublewrite-batch"));
        assert!(
            note.contains("redo-commit 479 a second, binlog-commit 368 a second"),
            "{note}"
        );
        // A rate never falls to 0 (no cap at all).
        let (slow, _) = p.clone().at_commit_rate(0.1).unwrap();
        assert_eq!(rate(&slow, "redo-commit"), Some(1));
        // A profile that does not say its commit rate has nothing to scale.
        let e = Profile::load("etcd-wal")
            .unwrap()
            .at_commit_rate(500.0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no commit_rate key") && e.contains("leave --commit-rate out"),
            "{e}"
        );
    }

    #[test]
    fn periodic_bursts_keep_their_period_when_the_rate_scales() {
        let text = "name = \"t\"\ndescription = \"d\"\nsource = \"s\"\ncommit_rate = 100\n\
                    [[workload]]\nname = \"tables\"\ntarget = \"data\"\nrole = \"data\"\nrw = \"randrw\"\nbs = \"8K\"\n\
                    rate_iops = 50\nper_commit = true\nburst = 20\nburst_every = \"2s\"\nburst_rate_iops = 1000\n";
        let base = WorkloadSpec {
            targets: vec![crate::workload::TargetSpec::new("/data/t.dat", None)],
            ..WorkloadSpec::default()
        };
        let p = Profile::parse(text, "t").unwrap();
        let s = p.workloads[0].spec(&base).unwrap();
        s.validate().unwrap();
        assert_eq!(
            (s.burst, s.burst_every, s.burst_rate_iops, s.rate_iops),
            (20, std::time::Duration::from_secs(2), Some(1000), Some(50))
        );
        // Twice the commits: twice the I/Os in each burst and between, the
        // same period and burst length.
        let (q, _) = p.clone().at_commit_rate(200.0).unwrap();
        let w = &q.workloads[0];
        assert_eq!(
            (
                w.rate_iops,
                w.burst,
                w.burst_rate_iops,
                w.burst_every.as_deref()
            ),
            (Some(100), Some(40), Some(2000), Some("2s"))
        );
        // A burst longer than its period, a period without a rate, a rate
        // without a period, and periodic bursts with think time: refused.
        let bad = |t: String| Profile::parse(&t, "t").unwrap_err().to_string();
        let e = bad(text.replace("burst = 20", "burst = 3000"));
        assert!(
            e.contains("lasts 3s, not less than --burst-every 2s"),
            "{e}"
        );
        let e = bad(text.replace("burst_rate_iops = 1000\n", ""));
        assert!(e.contains("give --burst-rate-iops N"), "{e}");
        let e = bad(text.replace("burst = 20\nburst_every = \"2s\"\n", ""));
        assert!(e.contains("give --burst-every TIME and --burst N"), "{e}");
        let e = bad(format!("{text}think = \"5ms\"\n"));
        assert!(e.contains("give one"), "{e}");
    }

    #[test]
    fn commit_rate_and_per_commit_go_together() {
        let base = "name = \"t\"\ndescription = \"d\"\nsource = \"s\"\n";
        let w = "[[workload]]\nname = \"log\"\ntarget = \"log\"\nrole = \"log\"\nrw = \"write\"\nbs = \"4K\"\n";
        let err = |text: String| Profile::parse(&text, "t").unwrap_err().to_string();
        let e = err(format!("{base}commit_rate = 100\n{w}rate_iops = 50\n"));
        assert!(e.contains("no workload has per_commit = true"), "{e}");
        let e = err(format!("{base}{w}rate_iops = 50\nper_commit = true\n"));
        assert!(e.contains("has no commit_rate"), "{e}");
        let e = err(format!("{base}commit_rate = 100\n{w}per_commit = true\n"));
        assert!(e.contains("no rate_iops to scale"), "{e}");
        let e = err(format!(
            "{base}commit_rate = 0\n{w}rate_iops = 50\nper_commit = true\n"
        ));
        assert!(e.contains("commit_rate = 0"), "{e}");
        let p = Profile::parse(
            &format!("{base}commit_rate = 100\n{w}rate_iops = 50\nper_commit = true\n"),
            "t",
        )
        .unwrap();
        assert_eq!(
            p.at_commit_rate(300.0).unwrap().0.workloads[0].rate_iops,
            Some(150)
        );
    }

    #[test]
    fn clients_scale_the_sessions_reads_and_the_commits_a_flush_serves() {
        let p = Profile::load("postgresql-oltp").unwrap();
        assert_eq!(p.clients, Some(8));
        let w = |p: &Profile, n: &str| {
            let w = p.workloads.iter().find(|w| w.name == n).unwrap();
            (w.threads, w.rate_iops)
        };
        // Two clients: one backend reading (half of two, at least one) at
        // the total rate, and the WAL flushed once per commit: 1,302 a
        // second (2.18 commits a write at eight clients, 0.55 -> 1).
        let (two, note) = p.clone().at_clients(2).unwrap();
        assert_eq!(w(&two, "page-read"), (1, Some(906)));
        assert_eq!(w(&two, "wal-commit"), (1, Some(1302)));
        assert_eq!(w(&two, "page-write"), w(&p, "page-write"));
        assert!(
            note.contains("page-read 1 threads") && note.contains("wal-commit 1302 a second"),
            "{note}"
        );
        // With --commit-rate first, as the commands apply them: PostgreSQL
        // at two clients made 1,862 commits and 1,856 flushes a second.
        let (c, _) = p.clone().at_commit_rate(1862.0).unwrap();
        assert_eq!(w(&c.at_clients(2).unwrap().0, "wal-commit").1, Some(1862));
        // Eight: as measured. Thirty-two: eight readers, four times the
        // commits a flush, a quarter of the WAL's writes.
        assert_eq!(p.clone().at_clients(8).unwrap().0, p);
        let (many, _) = p.clone().at_clients(32).unwrap();
        assert_eq!(w(&many, "page-read"), (8, Some(113)));
        assert_eq!(w(&many, "wal-commit"), (1, Some(149)));
        // A profile without clients has nothing to scale.
        let e = Profile::load("mysql-oltp")
            .unwrap()
            .at_clients(4)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no clients key") && e.contains("leave --clients out"),
            "{e}"
        );
    }

    #[test]
    fn a_log_writing_more_than_once_a_commit_keeps_its_share_with_fewer_clients() {
        let text = "name = \"t\"\ndescription = \"d\"\nsource = \"s\"\ncommit_rate = 100\nclients = 4\n[[workload]]\nname = \"log\"\ntarget = \"log\"\nrole = \"log\"\nrw = \"write\"\nbs = \"4K\"\nrate_iops = 200\nper_commit = true\nper_client = true\n";
        let p = Profile::parse(text, "t").unwrap();
        // Half a commit a write: fewer clients cannot make it fewer.
        assert_eq!(
            p.clone().at_clients(1).unwrap().0.workloads[0].rate_iops,
            Some(200)
        );
        // More clients group more commits on each write.
        assert_eq!(p.at_clients(16).unwrap().0.workloads[0].rate_iops, Some(50));
    }

    #[test]
    fn clients_and_per_client_go_together() {
        let base = "name = \"t\"\ndescription = \"d\"\nsource = \"s\"\n";
        let w = "[[workload]]\nname = \"r\"\ntarget = \"data\"\nrole = \"data\"\nrw = \"randread\"\nbs = \"8K\"\n";
        let err = |text: String| Profile::parse(&text, "t").unwrap_err().to_string();
        let e = err(format!("{base}clients = 8\n{w}"));
        assert!(e.contains("no workload has per_client = true"), "{e}");
        let e = err(format!("{base}{w}per_client = true\n"));
        assert!(e.contains("has no clients"), "{e}");
        let e = err(format!("{base}clients = 0\n{w}per_client = true\n"));
        assert!(e.contains("clients = 0"), "{e}");
        let e = err(format!(
            "{base}commit_rate = 10\nclients = 8\n{w}per_client = true\nper_commit = true\n"
        ));
        assert!(e.contains("no rate_iops"), "{e}");
        let p = Profile::parse(
            &format!("{base}clients = 8\n{w}threads = 4\nper_client = true\n"),
            "t",
        )
        .unwrap();
        assert_eq!(p.clone().at_clients(16).unwrap().0.workloads[0].threads, 8);
        assert!(p
            .at_clients(0)
            .unwrap_err()
            .to_string()
            .contains("--clients 0"));
    }
}

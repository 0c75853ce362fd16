//! Reading a simulator configuration file: SQLIOSim's INI (`.cfg`/`.ini`)
//! and the native TOML, both setting the same keys over the defaults
//! through one setter, and SQLIOSim's Windows file names mapped to paths
//! here. See [`crate::sim::config`] for the formats.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::config::{ConfigError, FileCfg, RunUserCfg, SimConfig};
use crate::workload::EngineKind;

/// Keys whose INI value is hundredths of a percent.
const PERCENT_KEYS: [&str; 5] = [
    "cachehitratio",
    "jumptonewregionpercentage",
    "randomuserreadwriteratio",
    "rollbackchance",
    "yieldpercentage",
];

fn norm(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

struct Setter<'a> {
    cfg: &'a mut SimConfig,
    warnings: &'a mut Vec<String>,
    origin: String,
    /// TOML (percentages in percent, `key = value`) rather than INI.
    toml: bool,
    /// The first value refused (a run must not start with it).
    error: Option<ConfigError>,
}

impl Setter<'_> {
    /// `Key=value` as the user wrote it (TOML: `key = value`).
    fn shown(&self, key: &str, v: &str) -> String {
        if self.toml {
            format!("{key} = {}", v.trim())
        } else {
            format!("{key}={}", v.trim())
        }
    }

    /// Refuses NaN and infinities: they parse as numbers, but no key has a
    /// meaning for them (SQLIOSim's own parser reads none of them).
    fn refuse_non_finite(&mut self, key: &str, v: &str, valid: &str) {
        if self.error.is_none() {
            self.error = Some(ConfigError::NotFinite {
                at: self.origin.clone(),
                setting: self.shown(key, v),
                valid: valid.to_string(),
                section: None,
            });
        }
    }

    /// A whole number (user counts: -1 = the default).
    fn num(&mut self, key: &str, v: &str) -> i64 {
        let t = v.trim();
        match t.parse::<i64>() {
            Ok(n) => n,
            Err(_) => match t.parse::<f64>() {
                // Saturates: 1e30 reads as i64::MAX, which the checks below refuse or cap.
                Ok(f) if f.is_finite() => f as i64,
                Ok(_) => {
                    self.refuse_non_finite(key, v, "a whole number, e.g. 4");
                    0
                }
                Err(_) => {
                    self.warnings.push(format!(
                        "{}: {key}={v} is not a number; SQLIOSim reads it as 0, so does iosim",
                        self.origin
                    ));
                    0
                }
            },
        }
    }

    /// A whole number of 0 or more (the whole u64 range: a seed of
    /// 18446744073709551615 is read exactly).
    fn u(&mut self, key: &str, v: &str) -> u64 {
        let t = v.trim();
        if let Ok(n) = t.parse::<u64>() {
            return n;
        }
        if let Ok(f) = t.parse::<f64>() {
            if f.is_finite() && f >= 0.0 {
                // Saturates: 1e30 reads as u64::MAX, which the checks cap where it matters.
                return f as u64;
            }
        }
        let n = self.num(key, v);
        if n < 0 {
            self.warnings
                .push(format!("{}: {key}={v} is negative; using 0", self.origin));
        }
        n.max(0) as u64
    }

    /// A percentage: INI in hundredths of a percent (SQLIOSim), TOML in
    /// percent (already scaled to hundredths by the TOML reader). Returns a
    /// fraction in 0..=1 (never -0); values outside are capped with a warning.
    fn pct(&mut self, key: &str, v: &str) -> f64 {
        let unit = if self.toml {
            "a percentage from 0 to 100"
        } else {
            "hundredths of a percent from 0 to 10000 (100 = 1%)"
        };
        let t = v.trim();
        let raw = match t.parse::<f64>() {
            Ok(r) if r.is_finite() => r,
            Ok(_) => {
                self.refuse_non_finite(key, v, unit);
                return 0.0;
            }
            Err(_) => {
                self.warnings.push(format!(
                    "{}: {key}={v} is not a number; SQLIOSim reads it as 0, so does iosim",
                    self.origin
                ));
                return 0.0;
            }
        };
        let frac = raw / 10_000.0;
        if !(0.0..=1.0).contains(&frac) {
            let (capped, used) = if frac < 0.0 {
                (0.0, "0")
            } else {
                (1.0, "100%")
            };
            let shown = if self.toml {
                format!("{key} = {}", raw / 100.0)
            } else {
                format!("{key}={t}")
            };
            self.warnings.push(format!(
                "{}: {shown} is outside {unit}; using {used}",
                self.origin
            ));
            return capped;
        }
        // `+ 0.0` turns -0 into 0 (reports print 0%, not -0%).
        frac + 0.0
    }

    fn boolean(&mut self, key: &str, v: &str) -> bool {
        match v.trim() {
            "TRUE" => true,
            "FALSE" => false,
            other => {
                self.warnings.push(format!(
                    "{}: {key}={other}: booleans are TRUE or FALSE (case-sensitive, as in SQLIOSim); read as FALSE",
                    self.origin
                ));
                false
            }
        }
    }

    /// Sets one key. `section` and `key` are normalised (lowercase, no `_`).
    fn set(&mut self, section: &str, key: &str, raw_key: &str, v: &str) {
        let known = match section {
            "config" => self.set_config(key, raw_key, v),
            "randomuser" => self.set_random(key, raw_key, v),
            "audituser" => self.set_audit(key, raw_key, v),
            "readaheaduser" => {
                let r = &mut self.cfg.read_ahead.clone();
                let known = self.set_run(
                    r,
                    key,
                    raw_key,
                    v,
                    "buffersramin",
                    "buffersramax",
                    "radelay",
                );
                self.cfg.read_ahead = r.clone();
                known
            }
            "bulkupdateuser" => {
                let r = &mut self.cfg.bulk.clone();
                let known = self.set_run(
                    r,
                    key,
                    raw_key,
                    v,
                    "buffersbumin",
                    "buffersbumax",
                    "budelay",
                );
                self.cfg.bulk = r.clone();
                known
            }
            "shrinkuser" => self.set_shrink(key, raw_key, v),
            s if s.starts_with("file") => self.set_file(s, key, raw_key, v),
            _ => {
                self.warnings.push(format!(
                    "{}: unknown section [{section}] ignored",
                    self.origin
                ));
                return;
            }
        };
        if !known {
            self.warnings.push(format!(
                "{}: unknown key {raw_key} in [{section}] ignored",
                self.origin
            ));
        }
    }

    fn set_config(&mut self, key: &str, k: &str, v: &str) -> bool {
        match key {
            // SQLIOSim's XML log; a .jsonl / .json name gets JSON lines (sim/errorlog.rs).
            "errorfile" => self.cfg.error_file = PathBuf::from(v.trim()),
            "cpucount" => self.cfg.cpu_count = self.u(k, v).clamp(1, 64),
            "affinity" | "ioaffinity" => {
                if self.u(k, v) != 0 {
                    self.warnings.push(format!(
                        "{}: {k} is accepted but not applied: pin iosim with taskset instead",
                        self.origin
                    ));
                }
            }
            "maxmemorymb" => self.cfg.max_memory_mb = self.u(k, v).max(1),
            "stoponerror" => self.cfg.stop_on_error = self.boolean(k, v),
            "testcycles" => self.cfg.test_cycles = self.u(k, v),
            "testcycleduration" => self.cfg.test_cycle_duration = Duration::from_secs(self.u(k, v)),
            "cachehitratio" => self.cfg.cache_hit_ratio = self.pct(k, v),
            "nobuffering" => self.cfg.no_buffering = self.boolean(k, v),
            "writethrough" => self.cfg.write_through = self.boolean(k, v),
            "maxoutstandingio" => self.cfg.max_outstanding_io = self.u(k, v),
            "targetioduration" => self.cfg.target_io_duration_ms = self.u(k, v).max(1),
            "allowiobursts" => self.cfg.allow_io_bursts = self.boolean(k, v),
            "usescattergather" | "scattergather" => {
                self.cfg.use_scatter_gather = self.boolean(k, v)
            }
            "forcereadahead" => self.cfg.force_read_ahead = self.boolean(k, v),
            "deletefilesatstartup" => self.cfg.delete_files_at_startup = self.boolean(k, v),
            "deletefilesatshutdown" => self.cfg.delete_files_at_shutdown = self.boolean(k, v),
            "stampfiles" => self.cfg.stamp_files = self.boolean(k, v),
            "readretries" => self.cfg.read_retries = self.u(k, v),
            "seed" => self.cfg.seed = self.u(k, v),
            "engine" => match v.trim().to_ascii_lowercase().as_str() {
                "uring" | "io_uring" => self.cfg.engine = EngineKind::Uring,
                "sync" => self.cfg.engine = EngineKind::Sync,
                other => self.warnings.push(format!(
                    "{}: Engine={other} unknown (use uring or sync); keeping {}",
                    self.origin,
                    self.cfg.engine.name()
                )),
            },
            _ => return false,
        }
        true
    }

    fn set_random(&mut self, key: &str, k: &str, v: &str) -> bool {
        match key {
            "usercount" => self.cfg.random.user_count = self.num(k, v),
            "jumptonewregionpercentage" => self.cfg.random.jump_to_new_region = self.pct(k, v),
            "miniochainlength" => self.cfg.random.min_chain = self.u(k, v).max(1),
            "maxiochainlength" => self.cfg.random.max_chain = self.u(k, v).max(1),
            "randomuserreadwriteratio" => self.cfg.random.read_write_ratio = self.pct(k, v),
            "minlogperbuffer" => self.cfg.random.min_log = self.u(k, v).clamp(1, 64_000),
            "maxlogperbuffer" => self.cfg.random.max_log = self.u(k, v).clamp(1, 64_000),
            "rollbackchance" => self.cfg.random.rollback_chance = self.pct(k, v),
            "sleepafter" => self.cfg.random.sleep_after_ms = self.u(k, v),
            "yieldpercentage" | "cpusimulation" | "cpucyclesmin" | "cpucyclesmax" => {
                // Undocumented CPU-burning knobs of the shipped INI: their off values
                // (FALSE / 0, as shipped) change nothing; anything else is not simulated.
                let t = v.trim();
                let n = t.parse::<f64>();
                if n.as_ref().is_ok_and(|n| !n.is_finite()) {
                    self.refuse_non_finite(k, v, "0 or FALSE (these keys are not simulated)");
                    return true;
                }
                let off = t == "FALSE" || n.is_ok_and(|n| n == 0.0);
                if !off {
                    self.warnings.push(format!(
                        "{}: {k}={t} is accepted but not simulated: iosim users spend no extra CPU per page and do not yield (SQLIOSim documents neither key)",
                        self.origin
                    ));
                }
            }
            _ => return false,
        }
        true
    }

    fn set_audit(&mut self, key: &str, k: &str, v: &str) -> bool {
        match key {
            "usercount" => self.cfg.audit.user_count = self.num(k, v),
            "buffersvalidated" => self.cfg.audit.buffers_validated = self.u(k, v).max(1),
            "delayaftercycles" => self.cfg.audit.delay_after_cycles = self.u(k, v),
            "auditdelay" => self.cfg.audit.delay_ms = self.u(k, v),
            _ => return false,
        }
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn set_run(
        &mut self,
        r: &mut RunUserCfg,
        key: &str,
        k: &str,
        v: &str,
        min: &str,
        max: &str,
        delay: &str,
    ) -> bool {
        if key == "usercount" {
            r.user_count = self.num(k, v);
        } else if key == min {
            r.min_pages = self.u(k, v).max(1);
        } else if key == max {
            r.max_pages = self.u(k, v).max(1);
        } else if key == "delayaftercycles" {
            r.delay_after_cycles = self.u(k, v);
        } else if key == delay {
            r.delay_ms = self.u(k, v);
        } else {
            return false;
        }
        true
    }

    fn set_shrink(&mut self, key: &str, k: &str, v: &str) -> bool {
        match key {
            "minshrinkinterval" => self.cfg.shrink.min_interval_s = self.u(k, v),
            "maxshrinkinterval" => self.cfg.shrink.max_interval_s = self.u(k, v),
            "minextends" => self.cfg.shrink.min_extends = self.u(k, v).max(1),
            "maxextends" => self.cfg.shrink.max_extends = self.u(k, v).max(1),
            _ => return false,
        }
        true
    }

    fn set_file(&mut self, section: &str, key: &str, k: &str, v: &str) -> bool {
        let Ok(n) = section["file".len()..].parse::<usize>() else {
            self.warnings.push(format!(
                "{}: section [{section}] ignored: use [File1], [File2], ...",
                self.origin
            ));
            return true;
        };
        if n == 0 || n > 4096 {
            self.warnings
                .push(format!("{}: section [{section}] ignored", self.origin));
            return true;
        }
        while self.cfg.files.len() < n {
            self.cfg.files.push(FileCfg {
                name: PathBuf::new(),
                initial_mb: 0,
                max_mb: 0,
                increment_mb: 0,
                shrinkable: false,
                log_file: false,
                sparse: false,
            });
        }
        let i = n - 1;
        match key {
            "filename" => self.cfg.files[i].name = PathBuf::from(v.trim()),
            "initialsize" => self.cfg.files[i].initial_mb = self.u(k, v),
            "maxsize" => self.cfg.files[i].max_mb = self.u(k, v),
            "increment" => self.cfg.files[i].increment_mb = self.u(k, v),
            "shrinkable" => self.cfg.files[i].shrinkable = self.boolean(k, v),
            "logfile" => self.cfg.files[i].log_file = self.boolean(k, v),
            "sparse" => self.cfg.files[i].sparse = self.boolean(k, v),
            _ => return false,
        }
        true
    }
}

/// Parses SQLIOSim's INI text over the defaults. Returns the configuration and warnings.
pub fn parse_ini(text: &str, origin: &str) -> Result<(SimConfig, Vec<String>), ConfigError> {
    let mut cfg = SimConfig::default();
    let mut warnings = Vec::new();
    let mut section = String::new();
    {
        let mut st = Setter {
            cfg: &mut cfg,
            warnings: &mut warnings,
            origin: origin.to_string(),
            toml: false,
            error: None,
        };
        for (lineno, line) in text.lines().enumerate() {
            let line = line.split(';').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            st.origin = format!("{origin}:{}", lineno + 1);
            if let Some(rest) = line.strip_prefix('[') {
                let name = rest
                    .strip_suffix(']')
                    .ok_or_else(|| ConfigError::UnclosedSection {
                        at: format!("{origin}:{}", lineno + 1),
                        line: line.to_string(),
                    })?;
                section = norm(name);
                continue;
            }
            let Some((k, v)) = line.split_once('=') else {
                st.warnings
                    .push(format!("{}: '{line}' is not key=value; ignored", st.origin));
                continue;
            };
            if section.is_empty() {
                st.warnings
                    .push(format!("{}: {k} outside any section; ignored", st.origin));
                continue;
            }
            st.set(&section, &norm(k), k.trim(), v);
            if let Some(e) = st.error.take() {
                return Err(e);
            }
        }
    }
    finish_files(&mut cfg)?;
    Ok((cfg, warnings))
}

/// Parses the native TOML format over the defaults.
pub fn parse_toml(text: &str, origin: &str) -> Result<(SimConfig, Vec<String>), ConfigError> {
    let doc: toml::Table = text
        .parse::<toml::Table>()
        .map_err(|e| ConfigError::NotToml {
            origin: origin.to_string(),
            reason: e.to_string(),
        })?;
    let mut cfg = SimConfig::default();
    let mut warnings = Vec::new();
    {
        let mut st = Setter {
            cfg: &mut cfg,
            warnings: &mut warnings,
            origin: origin.to_string(),
            toml: true,
            error: None,
        };
        for (sec, val) in &doc {
            let nsec = norm(sec);
            let tables: Vec<(String, &toml::Table)> = match (nsec.as_str(), val) {
                ("file" | "files", toml::Value::Array(a)) => a
                    .iter()
                    .enumerate()
                    .filter_map(|(i, t)| t.as_table().map(|t| (format!("file{}", i + 1), t)))
                    .collect(),
                (_, toml::Value::Table(t)) => vec![(nsec.clone(), t)],
                _ => {
                    st.warnings.push(format!(
                        "{origin}: top-level key '{sec}' ignored: settings belong in sections such as [config]"
                    ));
                    continue;
                }
            };
            for (section, t) in tables {
                for (k, v) in t {
                    let nk = norm(k);
                    let s = match v {
                        toml::Value::Boolean(b) => (if *b { "TRUE" } else { "FALSE" }).to_string(),
                        toml::Value::Integer(i) if PERCENT_KEYS.contains(&nk.as_str()) => {
                            (*i as f64 * 100.0).to_string()
                        }
                        toml::Value::Float(f) if PERCENT_KEYS.contains(&nk.as_str()) => {
                            (f * 100.0).to_string()
                        }
                        toml::Value::Integer(i) => i.to_string(),
                        toml::Value::Float(f) => f.to_string(),
                        toml::Value::String(s) => s.clone(),
                        other => {
                            st.warnings.push(format!(
                                "{origin}: [{sec}] {k} = {other} has an unsupported type; ignored"
                            ));
                            continue;
                        }
                    };
                    st.set(&section, &nk, k, &s);
                    if let Some(mut e) = st.error.take() {
                        if let ConfigError::NotFinite { section, .. } = &mut e {
                            *section = Some(sec.to_string());
                        }
                        return Err(e);
                    }
                }
            }
        }
    }
    finish_files(&mut cfg)?;
    Ok((cfg, warnings))
}

fn finish_files(cfg: &mut SimConfig) -> Result<(), ConfigError> {
    for (i, f) in cfg.files.iter_mut().enumerate() {
        if f.name.as_os_str().is_empty() {
            return Err(ConfigError::NoFileName { file: i + 1 });
        }
        if f.max_mb < f.initial_mb {
            f.max_mb = f.initial_mb;
        }
        f.name = windows_path(&f.name, i)?;
    }
    Ok(())
}

/// SQLIOSim's configurations name Windows paths (`f:\sqliosim.mdx`): the drive
/// letter maps through `IOSIM_DRIVES` as in `iosim sqlio` / `iosim diskspd`;
/// an unmapped drive letter or a UNC path is refused (never a file literally
/// named `f:\...`).
fn windows_path(name: &Path, i: usize) -> Result<PathBuf, ConfigError> {
    let raw = name.to_string_lossy();
    if crate::platform::IS_WINDOWS {
        // SQLIOSim's own paths, on its own system: used as they are, unless
        // the user mapped the drive (`Extensions::resolve`).
        let ext = crate::compat::Extensions::from_env()
            .map_err(|e| ConfigError::Drives(e.to_string()))?;
        return ext.resolve(&raw).map_err(|e| ConfigError::UnmappedDrive {
            file: i + 1,
            name: raw.to_string(),
            reason: e.to_string(),
        });
    }
    let b = raw.as_bytes();
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    if !drive && !raw.starts_with("\\\\") && !raw.contains('\\') {
        return Ok(name.to_path_buf());
    }
    if !drive {
        return Err(ConfigError::WindowsPath {
            file: i + 1,
            name: raw.to_string(),
        });
    }
    let ext =
        crate::compat::Extensions::from_env().map_err(|e| ConfigError::Drives(e.to_string()))?;
    ext.resolve(&raw).map_err(|e| ConfigError::UnmappedDrive {
        file: i + 1,
        name: raw.to_string(),
        reason: e.to_string(),
    })
}

/// Reads a configuration file: TOML when it ends in `.toml`, INI otherwise.
pub fn load(path: &Path) -> Result<(SimConfig, Vec<String>), ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|err| ConfigError::Unreadable {
        path: path.to_path_buf(),
        err,
    })?;
    let origin = path.display().to_string();
    if path.extension().is_some_and(|e| e == "toml") {
        parse_toml(&text, &origin)
    } else {
        parse_ini(&text, &origin)
    }
}

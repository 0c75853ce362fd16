//! Help for the mistakes clap cannot explain: another tool's option name
//! (fio's `--rwmixwrite`, `-d` where only `--duration` exists), a cache
//! mode in DiskSpd's or Windows' words (`nobuffering`), and a size or a
//! duration written with a space before its unit (`--size 4 GB`), which
//! would otherwise make the unit a second target.
//!
//! [`refine`] rewrites clap's tip on an error clap already found;
//! [`unit_split`] finds the one mistake clap cannot see (a target named
//! `GB` parses).

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// Options of other tools and what iosim calls them: (the option as
/// typed, a tip naming iosim's option). `{cmd}` is the subcommand.
const FOREIGN: &[(&str, &str)] = &[
    (
        "--rwmixwrite",
        "fio's --rwmixwrite=N (N% writes) is iosim's --write-pct N, with --rw randrw or readwrite",
    ),
    (
        "--rwmixread",
        "fio's --rwmixread=N (N% reads) is iosim's --write-pct 100-N (e.g. --rwmixread=70 is --write-pct 30), with --rw randrw or readwrite",
    ),
    ("--iodepth", "fio's --iodepth is iosim's --qd"),
    ("--numjobs", "fio's --numjobs is iosim's --threads"),
    ("--runtime", "fio's --runtime is iosim's --duration (e.g. --duration 30s)"),
    ("--blocksize", "fio's --blocksize is iosim's --bs"),
    (
        "--filename",
        "give the file or device as an argument (iosim {cmd} [OPTIONS] PATH); fio's --filename has no option here",
    ),
];

/// fio's `--rwmixwrite=N` and `--rwmixread=N` with their value, in
/// iosim's words: `--write-pct N`, `--write-pct 100-N`.
fn rwmix_tip(name: &str, value: Option<&str>) -> Option<String> {
    let n: u8 = value?.trim().parse().ok().filter(|&n| n <= 100)?;
    let pct = match name {
        "--rwmixwrite" => n,
        "--rwmixread" => 100 - n,
        _ => return None,
    };
    Some(format!(
        "fio's {name}={n} is iosim's --write-pct {pct} (the share of writes), with --rw randrw or readwrite"
    ))
}

/// The value typed after (or with `=`) the option `name` on the command line.
fn value_of<'a>(args: &'a [std::ffi::OsString], name: &str) -> Option<&'a str> {
    let words: Vec<&str> = args.iter().filter_map(|a| a.to_str()).collect();
    let i = words
        .iter()
        .position(|w| *w == name || w.starts_with(&format!("{name}=")))?;
    match words[i].split_once('=') {
        Some((_, v)) => Some(v),
        None => words.get(i + 1).copied(),
    }
}

/// The tip for an option `iosim {cmd}` does not have, when it is another
/// tool's name for one it has. `has` says whether the command has a long
/// option of that name; `value` is what was typed with it.
fn foreign_tip(
    arg: &str,
    value: Option<&str>,
    cmd: &str,
    has: &dyn Fn(&str) -> bool,
) -> Option<String> {
    let name = arg.split_once('=').map_or(arg, |(n, _)| n);
    if let Some(tip) = rwmix_tip(name, value) {
        return Some(tip);
    }
    if name == "-d" && has("duration") {
        return Some(format!(
            "the measured time of `iosim {cmd}` is --duration (e.g. --duration 10s): it has no -d, which is not a value to pass with `--`"
        ));
    }
    FOREIGN
        .iter()
        .find(|(f, _)| *f == name)
        .map(|(_, tip)| tip.replace("{cmd}", cmd))
}

/// The cache mode a value means in another tool's words: DiskSpd's `-Su`
/// (no software cache: `direct`), `-Sh` and `-Suw` (no cache, write-through:
/// `direct-writethrough`), `-Sw` (`writethrough`), Windows'
/// `FILE_FLAG_NO_BUFFERING`, Linux's `O_DIRECT`, `O_DSYNC`, fio's `direct=1`.
pub fn cache_synonym(value: &str) -> Option<&'static str> {
    let v: String = value
        .to_ascii_lowercase()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let v = v.strip_prefix("fileflag").unwrap_or(&v);
    Some(match v {
        "nobuffering" | "nobuffer" | "unbuffered" | "nobuffered" | "nocache" | "uncached"
        | "odirect" | "directio" | "su" | "s" | "direct1" => "direct",
        "sh"
        | "suw"
        | "swu"
        | "nobufferingwritethrough"
        | "unbufferedwritethrough"
        | "odirectodsync"
        | "odirectosync"
        | "directsync"
        | "directdsync"
        | "nocachewritethrough" => "direct-writethrough",
        "sw" | "writethru" | "wt" | "osync" | "odsync" | "dsync" | "sync" | "fua" => "writethrough",
        "sb" | "cached" | "pagecache" | "buffer" | "direct0" => "buffered",
        _ => return None,
    })
}

/// What a cache mode does, in the words of the tools it comes from.
fn cache_meaning(mode: &str) -> &'static str {
    match mode {
        "direct" => "no page cache (O_DIRECT; DiskSpd's -Su, Windows' FILE_FLAG_NO_BUFFERING)",
        "direct-writethrough" => {
            "no page cache and every write durable (O_DIRECT and O_DSYNC; DiskSpd's -Sh)"
        }
        "writethrough" => "through the page cache, every write durable (O_DSYNC; DiskSpd's -Sw)",
        _ => "through the page cache (DiskSpd's -Sb, its default)",
    }
}

/// Replaces clap's tip where iosim knows better; `full` is the whole
/// command line's definition, `args` the command line.
pub fn refine(
    mut e: clap::Error,
    full: &clap::Command,
    args: &[std::ffi::OsString],
) -> clap::Error {
    let text = |k: ContextKind| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let tip = match e.kind() {
        ErrorKind::UnknownArgument => text(ContextKind::InvalidArg).and_then(|arg| {
            let (cmd, sub) = subcommand(full, args);
            let has = |long: &str| sub.get_arguments().any(|a| a.get_long() == Some(long));
            let name = arg.split_once('=').map_or(arg.as_str(), |(n, _)| n);
            foreign_tip(&arg, value_of(args, name), &cmd, &has)
        }),
        ErrorKind::InvalidValue => {
            let arg = text(ContextKind::InvalidArg).unwrap_or_default();
            let value = text(ContextKind::InvalidValue).unwrap_or_default();
            arg.starts_with("--cache")
                .then(|| cache_synonym(&value))
                .flatten()
                .map(|c| {
                    format!(
                        "'{value}' is iosim's {c}, {}: --cache {c}",
                        cache_meaning(c)
                    )
                })
        }
        _ => None,
    };
    if let Some(tip) = tip {
        e.remove(ContextKind::SuggestedArg);
        e.remove(ContextKind::SuggestedValue);
        e.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![tip.into()]),
        );
    }
    e
}

/// The subcommand the command line names (`quick` when none), and its clap
/// command.
fn subcommand(full: &clap::Command, args: &[std::ffi::OsString]) -> (String, clap::Command) {
    let named = args
        .get(1)
        .and_then(|a| a.to_str())
        .and_then(|a| full.find_subcommand(a).cloned());
    match named {
        Some(c) => (c.get_name().to_string(), c),
        None => ("quick".into(), full.clone()),
    }
}

/// Words that are a unit, not a target: what follows `--size 4` when a
/// space slipped in before `GB`.
fn is_unit_word(w: &str) -> bool {
    const UNITS: &[&str] = &[
        "b", "k", "kb", "kib", "m", "mb", "mib", "g", "gb", "gib", "t", "tb", "tib", "ms", "us",
        "s", "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes", "h", "hr",
        "hour", "hours", "bytes", "byte",
    ];
    UNITS.contains(&w.to_ascii_lowercase().as_str())
}

/// `--size 4 GB`: an option's value that is a bare number followed by a
/// word that is a unit and not an existing path. clap would take the unit
/// for a target (or DIR); this names the option as it was meant.
pub fn unit_split(full: &clap::Command, args: &[std::ffi::OsString]) -> Result<(), clap::Error> {
    let (_, sub) = subcommand(full, args);
    let words: Vec<&str> = args.iter().map(|a| a.to_str().unwrap_or("")).collect();
    for i in 1..words.len() {
        if words[i] == "--" {
            break;
        }
        let (long, inline) = match words[i].split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (words[i], None),
        };
        let short = long
            .strip_prefix('-')
            .filter(|s| s.len() == 1 && inline.is_none());
        let long = long.strip_prefix("--");
        let option = sub.get_arguments().find(|a| {
            (long.is_some() && a.get_long() == long)
                || short.is_some_and(|s| a.get_short().map(String::from).as_deref() == Some(s))
        });
        let Some(option) = option.filter(|a| a.get_action().takes_values()) else {
            continue;
        };
        let name = option
            .get_long()
            .map_or(words[i].to_string(), |l| format!("--{l}"));
        let (value, next) = match inline {
            Some(v) => (v, words.get(i + 1)),
            None => (words.get(i + 1).copied().unwrap_or(""), words.get(i + 2)),
        };
        let Some(unit) = next.copied() else { continue };
        if !value.is_empty()
            && value.parse::<f64>().is_ok()
            && is_unit_word(unit)
            && !std::path::Path::new(unit).exists()
        {
            let bin = match sub.get_name() {
                n if n == full.get_name() => n.to_string(),
                n => format!("{} {n}", full.get_name()),
            };
            return Err(sub.clone().bin_name(bin).error(
                ErrorKind::InvalidValue,
                format!(
                    "'{unit}' after {opt} {value} would be read as a target (or directory) named '{unit}': did you mean {name} {value}{unit}? Write the unit without a space", opt = words[i]
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<std::ffi::OsString> {
        line.split_whitespace().map(Into::into).collect()
    }

    fn unit_split(args: &[std::ffi::OsString]) -> Result<(), clap::Error> {
        super::unit_split(&crate::cli::command(), args)
    }

    #[test]
    fn a_unit_after_a_space_is_refused_with_the_option_as_meant() {
        let e = unit_split(&args("iosim run --size 4 GB /nonexistent-dir/f.dat")).unwrap_err();
        assert!(e.to_string().contains("did you mean --size 4GB?"), "{e}");
        let e = unit_split(&args("iosim run --duration=30 s f.dat")).unwrap_err();
        assert!(e.to_string().contains("--duration 30s?"), "{e}");
        let e = unit_split(&args("iosim run -d 30 min f.dat")).unwrap_err();
        assert!(e.to_string().contains("--duration 30min?"), "{e}");
        // Real targets and flags pass.
        assert!(unit_split(&args("iosim run --size 4G GB.dat")).is_ok());
        assert!(unit_split(&args("iosim run --size 4G a.dat b.dat")).is_ok());
        assert!(unit_split(&args("iosim run --threads 4 data.dat")).is_ok());
    }

    #[test]
    fn cache_synonyms_map_to_the_meaning_not_the_spelling() {
        assert_eq!(cache_synonym("nobuffering"), Some("direct"));
        assert_eq!(cache_synonym("FILE_FLAG_NO_BUFFERING"), Some("direct"));
        assert_eq!(cache_synonym("-Su"), Some("direct"));
        assert_eq!(cache_synonym("unbuffered"), Some("direct"));
        assert_eq!(cache_synonym("O_DIRECT"), Some("direct"));
        assert_eq!(cache_synonym("-Sh"), Some("direct-writethrough"));
        assert_eq!(cache_synonym("write-thru"), Some("writethrough"));
        assert_eq!(cache_synonym("O_DSYNC"), Some("writethrough"));
        assert_eq!(cache_synonym("cached"), Some("buffered"));
        assert_eq!(cache_synonym("banana"), None);
    }

    #[test]
    fn foreign_options_name_iosims() {
        let yes = |_: &str| true;
        let no = |_: &str| false;
        let tip = |arg: &str, value: Option<&str>| foreign_tip(arg, value, "run", &yes);
        assert!(tip("--rwmixwrite", Some("30"))
            .unwrap()
            .contains("--write-pct 30"));
        assert!(tip("--rwmixread", Some("70"))
            .unwrap()
            .contains("--write-pct 30"));
        assert!(tip("--rwmixread", None)
            .unwrap()
            .contains("--write-pct 100-N"));
        assert!(foreign_tip("-d", None, "quick", &yes)
            .unwrap()
            .contains("--duration"));
        assert_eq!(foreign_tip("-d", None, "history", &no), None);
        assert_eq!(tip("--nonsense", None), None);
        let line: Vec<std::ffi::OsString> = ["iosim", "run", "--rwmixwrite=25", "x"]
            .into_iter()
            .map(Into::into)
            .collect();
        assert_eq!(value_of(&line, "--rwmixwrite"), Some("25"));
    }
}

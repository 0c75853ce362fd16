//! The README's SQLIO/DiskSpd/fio/iosim mapping table must say what
//! `iosim translate` does: each cache row's SQLIO `-B` and DiskSpd `-S`
//! option is translated, and the `--cache` mode it yields must be the one in
//! the row's iosim column. (The README once said `-BN` was `--cache direct`
//! while translate and docs/sqlio.md said direct-writethrough.)

mod common;

use common::{iosim, success};

/// The `--cache` value in a translated command line.
fn cache_of(cmd: &str) -> String {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let i = words
        .iter()
        .position(|w| *w == "--cache")
        .unwrap_or_else(|| panic!("no --cache in {cmd}"));
    words[i + 1].to_string()
}

/// The code spans (`...`) of a markdown table cell.
fn spans(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn readme_cache_rows_match_translate() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let mut checked = 0;
    for line in readme.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() != 5 {
            continue;
        }
        let (sqlio, diskspd, native) = (spans(cells[1]), spans(cells[2]), spans(cells[4]));
        let Some(mode) = native
            .iter()
            .find_map(|s| s.strip_prefix("--cache ").map(str::to_string))
        else {
            continue;
        };
        for opt in sqlio.iter().filter(|s| s.starts_with("-B")) {
            let out = success(iosim().args(["translate", "sqlio", "-frandom", opt, "x.dat"]));
            assert_eq!(cache_of(&out), mode, "README row {line:?}: sqlio {opt}");
            checked += 1;
        }
        for opt in diskspd.iter().filter(|s| s.starts_with("-S")) {
            let out = success(iosim().args(["translate", "diskspd", opt, "-c1M", "x.dat"]));
            assert_eq!(cache_of(&out), mode, "README row {line:?}: diskspd {opt}");
            checked += 1;
        }
    }
    // -BH -BN -BY -BS and -Su -Sh -Sb -Sw: eight mappings in four rows.
    assert_eq!(checked, 8, "the README's cache rows were not all found");
}

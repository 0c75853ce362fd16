//! Who holds a lock on a file: the kernel's lock table (`/proc/locks`) gives
//! the PID of each `flock`, POSIX and OFD lock by the file's device and
//! inode (an OFD lock's PID is -1: the kernel does not say), and
//! `/proc/PID/cmdline` that process's command line. Read only when iosim is
//! refused a target (`crate::targetlock`). On Windows neither file exists
//! and no holder is named.

use serde::Serialize;

/// A process that holds a lock on a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LockHolder {
    /// Its process ID.
    pub pid: u32,
    /// True for a write (exclusive) lock, false for a read (shared) one.
    pub writes: bool,
    /// Its command line, when it can be read (the same user, or root).
    pub command: Option<String>,
}

/// The locks of `/proc/locks`'s `text` held on the file whose filesystem's
/// device is `major:minor` and whose inode is `ino`, as (PID, write lock).
/// Waiters (`->`) hold nothing and are left out, and so are locks whose
/// holder the kernel does not name (an OFD lock's -1, a PID outside this
/// PID namespace's 0). Where no lock names that device (btrfs gives `stat`
/// another device number than its lock table), the inode alone decides.
pub fn parse_locks(text: &str, major: u32, minor: u32, ino: u64) -> Vec<(u32, bool)> {
    let entries: Vec<(u32, u32, u64, i64, bool)> = text.lines().filter_map(parse_line).collect();
    let on_dev: Vec<(u32, bool)> = entries
        .iter()
        .filter(|e| (e.0, e.1, e.2) == (major, minor, ino))
        .filter_map(|e| Some((u32::try_from(e.3).ok().filter(|&p| p > 0)?, e.4)))
        .collect();
    if !on_dev.is_empty()
        || entries
            .iter()
            .any(|e| (e.0, e.1, e.2) == (major, minor, ino))
    {
        return on_dev;
    }
    entries
        .iter()
        .filter(|e| e.2 == ino)
        .filter_map(|e| Some((u32::try_from(e.3).ok().filter(|&p| p > 0)?, e.4)))
        .collect()
}

/// One line: `1: FLOCK  ADVISORY  WRITE 2383 fd:01:1234 0 EOF` as (major,
/// minor, inode, PID, write lock); None for a waiter (`1: -> FLOCK ...`)
/// or a line in another shape.
fn parse_line(line: &str) -> Option<(u32, u32, u64, i64, bool)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.get(1) == Some(&"->") {
        return None;
    }
    let at = words.iter().position(|w| w.split(':').count() == 3)?;
    let mut id = words[at].split(':');
    let major = u32::from_str_radix(id.next()?, 16).ok()?;
    let minor = u32::from_str_radix(id.next()?, 16).ok()?;
    let ino = id.next()?.parse().ok()?;
    let pid = words.get(at.checked_sub(1)?)?.parse().ok()?;
    let writes = *words.get(at.checked_sub(2)?)? == "WRITE";
    Some((major, minor, ino, pid, writes))
}

/// The command line of `/proc/PID/cmdline`'s `bytes` (arguments NUL-ended),
/// its arguments joined by spaces, cut to 200 characters; None when empty
/// (a kernel thread, or a process gone).
pub fn parse_cmdline(bytes: &[u8]) -> Option<String> {
    let words: Vec<String> = bytes
        .split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    if words.is_empty() {
        return None;
    }
    let line = words.join(" ");
    Some(match line.char_indices().nth(200) {
        Some((i, _)) => format!("{}...", &line[..i]),
        None => line,
    })
}

/// The processes that hold a lock on the file with filesystem device `dev`
/// and inode `ino` (`crate::platform::fs::file_identity`), with their
/// command lines; empty where the system does not say.
pub fn holders(dev: u64, ino: u64) -> Vec<LockHolder> {
    let (major, minor) = crate::platform::fs::major_minor(dev);
    let text = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    let mut out: Vec<LockHolder> = Vec::new();
    for (pid, writes) in parse_locks(&text, major, minor, ino) {
        if out.iter().any(|h| h.pid == pid) {
            continue;
        }
        let command = std::fs::read(format!("/proc/{pid}/cmdline"))
            .ok()
            .and_then(|b| parse_cmdline(&b));
        out.push(LockHolder {
            pid,
            writes,
            command,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCKS: &str = "\
1: FLOCK  ADVISORY  WRITE 2383 fd:01:1234 0 EOF
1: -> FLOCK  ADVISORY  WRITE 2390 fd:01:1234 0 EOF
2: POSIX  ADVISORY  READ 777 fd:01:99 128 128
3: OFDLCK ADVISORY  WRITE -1 08:02:5555 0 EOF
4: FLOCK  ADVISORY  READ 42 00:2a:77 0 EOF
5: FLOCK  ADVISORY  READ 43 00:2a:77 0 EOF
6: LEASE  ACTIVE    READ 12 00:2a:88 0 EOF
7: FLOCK  ADVISORY  WRITE 0 fd:01:4321 0 EOF
garbage line
";

    #[test]
    fn lock_table_names_the_holders_of_one_file() {
        // The holder, not the waiter; the device's hex numbers.
        assert_eq!(parse_locks(LOCKS, 0xfd, 1, 1234), vec![(2383, true)]);
        // Two readers of one file.
        assert_eq!(
            parse_locks(LOCKS, 0, 0x2a, 77),
            vec![(42, false), (43, false)]
        );
        // A POSIX lock on a range still names its process.
        assert_eq!(parse_locks(LOCKS, 0xfd, 1, 99), vec![(777, false)]);
        // OFD locks and PIDs outside the namespace name nobody.
        assert!(parse_locks(LOCKS, 8, 2, 5555).is_empty());
        assert!(parse_locks(LOCKS, 0xfd, 1, 4321).is_empty());
        // Another device number for the same inode (btrfs): the inode decides.
        assert_eq!(parse_locks(LOCKS, 0, 0x30, 1234), vec![(2383, true)]);
        // No lock on that file.
        assert!(parse_locks(LOCKS, 0xfd, 1, 1).is_empty());
        assert!(parse_locks("", 0xfd, 1, 1234).is_empty());
    }

    #[test]
    fn command_lines_are_joined_and_cut() {
        assert_eq!(
            parse_cmdline(b"iosim\0run\0same.dat\0--rw\0randrw\0").as_deref(),
            Some("iosim run same.dat --rw randrw")
        );
        assert_eq!(parse_cmdline(b""), None);
        let long = parse_cmdline(&vec![b'x'; 500]).unwrap();
        assert!(long.len() < 210 && long.ends_with("..."), "{long}");
    }
}

//! The error log's formats. SQLIOSim writes its `ErrorFile` (`sqliosim.log.xml`)
//! as XML: one `<ENTRY>` element per message, with the attributes `TYPE`, `TIME`,
//! `DATE`, `TID`, `User`, `File`, `Line`, `Func`, `HRESULT` and `SYSTEXT`, and the
//! message itself in an `<EXTENDED_DESCRIPTION>` child; a dump file is announced
//! by an entry of its own ("Dump file successfully written: ..."), and the file
//! names SQLIOSim's `ErrorLog.xslt` as its stylesheet. At the end of the run
//! SQLIOSim writes each file's final summary there too, one `INFO` entry a
//! line from its display monitor (`Func='CLogicalFile::OutputSummary'`): the
//! "Target IO Duration (ms) = ..." entry is what XenRT's reader looks for
//! among the `EXTENDED_DESCRIPTION`s. iosim writes the same structure, so
//! the habits and tools used on SQLIOSim's log keep working (the layout is
//! pinned by tests/snapshots/sim__log_xml.snap; docs/sim.md).
//!
//! An `ErrorFile` (or `--log`) whose name ends in `.jsonl` or `.json` gets iosim's
//! JSON lines instead: one [`ErrorRecord`] object a line (the summary is in
//! the result there, not the log).

use std::path::Path;

use super::ErrorRecord;
use crate::verify::ErrorClass;

/// How the error log is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// SQLIOSim's XML (the default).
    Xml,
    /// One JSON object a line (`.jsonl` / `.json` names).
    JsonLines,
}

impl LogFormat {
    /// The format a log file name asks for.
    pub fn for_path(p: &Path) -> LogFormat {
        match p.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("jsonl") || e.eq_ignore_ascii_case("json") => {
                LogFormat::JsonLines
            }
            _ => LogFormat::Xml,
        }
    }

    /// What starts the file.
    pub fn header(self) -> &'static str {
        match self {
            LogFormat::Xml => {
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<?xml-stylesheet type=\"text/xsl\" href=\"ErrorLog.xslt\"?>\n<LOG>\n"
            }
            LogFormat::JsonLines => "",
        }
    }

    /// What ends the file (written when the run ends).
    pub fn footer(self) -> &'static str {
        match self {
            LogFormat::Xml => "</LOG>\n",
            LogFormat::JsonLines => "",
        }
    }

    /// The text of one error record (with its dump announcement when it has one).
    pub fn record(self, rec: &ErrorRecord) -> String {
        match self {
            LogFormat::JsonLines => serde_json::to_string(rec).map_or(String::new(), |l| l + "\n"),
            LogFormat::Xml => {
                let mut s = entry_xml("ERROR", rec, &description(rec));
                if let Some(d) = &rec.dump {
                    s.push_str(&entry_xml(
                        "INFO",
                        rec,
                        &format!("Dump file successfully written: {d}"),
                    ));
                }
                s
            }
        }
    }

    /// The final summary's lines ([`super::summary::final_summary`]) as
    /// SQLIOSim's log holds them: one INFO entry a line, at `time` (RFC
    /// 3339); nothing for JSON lines.
    pub fn summary(self, time: &str, lines: &[String]) -> String {
        match self {
            LogFormat::JsonLines => String::new(),
            LogFormat::Xml => lines
                .iter()
                .map(|l| {
                    entry(
                        &Entry {
                            kind: "INFO",
                            time,
                            user: "Display Monitor",
                            file: "FileIO.cpp",
                            func: "CLogicalFile::OutputSummary",
                            hresult: 0,
                            systext: SUCCESS,
                        },
                        l,
                    )
                })
                .collect(),
        }
    }
}

/// Windows' text of HRESULT 0, as SQLIOSim's informational entries carry it.
const SUCCESS: &str = "The operation completed successfully.";

/// The attributes of one `<ENTRY>`.
struct Entry<'a> {
    kind: &'a str,
    /// RFC 3339 UTC.
    time: &'a str,
    user: &'a str,
    file: &'a str,
    func: &'a str,
    hresult: u32,
    systext: &'a str,
}

/// One `<ENTRY>` element with its description, on one line.
fn entry(e: &Entry, text: &str) -> String {
    let (time, date) = time_date(e.time);
    format!(
        "<ENTRY TYPE='{}' TIME='{time}' DATE='{date}' TID='{}' User='{}' File='{}' Line='0' Func='{}' HRESULT='0x{:08X}' SYSTEXT='{}'><EXTENDED_DESCRIPTION>{}</EXTENDED_DESCRIPTION></ENTRY>\n",
        e.kind,
        tid(),
        esc(e.user),
        esc(e.file),
        e.func,
        e.hresult,
        esc(e.systext),
        esc(text)
    )
}

/// XML-escapes text for an attribute in single quotes or element content
/// (control characters XML 1.0 cannot carry are dropped).
fn esc(t: &str) -> String {
    let clean: String = t
        .chars()
        .filter(|&c| (c as u32) >= 0x20 || matches!(c, '\t' | '\n' | '\r'))
        .collect();
    crate::text::escape_xml(&clean)
}

/// What the first read of a record looked like (its class, unless a retry recovered).
fn first_read(rec: &ErrorRecord) -> ErrorClass {
    rec.first_read.unwrap_or(rec.class)
}

/// SQLIOSim's wording of a finding: "Buffer validation failed on FILE Page: N, offset 0x..".
fn description(rec: &ErrorRecord) -> String {
    let what = match first_read(rec) {
        ErrorClass::IoError => format!("{} failed on {}", op_word(&rec.op), rec.file),
        ErrorClass::ShortRead => format!("Short {} on {}", rec.op, rec.file),
        _ => format!("Buffer validation failed on {}", rec.file),
    };
    // The detail says what the retries showed.
    format!(
        "{what} Page: {}, offset {:#x}. {} ({})",
        rec.page,
        rec.offset,
        rec.detail,
        rec.class.name()
    )
}

fn op_word(op: &str) -> &'static str {
    if op == "write" {
        "Write"
    } else {
        "Read"
    }
}

/// The Linux error number in the detail text ("... (os error 5): ..."), if any.
fn errno(detail: &str) -> Option<i32> {
    let i = detail.find("(os error ")?;
    let digits: String = detail[i + 10..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Parses iosim's RFC 3339 UTC stamp into SQLIOSim's TIME (`HH:MM:SS`) and DATE (`MM/DD/YY`).
fn time_date(t: &str) -> (String, String) {
    let b = t.as_bytes();
    if b.len() >= 19 && b[4] == b'-' && b[10] == b'T' {
        (
            t[11..19].to_string(),
            format!("{}/{}/{}", &t[5..7], &t[8..10], &t[2..4]),
        )
    } else {
        (String::new(), String::new())
    }
}

/// The thread number of the caller (SQLIOSim's TID).
fn tid() -> u64 {
    let s = format!("{:?}", std::thread::current().id());
    s.chars()
        .filter(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or(0)
}

fn entry_xml(kind: &str, rec: &ErrorRecord, text: &str) -> String {
    // HRESULT: Windows wraps an OS error as 0x8007xxxx; iosim puts the Linux errno there.
    // Validation failures carry SQLIOSim's 0x80070467 (ERROR_... "data error").
    let (hr, systext) = match (first_read(rec), errno(&rec.detail)) {
        (ErrorClass::IoError, Some(e)) => (
            0x8007_0000u32 | (e as u32 & 0xffff),
            std::io::Error::from_raw_os_error(e).to_string(),
        ),
        (ErrorClass::IoError, None) => (0x8007_001f, rec.detail.clone()),
        _ if kind == "ERROR" => (0x8007_0467, rec.class.name().replace('_', " ")),
        _ => (0, SUCCESS.to_string()),
    };
    let func = match first_read(rec) {
        ErrorClass::IoError | ErrorClass::ShortRead => "CIOHandler::Complete",
        _ => "CBUF::ValidateBuffer",
    };
    entry(
        &Entry {
            kind,
            time: &rec.time,
            user: &rec.user,
            file: &rec.file,
            func,
            hresult: hr,
            systext: &systext,
        },
        text,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(class: ErrorClass, detail: &str) -> ErrorRecord {
        ErrorRecord {
            time: "2026-11-22T04:05:06Z".into(),
            user: "RandomUser#1".into(),
            class,
            first_read: None,
            file: "/mnt/f/sqliosim.mdx".into(),
            file_id: 1,
            page: 87366,
            offset: 87366 * 8192,
            op: "read".into(),
            expected: None,
            received: None,
            detail: detail.into(),
            retries: 0,
            recovered: false,
            dump: Some("/tmp/x.dump00001.txt".into()),
        }
    }

    #[test]
    fn formats_follow_the_name() {
        assert_eq!(
            LogFormat::for_path(Path::new("sqliosim.log.xml")),
            LogFormat::Xml
        );
        assert_eq!(
            LogFormat::for_path(Path::new("e.jsonl")),
            LogFormat::JsonLines
        );
        assert_eq!(
            LogFormat::for_path(Path::new("e.JSON")),
            LogFormat::JsonLines
        );
        assert_eq!(LogFormat::for_path(Path::new("log")), LogFormat::Xml);
    }

    #[test]
    fn xml_entries_have_sqliosims_structure() {
        let r = rec(ErrorClass::ChecksumMismatch, "checksum <0x1> & 'x'");
        let s = LogFormat::Xml.record(&r);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 2, "{s}");
        assert!(
            lines[0].starts_with("<ENTRY TYPE='ERROR' TIME='04:05:06' DATE='11/22/26' TID='"),
            "{s}"
        );
        assert!(lines[0].contains(" User='RandomUser#1' File='/mnt/f/sqliosim.mdx' Line='0' Func='CBUF::ValidateBuffer' HRESULT='0x80070467' SYSTEXT='checksum mismatch'><EXTENDED_DESCRIPTION>Buffer validation failed on /mnt/f/sqliosim.mdx Page: 87366, offset 0x2aa8c000. checksum &lt;0x1&gt; &amp; &apos;x&apos;"), "{s}");
        assert!(lines[0].ends_with("</EXTENDED_DESCRIPTION></ENTRY>"));
        assert!(lines[1].starts_with("<ENTRY TYPE='INFO' "), "{s}");
        assert!(lines[1].contains("HRESULT='0x00000000'"));
        assert!(lines[1].contains("<EXTENDED_DESCRIPTION>Dump file successfully written: /tmp/x.dump00001.txt</EXTENDED_DESCRIPTION>"));
        if !cfg!(target_os = "linux") {
            // The text below is Linux's strerror(5).
            return;
        }
        let io = LogFormat::Xml.record(&ErrorRecord {
            dump: None,
            ..rec(
                ErrorClass::IoError,
                "log read failed: Input/output error (os error 5)",
            )
        });
        assert!(
            io.contains("HRESULT='0x80070005' SYSTEXT='Input/output error (os error 5)'"),
            "{io}"
        );
        assert!(io.contains("Func='CIOHandler::Complete'"), "{io}");
        // A whole log parses as XML.
        let doc = format!(
            "{}{s}{io}{}",
            LogFormat::Xml.header(),
            LogFormat::Xml.footer()
        );
        let parsed = roxmltree::Document::parse(&doc).expect("well-formed");
        assert_eq!(parsed.root_element().tag_name().name(), "LOG");
        let entries: Vec<_> = parsed
            .root_element()
            .children()
            .filter(|n| n.is_element())
            .collect();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0].attribute("TYPE"), Some("ERROR"));
        assert_eq!(
            entries[0]
                .children()
                .find(|n| n.is_element())
                .unwrap()
                .tag_name()
                .name(),
            "EXTENDED_DESCRIPTION"
        );
    }

    #[test]
    fn a_recovered_read_is_a_read_retry_with_its_first_reads_origin() {
        let r = ErrorRecord {
            first_read: Some(ErrorClass::StaleRead),
            dump: None,
            ..rec(
                ErrorClass::ReadRetry,
                "the page reads as all zeros: read returned wrong data, recovered on retry 1",
            )
        };
        let x = LogFormat::Xml.record(&r);
        assert!(
            x.contains("Func='CBUF::ValidateBuffer' HRESULT='0x80070467' SYSTEXT='read retry'"),
            "{x}"
        );
        assert!(x.contains("offset 0x2aa8c000. the page reads as all zeros: read returned wrong data, recovered on retry 1 (read_retry)</EXTENDED_DESCRIPTION>"), "{x}");
        // A failed read a retry read: the OS error stays in HRESULT, from the I/O handler.
        if !cfg!(target_os = "linux") {
            // The text below is Linux's strerror(5).
            return;
        }
        let io = LogFormat::Xml.record(&ErrorRecord {
            first_read: Some(ErrorClass::IoError),
            dump: None,
            ..rec(
                ErrorClass::ReadRetry,
                "the read failed: Input/output error (os error 5): read failed, recovered on retry 2",
            )
        });
        assert!(
            io.contains("Func='CIOHandler::Complete' HRESULT='0x80070005'"),
            "{io}"
        );
        assert!(io.contains("<EXTENDED_DESCRIPTION>Read failed on "), "{io}");
        let j = LogFormat::JsonLines.record(&r);
        let v: serde_json::Value = serde_json::from_str(j.trim()).unwrap();
        assert_eq!(
            (&v["class"], &v["first_read"]),
            (&"read_retry".into(), &"stale_read".into())
        );
    }

    #[test]
    fn the_summary_is_an_info_entry_a_line() {
        let lines = vec![
            "********** Final Summary for file a<b>.mdx **********".to_string(),
            "Target IO Duration (ms) = 100, Running Average IO Duration (ms) = 3, Number of times IO throttled = 0, IO request blocks = 18".to_string(),
        ];
        assert_eq!(
            LogFormat::JsonLines.summary("2026-11-22T04:05:06Z", &lines),
            ""
        );
        let x = LogFormat::Xml.summary("2026-11-22T04:05:06Z", &lines);
        let doc = format!("{}{x}{}", LogFormat::Xml.header(), LogFormat::Xml.footer());
        let parsed = roxmltree::Document::parse(&doc).expect("well-formed");
        let entries: Vec<_> = parsed
            .root_element()
            .children()
            .filter(|n| n.is_element())
            .collect();
        assert_eq!(entries.len(), 2, "{x}");
        for (e, l) in entries.iter().zip(&lines) {
            assert_eq!(e.attribute("TYPE"), Some("INFO"));
            assert_eq!(e.attribute("TIME"), Some("04:05:06"));
            assert_eq!(e.attribute("Func"), Some("CLogicalFile::OutputSummary"));
            assert_eq!(e.attribute("User"), Some("Display Monitor"));
            assert_eq!(e.first_element_child().unwrap().text(), Some(l.as_str()));
        }
    }

    #[test]
    fn json_lines_stay_available() {
        let r = rec(ErrorClass::TornPage, "torn");
        let s = LogFormat::JsonLines.record(&r);
        assert!(s.ends_with('\n') && s.lines().count() == 1);
        let v: serde_json::Value = serde_json::from_str(s.trim()).unwrap();
        assert_eq!(v["page"], 87366);
        assert_eq!(LogFormat::JsonLines.header(), "");
    }
}

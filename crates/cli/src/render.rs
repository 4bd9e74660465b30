//! Diagnostics in the style of rustc: the rule, the place, an excerpt with a caret under the
//! offending block, and the fix. Coloured when the output is a terminal and `NO_COLOR` is unset.

use std::fmt::Write;

use turnkeeper::transcript::{Span, Transcript};
use turnkeeper::{Finding, Severity};

/// Colours, or none.
#[derive(Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    /// Colour when `terminal` and `NO_COLOR` is not set.
    pub fn detect(terminal: bool) -> Style {
        Style {
            color: terminal && std::env::var_os("NO_COLOR").is_none(),
        }
    }
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_owned()
        }
    }
}

/// Line starts of a text, indexed on first use (a run with no finding never pays for it).
pub struct Lines<'a> {
    src: &'a str,
    starts: std::cell::OnceCell<Vec<usize>>,
}

impl<'a> Lines<'a> {
    pub fn new(src: &'a str) -> Self {
        Lines {
            src,
            starts: std::cell::OnceCell::new(),
        }
    }

    fn starts(&self) -> &[usize] {
        self.starts.get_or_init(|| {
            // A vectorised search: on a 100 MB body the byte-by-byte filter it replaces was a
            // fifth of `check`'s time.
            let mut starts = vec![0];
            starts.extend(memchr::memchr_iter(b'\n', self.src.as_bytes()).map(|i| i + 1));
            starts
        })
    }
    /// 1-based line and column (in characters) of `offset`, and a window of the line around it:
    /// `(line, column, window, column within the window, window starts mid-line)`. The window is
    /// at most a few hundred bytes, so a one-line minified body costs the same as a short line.
    pub fn locate(&self, offset: usize) -> (usize, usize, &'a str, usize, bool) {
        let offset = offset.min(self.src.len());
        let starts = self.starts();
        let line = starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let start = starts[line];
        let end = starts.get(line + 1).map_or(self.src.len(), |e| e - 1);
        let from = floor_char(self.src, offset.saturating_sub(60).max(start));
        let to = floor_char(self.src, (offset + 120).min(end));
        let window = self.src.get(from..to).unwrap_or("");
        let in_window = self.src.get(from..offset).map_or(0, |s| s.chars().count());
        // Characters up to the window, counted only for lines short enough to count cheaply.
        let before = if from - start <= 4096 {
            self.src.get(start..from).map_or(0, |s| s.chars().count())
        } else {
            from - start
        };
        (
            line + 1,
            before + in_window + 1,
            window,
            in_window,
            from > start,
        )
    }
}

/// The largest char boundary of `s` at or below `i`.
fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The span a finding points at in `t`.
pub fn span_of(t: &Transcript<'_>, f: &Finding) -> Option<Span> {
    match (f.message_index, f.block_index) {
        (Some(m), Some(b)) => t.blocks_of(m).get(b).map(|b| b.span),
        (Some(m), None) => t.messages.get(m).map(|m| m.span),
        _ => {
            let key = f.path.split('.').next().unwrap_or("");
            t.meta
                .top_keys
                .iter()
                .find(|(k, _)| k.decode(t.src) == key)
                .map(|(_, v)| *v)
        }
    }
}

/// Renders one finding. `extra` lines (e.g. OpenCode ids) go after the location.
pub fn finding(
    out: &mut String,
    style: Style,
    name: &str,
    t: Option<(&Transcript<'_>, &Lines<'_>)>,
    f: &Finding,
    extra: &[String],
) {
    let (label, code) = match f.severity {
        Severity::Error => ("error", "1;31"),
        Severity::Warning => ("warning", "1;33"),
        Severity::Info => ("info", "1;36"),
    };
    let _ = writeln!(
        out,
        "{}: {}",
        style.paint(code, &format!("{label}[{}]", f.rule)),
        style.paint("1", &f.message)
    );
    let span = t.and_then(|(t, _)| span_of(t, f));
    match (span, t) {
        (Some(span), Some((_, lines))) => {
            let (line, col, window, at, clipped) = lines.locate(span.start as usize);
            let _ = writeln!(
                out,
                "  {} {name}:{line}:{col} ({})",
                style.paint("1;34", "-->"),
                f.path
            );
            for e in extra {
                let _ = writeln!(out, "   {} {e}", style.paint("1;34", "="));
            }
            let gutter = line.to_string().len();
            let bar = style.paint("1;34", "|");
            let _ = writeln!(out, "{:gutter$} {bar}", "");
            let shown: String = window
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            let lead = if clipped { "…" } else { "" };
            let _ = writeln!(
                out,
                "{} {bar} {lead}{shown}",
                style.paint("1;34", &format!("{line:>gutter$}"))
            );
            let caret_at = at + lead.chars().count();
            let len = span
                .len()
                .clamp(1, window.chars().count().saturating_sub(at).max(1))
                .min(100);
            let _ = writeln!(
                out,
                "{:gutter$} {bar} {}{}",
                "",
                " ".repeat(caret_at),
                style.paint(code, &"^".repeat(len))
            );
        }
        _ => {
            let _ = writeln!(out, "  {} {name} ({})", style.paint("1;34", "-->"), f.path);
            for e in extra {
                let _ = writeln!(out, "   {} {e}", style.paint("1;34", "="));
            }
        }
    }
    match &f.repair {
        Some(r) => {
            let _ = writeln!(out, "   {} fix: {r}", style.paint("1;34", "="));
        }
        None => {
            let _ = writeln!(
                out,
                "   {} fix: none that is safe; this needs a decision by the caller",
                style.paint("1;34", "=")
            );
        }
    }
    let _ = writeln!(out);
}

/// How many errors and warnings `findings` hold.
pub fn tally<'f>(findings: impl IntoIterator<Item = &'f Finding>) -> (usize, usize) {
    findings
        .into_iter()
        .fold((0, 0), |(e, w), f| match f.severity {
            Severity::Error => (e + 1, w),
            Severity::Warning => (e, w + 1),
            _ => (e, w),
        })
}

/// The closing line: counts by severity.
pub fn summary(findings: &[&Finding]) -> String {
    let (errors, warnings) = tally(findings.iter().copied());
    if errors == 0 && warnings == 0 {
        "no findings: the transcript is valid for this target".to_owned()
    } else {
        format!("{errors} error(s), {warnings} warning(s)")
    }
}

/// Prints `text` and a newline on standard output. A closed pipe (`turnkeeper check … | head`)
/// ends the program quietly, as Unix tools do, instead of panicking like `println!`.
pub fn emit(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let res = out
        .write_all(text.as_bytes())
        .and_then(|_| out.write_all(b"\n"))
        .and_then(|_| out.flush());
    if let Err(e) = res {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("turnkeeper: <stdout>: {e}");
        std::process::exit(2);
    }
}

/// The HEALTH column of a session listing, from its health object (`{"unreadable"}`, or
/// `{"errors", "warnings", ...}`) and the other counts worth naming (`(count, "bad file(s)")`),
/// and flags (`"torn line"`).
pub fn health_text(h: &serde_json::Value, extra: &[(u64, &str)], flags: &[&str]) -> String {
    if let Some(u) = h.get("unreadable") {
        return format!("unreadable: {}", u.as_str().unwrap_or_default());
    }
    let e = h["errors"].as_u64().unwrap_or(0);
    let w = h["warnings"].as_u64().unwrap_or(0);
    let mut parts = Vec::new();
    for (n, what) in [(e, "error(s)"), (w, "warning(s)")]
        .into_iter()
        .chain(extra.iter().copied())
    {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    if parts.is_empty() {
        parts.push("clean".to_owned());
    }
    parts.extend(flags.iter().map(|f| (*f).to_owned()));
    parts.join(", ")
}

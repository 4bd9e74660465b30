//! Diagnostics in the style of rustc: the rule, the place, an excerpt with a caret under the
//! offending block, and the fix. Coloured when the output is a terminal and `NO_COLOR` is unset.

use std::fmt::Write;

use turnkeeper::model::{Span, Transcript};
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

/// Line starts of a text, for offset → line/column.
pub struct Lines<'a> {
    src: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub fn new(src: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            src.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Lines { src, starts }
    }
    /// 1-based line and column (in characters) of `offset`.
    pub fn locate(&self, offset: usize) -> (usize, usize, &'a str) {
        let line = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let start = self.starts[line];
        let end = self.starts.get(line + 1).map_or(self.src.len(), |e| e - 1);
        let text = self.src.get(start..end).unwrap_or("");
        let col = self.src.get(start..offset).map_or(0, |s| s.chars().count()) + 1;
        (line + 1, col, text)
    }
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
            let (line, col, text) = lines.locate(span.start as usize);
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
            // A window of the line around the column: minified bodies are one long line.
            let chars: Vec<char> = text.chars().collect();
            let from = col.saturating_sub(1).saturating_sub(20);
            let to = (from + 100).min(chars.len());
            let shown: String = chars[from.min(chars.len())..to]
                .iter()
                .map(|c| if *c == '\t' { ' ' } else { *c })
                .collect();
            let lead = if from > 0 { "…" } else { "" };
            let _ = writeln!(
                out,
                "{} {bar} {lead}{shown}",
                style.paint("1;34", &format!("{line:>gutter$}"))
            );
            let caret_at = col - 1 - from + lead.chars().count();
            let len = span.len().clamp(1, to.saturating_sub(col - 1).max(1));
            let _ = writeln!(
                out,
                "{:gutter$} {bar} {}{}",
                "",
                " ".repeat(caret_at),
                style.paint(code, &"^".repeat(len.min(100)))
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

/// The closing line: counts by severity.
pub fn summary(findings: &[&Finding]) -> String {
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
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

//! `turnkeeper inspect`: a summary of a transcript.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use turnkeeper::model::{Content, Format, FormatHint, Transcript, read};

use crate::fail;
use crate::input::{FormatArg, Input, load_session, open_store, read_input};

/// Arguments of `inspect`.
#[derive(Args, Debug)]
pub struct InspectArgs {
    /// The transcript (`-` or nothing for standard input); a directory is OpenCode storage.
    file: Option<PathBuf>,
    /// The input format.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    format: FormatArg,
    /// With OpenCode storage: the session to read (default: the most recent).
    #[arg(long)]
    session: Option<String>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(a: &InspectArgs) -> ExitCode {
    let input = match read_input(a.file.as_deref()) {
        Ok(i) => i,
        Err(e) => return fail(e),
    };
    let (name, text, hint, model) = match input {
        Input::Text { name, text } => (name, text, a.format.hint(), None),
        Input::Storage(dir) => {
            let session =
                match open_store(&dir).and_then(|s| load_session(&s, a.session.as_deref())) {
                    Ok(s) => s,
                    Err(e) => return fail(format!("{}: {e}", dir.display())),
                };
            let model = turnkeeper::opencode::session_model(&session);
            (
                dir.display().to_string(),
                session.to_export_array(),
                FormatHint::Exactly(Format::Opencode),
                model,
            )
        }
    };
    let t = match read(&text, hint) {
        Ok(t) => t,
        Err(e) => return fail(format!("{name}: {e}")),
    };
    let model = model.or_else(|| t.model().map(|m| m.into_owned()));
    if a.json {
        let v = json!({
            "format": t.format.name(),
            "body": match t.body { turnkeeper::model::BodyKind::Request => "request", turnkeeper::model::BodyKind::Response => "response" },
            "model": model,
            "messages": t.messages.len(),
            "blocks": t.block_counts(),
            "thinking": t.thinking_type(),
        });
        crate::render::emit(&v.to_string());
    } else {
        crate::render::emit(summary(&name, &t, model.as_deref()).trim_end());
    }
    ExitCode::SUCCESS
}

fn summary(name: &str, t: &Transcript<'_>, model: Option<&str>) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{name}: {} {}",
        t.format,
        match t.body {
            turnkeeper::model::BodyKind::Request => "request",
            turnkeeper::model::BodyKind::Response => "response",
        }
    );
    let _ = writeln!(out, "  model:    {}", model.unwrap_or("(none)"));
    let _ = writeln!(
        out,
        "  thinking: {}",
        t.thinking_type().as_deref().unwrap_or("(not set)")
    );
    let _ = writeln!(out, "  messages: {}", t.messages.len());
    let _ = writeln!(out);
    let _ = writeln!(out, "  {:>5}  {:<10} blocks", "#", "role");
    for (i, m) in t.messages.iter().enumerate() {
        let role = m
            .role_raw
            .map(|r| r.decode(t.src).into_owned())
            .unwrap_or_else(|| "?".to_owned());
        let blocks = match m.content {
            Content::String(s) => format!(
                "\"{}\" (string, {} bytes)",
                clip(&s.decode(t.src), 40),
                s.span.len()
            ),
            Content::Blocks { .. } => {
                let names: Vec<String> = t
                    .blocks_of(i)
                    .iter()
                    .map(|b| b.type_name(t.src).into_owned())
                    .collect();
                if names.is_empty() {
                    "(empty)".to_owned()
                } else {
                    names.join(", ")
                }
            }
            Content::Missing => "(no content)".to_owned(),
        };
        let _ = writeln!(out, "  {i:>5}  {role:<10} {blocks}");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "  {:<28} {:>6}", "block type", "count");
    for (k, v) in t.block_counts() {
        let _ = writeln!(out, "  {k:<28} {v:>6}");
    }
    out
}

fn clip(s: &str, n: usize) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() <= n {
        one_line
    } else {
        format!("{}…", one_line.chars().take(n).collect::<String>())
    }
}

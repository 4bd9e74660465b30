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
    let why = match hint {
        FormatHint::Exactly(f) => Ok(turnkeeper::model::Sniffed {
            format: f,
            why: "given with --format".into(),
        }),
        FormatHint::Auto => turnkeeper::model::sniff_detail(&text),
    };
    let why = match why {
        Ok(w) => w,
        Err(e) => return fail(format!("{name}: {e}")),
    };
    if !why.format.is_transcript() {
        return inspect_wire(&name, &text, &why, a.json);
    }
    let t = match read(&text, hint) {
        Ok(t) => t,
        Err(e) => return fail(format!("{name}: {e}")),
    };
    let model = model.or_else(|| t.model().map(|m| m.into_owned()));
    if a.json {
        let v = json!({
            "format": t.format.name(),
            "why": why.why,
            "body": match t.body { turnkeeper::model::BodyKind::Request => "request", turnkeeper::model::BodyKind::Response => "response" },
            "model": model,
            "messages": t.messages.len(),
            "blocks": t.block_counts(),
            "thinking": t.thinking_type(),
        });
        crate::render::emit(&v.to_string());
    } else {
        let mut text = summary(&name, &t, model.as_deref());
        text.insert_str(
            text.find('\n').map_or(0, |n| n + 1),
            &format!("  read as:  {} ({})\n", t.format, why.why),
        );
        crate::render::emit(text.trim_end());
    }
    ExitCode::SUCCESS
}

/// `inspect` of a body of the OpenAI-style families.
fn inspect_wire(name: &str, text: &str, why: &turnkeeper::model::Sniffed, json: bool) -> ExitCode {
    use std::fmt::Write;
    use turnkeeper::model::wire::chat::{self, ChatContent};
    let format = why.format;
    let body = match format {
        Format::Chat => match chat::read(text) {
            Ok(b) => b,
            Err(e) => return fail(format!("{name}: {e}")),
        },
        other => {
            return fail(format!(
                "{name}: a {other} body ({}); inspect reads Chat bodies of the OpenAI-style \
                 families so far",
                why.why
            ));
        }
    };
    let model = body.model().map(|m| m.into_owned());
    let (provider, routed) = model
        .as_deref()
        .map(turnkeeper::prevent::wire::provider_of)
        .unwrap_or((turnkeeper::prevent::wire::Provider::Unknown, None));
    let rows: Vec<serde_json::Value> = body
        .messages
        .iter()
        .map(|m| {
            let mut fields = Vec::new();
            match m.content {
                ChatContent::Absent => fields.push("no content".to_owned()),
                ChatContent::Null => fields.push("content null".to_owned()),
                ChatContent::Text { text, blank } => fields.push(format!(
                    "content {} bytes{}",
                    text.span.len(),
                    if blank { " (blank)" } else { "" }
                )),
                ChatContent::Parts { count, .. } => fields.push(format!("{count} part(s)")),
                ChatContent::Other(_) => fields.push("content of another type".to_owned()),
            }
            for (key, v) in [
                ("reasoning_content", m.reasoning_content),
                ("reasoning", m.reasoning),
                ("reasoning_details", m.reasoning_details),
            ] {
                if let Some(v) = v {
                    fields.push(format!("{key} ({} bytes)", v.span.len()));
                }
            }
            if !m.calls.is_empty() {
                fields.push(format!("{} tool call(s)", m.calls.len()));
            }
            if let Some(id) = m.tool_call_id {
                fields.push(format!("answers {}", id.decode(text)));
            }
            json!({ "role": m.role, "fields": fields })
        })
        .collect();
    if json {
        let v = json!({
            "format": format.name(),
            "why": why.why,
            "body": "request",
            "model": model,
            "provider": provider,
            "routed": routed,
            "messages": rows.len(),
            "tools": body.tool_count,
            "thinking": body.thinking_type.map(|t| t.decode(text).into_owned()),
            "rows": rows,
        });
        crate::render::emit(&v.to_string());
        return ExitCode::SUCCESS;
    }
    let mut out = String::new();
    let _ = writeln!(out, "{name}: {format} request");
    let _ = writeln!(out, "  read as:  {format} ({})", why.why);
    let _ = writeln!(out, "  model:    {}", model.as_deref().unwrap_or("(none)"));
    let _ = writeln!(
        out,
        "  provider: {}{}",
        provider.name(),
        routed
            .map(|r| format!(" (through a router: `{r}/`)"))
            .unwrap_or_default()
    );
    let _ = writeln!(out, "  tools:    {}", body.tool_count);
    let _ = writeln!(out, "  messages: {}\n", rows.len());
    for (i, r) in rows.iter().enumerate() {
        let role = r["role"].as_str().unwrap_or("?");
        let fields: Vec<&str> = r["fields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str())
            .collect();
        let _ = writeln!(out, "  {i:>5}  {role:<10} {}", fields.join(", "));
    }
    crate::render::emit(out.trim_end());
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

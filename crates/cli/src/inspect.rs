//! `turnkeeper inspect`: a summary of a transcript.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use turnkeeper::{BodyKind, Format, FormatHint, Inspection, WireTarget};

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
    // A file's bytes are checked as UTF-8 here; a stored session's export is text already.
    let export;
    let (name, text, hint, model) = match &input {
        Input::Text { name, bytes } => match crate::input::text(name, bytes) {
            Ok(t) => (name.clone(), t, a.format.hint(), None),
            Err(e) => return fail(e),
        },
        Input::Storage(dir) => {
            let session = match open_store(dir).and_then(|s| load_session(&s, a.session.as_deref()))
            {
                Ok(s) => s,
                Err(e) => return fail(format!("{}: {e}", dir.display())),
            };
            let model = turnkeeper::opencode::session_model(&session);
            export = session.to_export_array();
            (
                dir.display().to_string(),
                export.as_str(),
                FormatHint::Exactly(Format::Opencode),
                model,
            )
        }
    };
    let mut ins = match turnkeeper::inspect(text, hint) {
        Ok(i) => i,
        Err(e) => return fail(format!("{name}: {e}")),
    };
    if matches!(hint, FormatHint::Exactly(_)) {
        ins.why = "given with --format".into();
    }
    if model.is_some() {
        ins.model = model;
    }
    let body = match ins.body {
        BodyKind::Request => "request",
        BodyKind::Response => "response",
    };
    if let Some(wire) = &ins.wire {
        let rows: Vec<serde_json::Value> = ins
            .messages
            .iter()
            .map(|m| json!({ "role": m.role, "fields": m.parts }))
            .collect();
        if a.json {
            let v = json!({
                "format": ins.format.name(),
                "why": ins.why,
                "body": body,
                "model": ins.model,
                "provider": wire.provider,
                "routed": wire.routed,
                "messages": rows.len(),
                "tools": wire.tools,
                "thinking": ins.thinking,
                "rows": rows,
            });
            crate::render::emit(&v.to_string());
        } else {
            crate::render::emit(wire_summary(&name, &ins, wire).trim_end());
        }
        return ExitCode::SUCCESS;
    }
    if a.json {
        let v = json!({
            "format": ins.format.name(),
            "why": ins.why,
            "body": body,
            "model": ins.model,
            "messages": ins.messages.len(),
            "blocks": ins.blocks,
            "thinking": ins.thinking,
        });
        crate::render::emit(&v.to_string());
    } else {
        crate::render::emit(summary(&name, &ins, body).trim_end());
    }
    ExitCode::SUCCESS
}

/// The text of `inspect` for a body of the OpenAI-style families.
fn wire_summary(name: &str, ins: &Inspection, wire: &WireTarget) -> String {
    use std::fmt::Write;
    let format = ins.format;
    let mut out = String::new();
    let _ = writeln!(out, "{name}: {format} request");
    let _ = writeln!(out, "  read as:  {format} ({})", ins.why);
    let _ = writeln!(
        out,
        "  model:    {}",
        ins.model.as_deref().unwrap_or("(none)")
    );
    let _ = writeln!(
        out,
        "  provider: {}{}",
        wire.provider.name(),
        wire.routed
            .as_ref()
            .map(|r| format!(" (through a router: `{r}/`)"))
            .unwrap_or_default()
    );
    let _ = writeln!(out, "  tools:    {}", wire.tools);
    let _ = writeln!(out, "  messages: {}\n", ins.messages.len());
    for (i, m) in ins.messages.iter().enumerate() {
        let _ = writeln!(out, "  {i:>5}  {:<10} {}", m.role, m.parts.join(", "));
    }
    out
}

/// The text of `inspect` for a block transcript.
fn summary(name: &str, ins: &Inspection, body: &str) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "{name}: {} {body}", ins.format);
    let _ = writeln!(out, "  read as:  {} ({})", ins.format, ins.why);
    let _ = writeln!(
        out,
        "  model:    {}",
        ins.model.as_deref().unwrap_or("(none)")
    );
    let _ = writeln!(
        out,
        "  thinking: {}",
        ins.thinking.as_deref().unwrap_or("(not set)")
    );
    let _ = writeln!(out, "  messages: {}", ins.messages.len());
    let _ = writeln!(out);
    let _ = writeln!(out, "  {:>5}  {:<10} blocks", "#", "role");
    for (i, m) in ins.messages.iter().enumerate() {
        let blocks = if m.parts.is_empty() {
            "(empty)".to_owned()
        } else {
            m.parts.join(", ")
        };
        let _ = writeln!(out, "  {i:>5}  {:<10} {blocks}", m.role);
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "  {:<28} {:>6}", "block type", "count");
    for (k, v) in &ins.blocks {
        let _ = writeln!(out, "  {k:<28} {v:>6}");
    }
    out
}

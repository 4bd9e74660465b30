//! `turnkeeper classify`: read a provider error (however wrapped), say what it is, where it
//! points and what to do about it.
//!
//! Exit status: 0 whenever the input was read (an unrecognised error is still an answer),
//! 2 with a one-line message on standard error when the input cannot be read.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use turnkeeper::recovery::{Action, Attempts, Diagnosis, ErrorKind, classify, plan};

/// Arguments of `turnkeeper classify`.
#[derive(Debug, Clone, clap::Args)]
pub struct ClassifyArgs {
    /// File holding the error text as it was printed; `-` or nothing reads standard input.
    pub file: Option<PathBuf>,
    /// HTTP status of the failed response, when known (the status found inside the text wins).
    #[arg(long)]
    pub status: Option<u16>,
    /// Print one JSON object (kind, retryable, provider, status, location, action, …).
    #[arg(long)]
    pub json: bool,
}

/// Run `turnkeeper classify`.
pub fn run(args: &ClassifyArgs) -> ExitCode {
    let (name, read) = match &args.file {
        Some(path) if path.as_os_str() != "-" => (path.display().to_string(), std::fs::read(path)),
        _ => {
            let mut buf = Vec::new();
            let res = std::io::stdin().read_to_end(&mut buf).map(|_| buf);
            ("standard input".to_owned(), res)
        }
    };
    let bytes = match read {
        Ok(bytes) => bytes,
        Err(err) => {
            eprintln!("turnkeeper classify: cannot read {name}: {err}");
            return ExitCode::from(2);
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let diagnosis = classify(args.status, &text);
    let action = plan(&diagnosis, &Attempts::new());
    if args.json {
        match to_json(&diagnosis, &action) {
            Ok(json) => crate::render::emit(&json),
            Err(err) => {
                eprintln!("turnkeeper classify: cannot encode the result: {err}");
                return ExitCode::from(2);
            }
        }
    } else {
        crate::render::emit(&paragraph(&diagnosis, &action));
    }
    ExitCode::SUCCESS
}

/// The diagnosis with the zero-attempt plan under `"action"`, as one JSON object.
fn to_json(diagnosis: &Diagnosis, action: &Action) -> Result<String, serde_json::Error> {
    let mut value = serde_json::to_value(diagnosis)?;
    if let Some(object) = value.as_object_mut() {
        object.insert("action".to_owned(), serde_json::to_value(action)?);
    }
    serde_json::to_string_pretty(&value)
}

fn what_happened(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ThinkingBlockOrder => {
            "the open assistant turn does not start with its thinking block (or the provider's reasoning field was not passed back)"
        }
        ErrorKind::ThinkingDisabledViolation => {
            "thinking is disabled but the final assistant message still contains thinking"
        }
        ErrorKind::ThinkingBlockModified => {
            "thinking in the latest assistant message is not byte-identical to the original response"
        }
        ErrorKind::ThinkingSignatureInvalid => {
            "a thinking signature was rejected (altered, missing, or from another model or conversation)"
        }
        ErrorKind::ThinkingBlockTrailing => "an assistant message ends with a thinking block",
        ErrorKind::ToolResultMissing => "a tool call has no matching tool result right after it",
        ErrorKind::ToolUseIdMismatch => "a tool result names no tool call of the message before it",
        ErrorKind::ToolUseIdFormat => "a tool call id does not match the allowed pattern",
        ErrorKind::EmptyContent => "a message or text block is empty or blank",
        ErrorKind::RoleOrder => {
            "the messages' roles are out of order, or one is a role the endpoint does not take"
        }
        ErrorKind::ReasoningItemOrphan => {
            "an OpenAI reasoning item is orphaned, unknown or could not be verified"
        }
        ErrorKind::ContextLengthExceeded => "the request is larger than the model's context window",
        ErrorKind::RequestConfigInvalid => {
            "a request parameter is invalid (the transcript itself is not at fault)"
        }
        ErrorKind::RetryableOverloaded => "the provider is overloaded",
        ErrorKind::RetryableRateLimit => "a rate limit was hit",
        ErrorKind::RetryableServer => "the provider had a transient server error",
        _ => "the error was not recognised",
    }
}

fn what_to_do(action: &Action) -> String {
    match action {
        Action::Retry { after } => format!(
            "send the same request again after {:.1} s",
            after.as_secs_f64()
        ),
        Action::Repair { rules, .. } => format!(
            "repair the transcript with rule(s) {} (`turnkeeper repair`)",
            turnkeeper::RuleId::join(rules)
        ),
        Action::RestoreFromStore => {
            "restore the assistant turn from the stored original response".to_owned()
        }
        Action::DisableThinking => "send this request with thinking disabled".to_owned(),
        Action::UseAdaptive => "switch thinking to adaptive mode".to_owned(),
        Action::StripThinking { from } => match from {
            Some(m) => format!("remove whole thinking blocks from message {m} on"),
            None => "remove all thinking blocks".to_owned(),
        },
        Action::RequestDropBlock => format!(
            "send `prefix_mismatch_behavior: \"drop_block\"` with the `{}` beta header",
            turnkeeper::recovery::DROP_BLOCK_BETA
        ),
        Action::FixConfig { what } => format!("fix the request parameter `{what}`"),
        Action::Compact => "compact the conversation to fit the context window".to_owned(),
        Action::GiveUp { reason } => format!("stop retrying: {reason}"),
        _ => action.name().to_owned(),
    }
}

/// One readable paragraph: what happened, where, what to do.
fn paragraph(d: &Diagnosis, action: &Action) -> String {
    let mut out = format!(
        "{} ({}): {}",
        d.kind,
        if d.retryable {
            "retryable"
        } else {
            "not retryable"
        },
        what_happened(d.kind)
    );
    if d.provider != turnkeeper::recovery::ErrorProvider::Unknown || d.status.is_some() {
        out.push_str(" — reported by ");
        out.push_str(d.provider.as_str());
        if let Some(s) = d.status {
            out.push_str(&format!(" with HTTP {s}"));
        }
    }
    out.push('.');
    if d.location.message.is_some() || d.location.block.is_some() {
        out.push_str(&format!(" Where: {}.", d.location));
    }
    if !d.tool_use_ids.is_empty() {
        out.push_str(&format!(" Tool call ids: {}.", d.tool_use_ids.join(", ")));
    }
    if !d.reasoning_ids.is_empty() {
        out.push_str(&format!(
            " Reasoning items: {}.",
            d.reasoning_ids.join(", ")
        ));
    }
    if let Some(t) = d.tokens {
        match (t.actual, t.limit) {
            (Some(a), Some(l)) => out.push_str(&format!(" Size: {a} tokens, limit {l}.")),
            (Some(a), None) => out.push_str(&format!(" Size: {a} tokens.")),
            (None, Some(l)) => out.push_str(&format!(" Limit: {l} tokens.")),
            (None, None) => {}
        }
    }
    if d.prefix_binding {
        out.push_str(" The block is bound to a different conversation prefix (AN-25).");
    }
    out.push_str(&format!(" What to do: {}.", what_to_do(action)));
    if !d.message.is_empty() {
        out.push_str(&format!(" Provider message: \"{}\"", d.message));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_the_documented_fields() {
        let d = classify(
            Some(400),
            "messages.33: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01X.",
        );
        let a = plan(&d, &Attempts::new());
        let v: serde_json::Value =
            serde_json::from_str(&to_json(&d, &a).unwrap_or_default()).unwrap_or_default();
        for key in [
            "kind",
            "retryable",
            "provider",
            "status",
            "location",
            "action",
        ] {
            assert!(v.get(key).is_some(), "missing {key}: {v}");
        }
        assert_eq!(v["kind"], "tool_result_missing");
        assert_eq!(
            v["location"],
            serde_json::json!({"message": 33, "block": null})
        );
        assert_eq!(v["action"]["type"], "repair");
    }

    #[test]
    fn paragraph_says_what_where_and_what_to_do() {
        let d = classify(
            Some(400),
            "messages.3.content.4: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified.",
        );
        let p = paragraph(&d, &plan(&d, &Attempts::new()));
        assert!(p.starts_with("thinking_block_modified"), "{p}");
        assert!(
            p.contains("messages[3].content[4]") && p.contains("What to do: restore"),
            "{p}"
        );
    }
}

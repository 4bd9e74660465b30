//! `turnkeeper recover`: classify a provider error, plan the next step and apply it to the request
//! that failed.
//!
//! The body to retry with goes to standard output (or `-o`); the report goes to standard error,
//! or as JSON to `--report`. With `--attempts FILE`, earlier attempts are read from the file and
//! this one is appended (written atomically), so the same error twice escalates.
//!
//! Exit status: 0 there is a body to send (for a retry, after the wait the report names);
//! 3 nothing to send: the plan is to give up, or to hand back what only the caller can do
//! (compact, fix a request parameter); 2 unreadable input or a usage error.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;
use turnkeeper::recovery::{Action, Attempts, Diagnosis, Recovered, classify, recover_with};
use turnkeeper::{FormatHint, Options, TurnStore};

/// Arguments of `turnkeeper recover`.
#[derive(Debug, Clone, clap::Args)]
pub struct RecoverArgs {
    /// The request body that failed (`-` reads standard input).
    #[arg(long, value_name = "REQ.json")]
    pub request: PathBuf,
    /// The error text as the provider (or the agent) printed it.
    #[arg(long, value_name = "ERR.txt")]
    pub error: PathBuf,
    /// HTTP status of the failed response, when known (a status found inside the text wins).
    #[arg(long)]
    pub status: Option<u16>,
    /// A turn store directory (see `turnkeeper store add`), for restoring altered turns.
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// A JSON file of earlier attempts for this conversation; read, then rewritten with this
    /// attempt appended. A missing file means no attempts yet.
    #[arg(long, value_name = "FILE")]
    pub attempts: Option<PathBuf>,
    /// The target model (default: the body's `model`).
    #[arg(long)]
    pub model: Option<String>,
    /// An `anthropic-beta` value the request is sent with (repeatable).
    #[arg(long = "beta")]
    pub betas: Vec<String>,
    /// Write the body to send here (atomically) instead of standard output (`-`: standard
    /// output).
    #[arg(short = 'o', long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Write the report as JSON here instead of printing it on standard error (`-`: standard
    /// output, when the body goes to `-o FILE`).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
}

/// Exit status when there is nothing to send.
const HAND_BACK: u8 = 3;

/// Run `turnkeeper recover`.
pub fn run(args: &RecoverArgs) -> ExitCode {
    match run_inner(args) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("turnkeeper recover: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run_inner(args: &RecoverArgs) -> Result<ExitCode, String> {
    if args.request.as_os_str() == "-" && args.error.as_os_str() == "-" {
        return Err("only one of --request and --error can read standard input".to_owned());
    }
    crate::input::report_not_on_body(args.report.as_deref(), args.output.as_deref())?;
    let request = read_text(&args.request, true)?;
    // A Chat, Responses or Converse body is read by its own reader inside `recover`.
    let wire = turnkeeper::sniff(&request).is_ok_and(|s| {
        matches!(
            s.format,
            turnkeeper::Format::Chat | turnkeeper::Format::Responses | turnkeeper::Format::Converse
        )
    });
    if !wire && let Err(e) = turnkeeper::read(&request, FormatHint::Auto) {
        return Err(format!(
            "{}: not a readable request: {e}",
            args.request.display()
        ));
    }
    let error = read_text(&args.error, false)?;
    let mut attempts = match &args.attempts {
        Some(path) => load_attempts(path)?,
        None => Attempts::new(),
    };
    let store = match &args.store {
        Some(dir) => {
            let s = TurnStore::open(dir).map_err(|e| e.to_string())?;
            for p in &s.problems {
                eprintln!("turnkeeper recover: store: {p}");
            }
            Some(s)
        }
        None => None,
    };
    let opts = Options {
        model: args.model.clone(),
        betas: args.betas.clone(),
        store: store.as_ref(),
        ..Options::default()
    };
    let diagnosis = classify(args.status, &error);
    let recovered =
        recover_with(&request, &diagnosis, &mut attempts, &opts).map_err(|e| e.to_string())?;
    if let Some(path) = &args.attempts {
        let text = attempts.to_json().map_err(|e| e.to_string())?;
        crate::input::write_file(path, text.as_bytes())?;
    }
    match &args.report {
        Some(path) => {
            let value = report_json(&diagnosis, &recovered, attempts.len());
            let text = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
            crate::input::write_output(path, text.as_bytes())?;
        }
        None => eprint!("{}", report_text(&diagnosis, &recovered)),
    }
    if !recovered.sends() {
        return Ok(ExitCode::from(HAND_BACK));
    }
    let out = args.output.as_deref().unwrap_or(Path::new("-"));
    crate::input::write_output(out, recovered.body.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// Reads a file (`-`: standard input). The request must be UTF-8; an error text is read lossily.
fn read_text(path: &Path, strict: bool) -> Result<String, String> {
    let (name, bytes) = crate::input::read_bytes(path)?;
    if strict {
        crate::input::text(&name, &bytes).map(str::to_owned)
    } else {
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// Reads an attempts file; a missing file is no attempts.
fn load_attempts(path: &Path) -> Result<Attempts, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Attempts::from_json(&text).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Attempts::new()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// The `--report` document: the diagnosis, the action, the headers to send and the changes.
fn report_json(d: &Diagnosis, r: &Recovered, attempts: usize) -> serde_json::Value {
    let headers: Vec<serde_json::Value> = r
        .headers
        .iter()
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect();
    json!({
        "diagnosis": d,
        "action": r.action,
        "outcome": r.outcome,
        "wait_ms": r.wait().map(|w| u64::try_from(w.as_millis()).unwrap_or(u64::MAX)),
        "headers": headers,
        "changes": r.report.changes,
        "request_changes": r.report.request_changes,
        "addressing": r.report.addressing,
        "findings_left": r.report.findings_left,
        "skipped": r.report.skipped,
        "notes": r.report.notes,
        "attempts": attempts,
    })
}

fn describe(a: &Action) -> String {
    match a {
        Action::Retry { after } => format!("retry the same body after {} ms", after.as_millis()),
        Action::Repair { rules, location } => {
            format!(
                "repair (rules {}, at {location})",
                turnkeeper::RuleId::join(rules)
            )
        }
        Action::StripThinking { from: Some(m) } => {
            format!("strip whole thinking blocks from messages[{m}] on")
        }
        Action::StripThinking { from: None } => "strip every thinking block".to_owned(),
        Action::FixConfig { what } => format!("fix the request parameter `{what}` (caller)"),
        Action::GiveUp { reason } => format!("give up: {reason}"),
        other => other.name().replace('_', " "),
    }
}

/// The report for standard error: one fact per line.
fn report_text(d: &Diagnosis, r: &Recovered) -> String {
    let mut out = format!("error: {} at {}", d.kind, d.location);
    if let Some(s) = d.status {
        out.push_str(&format!(" (HTTP {s}, {})", d.provider));
    }
    out.push('\n');
    for s in &r.report.skipped {
        out.push_str(&format!(
            "skipped: {} ({})\n",
            describe(&s.action),
            s.reason
        ));
    }
    out.push_str(&format!("action: {}\n", describe(&r.action)));
    for (name, value) in &r.headers {
        out.push_str(&format!("header: {name}: {value}\n"));
    }
    for (n, c) in r.report.changes.iter().enumerate() {
        let mark = if r.report.addressing.contains(&n) {
            "*"
        } else {
            " "
        };
        out.push_str(&format!(
            "change{mark} [{}] {} {}: {}\n",
            c.rule, c.action, c.path, c.reason
        ));
    }
    for f in &r.report.findings_left {
        out.push_str(&format!(
            "left: [{}] {:?} {}: {}\n",
            f.rule, f.severity, f.path, f.message
        ));
    }
    for note in &r.report.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out.push_str(if r.sends() {
        "result: send the body\n"
    } else {
        "result: nothing to send (handed back)\n"
    });
    out
}

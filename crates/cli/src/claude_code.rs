//! `turnkeeper claude-code list|check|repair|undo`: Claude Code's sessions, checked as the
//! request a resume sends, and repaired by whole lines with a backup (see
//! `turnkeeper::claude_code`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;
use turnkeeper::claude_code::{self as cc, SessionCheck};
use turnkeeper::stores::claude_code::{self as store, SessionFile};
use turnkeeper::{Options, Severity};

use crate::fail;

/// `turnkeeper claude-code ...`.
#[derive(Subcommand, Debug)]
pub enum ClaudeCodeCommand {
    /// Every session with its project, last activity, model, size and health.
    List(ListArgs),
    /// Check sessions as a resume would send them (exit 1 when an error is found).
    Check(CheckArgs),
    /// Repair sessions by whole lines, after backing the file up.
    Repair(RepairArgs),
    /// Put a session back as it was before its last repair.
    Undo(UndoArgs),
}

/// Where the sessions are.
#[derive(Args, Debug)]
pub struct ProjectsArg {
    /// Claude Code's config directory or its `projects/` directory, or one project directory
    /// (default: `$CLAUDE_CONFIG_DIR`, else `~/.claude`).
    #[arg(long, value_name = "DIR")]
    projects: Option<PathBuf>,
}

/// Which sessions.
#[derive(Args, Debug)]
pub struct Which {
    /// The session id (default: the most recent one).
    #[arg(long, conflicts_with_all = ["all", "file"])]
    session: Option<String>,
    /// A session file, wherever it is.
    #[arg(long, conflicts_with = "all")]
    file: Option<PathBuf>,
    /// Every session.
    #[arg(long)]
    all: bool,
}

/// Arguments of `claude-code list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    projects: ProjectsArg,
    /// The model to check against (default: each session's own).
    #[arg(long)]
    model: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Arguments of `claude-code check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    projects: ProjectsArg,
    #[command(flatten)]
    which: Which,
    /// The model to check against (default: the session's own).
    #[arg(long)]
    model: Option<String>,
    /// Print `{"session", "file", "model", "target", "findings": [...], "problems": [...]}`
    /// (with `--all`: `{"sessions": [...]}`).
    #[arg(long)]
    json: bool,
}

/// Arguments of `claude-code repair`.
#[derive(Args, Debug)]
pub struct RepairArgs {
    #[command(flatten)]
    projects: ProjectsArg,
    #[command(flatten)]
    which: Which,
    /// Print the plan and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// The model to check against (default: the session's own).
    #[arg(long)]
    model: Option<String>,
    /// Write even when Claude Code seems to have the session open.
    #[arg(long)]
    force: bool,
}

/// Arguments of `claude-code undo`.
#[derive(Args, Debug)]
pub struct UndoArgs {
    #[command(flatten)]
    projects: ProjectsArg,
    #[command(flatten)]
    which: Which,
    /// Undo even when the file changed after the repair.
    #[arg(long)]
    force: bool,
}

/// Runs a `claude-code` command.
pub fn run(cmd: &ClaudeCodeCommand) -> ExitCode {
    let result = match cmd {
        ClaudeCodeCommand::List(a) => list(a),
        ClaudeCodeCommand::Check(a) => check(a),
        ClaudeCodeCommand::Repair(a) => repair(a),
        ClaudeCodeCommand::Undo(a) => undo(a),
    };
    result.unwrap_or_else(fail)
}

fn projects(a: &ProjectsArg) -> Result<PathBuf, String> {
    store::projects_dir(a.projects.as_deref()).map_err(|e| e.to_string())
}

/// The session files selected (default: the most recent).
fn select(p: &ProjectsArg, w: &Which) -> Result<Vec<SessionFile>, String> {
    if let Some(f) = &w.file {
        let id = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let size = std::fs::metadata(f)
            .map_err(|e| format!("{}: {e}", f.display()))?
            .len();
        return Ok(vec![SessionFile {
            id,
            project: String::new(),
            path: f.clone(),
            size,
            modified: 0,
        }]);
    }
    let dir = projects(p)?;
    if let Some(id) = &w.session {
        return store::find(&dir, id)
            .map(|s| vec![s])
            .map_err(|e| e.to_string());
    }
    let all = store::list(&dir).map_err(|e| e.to_string())?;
    Ok(if w.all {
        all
    } else {
        all.into_iter().take(1).collect()
    })
}

fn options(model: Option<&String>) -> Options<'static> {
    Options {
        model: model.cloned(),
        ..Options::default()
    }
}

fn load_and_check(
    f: &SessionFile,
    opts: &Options<'_>,
) -> Result<(cc::Session, SessionCheck), String> {
    let session = store::load(&f.path).map_err(|e| e.to_string())?;
    let c = cc::check_session(&session, opts).map_err(|e| format!("{}: {e}", f.path.display()))?;
    Ok((session, c))
}

/// Prints what a repair leaves (`after the repair` for a dry run, else `now`): "no error", or the
/// errors left with their lines (`line N{of}`); true when errors are left. The line-based
/// doctors (Claude Code, Codex) share it.
pub(crate) fn print_left(
    dry_run: bool,
    errors: usize,
    findings: &[cc::LineFinding],
    of: &str,
) -> bool {
    let when = if dry_run { "after the repair" } else { "now" };
    if errors == 0 {
        println!("  {when}: no error");
        return false;
    }
    println!("  {when}: {errors} error(s) left that cannot be repaired safely:");
    for lf in findings
        .iter()
        .filter(|x| x.finding.severity == Severity::Error)
    {
        println!(
            "    error[{}] line {}{of}: {}",
            lf.finding.rule,
            lf.line.map_or("?".to_owned(), |n| n.to_string()),
            lf.finding.message
        );
    }
    true
}

fn counts(c: &SessionCheck) -> (usize, usize) {
    crate::render::tally(c.findings.iter().map(|f| &f.finding))
}

fn describe(c: &SessionCheck) -> String {
    let goes_to = c.target.model.as_deref().unwrap_or("an unknown model");
    if c.target.is_anthropic() {
        format!("for {goes_to}, as a resume would send it")
    } else {
        format!(
            "for {goes_to}, a non-Anthropic backend (behind ANTHROPIC_BASE_URL): the file's structure and the rules every provider holds to ({}) are errors as for Claude; Anthropic's other rules (signatures, thinking, settings) are warnings of what breaks if it is sent to Claude",
            turnkeeper::RuleId::join(cc::ANY_BACKEND)
        )
    }
}

/// The backend of a session and how its rules were judged, for `check --json`.
fn backend(c: &SessionCheck) -> serde_json::Value {
    let anthropic = c.target.is_anthropic();
    let mut errors = vec!["store".to_owned()];
    errors.extend(cc::ANY_BACKEND.iter().map(|r| r.as_str().to_owned()));
    json!({
        "model": c.target.model,
        "anthropic": anthropic,
        "errors_on_any_backend": errors,
        "other_rules": if anthropic { "anthropic" } else { "warning_if_sent_to_claude" },
    })
}

fn list(a: &ListArgs) -> Result<ExitCode, String> {
    let dir = projects(&a.projects)?;
    let files = store::list(&dir).map_err(|e| e.to_string())?;
    let opts = options(a.model.as_ref());
    let mut rows = Vec::new();
    for f in &files {
        let health = match load_and_check(f, &opts) {
            Ok((s, c)) => {
                let (e, w) = counts(&c);
                json!({"errors": e, "warnings": w, "model": c.conversation.model,
                       "problems": s.problems.len(), "torn": s.torn_tail.is_some()})
            }
            Err(e) => json!({"unreadable": e}),
        };
        rows.push((f, health));
    }
    if a.json {
        let sessions: Vec<_> = rows
            .iter()
            .map(|(f, h)| {
                json!({"id": f.id, "project": f.project, "file": f.path, "size": f.size,
                       "modified": f.modified, "health": h})
            })
            .collect();
        println!("{}", json!({ "sessions": sessions }));
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<36}  {:<16}  {:>9}  {:<26}  {:<20}  PROJECT",
        "SESSION", "UPDATED (UTC)", "SIZE", "MODEL", "HEALTH"
    );
    for (f, h) in &rows {
        let bad = h["problems"].as_u64().unwrap_or(0);
        let torn: &[&str] = if h["torn"] == true {
            &["torn line"]
        } else {
            &[]
        };
        let health = crate::render::health_text(h, &[(bad, "bad line(s)")], torn);
        println!(
            "{:<36}  {:<16}  {:>9}  {:<26}  {:<20}  {}",
            f.id,
            crate::opencode::human_time(f.modified),
            crate::opencode::human_size(f.size),
            h["model"].as_str().unwrap_or("-"),
            health,
            f.project
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn check(a: &CheckArgs) -> Result<ExitCode, String> {
    let files = select(&a.projects, &a.which)?;
    let opts = options(a.model.as_ref());
    let mut any_error = false;
    let mut out = Vec::new();
    for f in &files {
        let (s, c) = load_and_check(f, &opts)?;
        let (e, w) = counts(&c);
        any_error |= e > 0;
        let problems: Vec<_> = s
            .problems
            .iter()
            .map(|p| json!({"line": p.line, "reason": p.reason}))
            .collect();
        if a.json {
            out.push(json!({"session": f.id, "file": f.path, "model": c.model,
                            "target": c.target, "backend": backend(&c),
                            "findings": c.findings, "problems": problems,
                            "torn": s.torn_tail.is_some()}));
            continue;
        }
        println!(
            "session {} ({}), checked {}",
            f.id,
            f.path.display(),
            describe(&c)
        );
        // A torn last line is a finding (`store`); other unreadable lines are only noted.
        let torn = s.torn_tail.map(|t| s.text[..t].matches('\n').count() + 1);
        for p in s.problems.iter().filter(|p| Some(p.line) != torn) {
            println!("  warning: line {}: not a JSON line ({})", p.line, p.reason);
        }
        for lf in &c.findings {
            let sev = match lf.finding.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "info",
            };
            let at = match (lf.line, &lf.uuid) {
                (Some(n), Some(u)) => format!("line {n} (uuid {u})"),
                (Some(n), None) => format!("line {n}"),
                _ => "the request".to_owned(),
            };
            if lf.finding.rule == turnkeeper::RuleId::Store {
                println!("  {sev}[{}] {at}: {}", lf.finding.rule, lf.finding.message);
            } else {
                println!(
                    "  {sev}[{}] {at}, {}: {}",
                    lf.finding.rule, lf.finding.path, lf.finding.message
                );
            }
        }
        if c.findings.is_empty() && s.problems.is_empty() {
            println!("  clean");
        } else {
            println!("  {e} error(s), {w} warning(s)");
        }
    }
    if a.json {
        if files.len() == 1 && !a.which.all {
            println!("{}", out.into_iter().next().unwrap_or_default());
        } else {
            println!("{}", json!({ "sessions": out }));
        }
    }
    Ok(if any_error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn repair(a: &RepairArgs) -> Result<ExitCode, String> {
    let files = select(&a.projects, &a.which)?;
    let opts = options(a.model.as_ref());
    let mut left = false;
    for f in &files {
        let s = store::load(&f.path).map_err(|e| e.to_string())?;
        let plan = cc::plan(&s, &opts).map_err(|e| format!("{}: {e}", f.path.display()))?;
        let verb = if a.dry_run { "would" } else { "will" };
        if plan.is_empty() {
            println!("session {}: nothing to repair", f.id);
        } else {
            println!(
                "session {}: {} change(s) {verb} be made",
                f.id,
                plan.changes.len()
            );
        }
        for ch in &plan.changes {
            println!(
                "  {:<15} [{}] line {}{}: {}",
                ch.action,
                ch.rule,
                ch.line,
                ch.uuid
                    .as_deref()
                    .map(|u| format!(" (uuid {u})"))
                    .unwrap_or_default(),
                ch.reason
            );
        }
        for n in &plan.left_alone {
            println!("  left alone: {n}");
        }
        let after = cc::Session::parse(plan.text.clone(), "repaired")
            .map_err(|e| format!("session {}: the repaired text: {e}", f.id))?;
        let c2 = cc::check_session(&after, &opts).map_err(|e| e.to_string())?;
        let (e, _) = counts(&c2);
        if !a.dry_run && !plan.is_empty() {
            if let Some(why) = busy(&f.path)
                && !a.force
            {
                return Err(format!(
                    "{} looks in use: {why}. Quit Claude Code first (it appends to the file), or pass --force",
                    f.path.display()
                ));
            }
            let lines: Vec<String> = plan
                .changes
                .iter()
                .map(|c| format!("{} [{}] line {}: {}", c.action, c.rule, c.line, c.reason))
                .collect();
            let applied = store::apply(&f.path, &s.text, &plan.text, &lines)
                .map_err(|e| format!("session {}: {e}", f.id))?;
            println!(
                "  backup: {} (undo with `turnkeeper claude-code undo --session {}`)",
                applied.backup.display(),
                f.id
            );
        }
        left |= print_left(a.dry_run, e, &c2.findings, "");
    }
    Ok(if left {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

fn busy(file: &Path) -> Option<String> {
    match store::in_use(file) {
        Ok(found) => found.map(|u| u.to_string()),
        Err(why) => {
            eprintln!("turnkeeper: warning: {why}; cannot tell whether Claude Code is running");
            None
        }
    }
}

fn undo(a: &UndoArgs) -> Result<ExitCode, String> {
    let files = select(&a.projects, &a.which)?;
    for f in &files {
        let backup = store::undo(&f.path, a.force).map_err(|e| format!("session {}: {e}", f.id))?;
        println!("session {}: restored from {}", f.id, backup.display());
    }
    Ok(ExitCode::SUCCESS)
}

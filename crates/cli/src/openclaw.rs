//! `turnkeeper openclaw list|check|repair|undo`: openclaw's sessions, their active branch
//! checked as the request openclaw sends to the session's current model, repaired by whole lines
//! with openclaw's own backup beside ours (see `turnkeeper::openclaw`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;
use turnkeeper::openclaw as oc;
use turnkeeper::stores::openclaw::{self as store, SessionFile};

use crate::fail;

/// `turnkeeper openclaw ...`.
#[derive(Subcommand, Debug)]
pub enum OpenclawCommand {
    /// Every session with its agent, last activity, model, size and health.
    List(ListArgs),
    /// Check sessions as openclaw would send them (exit 1 when an error is found).
    Check(CheckArgs),
    /// Repair sessions by whole lines, after backing the file up (openclaw's way and ours).
    Repair(RepairArgs),
    /// Put a session back as it was before its last repair.
    Undo(UndoArgs),
}

/// Where the sessions are.
#[derive(Args, Debug)]
pub struct DirArg {
    /// openclaw's state directory (holding `agents/`) or a sessions folder (default:
    /// `$OPENCLAW_STATE_DIR`, else `~/.openclaw`).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
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

/// Arguments of `openclaw list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    dir: DirArg,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Arguments of `openclaw check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    dir: DirArg,
    #[command(flatten)]
    which: Which,
    /// The model to check against (default: the session's current one).
    #[arg(long)]
    model: Option<String>,
    /// Print `{"session", "file", "target", "findings": [...]}` (with `--all`: `{"sessions"}`).
    #[arg(long)]
    json: bool,
}

/// Arguments of `openclaw repair`.
#[derive(Args, Debug)]
pub struct RepairArgs {
    #[command(flatten)]
    dir: DirArg,
    #[command(flatten)]
    which: Which,
    /// Print the plan and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// The model to check against (default: the session's current one).
    #[arg(long)]
    model: Option<String>,
    /// Write even when openclaw seems to be using the session.
    #[arg(long)]
    force: bool,
}

/// Arguments of `openclaw undo`.
#[derive(Args, Debug)]
pub struct UndoArgs {
    #[command(flatten)]
    dir: DirArg,
    #[command(flatten)]
    which: Which,
    /// Undo even when the file changed after the repair.
    #[arg(long)]
    force: bool,
}

/// Runs an `openclaw` command.
pub fn run(cmd: &OpenclawCommand) -> ExitCode {
    let result = match cmd {
        OpenclawCommand::List(a) => list(a),
        OpenclawCommand::Check(a) => check(a),
        OpenclawCommand::Repair(a) => repair(a),
        OpenclawCommand::Undo(a) => undo(a),
    };
    result.unwrap_or_else(fail)
}

fn select(d: &DirArg, w: &Which) -> Result<Vec<SessionFile>, String> {
    if let Some(f) = &w.file {
        let size = std::fs::metadata(f)
            .map_err(|e| format!("{}: {e}", f.display()))?
            .len();
        return Ok(vec![
            store::session_file(f).unwrap_or(SessionFile {
                id: f
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                agent: String::new(),
                path: f.clone(),
                size,
                modified: 0,
            }),
        ]);
    }
    let dirs = store::session_dirs(d.dir.as_deref()).map_err(|e| e.to_string())?;
    if let Some(id) = &w.session {
        return store::find(&dirs, id)
            .map(|s| vec![s])
            .map_err(|e| e.to_string());
    }
    let all = store::list(&dirs).map_err(|e| e.to_string())?;
    Ok(if w.all {
        all
    } else {
        all.into_iter().take(1).collect()
    })
}

fn counts(c: &oc::SessionCheck) -> (usize, usize) {
    crate::render::tally(c.findings.iter().map(|f| &f.finding))
}

fn target_text(t: &oc::Target) -> String {
    format!(
        "{}/{}",
        t.provider.as_deref().unwrap_or("?"),
        t.model.as_deref().unwrap_or("?")
    )
}

fn list(a: &ListArgs) -> Result<ExitCode, String> {
    let dirs = store::session_dirs(a.dir.dir.as_deref()).map_err(|e| e.to_string())?;
    let files = store::list(&dirs).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for f in &files {
        let h = match store::load(&f.path) {
            Ok(s) => {
                let c = oc::check_session(&s, None);
                let (e, w) = counts(&c);
                json!({"errors": e, "warnings": w, "model": target_text(&c.target), "torn": s.torn_tail.is_some()})
            }
            Err(e) => json!({"unreadable": e.to_string()}),
        };
        rows.push((f, h));
    }
    if a.json {
        let sessions: Vec<_> = rows
            .iter()
            .map(|(f, h)| json!({"id": f.id, "agent": f.agent, "file": f.path, "size": f.size, "modified": f.modified, "health": h}))
            .collect();
        println!("{}", json!({ "sessions": sessions }));
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<36}  {:<10}  {:<16}  {:>9}  {:<28}  HEALTH",
        "SESSION", "AGENT", "UPDATED (UTC)", "SIZE", "MODEL"
    );
    for (f, h) in &rows {
        let torn: &[&str] = if h["torn"] == true {
            &["torn line"]
        } else {
            &[]
        };
        println!(
            "{:<36}  {:<10}  {:<16}  {:>9}  {:<28}  {}",
            f.id,
            f.agent,
            crate::opencode::human_time(f.modified),
            crate::opencode::human_size(f.size),
            h["model"].as_str().unwrap_or("-"),
            crate::render::health_text(h, &[], torn)
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn check(a: &CheckArgs) -> Result<ExitCode, String> {
    let files = select(&a.dir, &a.which)?;
    let mut any = false;
    let mut out = Vec::new();
    for f in &files {
        let s = store::load(&f.path).map_err(|e| e.to_string())?;
        let c = oc::check_session(&s, a.model.as_deref());
        let (e, w) = counts(&c);
        any |= e > 0;
        if a.json {
            out.push(
                json!({"session": s.id().unwrap_or(&f.id), "file": f.path, "target": c.target,
                            "findings": c.findings, "torn": s.torn_tail.is_some()}),
            );
            continue;
        }
        println!(
            "session {} ({}), active branch of {} entries checked for {} ({:?} rules)",
            f.id,
            f.path.display(),
            c.branch.len(),
            target_text(&c.target),
            c.target.family
        );
        for lf in &c.findings {
            println!(
                "  error[{}] line {}{}: {}",
                lf.finding.rule,
                lf.line.unwrap_or(0),
                lf.uuid
                    .as_deref()
                    .map(|u| format!(" (id {u})"))
                    .unwrap_or_default(),
                lf.finding.message
            );
        }
        if c.findings.is_empty() {
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
    Ok(if any {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn repair(a: &RepairArgs) -> Result<ExitCode, String> {
    let files = select(&a.dir, &a.which)?;
    let mut left = false;
    for f in &files {
        let s = store::load(&f.path).map_err(|e| e.to_string())?;
        let plan =
            oc::plan(&s, a.model.as_deref()).map_err(|e| format!("session {}: {e}", f.id))?;
        let verb = if a.dry_run { "would" } else { "will" };
        if plan.changes.is_empty() {
            println!("session {}: nothing to repair", f.id);
            // What no edit of lines repairs (a result behind another message) stays an error.
            let (e, _) = counts(&oc::check_session(&s, a.model.as_deref()));
            if e > 0 {
                left = true;
                println!("  {e} error(s) left that cannot be repaired safely");
            }
            continue;
        }
        println!(
            "session {}: {} change(s) {verb} be made",
            f.id,
            plan.changes.len()
        );
        for ch in &plan.changes {
            println!(
                "  {:<10} [{}] line {}{}: {}",
                ch.action,
                ch.rule,
                ch.line,
                ch.id
                    .as_deref()
                    .map(|u| format!(" (id {u})"))
                    .unwrap_or_default(),
                ch.reason
            );
        }
        let after = oc::Session::parse(plan.text.clone(), "repaired")
            .map_err(|e| format!("session {}: the repaired text: {e}", f.id))?;
        let c2 = oc::check_session(&after, a.model.as_deref());
        let (e, _) = counts(&c2);
        if !a.dry_run {
            if !a.force
                && let Some(why) = busy(&f.path)
            {
                return Err(format!(
                    "{} looks in use: {why}. Stop openclaw's gateway first, or pass --force",
                    f.path.display()
                ));
            }
            let lines: Vec<String> = plan
                .changes
                .iter()
                .map(|c| format!("{} [{}] line {}: {}", c.action, c.rule, c.line, c.reason))
                .collect();
            let done = store::apply(&f.path, &s.text, &plan.text, &lines)
                .map_err(|e| format!("session {}: {e}", f.id))?;
            println!(
                "  backups: {} (openclaw's) and {} (undo with `turnkeeper openclaw undo --session {}`)",
                done.openclaw_backup.display(),
                done.backup.display(),
                f.id
            );
        }
        let when = if a.dry_run { "after the repair" } else { "now" };
        if e == 0 {
            println!("  {when}: no error");
        } else {
            left = true;
            println!("  {when}: {e} error(s) left that cannot be repaired safely");
        }
    }
    Ok(if left {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

fn busy(file: &std::path::Path) -> Option<String> {
    match store::in_use(file) {
        Ok(found) => found.map(|u| u.to_string()),
        Err(why) => {
            eprintln!("turnkeeper: warning: {why}; cannot tell whether openclaw is running");
            None
        }
    }
}

fn undo(a: &UndoArgs) -> Result<ExitCode, String> {
    for f in &select(&a.dir, &a.which)? {
        let b = store::undo(&f.path, a.force).map_err(|e| format!("session {}: {e}", f.id))?;
        println!("session {}: restored from {}", f.id, b.display());
    }
    Ok(ExitCode::SUCCESS)
}

//! `turnkeeper codex list|check|repair|undo`: Codex CLI rollouts, checked as the Responses
//! request a resume sends, and repaired into a new rollout that forks the original (see
//! `turnkeeper::codex`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;
use turnkeeper::codex::{self as cx, RolloutCheck};
use turnkeeper::stores::codex::{self as store, Layout, RolloutFile};
use turnkeeper::{Options, Severity};

use crate::fail;

/// `turnkeeper codex ...`.
#[derive(Subcommand, Debug)]
pub enum CodexCommand {
    /// Every rollout with its session id, last activity, model, size and health.
    List(ListArgs),
    /// Check sessions as a resume would send them (exit 1 when an error is found).
    Check(CheckArgs),
    /// Write a repaired copy of a session as a new rollout (the original is left untouched).
    Repair(RepairArgs),
    /// Remove the repaired copy the last repair of a session wrote.
    Undo(UndoArgs),
}

/// Where the rollouts are.
#[derive(Args, Debug)]
pub struct HomeArg {
    /// Codex's home (holding `sessions/`) or a folder of rollouts (default: `$CODEX_HOME`, else
    /// `~/.codex`).
    #[arg(long, value_name = "DIR")]
    home: Option<PathBuf>,
}

/// Which sessions.
#[derive(Args, Debug)]
pub struct Which {
    /// The session id (`session_meta.id`; default: the most recent session).
    #[arg(long, conflicts_with_all = ["all", "file"])]
    session: Option<String>,
    /// A rollout file, wherever it is.
    #[arg(long, conflicts_with = "all")]
    file: Option<PathBuf>,
    /// Every session.
    #[arg(long)]
    all: bool,
}

/// Arguments of `codex list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    home: HomeArg,
    /// The model to check against (default: each session's own).
    #[arg(long)]
    model: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Arguments of `codex check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    home: HomeArg,
    #[command(flatten)]
    which: Which,
    /// The model to check against (default: the session's own, from its last `turn_context`).
    #[arg(long)]
    model: Option<String>,
    /// Print `{"session", "file", "model", "provider", "findings": [...], "problems": [...]}`
    /// (with `--all`: `{"sessions": [...]}`).
    #[arg(long)]
    json: bool,
}

/// Arguments of `codex repair`.
#[derive(Args, Debug)]
pub struct RepairArgs {
    #[command(flatten)]
    home: HomeArg,
    #[command(flatten)]
    which: Which,
    /// Print the plan and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// The model to check against (default: the session's own).
    #[arg(long)]
    model: Option<String>,
    /// Write even when Codex seems to be running on the session.
    #[arg(long)]
    force: bool,
}

/// Arguments of `codex undo`.
#[derive(Args, Debug)]
pub struct UndoArgs {
    #[command(flatten)]
    home: HomeArg,
    /// The original session's id (the one that was repaired).
    #[arg(long, conflicts_with = "file")]
    session: Option<String>,
    /// The original rollout file, wherever it is.
    #[arg(long)]
    file: Option<PathBuf>,
    /// Remove the copy even when it changed after the repair (Codex resumed it).
    #[arg(long)]
    force: bool,
}

/// Runs a `codex` command.
pub fn run(cmd: &CodexCommand) -> ExitCode {
    let result = match cmd {
        CodexCommand::List(a) => list(a),
        CodexCommand::Check(a) => check(a),
        CodexCommand::Repair(a) => repair(a),
        CodexCommand::Undo(a) => undo(a),
    };
    result.unwrap_or_else(fail)
}

fn layout(a: &HomeArg) -> Result<Layout, String> {
    store::layout(a.home.as_deref()).map_err(|e| e.to_string())
}

/// The rollouts selected (default: the most recent), and the layout when they come from one.
fn select(h: &HomeArg, w: &Which) -> Result<(Vec<RolloutFile>, Option<Layout>), String> {
    if let Some(f) = &w.file {
        std::fs::metadata(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let rf = store::rollout_file(f).unwrap_or(RolloutFile {
            id: String::new(),
            forked_from: None,
            path: f.clone(),
            size: 0,
            modified: 0,
        });
        return Ok((vec![rf], None));
    }
    let l = layout(h)?;
    if let Some(id) = &w.session {
        let f = store::find(&l.sessions, id).map_err(|e| e.to_string())?;
        return Ok((vec![f], Some(l)));
    }
    let all = store::list(&l.sessions).map_err(|e| e.to_string())?;
    let picked = if w.all {
        all
    } else {
        all.into_iter().take(1).collect()
    };
    Ok((picked, Some(l)))
}

fn options(model: Option<&String>) -> Options<'static> {
    Options {
        model: model.cloned(),
        ..Options::default()
    }
}

fn load_and_check(
    f: &RolloutFile,
    opts: &Options<'_>,
) -> Result<(turnkeeper::codex::Rollout, RolloutCheck), String> {
    let r = store::load(&f.path).map_err(|e| e.to_string())?;
    let c = cx::check_rollout(&r, opts).map_err(|e| format!("{}: {e}", f.path.display()))?;
    Ok((r, c))
}

fn counts(c: &RolloutCheck) -> (usize, usize) {
    crate::render::tally(c.findings.iter().map(|f| &f.finding))
}

fn list(a: &ListArgs) -> Result<ExitCode, String> {
    let l = layout(&a.home)?;
    let files = store::list(&l.sessions).map_err(|e| e.to_string())?;
    let opts = options(a.model.as_ref());
    let mut rows = Vec::new();
    for f in &files {
        let health = match load_and_check(f, &opts) {
            Ok((r, c)) => {
                let (e, w) = counts(&c);
                json!({"errors": e, "warnings": w, "model": c.model,
                       "provider": r.meta.model_provider, "torn": r.torn_tail.is_some()})
            }
            Err(e) => json!({"unreadable": e}),
        };
        rows.push((f, health));
    }
    if a.json {
        let sessions: Vec<_> = rows
            .iter()
            .map(|(f, h)| {
                json!({"id": f.id, "forked_from": f.forked_from, "file": f.path, "size": f.size,
                       "modified": f.modified, "health": h})
            })
            .collect();
        println!("{}", json!({ "sessions": sessions }));
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<36}  {:<16}  {:>9}  {:<22}  {:<20}  FILE",
        "SESSION", "UPDATED (UTC)", "SIZE", "MODEL", "HEALTH"
    );
    for (f, h) in &rows {
        let torn: &[&str] = if h["torn"] == true {
            &["torn line"]
        } else {
            &[]
        };
        let health = crate::render::health_text(h, &[], torn);
        let model = match (h["model"].as_str(), h["provider"].as_str()) {
            (Some(m), Some(p)) => format!("{m} ({p})"),
            (Some(m), None) => m.to_owned(),
            _ => "-".to_owned(),
        };
        let fork = f
            .forked_from
            .as_deref()
            .map(|o| format!("  (fork of {o})"))
            .unwrap_or_default();
        println!(
            "{:<36}  {:<16}  {:>9}  {:<22}  {:<20}  {}{fork}",
            f.id,
            crate::opencode::human_time(f.modified),
            crate::opencode::human_size(f.size),
            model,
            health,
            f.path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn describe(r: &turnkeeper::codex::Rollout, c: &RolloutCheck) -> String {
    let model = c.model.as_deref().unwrap_or("an unknown model");
    let provider = r
        .meta
        .model_provider
        .as_deref()
        .unwrap_or("an unknown provider");
    format!(
        "as the Responses request a resume sends to {model} (provider {provider}; rules of {})",
        c.target.provider.name()
    )
}

fn check(a: &CheckArgs) -> Result<ExitCode, String> {
    let (files, _) = select(&a.home, &a.which)?;
    let opts = options(a.model.as_ref());
    let mut any_error = false;
    let mut out = Vec::new();
    for f in &files {
        let (r, c) = load_and_check(f, &opts)?;
        let (e, w) = counts(&c);
        any_error |= e > 0;
        let id = r.meta.id.clone().unwrap_or_else(|| f.id.clone());
        if a.json {
            let problems: Vec<_> = r
                .problems
                .iter()
                .map(|p| json!({"line": p.line, "reason": p.reason, "interleaved": p.interleaved}))
                .collect();
            out.push(json!({"session": id, "file": f.path, "model": c.model,
                            "provider": r.meta.model_provider,
                            "target": c.target.provider.name(),
                            "forked_from": r.meta.forked_from_id,
                            "findings": c.findings, "problems": problems,
                            "torn": r.torn_tail.is_some()}));
            continue;
        }
        println!(
            "session {id} ({}), checked {}",
            f.path.display(),
            describe(&r, &c)
        );
        for lf in &c.findings {
            let sev = match lf.finding.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "info",
            };
            let at = lf
                .line
                .map_or("the request".to_owned(), |n| format!("line {n}"));
            if lf.finding.rule == turnkeeper::RuleId::Store {
                println!("  {sev}[{}] {at}: {}", lf.finding.rule, lf.finding.message);
            } else {
                println!(
                    "  {sev}[{}] {at}, {}: {}",
                    lf.finding.rule, lf.finding.path, lf.finding.message
                );
            }
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
    Ok(if any_error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn repair(a: &RepairArgs) -> Result<ExitCode, String> {
    let (files, l) = select(&a.home, &a.which)?;
    let opts = options(a.model.as_ref());
    let mut left = false;
    for f in &files {
        let r = store::load(&f.path).map_err(|e| e.to_string())?;
        let id = r.meta.id.clone().unwrap_or_else(|| f.id.clone());
        let plan = cx::plan(&r, &opts).map_err(|e| format!("{}: {e}", f.path.display()))?;
        let verb = if a.dry_run { "would" } else { "will" };
        if plan.is_empty() {
            println!("session {id}: nothing to repair");
        } else {
            println!(
                "session {id}: {} change(s) {verb} be made in a new rollout (the original is left as it is)",
                plan.changes.len()
            );
        }
        for ch in &plan.changes {
            println!(
                "  {:<15} [{}] line {}: {}",
                ch.action, ch.rule, ch.line, ch.reason
            );
        }
        for n in &plan.left_alone {
            println!("  left alone: {n}");
        }
        // What the new rollout will hold, checked as `check --file` will.
        let mut preview = format!(
            "{{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{{\"id\":\"00000000-0000-7000-8000-000000000000\",\"forked_from_id\":\"{id}\"}}}}\n"
        );
        preview.push_str(&plan.text);
        let after = turnkeeper::codex::Rollout::parse(preview, "repaired")
            .map_err(|e| format!("session {id}: the repaired text: {e}"))?;
        let c2 = cx::check_rollout(&after, &opts).map_err(|e| e.to_string())?;
        let (e, _) = counts(&c2);
        if !a.dry_run && !plan.is_empty() {
            if !a.force
                && let Some(why) = busy(&f.path)
            {
                return Err(format!(
                    "{} looks in use: {why}. Quit Codex first (it appends to the rollout, and the copy would miss what it adds), or pass --force",
                    f.path.display()
                ));
            }
            let lines: Vec<String> = plan
                .changes
                .iter()
                .map(|c| format!("{} [{}] line {}: {}", c.action, c.rule, c.line, c.reason))
                .collect();
            let forked = store::fork(
                if a.which.file.is_some() {
                    None
                } else {
                    l.as_ref()
                },
                &f.path,
                &r,
                &plan.text,
                &lines,
            )
            .map_err(|e| format!("session {id}: {e}"))?;
            println!("  new rollout: {}", forked.path.display());
            println!(
                "  resume it with `codex resume {}`; the original {id} is unchanged",
                forked.id
            );
            let undo_how = match &a.which.file {
                Some(p) => format!("--file {}", p.display()),
                None => format!("--session {id}"),
            };
            println!("  undo with `turnkeeper codex undo {undo_how}` (removes the new rollout)");
        }
        left |= crate::claude_code::print_left(a.dry_run, e, &c2.findings, " of the new rollout");
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
            eprintln!("turnkeeper: warning: {why}; cannot tell whether Codex is running");
            None
        }
    }
}

fn undo(a: &UndoArgs) -> Result<ExitCode, String> {
    let (root, id) = match (&a.file, &a.session) {
        (Some(f), _) => {
            let r = store::load(f).map_err(|e| e.to_string())?;
            let dir = f
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."))
                .to_owned();
            (dir, r.meta.id.unwrap_or_default())
        }
        (None, Some(id)) => (layout(&a.home)?.root, id.clone()),
        (None, None) => return Err("name the repaired session: --session ID or --file F".into()),
    };
    let done = store::undo(&root, &id, a.force).map_err(|e| format!("session {id}: {e}"))?;
    println!(
        "session {id}: removed the repaired copy {} (backup record {})",
        done.file.display(),
        done.backup.display()
    );
    Ok(ExitCode::SUCCESS)
}

//! `turnkeeper opencode list|check|repair|undo`: OpenCode's stored sessions, checked and
//! repaired in place (see `turnkeeper::doctor`).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;
use turnkeeper::doctor::{self, DoctorPlan, PlanOptions, StoreRef};
use turnkeeper::opencode::Session;
use turnkeeper::opencode::SessionCheck;
use turnkeeper::stores::BACKUP_DIR;
use turnkeeper::stores::opencode::{
    self as store, Listing, Located, StoreKind, locate as stores_locate,
};
use turnkeeper::{Options, Severity};

use crate::fail;

/// `turnkeeper opencode ...`.
#[derive(Subcommand, Debug)]
pub enum OpencodeCommand {
    /// Every session with its title, size, last update and health.
    List(ListArgs),
    /// Check sessions as their next request will be sent (exit 1 when an error is found).
    Check(CheckArgs),
    /// Repair sessions in place, part by part, after backing up what changes.
    Repair(RepairArgs),
    /// Restore a session as it was before its last repair.
    Undo(UndoArgs),
}

/// Where the store is.
#[derive(Args, Debug)]
pub struct StorageArg {
    /// OpenCode's or Kilo's data directory, a `storage/` tree, a directory holding
    /// `opencode.db` / `opencode-<channel>.db` / `kilo.db`, or the database file (default:
    /// `$OPENCODE_DB`, else the first of `$XDG_DATA_HOME/opencode` and `$XDG_DATA_HOME/kilo`,
    /// or `~/.local/share/...`, that holds a store).
    #[arg(long, value_name = "DIR")]
    storage: Option<PathBuf>,
}

/// Which sessions.
#[derive(Args, Debug)]
pub struct SessionsArg {
    /// The session (default: the most recently updated one).
    #[arg(long, conflicts_with = "all")]
    session: Option<String>,
    /// Every session.
    #[arg(long)]
    all: bool,
}

/// Arguments of `opencode list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    storage: StorageArg,
    /// The model to check against (default: each session's own).
    #[arg(long)]
    model: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Arguments of `opencode check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    storage: StorageArg,
    #[command(flatten)]
    sessions: SessionsArg,
    /// The model to check against (default: the one the session recorded).
    #[arg(long)]
    model: Option<String>,
    /// Print `{"session", "model", "findings": [...], "problems": [...]}` (with `--all`:
    /// `{"sessions": [...]}`).
    #[arg(long)]
    json: bool,
}

/// Arguments of `opencode repair`.
#[derive(Args, Debug)]
pub struct RepairArgs {
    #[command(flatten)]
    storage: StorageArg,
    #[command(flatten)]
    sessions: SessionsArg,
    /// Print the plan and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// The model to check the result against (default: the one the session recorded).
    #[arg(long)]
    model: Option<String>,
    /// Write even when the storage looks in use by OpenCode.
    #[arg(long)]
    force: bool,
}

/// Arguments of `opencode undo`.
#[derive(Args, Debug)]
pub struct UndoArgs {
    #[command(flatten)]
    storage: StorageArg,
    /// The session.
    #[arg(long)]
    session: String,
    /// Only list the backups.
    #[arg(long)]
    list: bool,
    /// Undo even when the storage looks in use, or a part changed after the repair.
    #[arg(long)]
    force: bool,
}

pub fn run(cmd: &OpencodeCommand) -> ExitCode {
    let result = match cmd {
        OpencodeCommand::List(a) => list(a),
        OpencodeCommand::Check(a) => check(a),
        OpencodeCommand::Repair(a) => repair(a),
        OpencodeCommand::Undo(a) => undo(a),
    };
    result.unwrap_or_else(fail)
}

/// What the command line needs of a located store beyond the stores crate's [`Located`].
trait LocatedExt {
    fn sqlite(&self) -> bool;
    fn store_ref(&self) -> StoreRef<'_>;
    fn listing_or_fail(&self) -> Result<Listing, String>;
    fn in_use(&self) -> Option<String>;
    fn select(&self, s: &SessionsArg) -> Result<Vec<String>, String>;
}

impl LocatedExt for Located {
    fn sqlite(&self) -> bool {
        self.kind() == StoreKind::Sqlite
    }

    fn store_ref(&self) -> StoreRef<'_> {
        StoreRef::from(self)
    }

    fn listing_or_fail(&self) -> Result<Listing, String> {
        self.listing()
            .map_err(|e| format!("{}: {e}", self.path().display()))
    }

    /// Another process using the store, or `None`.
    fn in_use(&self) -> Option<String> {
        match store::in_use(&self.in_use_targets(), !self.sqlite()) {
            Ok(found) => found.map(|u| u.to_string()),
            Err(why) => {
                eprintln!("turnkeeper: warning: {why}; cannot tell whether OpenCode is running");
                None
            }
        }
    }

    /// The session ids selected by `--session`/`--all` (default: the newest).
    fn select(&self, s: &SessionsArg) -> Result<Vec<String>, String> {
        if let Some(id) = &s.session {
            return Ok(vec![id.clone()]);
        }
        let listing = self.listing_or_fail()?;
        for p in &listing.problems {
            eprintln!("turnkeeper: warning: skipped {p}");
        }
        let ids: Vec<String> = listing.sessions.iter().map(|s| s.id.clone()).collect();
        if ids.is_empty() {
            return Err(format!(
                "{}: the store holds no session",
                self.path().display()
            ));
        }
        Ok(if s.all { ids } else { ids[..1].to_vec() })
    }
}

/// Finds the store (see [`turnkeeper::stores::opencode::locate`]): the one `--storage` names,
/// else the first of OpenCode's and Kilo's data directories that holds one.
fn locate(arg: &StorageArg) -> Result<Located, String> {
    stores_locate(arg.storage.as_deref()).map_err(|e| e.to_string())
}

fn options(model: Option<&String>) -> Options<'static> {
    Options {
        model: model.cloned(),
        ..Options::default()
    }
}

/// How a check was made: for the model the next request goes to, or, for a session not bound
/// for Anthropic, as if switched to Claude.
fn describe_target(c: &SessionCheck) -> String {
    let goes_to = c.target.model.as_deref().unwrap_or("an unknown model");
    if c.target.is_anthropic() {
        format!("for {goes_to} as its next request")
    } else {
        let own = if c
            .findings
            .iter()
            .any(|f| f.finding.path.starts_with("chat request "))
        {
            "checked as the Chat Completions request OpenCode sends it, under that provider's rules (`chat request ...`); "
        } else {
            ""
        };
        format!(
            "for its next request to {goes_to} ({own}not Anthropic: no Anthropic rule applies; the `if this session is switched` warnings say what breaks if it is switched to {})",
            c.model.as_deref().unwrap_or("Claude")
        )
    }
}

fn counts(c: &SessionCheck) -> (usize, usize) {
    crate::render::tally(c.findings.iter().map(|f| &f.finding))
}

/// A progress bar on standard error, drawn only when it is a terminal.
struct Progress {
    total: usize,
    done: usize,
    on: bool,
}

impl Progress {
    fn new(total: usize, what: &str) -> Progress {
        let on = std::io::stderr().is_terminal() && total > 1;
        let p = Progress { total, done: 0, on };
        if on {
            eprint!("\r\x1b[2K{what}…");
        }
        p
    }

    fn tick(&mut self, label: &str) {
        self.done += 1;
        if !self.on {
            return;
        }
        const WIDTH: usize = 30;
        let filled = WIDTH * self.done / self.total.max(1);
        let label: String = label.chars().take(40).collect();
        eprint!(
            "\r\x1b[2K[{}{}] {}/{} {label}",
            "#".repeat(filled),
            " ".repeat(WIDTH - filled),
            self.done,
            self.total
        );
        let _ = std::io::stderr().flush();
    }

    fn finish(&self) {
        if self.on {
            eprint!("\r\x1b[2K");
        }
    }
}

pub fn human_size(n: u64) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / f64::from(1 << 20)),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// `2025-11-26 09:57` from epoch milliseconds (UTC).
pub fn human_time(ms: i64) -> String {
    turnkeeper::stores::utc_minute(ms)
}

fn list(a: &ListArgs) -> Result<ExitCode, String> {
    let loc = locate(&a.storage)?;
    let listing = loc.listing_or_fail()?;
    let opts = options(a.model.as_ref());
    let mut progress = Progress::new(listing.sessions.len(), "checking sessions");
    let mut rows = Vec::new();
    for s in &listing.sessions {
        let health = match loc.load(&s.id) {
            Ok(session) => match doctor::check_stored(&session, &opts) {
                Ok(c) => {
                    let (e, w) = counts(&c);
                    json!({"errors": e, "warnings": w, "problems": session.problems.len()})
                }
                Err(e) => json!({"unreadable": e.to_string()}),
            },
            Err(e) => json!({"unreadable": e.to_string()}),
        };
        progress.tick(&s.title);
        rows.push((s, health));
    }
    progress.finish();
    if a.json {
        let sessions: Vec<_> = rows
            .iter()
            .map(|(s, h)| {
                json!({"id": s.id, "title": s.title, "updated": s.updated, "size": s.size,
                       "messages": s.messages, "health": h})
            })
            .collect();
        println!("{}", json!({ "sessions": sessions }));
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<32} {:<16} {:>9} {:>5}  {:<24} TITLE",
        "SESSION", "UPDATED (UTC)", "SIZE", "MSGS", "HEALTH"
    );
    for (s, h) in &rows {
        let bad = h["problems"].as_u64().unwrap_or(0);
        let health = crate::render::health_text(h, &[(bad, "bad file(s)")], &[]);
        println!(
            "{:<32} {:<16} {:>9} {:>5}  {:<24} {}",
            s.id,
            human_time(s.updated),
            human_size(s.size),
            s.messages,
            health,
            s.title
        );
    }
    for p in &listing.problems {
        eprintln!("turnkeeper: warning: skipped {p}");
    }
    Ok(ExitCode::SUCCESS)
}

fn problems_json(session: &Session) -> serde_json::Value {
    session
        .problems
        .iter()
        .map(|p| json!({"origin": p.origin.to_string(), "problem": p.to_string()}))
        .collect()
}

fn print_findings(session: &Session, c: &SessionCheck) {
    let model = describe_target(c);
    println!(
        "session {} ({}), checked {model}",
        session.info.id, session.info.title
    );
    for p in &session.problems {
        println!("  warning: skipped {p}");
    }
    for f in &c.findings {
        let sev = match f.finding.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            _ => "info",
        };
        let place = match (&f.message_id, &f.part_id) {
            (Some(m), Some(p)) => format!(" (message {m}, part {p})"),
            (Some(m), None) => format!(" (message {m})"),
            _ => String::new(),
        };
        println!(
            "  {sev}[{}] {}{place}: {}",
            f.finding.rule, f.finding.path, f.finding.message
        );
        if let Some(r) = &f.finding.repair {
            println!("      repair: {r}");
        }
    }
    let (e, w) = counts(c);
    if e == 0 && w == 0 {
        println!("  clean");
    } else {
        println!("  {e} error(s), {w} warning(s)");
    }
}

fn check(a: &CheckArgs) -> Result<ExitCode, String> {
    let loc = locate(&a.storage)?;
    let ids = loc.select(&a.sessions)?;
    let opts = options(a.model.as_ref());
    let mut any_error = false;
    let mut docs = Vec::new();
    let mut progress = Progress::new(if a.json { ids.len() } else { 0 }, "checking sessions");
    for id in &ids {
        let session = loc.load(id).map_err(|e| format!("session {id}: {e}"))?;
        let c = doctor::check_stored(&session, &opts).map_err(|e| format!("session {id}: {e}"))?;
        any_error |= doctor::has_errors(&c);
        progress.tick(id);
        if a.json {
            docs.push(
                json!({"session": id, "model": c.model, "target": c.target, "findings": c.findings,
                             "problems": problems_json(&session)}),
            );
        } else {
            print_findings(&session, &c);
        }
    }
    progress.finish();
    if a.json {
        if a.sessions.all {
            println!("{}", json!({ "sessions": docs }));
        } else if let Some(d) = docs.first() {
            println!("{d}");
        }
    }
    Ok(if any_error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_plan(plan: &DoctorPlan, dry_run: bool) {
    let verb = if dry_run { "would" } else { "will" };
    if plan.is_empty() {
        println!("session {}: nothing to repair", plan.session_id);
    } else {
        println!(
            "session {}: {} repair(s) {verb} be made",
            plan.session_id,
            plan.repairs.len()
        );
    }
    for r in &plan.repairs {
        println!(
            "  {:<13} [{}] message {} part {}: {}",
            r.action(),
            r.rule(),
            r.message_id,
            r.part_id,
            r.reason
        );
    }
    for n in &plan.left_alone {
        println!("  left alone: {n}");
    }
}

fn repair(a: &RepairArgs) -> Result<ExitCode, String> {
    let loc = locate(&a.storage)?;
    let ids = loc.select(&a.sessions)?;
    let opts = options(a.model.as_ref());
    let busy = loc.in_use();
    if let Some(why) = &busy
        && !a.force
        && !a.dry_run
    {
        return Err(format!(
            "{} looks in use: {why}. Quit OpenCode first (it would overwrite the repair), or pass --force",
            loc.path().display()
        ));
    }
    let mut left_errors = false;
    for id in &ids {
        let session = loc.load(id).map_err(|e| format!("session {id}: {e}"))?;
        for p in &session.problems {
            println!("  warning: skipped {p}");
        }
        let plan_opts = PlanOptions {
            last_message_live: busy.is_some(),
            target: Some(turnkeeper::opencode::session_target(
                &session,
                a.model.as_deref(),
            )),
        };
        let plan = doctor::plan(&session, &plan_opts);
        print_plan(&plan, a.dry_run);
        let after = if a.dry_run || plan.is_empty() {
            doctor::simulate(&session, &plan)
        } else {
            let applied =
                doctor::apply(loc.store_ref(), &plan).map_err(|e| format!("session {id}: {e}"))?;
            println!(
                "  backup: {} (undo with `turnkeeper opencode undo --session {id}`)",
                applied.backup.display()
            );
            // Read back from a store opened after the write (the open one reads the database
            // as it was when opened).
            loc.reopened()
                .and_then(|fresh| fresh.load(id))
                .map_err(|e| format!("session {id}: {e}"))?
        };
        let c = doctor::check_stored(&after, &opts).map_err(|e| format!("session {id}: {e}"))?;
        let (e, w) = counts(&c);
        let when = if a.dry_run { "after the repair" } else { "now" };
        if e == 0 {
            println!(
                "  {when}: no error for {}{}",
                c.target.model.as_deref().unwrap_or("the session's model"),
                if w > 0 {
                    format!(" ({w} warning(s))")
                } else {
                    String::new()
                }
            );
        } else {
            left_errors = true;
            println!("  {when}: {e} error(s) left that cannot be repaired safely in storage:");
            for f in c
                .findings
                .iter()
                .filter(|f| f.finding.severity == Severity::Error)
            {
                println!(
                    "    error[{}] {}: {}",
                    f.finding.rule, f.finding.path, f.finding.message
                );
            }
        }
    }
    Ok(if left_errors {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

fn undo(a: &UndoArgs) -> Result<ExitCode, String> {
    let loc = locate(&a.storage)?;
    let backups = store::list_backups(&loc.root(), &a.session).map_err(|e| e.to_string())?;
    println!(
        "backups of session {} (in {}/{BACKUP_DIR}/{}):",
        a.session,
        loc.root().display(),
        a.session
    );
    if backups.is_empty() {
        println!("  none");
    }
    for b in &backups {
        let state = match (&b.manifest, b.undone) {
            (None, _) => "incomplete (the run stopped before changing anything)".to_owned(),
            (Some(_), true) => "undone".to_owned(),
            (Some(m), false) => format!("{} part(s)", m.entries.len()),
        };
        println!("  {}  {state}", b.stamp);
    }
    if a.list {
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(why) = loc.in_use()
        && !a.force
    {
        return Err(format!(
            "{} looks in use: {why}. Quit OpenCode first, or pass --force",
            loc.path().display()
        ));
    }
    let done = doctor::undo(loc.store_ref(), &a.session, a.force).map_err(|e| e.to_string())?;
    println!(
        "restored {} part(s) and deleted {} added part(s) from {}",
        done.restored,
        done.deleted,
        done.backup.display()
    );
    Ok(ExitCode::SUCCESS)
}

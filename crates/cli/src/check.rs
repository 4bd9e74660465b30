//! `turnkeeper check` and `turnkeeper repair`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::json;
use turnkeeper::opencode::load_export;
use turnkeeper::{
    Finding, Format, MissingThinking, Mode, Options, Policy, PrefixEdit, ProfileOverrides, Report,
    Severity, TurnStore, read,
};

use crate::fail;
use crate::input::{
    FormatArg, Input, load_session, open_store, read_input_mapped, report_not_on_body, write_output,
};
use crate::render::{self, Lines, Style};

/// `--thinking`.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum ThinkingArg {
    /// Manual (extended) thinking: `{"type":"enabled","budget_tokens":N}`.
    Enabled,
    /// Adaptive thinking.
    Adaptive,
    /// Thinking off.
    Disabled,
}

/// `--on-missing-thinking` strategies.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum MissingArg {
    Restore,
    DisableThinking,
    Adaptive,
    CloseLoop,
    Fail,
}

/// `--on-prefix-edit`.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum PrefixArg {
    StripAfterEdit,
    DropBlock,
    Fail,
}

/// The target and policy options shared by `check` and `repair`.
#[derive(Args, Debug)]
pub struct TargetArgs {
    /// The transcript (`-` or nothing for standard input); a directory is OpenCode storage.
    file: Option<PathBuf>,
    /// The input format.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    format: FormatArg,
    /// The target model (default: the body's `model`, or the OpenCode session's).
    #[arg(long)]
    model: Option<String>,
    /// The thinking mode (default: the body's `thinking`, else the model's default).
    #[arg(long, value_enum)]
    thinking: Option<ThinkingArg>,
    /// An `anthropic-beta` value the request is sent with (repeatable).
    #[arg(long = "beta")]
    betas: Vec<String>,
    /// A turn store directory (see `turnkeeper store add`).
    #[arg(long)]
    store: Option<PathBuf>,
    /// Profile overrides (TOML or JSON; see the docs of `ProfileOverrides`).
    #[arg(long)]
    profile: Option<PathBuf>,
    /// With OpenCode storage: the session (default: the most recent).
    #[arg(long)]
    session: Option<String>,
    /// Strategies for AN-16, tried in order (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [MissingArg::Restore, MissingArg::DisableThinking])]
    on_missing_thinking: Vec<MissingArg>,
    /// What to do when a repair edits the prefix of prefix-bound thinking (AN-25).
    #[arg(long, value_enum, default_value_t = PrefixArg::StripAfterEdit)]
    on_prefix_edit: PrefixArg,
}

/// Arguments of `check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Print `{"findings": [...]}`.
    #[arg(long)]
    json: bool,
}

/// Arguments of `repair`.
#[derive(Args, Debug)]
pub struct RepairArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Write the repaired body here instead of standard output (`-`: standard output).
    #[arg(short = 'o', long, conflicts_with = "in_place")]
    output: Option<PathBuf>,
    /// Rewrite the input file atomically, keeping `FILE.bak`.
    #[arg(long)]
    in_place: bool,
    /// Write the JSON report here (`-`: standard output, when the body goes to `-o FILE` or
    /// `--in-place`).
    #[arg(long)]
    report: Option<PathBuf>,
}

/// Owned pieces `Options` borrows.
struct Loaded {
    store: Option<TurnStore>,
    overrides: Option<ProfileOverrides>,
    policy: Policy,
}

impl TargetArgs {
    fn load(&self) -> Result<Loaded, String> {
        let store = match &self.store {
            Some(dir) => Some(TurnStore::open(dir).map_err(|e| e.to_string())?),
            None => None,
        };
        let overrides = match &self.profile {
            Some(p) => Some(ProfileOverrides::from_file(p).map_err(|e| e.to_string())?),
            None => None,
        };
        let on_missing_thinking = self
            .on_missing_thinking
            .iter()
            .take_while(|m| **m != MissingArg::Fail)
            .map(|m| match m {
                MissingArg::Restore => MissingThinking::Restore,
                MissingArg::DisableThinking => MissingThinking::DisableThinking,
                MissingArg::Adaptive => MissingThinking::Adaptive,
                _ => MissingThinking::CloseLoop,
            })
            .collect();
        let on_prefix_edit = match self.on_prefix_edit {
            PrefixArg::StripAfterEdit => PrefixEdit::StripAfterEdit,
            PrefixArg::DropBlock => PrefixEdit::DropBlock,
            PrefixArg::Fail => PrefixEdit::Fail,
        };
        let policy = Policy {
            on_missing_thinking,
            on_prefix_edit,
            ..Policy::default()
        };
        Ok(Loaded {
            store,
            overrides,
            policy,
        })
    }

    fn options<'s>(&self, l: &'s Loaded) -> Options<'s> {
        Options {
            model: self.model.clone(),
            thinking: self.thinking.map(|t| match t {
                ThinkingArg::Enabled => Mode::Manual,
                ThinkingArg::Adaptive => Mode::Adaptive,
                ThinkingArg::Disabled => Mode::Off,
            }),
            betas: self.betas.clone(),
            policy: l.policy.clone(),
            store: l.store.as_ref(),
            overrides: l.overrides.as_ref(),
            input_pages: None,
        }
    }
}

fn findings_json(findings: &[Finding]) -> serde_json::Value {
    json!({ "findings": findings })
}

fn exit_for<'f>(findings: impl IntoIterator<Item = &'f Finding>) -> ExitCode {
    if findings.into_iter().any(|f| f.severity == Severity::Error) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

pub fn run_check(a: &CheckArgs) -> ExitCode {
    let t = &a.target;
    let loaded = match t.load() {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    let opts = t.options(&loaded);
    let input = match read_input_mapped(t.file.as_deref()) {
        Ok(i) => i,
        Err(e) => return fail(e),
    };
    let style = Style::detect(std::io::stdout().is_terminal());
    let (name, bytes) = match input {
        Input::Storage(dir) => {
            let session =
                match open_store(&dir).and_then(|s| load_session(&s, t.session.as_deref())) {
                    Ok(s) => s,
                    Err(e) => return fail(format!("{}: {e}", dir.display())),
                };
            return check_session(&dir.display().to_string(), &session, &opts, a.json, style);
        }
        Input::Text { name, bytes } => (name, bytes),
    };
    let code = check_text(a, &opts, &name, &bytes, style);
    // A mapped file truncated meanwhile was read torn: whatever was said above is void.
    match bytes.torn(&name) {
        Ok(()) => code,
        Err(e) => fail(e),
    }
}

/// `check` of a body read from a file or standard input.
fn check_text(
    a: &CheckArgs,
    opts: &Options<'_>,
    name: &str,
    bytes: &[u8],
    style: Style,
) -> ExitCode {
    let t = &a.target;
    let text = match crate::input::text(name, bytes) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let format = match format_of(text, t.format) {
        Ok(f) => f,
        Err(e) => return fail(format!("{name}: {e}")),
    };
    if !format.is_transcript() {
        return check_wire(name, text, format, opts, a.json, style);
    }
    // An export is checked as the session it holds: loaded (the loader reads it), not read as
    // a transcript first (a reading nothing used: an eighth of the time on a 10 MB export).
    if format == Format::Opencode {
        let session = match load_export(text, name) {
            Ok(s) => s,
            Err(e) => return fail(format!("{name}: {e}")),
        };
        return check_session(name, &session, opts, a.json, style);
    }
    let tr = match read(text, turnkeeper::FormatHint::Exactly(format)) {
        Ok(tr) => tr,
        Err(e) => return fail(format!("{name}: {e}")),
    };
    let findings = turnkeeper::check(&tr, opts);
    if a.json {
        crate::render::emit(&findings_json(&findings).to_string());
    } else {
        let lines = Lines::new(text);
        let mut out = String::new();
        for f in &findings {
            render::finding(&mut out, style, name, Some((&tr, &lines)), f, &[]);
        }
        out.push_str(&render::summary(&findings.iter().collect::<Vec<_>>()));
        crate::render::emit(&out);
    }
    exit_for(&findings)
}

/// The format of `text`: the one `--format` names, else the sniffed one (sniffed once: the body
/// is then read as exactly that format).
fn format_of(text: &str, arg: FormatArg) -> Result<Format, turnkeeper::ModelError> {
    match arg.hint() {
        turnkeeper::FormatHint::Exactly(f) => Ok(f),
        turnkeeper::FormatHint::Auto => turnkeeper::sniff(text).map(|s| s.format),
    }
}

fn check_wire(
    name: &str,
    text: &str,
    format: Format,
    opts: &Options<'_>,
    json: bool,
    style: Style,
) -> ExitCode {
    let findings = match turnkeeper::check_as(text, turnkeeper::FormatHint::Exactly(format), opts) {
        Ok(f) => f,
        Err(e) => return fail(format!("{name}: {e}")),
    };
    if json {
        crate::render::emit(&findings_json(&findings).to_string());
    } else {
        let mut out = String::new();
        for f in &findings {
            render::finding(&mut out, style, name, None, f, &[]);
        }
        out.push_str(&render::summary(&findings.iter().collect::<Vec<_>>()));
        crate::render::emit(&out);
    }
    exit_for(&findings)
}

fn check_session(
    name: &str,
    session: &turnkeeper::opencode::Session,
    opts: &Options<'_>,
    json: bool,
    style: Style,
) -> ExitCode {
    let checked = match turnkeeper::opencode::check_session(session, opts) {
        Ok(c) => c,
        Err(e) => return fail(format!("{name}: {e}")),
    };
    let findings: Vec<&Finding> = checked.findings.iter().map(|f| &f.finding).collect();
    if json {
        crate::render::emit(
            &json!({ "findings": checked.findings, "model": checked.model }).to_string(),
        );
    } else {
        // The request is read again only to point at findings.
        let tr = (!findings.is_empty())
            .then(|| {
                read(
                    &checked.request.body,
                    turnkeeper::FormatHint::Exactly(Format::Anthropic),
                )
                .ok()
            })
            .flatten();
        let lines = Lines::new(&checked.request.body);
        let how = if checked.target.is_anthropic() {
            "checked as the Anthropic request OpenCode would send".to_owned()
        } else {
            format!(
                "goes to {}, not Anthropic: no Anthropic rule applies; warnings say what breaks if it is switched to Claude",
                checked
                    .target
                    .model
                    .as_deref()
                    .unwrap_or("another provider")
            )
        };
        let mut out = format!("session {} ({how})\n\n", session.info.id);
        for f in &checked.findings {
            let mut extra = Vec::new();
            if let Some(m) = &f.message_id {
                extra.push(format!(
                    "opencode message {m}{}",
                    f.part_id
                        .as_ref()
                        .map(|p| format!(", part {p}"))
                        .unwrap_or_default()
                ));
            }
            render::finding(
                &mut out,
                style,
                "<converted request>",
                tr.as_ref().map(|t| (t, &lines)),
                &f.finding,
                &extra,
            );
        }
        out.push_str(&render::summary(&findings));
        crate::render::emit(&out);
    }
    exit_for(findings.iter().copied())
}

fn report_json(r: &Report) -> serde_json::Value {
    json!({ "changes": r.changes, "request_changes": r.request_changes, "findings_left": r.findings_left })
}

fn human_report(name: &str, r: &Report) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if r.changes.is_empty() {
        let _ = writeln!(out, "{name}: nothing to repair");
    } else {
        let _ = writeln!(out, "{name}: {} change(s)", r.changes.len());
        for c in &r.changes {
            let fp = c
                .fingerprint
                .as_ref()
                .map(|f| format!(" [thinking {f}]"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {:<6} {:<18} {}: {}{fp}",
                c.rule, c.action, c.path, c.reason
            );
        }
    }
    for rc in &r.request_changes {
        match rc {
            turnkeeper::RequestChange::SetParam { key, value, rule } => {
                let _ = writeln!(out, "  request: `{key}` is now {value} ({rule})");
            }
            turnkeeper::RequestChange::AddBeta { value, rule } => {
                let _ = writeln!(
                    out,
                    "  request: send the header `anthropic-beta: {value}` ({rule})"
                );
            }
            _ => {}
        }
    }
    let left: Vec<&Finding> = r.findings_left.iter().collect();
    if !left.is_empty() {
        let _ = writeln!(out, "left for the caller:");
        for f in &left {
            let _ = writeln!(
                out,
                "  {}[{}] {}: {}",
                match f.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                    _ => "info",
                },
                f.rule,
                f.path,
                f.message
            );
        }
    }
    out
}

/// Copies `path` to `path.bak`, before it is replaced.
fn backup(path: &Path) -> Result<(), String> {
    let mut bak = path.as_os_str().to_owned();
    bak.push(".bak");
    let bak = Path::new(&bak);
    std::fs::copy(path, bak)
        .map(|_| ())
        .map_err(|e| format!("{}: {e}", bak.display()))
}

pub fn run_repair(a: &RepairArgs) -> ExitCode {
    let t = &a.target;
    if a.in_place && t.file.as_ref().is_none_or(|f| f.as_os_str() == "-") {
        return fail("--in-place needs a FILE");
    }
    let body_to = if a.in_place {
        t.file.as_deref()
    } else {
        a.output.as_deref()
    };
    if let Err(e) = report_not_on_body(a.report.as_deref(), body_to) {
        return fail(e);
    }
    let loaded = match t.load() {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    let mut opts = t.options(&loaded);
    let (name, bytes) = match read_input_mapped(t.file.as_deref()) {
        Ok(Input::Text { name, bytes }) => (name, bytes),
        Ok(Input::Storage(dir)) => {
            return fail(format!(
                "{}: OpenCode storage is repaired in place by `turnkeeper opencode repair`",
                dir.display()
            ));
        }
        Err(e) => return fail(e),
    };
    // An error of a mapped file truncated meanwhile is that, not what the torn copy showed.
    let fail = |e: String| match bytes.torn(&name) {
        Ok(()) => fail(e),
        Err(torn) => fail(torn),
    };
    let text = match crate::input::text(&name, &bytes) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let format = match format_of(text, t.format) {
        Ok(f) => f,
        Err(e) => return fail(format!("{name}: {e}")),
    };
    if !format.is_transcript() {
        let fixed =
            match turnkeeper::repair_as(text, turnkeeper::FormatHint::Exactly(format), &opts) {
                Ok(r) => r,
                Err(e) => return fail(format!("{name}: {e}")),
            };
        if let Err(e) = bytes.torn(&name) {
            return fail(e);
        }
        return finish_repair(a, &name, &fixed.report, &fixed.body, None);
    }
    if format == Format::Opencode {
        return fail(format!(
            "{name}: an OpenCode export is checked with `turnkeeper check`; stored sessions are repaired with `turnkeeper opencode repair`"
        ));
    }
    let tr = match read(text, turnkeeper::FormatHint::Exactly(format)) {
        Ok(tr) => tr,
        Err(e) => return fail(format!("{name}: {e}")),
    };
    // A mapped input's pages go as the repair gets past them (`crate::mapped`).
    opts.input_pages = bytes.pages();
    // A body bound for a file is written to the file's temporary twin while the repair's last
    // pass still judges it (`repair_into_overlapping`), and renamed over the file once it is
    // known to be final: the write overlaps the judging instead of following it.
    let mut buf = String::new();
    let done = match body_file(a) {
        Some(file) => turnkeeper::repair_into_overlapping(&tr, &opts, &mut buf, |body| {
            turnkeeper::stage(file, body.as_bytes())
        }),
        None => turnkeeper::repair_into(&tr, &opts, &mut buf).map(|done| (done, None)),
    };
    let (done, early) = match done {
        Ok(d) => d,
        Err(e) => return fail(format!("{name}: {e}")),
    };
    // A body made from a torn copy is not written (its staged file goes when `early` drops).
    if let Err(e) = bytes.torn(&name) {
        return fail(e);
    }
    // A body a later pass changed is not the one staged (dropping it removes its file); a
    // stage that failed is written again the plain way, which reports the error.
    let staged = early
        .filter(|e| e.is_final)
        .and_then(|e| e.value.ok().flatten());
    finish_repair(a, &name, &done.report, done.body(text, &buf), staged)
}

/// The regular file (or new path) a repair's body goes to, when it is one: `--in-place`'s
/// file, or `-o FILE`; `None` for standard output.
fn body_file(a: &RepairArgs) -> Option<&Path> {
    if a.in_place {
        a.target.file.as_deref()
    } else {
        a.output.as_deref().filter(|p| !crate::input::is_stdout(p))
    }
}

/// Reports a repair and writes its `body` where `a` says; `staged`, when given, holds that body
/// already written beside its file ([`body_file`]) and is renamed over it instead of written
/// again (left uncommitted, it is removed).
fn finish_repair(
    a: &RepairArgs,
    name: &str,
    report: &Report,
    body: &str,
    staged: Option<turnkeeper::Staged>,
) -> ExitCode {
    let t = &a.target;
    eprint!("{}", human_report(name, report));
    if let Some(p) = &a.report {
        let text = report_json(report).to_string();
        if let Err(e) = write_output(p, text.as_bytes()) {
            return fail(e);
        }
    }
    let written = if a.in_place {
        match t.file.as_deref() {
            Some(_) if report.is_empty() => Ok(()),
            Some(f) => backup(f).and_then(|()| match staged {
                Some(s) => s.commit().map_err(|e| format!("{}: {e}", f.display())),
                None => crate::input::write_file(f, body.as_bytes()),
            }),
            None => Ok(()),
        }
    } else {
        let to = a.output.as_deref().unwrap_or(Path::new("-"));
        match staged {
            Some(s) => s.commit().map_err(|e| format!("{}: {e}", to.display())),
            None => write_output(to, body.as_bytes()),
        }
    };
    if let Err(e) = written {
        return fail(e);
    }
    if report.has_errors() {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

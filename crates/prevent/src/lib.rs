//! Find what a provider will reject in a transcript, and repair what can be repaired safely.
//!
//! [`check`] runs every rule in [`rules::RULES`] over a [`Transcript`] and returns
//! [`Finding`]s; [`repair`] runs the same rules with repairs on, and returns the new body and a
//! [`Report`] of every change. Rules are small named functions (ids from api-rules.md: AN-xx for
//! Anthropic, GM-xx for Gemini). The target (model [`profile`], thinking mode, betas) and the
//! [`Policy`] decide what applies.
//!
//! Thinking blocks are never edited: once the first pass has changed anything, `repair` takes a
//! [`Ledger`] of every thinking block of the (unchanged) input and checks the output against it;
//! any thinking block that changed, or vanished without a reported removal, fails the repair
//! closed with [`PreventError::Guard`].
//!
//! ```
//! use turnkeeper_model::{read, FormatHint};
//! use turnkeeper_prevent::{check, repair, Options, RuleId};
//!
//! let body = r#"{"model":"claude-sonnet-4-5","messages":[
//!   {"role":"user","content":"list files"},
//!   {"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}]},
//!   {"role":"user","content":[{"type":"text","text":"  "}]}]}"#;
//! let t = read(body, FormatHint::Auto)?;
//! let opts = Options::default();
//! let findings = check(&t, &opts);
//! assert!(findings.iter().any(|f| f.rule == RuleId::An08));
//! let fixed = repair(&t, &opts)?;
//! assert!(fixed.report.findings_left.is_empty());
//! assert!(fixed.body.contains(r#""tool_use_id":"toolu_1""#));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod claude_code;
pub mod ctx;
pub mod finding;
pub mod fix;
pub mod id;
pub mod opencode;
pub mod policy;
pub mod profile;
pub mod rules;

use std::borrow::Cow;

use turnkeeper_guard::{GuardViolation, Ledger, TurnStore};
use turnkeeper_model::{
    BlockKind, BodyKind, Draft, Format, FormatHint, ModelError, Transcript, read, read_reusing,
};

pub use ctx::{BINDING_BETA, Ctx};
pub use finding::{Change, Finding, Report, RequestChange, Severity};
pub use fix::{Fixer, Sink};
pub use id::{ChangeAction, RuleId, UnknownRuleId};
pub use policy::{MissingThinking, Policy, PrefixEdit, ToolIdForm};
pub use profile::{Mode, Profile, ProfileOverrides, profile_for};

/// Why `repair` could not produce a body.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PreventError {
    /// The input could not be read.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A rule altered or dropped a thinking block without reporting it: a bug in turnkeeper. The
    /// repair failed closed and nothing should be sent.
    #[error("guard violation (a turnkeeper bug; nothing was changed): {0}")]
    Guard(#[from] GuardViolation),
}

/// What to check against, and how to repair.
#[derive(Clone, Debug, Default)]
pub struct Options<'s> {
    /// The target model; overrides the body's `model`.
    pub model: Option<String>,
    /// The thinking mode; overrides the body's `thinking`.
    pub thinking: Option<Mode>,
    /// `anthropic-beta` values the request is sent with.
    pub betas: Vec<String>,
    /// The repair policy.
    pub policy: Policy,
    /// The turn store, for restoring altered turns.
    pub store: Option<&'s TurnStore>,
    /// Profile overrides.
    pub overrides: Option<&'s ProfileOverrides>,
}

/// The rule context for a transcript under `opts`.
pub fn context<'s>(t: &Transcript<'_>, opts: &'s Options<'s>) -> Ctx<'s> {
    let model = opts
        .model
        .clone()
        .or_else(|| t.model().map(|m| m.into_owned()));
    let profile = profile_for(model.as_deref(), opts.overrides);
    let requested = opts
        .thinking
        .or_else(|| match t.thinking_type().as_deref() {
            Some(k) => Mode::parse(k),
            None => None,
        });
    let body_betas = t.meta.betas.map(|b| b.get(t.src)).unwrap_or("");
    let mut betas = opts.betas.clone();
    if body_betas.contains(BINDING_BETA) {
        betas.push(BINDING_BETA.to_owned());
    }
    let drop_block = t.meta.thinking.drop_block && betas.iter().any(|b| b == BINDING_BETA);
    Ctx {
        horizon: compaction_horizon(t),
        mode: requested.unwrap_or(profile.default_mode),
        requested_mode: requested,
        profile,
        policy: &opts.policy,
        store: opts.store,
        betas,
        drop_block,
    }
}

/// The index of the last message holding a `compaction` block (Anthropic), else 0. Only messages
/// holding a bookkeeping block (`BlockKind::Meta`, which `compaction` is) are looked into.
fn compaction_horizon(t: &Transcript<'_>) -> usize {
    if t.format != Format::Anthropic {
        return 0;
    }
    (0..t.messages.len())
        .rev()
        .find(|&i| {
            t.messages[i].summary.kinds.contains(BlockKind::Meta)
                && t.blocks_of(i)
                    .iter()
                    .any(|b| b.type_name.is_some_and(|n| n.decode(t.src) == "compaction"))
        })
        .unwrap_or(0)
}

/// Runs the pipeline, finding only (`repair == false`) or also fixing.
fn pipeline<'t, 'a>(
    t: &'t Transcript<'a>,
    opts: &Options<'_>,
    repair: bool,
) -> (Draft<'t, 'a>, Sink, Mode) {
    let mut ctx = context(t, opts);
    let mut f = Fixer::new(Draft::new(t), repair);
    // A response is what the provider produced, not a request to validate. OpenCode storage is
    // repaired part by part (the doctor), not through the wire rules.
    if t.body != BodyKind::Response && t.format != Format::Opencode {
        for rule in rules::RULES
            .iter()
            .filter(|r| r.formats.contains(&t.format))
        {
            (rule.run)(&mut ctx, &mut f);
        }
    }
    let (d, s) = f.finish();
    (d, s, ctx.mode)
}

/// Everything the rules find in `t`, in pipeline order. An OpenCode export is checked as the
/// request OpenCode would send ([`opencode::check_export`]).
pub fn check(t: &Transcript<'_>, opts: &Options<'_>) -> Vec<Finding> {
    if t.format == Format::Opencode {
        return opencode::check_export(t, opts).unwrap_or_else(|e| {
            vec![Finding {
                rule: RuleId::Unchecked,
                severity: Severity::Error,
                path: String::new(),
                message_index: None,
                block_index: None,
                message: format!("this OpenCode export could not be checked: {e}"),
                repair: None,
            }]
        });
    }
    pipeline(t, opts, false).1.findings
}

/// A repaired body and its report.
#[derive(Debug)]
pub struct Repaired<'a> {
    /// The body: the input itself when nothing needed repair.
    pub body: Cow<'a, str>,
    /// What was done and what is left.
    pub report: Report,
}

/// Repairs `t` under `opts`: applies every repair the policy allows, verifies that no thinking
/// block was altered, and re-checks the result.
///
/// # Errors
/// [`PreventError::Guard`] when a thinking block changed or vanished unreported (a bug); the
/// output is then withheld.
pub fn repair<'a>(t: &Transcript<'a>, opts: &Options<'_>) -> Result<Repaired<'a>, PreventError> {
    let (d, s, _mode) = pipeline(t, opts, true);
    let first = d.output();
    let mut report = Report {
        changes: s.changes,
        request_changes: s.request,
        findings_left: Vec::new(),
    };
    let out = match first {
        Cow::Borrowed(_) => {
            // Nothing was changed, so every rule saw the input as `check` sees it: its findings
            // are what is left.
            report.findings_left = if t.format == Format::Opencode {
                // Stored sessions are repaired part by part (the doctor); what the wire rules
                // find in the request OpenCode would send is left for it.
                check(t, opts)
            } else {
                s.findings
            };
            return Ok(Repaired {
                body: first,
                report,
            });
        }
        Cow::Owned(out) => out,
    };
    // The input is unchanged, so its thinking blocks can be recorded now, once we know a check
    // of the output is needed.
    let mut ledger = Ledger::take(t);
    for raw in &s.restored {
        ledger.allow_restored(raw);
    }
    let mut removed = s.removed_guarded;
    // A repair can expose what an earlier rule would have fixed (a blank block left last, a
    // message left empty). Run the pipeline again on the result until nothing changes: a pass
    // that changes nothing found exactly what `check` finds, which is what is left. The last
    // reading of the output is also the one the ledger checks, so the output is read once per
    // pass and not again.
    //
    // The second pass reads the output reusing the input's reading of every message the first
    // pass left alone (compared byte for byte, not scanned again); later passes, rare, read it
    // all.
    let kept = d.kept();
    // For each message of the current body, the input message it is a byte-for-byte copy of
    // (`origin`) or comes from at all (`whole`): later passes report their changes in the
    // input's terms where they can (a block by `origin`, a whole message by `whole`).
    let mut origin: Vec<Option<u32>> = kept.clone();
    let mut whole: Vec<Option<u32>> = d.derived();
    let mut current = out;
    let mut pass = 2;
    loop {
        let again = next_pass_options(opts, &report);
        let next = {
            let out_t = if pass == 2 {
                read_reusing(&current, t, &kept)
            } else {
                read(&current, FormatHint::Exactly(t.format))
            }
            .map_err(|e| GuardViolation::Unreadable(e.to_string()))?;
            let outcome = if pass <= MAX_PASSES {
                let (d2, s2, _) = pipeline(&out_t, &again, true);
                let k2 = (d2.kept(), d2.derived());
                match d2.output() {
                    Cow::Borrowed(_) => Err(s2.findings),
                    Cow::Owned(next) => Ok((next, s2, k2)),
                }
            } else {
                // Still changing after the last pass: what is left is what `check` finds.
                Err(check(&out_t, &again))
            };
            match outcome {
                Ok(next) => next,
                Err(findings_left) => {
                    ledger.verify(&out_t, removed)?;
                    report.findings_left = findings_left;
                    break;
                }
            }
        };
        let (next, s2, (k2, w2)) = next;
        removed += s2.removed_guarded;
        for raw in &s2.restored {
            ledger.allow_restored(raw);
        }
        report.changes.extend(s2.changes.into_iter().map(|mut c| {
            c.path = match input_terms(&c.path, &origin, &whole) {
                Some(p) => format!("{p} (pass {pass})"),
                None => format!("pass {pass}: {}", c.path),
            };
            c
        }));
        origin = k2
            .iter()
            .map(|k| k.and_then(|i| origin.get(i as usize).copied().flatten()))
            .collect();
        whole = w2
            .iter()
            .map(|k| k.and_then(|i| whole.get(i as usize).copied().flatten()))
            .collect();
        report.request_changes.extend(s2.request);
        current = next;
        pass += 1;
    }
    Ok(Repaired {
        body: Cow::Owned(current),
        report,
    })
}

/// A path into a later pass's input (`messages[3].content[1]`) in the original input's terms:
/// a block's when its message is a byte-for-byte copy of an input message (`origin`), a whole
/// message's when it comes from one at all (`whole`); `None` otherwise (a new message, a block
/// of an edited one, or a path outside the messages).
fn input_terms(path: &str, origin: &[Option<u32>], whole: &[Option<u32>]) -> Option<String> {
    let (head, rest) = ["messages[", "contents["]
        .into_iter()
        .find_map(|h| path.strip_prefix(h).map(|r| (h, r)))?;
    let close = rest.find(']')?;
    let k: usize = rest[..close].parse().ok()?;
    let map = if rest[close + 1..].is_empty() {
        whole
    } else {
        origin
    };
    let j = map.get(k).copied().flatten()?;
    Some(format!("{head}{j}{}", &rest[close..]))
}

/// How many times `repair` runs the pipeline at most (the first pass and the passes that mop up
/// what it exposed).
const MAX_PASSES: usize = 4;

/// The options for checking a repaired body: its own `thinking` parameter when a repair set it,
/// and the `anthropic-beta` values the caller now sends.
fn next_pass_options<'s>(opts: &Options<'s>, report: &Report) -> Options<'s> {
    let mut again = opts.clone();
    if report
        .request_changes
        .iter()
        .any(|r| matches!(r, RequestChange::SetParam { key, .. } if key == "thinking"))
    {
        again.thinking = None;
    }
    for r in &report.request_changes {
        if let RequestChange::AddBeta { value, .. } = r
            && !again.betas.contains(value)
        {
            again.betas.push(value.clone());
        }
    }
    again
}

/// Reads `src` (any format, or the one given) and checks it.
///
/// # Errors
/// When the input cannot be read.
pub fn check_str(
    src: &str,
    format: Option<Format>,
    opts: &Options<'_>,
) -> Result<Vec<Finding>, ModelError> {
    let hint = format.map_or(FormatHint::Auto, FormatHint::Exactly);
    let t = read(src, hint)?;
    Ok(check(&t, opts))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A later pass's path in the input's terms, under the maps `origin` (byte-for-byte copies)
    /// and `whole` (messages derived from an input message).
    fn check_path(path: &str, expect: Option<&str>) {
        let origin = [Some(0), None, Some(5)];
        let whole = [Some(0), Some(3), Some(6)];
        assert_eq!(
            input_terms(path, &origin, &whole).as_deref(),
            expect,
            "{path}"
        );
    }

    #[test]
    fn later_paths_are_given_in_the_inputs_terms() {
        check_path("messages[2].content[1]", Some("messages[5].content[1]"));
        check_path("messages[2]", Some("messages[6]"));
        check_path("messages[1]", Some("messages[3]"));
        check_path("messages[1].content[0]", None);
        check_path("contents[2].parts[0]", Some("contents[5].parts[0]"));
        check_path("messages[3]", None);
        check_path("messages[x]", None);
        check_path("messages[2", None);
        check_path("request thinking", None);
        check_path("system[0]", None);
    }

    #[test]
    fn nothing_before_the_latest_compaction_is_read() {
        let body = r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":[{"type":"text","text":" "}]},{"role":"assistant","content":[{"type":"compaction","content":"summary"}]},{"role":"user","content":"q"}]}"#;
        let t = read(body, FormatHint::Auto).expect("reads");
        assert_eq!(compaction_horizon(&t), 1);
        assert_eq!(super::check(&t, &Options::default()).len(), 0);
        let found = check_str(
            &body.replace("compaction", "mystery"),
            None,
            &Options::default(),
        )
        .expect("reads");
        let rules: Vec<&str> = found.iter().map(|f| f.rule.as_str()).collect();
        assert_eq!(rules, ["AN-05"]);
        assert!(check_str("{", None, &Options::default()).is_err());
        let gemini = r#"{"contents":[{"role":"user","parts":[{"text":"q"}]}]}"#;
        let g = read(gemini, FormatHint::Auto).expect("reads");
        assert_eq!(compaction_horizon(&g), 0);
    }

    #[test]
    fn a_later_pass_reads_the_thinking_and_betas_the_first_set() {
        let opts = Options {
            thinking: Some(Mode::Manual),
            betas: vec!["a".to_owned()],
            ..Options::default()
        };
        let report = Report {
            changes: Vec::new(),
            request_changes: vec![
                RequestChange::SetParam {
                    key: "thinking".to_owned(),
                    value: r#"{"type":"disabled"}"#.to_owned(),
                    rule: RuleId::An16,
                },
                RequestChange::AddBeta {
                    value: "a".to_owned(),
                    rule: RuleId::An25,
                },
                RequestChange::AddBeta {
                    value: "b".to_owned(),
                    rule: RuleId::An25,
                },
            ],
            findings_left: Vec::new(),
        };
        let again = next_pass_options(&opts, &report);
        assert_eq!(
            (again.thinking, again.betas),
            (None, vec!["a".to_owned(), "b".to_owned()])
        );
        let other = Report {
            request_changes: vec![RequestChange::SetParam {
                key: "temperature".to_owned(),
                value: "1".to_owned(),
                rule: RuleId::Cfg01,
            }],
            ..Report::default()
        };
        assert_eq!(
            next_pass_options(&opts, &other).thinking,
            Some(Mode::Manual)
        );
    }
}

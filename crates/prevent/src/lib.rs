//! Find what a provider will reject in a transcript, and repair what can be repaired safely.
//!
//! [`check`] runs every rule of the catalogue (in its fixed order) over a [`Transcript`] and returns
//! [`Finding`]s; [`repair`] runs the same rules with repairs on, and returns the new body and a
//! [`Report`] of every change; [`repair_into`] writes the body into a buffer the caller reuses. Rules are small named functions (ids from api-rules.md: AN-xx for
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
pub mod codex;
mod ctx;
mod finding;
mod fix;
mod id;
pub mod openclaw;
pub mod opencode;
mod policy;
pub mod profile;
pub(crate) mod rules;
pub mod wire;

use std::borrow::Cow;

use turnkeeper_guard::{GuardViolation, Ledger, TurnStore};
use turnkeeper_model::{
    BlockKind, BodyKind, Draft, Format, FormatHint, ModelError, Transcript, read,
    read_reusing_copies,
};

pub use ctx::{BINDING_BETA, Ctx};
pub use finding::{Change, Finding, Report, RequestChange, Severity};
pub use fix::{Fixer, Neighbour, Sink};
pub use id::{ChangeAction, RuleId, UnknownRuleId};
pub use policy::{MissingThinking, Policy, PrefixEdit, ToolIdForm};
pub use profile::{Mode, Profile, ProfileOverrides, profile_for};
pub use turnkeeper_model::ReadBehind;

/// The rule catalogue: every rule with its ids, formats (and for the OpenAI-style families its
/// providers and kind of fix), in running order. The rules themselves are private to the crate.
pub use rules::{Fix, RULES, Rule, WIRE_RULES, WireRule, rule_for, wire_rule_for};

// `turnkeeper-recover` applies a recovery that drops a thinking block the provider named (its
// `RECOVER_RULE`) through the same helper the rules use, so that the removal is recorded the
// same way (fingerprint, location). Not an API: the rule modules are private.
#[doc(hidden)]
pub use rules::common::remove_thinking;

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
    /// Told how far a repair's sweeps over the input have gone (see [`ReadBehind`]), for a
    /// caller that holds the input in pages it can let go of (the command's memory map of a
    /// file). Only the input's sweeps are told, never those over a body the repair wrote.
    pub input_pages: Option<&'s dyn ReadBehind>,
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
        target: wire::Target::new(model.as_deref(), None),
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

/// Where [`repair_into`] left the repaired body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyAt {
    /// The body needed no change: the input is the body, byte for byte, and the buffer was left
    /// empty (no copy was made).
    Input,
    /// The buffer holds the new body.
    Buffer,
}

/// What [`repair_into`] did: where the body is, and the report.
#[derive(Debug)]
pub struct RepairedInto {
    /// Where the body is: the input, or the caller's buffer.
    pub body: BodyAt,
    /// What was done and what is left.
    pub report: Report,
}

impl RepairedInto {
    /// The repaired body: `input` (the text the transcript was read from) when nothing changed,
    /// else `buf` (the buffer given to [`repair_into`]).
    pub fn body<'s>(&self, input: &'s str, buf: &'s str) -> &'s str {
        match self.body {
            BodyAt::Input => input,
            BodyAt::Buffer => buf,
        }
    }
}

/// Repairs `t` under `opts`: applies every repair the policy allows, verifies that no thinking
/// block was altered, and re-checks the result. The body is the input itself when nothing
/// needed repair (borrowed, no copy), else a new string. [`repair_into`] does the same into a
/// buffer the caller reuses.
///
/// # Errors
/// [`PreventError::Guard`] when a thinking block changed or vanished unreported (a bug); the
/// output is then withheld.
pub fn repair<'a>(t: &Transcript<'a>, opts: &Options<'_>) -> Result<Repaired<'a>, PreventError> {
    let mut out = String::new();
    let done = repair_into(t, opts, &mut out)?;
    Ok(Repaired {
        body: match done.body {
            BodyAt::Input => Cow::Borrowed(t.src),
            BodyAt::Buffer => Cow::Owned(out),
        },
        report: done.report,
    })
}

/// [`repair`], writing the repaired body into `out`, a buffer the caller keeps and reuses from
/// one request to the next: what `out` held is replaced, and its allocation is reused, so a
/// long-running agent does not allocate (and the kernel does not zero) a body-sized buffer for
/// every request.
///
/// The body is written in one forward pass: every byte range the repair left alone is copied
/// from the input straight into `out`, and only what changed (a rebuilt content array, an added
/// message, a top-level key) is written anew between them. When nothing needed repair the
/// input is the body and `out` is left empty ([`BodyAt::Input`]; no copy is made). The body and
/// the report are exactly those of [`repair`].
///
/// ```
/// use turnkeeper_model::{read, FormatHint};
/// use turnkeeper_prevent::{repair_into, BodyAt, Options};
///
/// let mut buf = String::new(); // kept across requests
/// let body = r#"{"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"text","text":""}]}]}"#;
/// let t = read(body, FormatHint::Auto)?;
/// let done = repair_into(&t, &Options::default(), &mut buf)?;
/// assert_eq!(done.body, BodyAt::Buffer);
/// assert_eq!(buf, r#"{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#);
/// let send = done.body(body, &buf); // what to send
/// assert_eq!(send, buf);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`repair`]; `out` is then left empty, so a failed repair cannot be sent by mistake.
pub fn repair_into(
    t: &Transcript<'_>,
    opts: &Options<'_>,
    out: &mut String,
) -> Result<RepairedInto, PreventError> {
    repair_passes(t, opts, out, None::<fn(&str)>).map(|(done, _)| done)
}

/// What [`repair_into_overlapping`]'s `early` returned, and whether the body it was given is
/// the final one.
#[derive(Debug)]
pub struct Early<R> {
    /// What `early` returned.
    pub value: R,
    /// Whether the body `early` was given is the repaired body: the buffer holds those very
    /// bytes. When it is not, a later pass changed the body again (rare: a repair that exposed
    /// more to repair), and what `early` did with its body is to be undone.
    pub is_final: bool,
}

/// [`repair_into`], handing the first pass's body to `early` on a thread of its own while the
/// second pass reads and judges that body: a caller that writes the body out (to a temporary
/// file it renames only once the repair is known to be done) overlaps the writing with the
/// judging instead of following it. The body, the report and the errors are those of
/// [`repair_into`].
///
/// `early` is called at most once: not when the input needed no change ([`BodyAt::Input`]).
/// Its result comes back with whether its body is the final one ([`Early::is_final`]); when the
/// repair fails, it is dropped.
///
/// # Errors
/// As [`repair_into`].
///
/// # Panics
/// When `early` panics (the panic is carried on to the caller's thread).
pub fn repair_into_overlapping<R, E>(
    t: &Transcript<'_>,
    opts: &Options<'_>,
    out: &mut String,
    early: E,
) -> Result<(RepairedInto, Option<Early<R>>), PreventError>
where
    R: Send,
    E: FnOnce(&str) -> R + Send,
{
    repair_passes(t, opts, out, Some(early))
}

/// [`Draft::kept`], [`Draft::derived`] and [`Draft::block_origins`] of a pass.
type MessageOrigins = (
    Vec<Option<u32>>,
    Vec<Option<u32>>,
    Vec<Option<Vec<Option<u32>>>>,
);

/// How a later pass of [`passes`] ended: it changed the body again (its summary and
/// origin maps), or it found what is left.
enum PassEnd {
    /// The pass wrote a new body into the spare buffer: what it did, and for each message of
    /// that body the message of this pass's body it copies, comes from, and its blocks' origins
    /// ([`Draft::kept`], [`Draft::derived`], [`Draft::block_origins`]).
    Changed(Sink, MessageOrigins),
    /// Nothing more to change: the findings left.
    Done(Vec<Finding>),
}

/// [`passes`], with `out` left empty when the repair fails, so that a failed repair cannot be
/// sent by mistake.
fn repair_passes<R, E>(
    t: &Transcript<'_>,
    opts: &Options<'_>,
    out: &mut String,
    early: Option<E>,
) -> Result<(RepairedInto, Option<Early<R>>), PreventError>
where
    R: Send,
    E: FnOnce(&str) -> R + Send,
{
    let res = passes(t, opts, out, early);
    if res.is_err() {
        out.clear();
    }
    res
}

/// The passes of [`repair_into`]: the first on `t`, then, while a pass changes something, the
/// next on the body the last one wrote into `out`. `early`, when given, gets the first pass's
/// body on a thread of its own while the second pass runs ([`repair_into_overlapping`]).
fn passes<R, E>(
    t: &Transcript<'_>,
    opts: &Options<'_>,
    out: &mut String,
    mut early: Option<E>,
) -> Result<(RepairedInto, Option<Early<R>>), PreventError>
where
    R: Send,
    E: FnOnce(&str) -> R + Send,
{
    let (d, s, _mode) = pipeline(t, opts, true);
    let mut report = Report {
        changes: s.changes,
        request_changes: s.request,
        findings_left: Vec::new(),
    };
    if !d.output_into_behind(out, opts.input_pages) {
        // Nothing was changed, so every rule saw the input as `check` sees it: its findings
        // are what is left.
        report.findings_left = if t.format == Format::Opencode {
            // Stored sessions are repaired part by part (the doctor); what the wire rules
            // find in the request OpenCode would send is left for it.
            check(t, opts)
        } else {
            s.findings
        };
        return Ok((
            RepairedInto {
                body: BodyAt::Input,
                report,
            },
            None,
        ));
    }
    // The guard: every thinking block of the input (which is unchanged) must come out byte for
    // byte or be reported removed. What it checks is recorded once the last pass is known (the
    // input is still there), with the texts the rules restored.
    let mut restored = s.restored;
    let mut removed = s.removed_guarded;
    // A repair can expose what an earlier rule would have fixed (a blank block left last, a
    // message left empty). Run the pipeline again on the result until nothing changes: a pass
    // that changes nothing found exactly what `check` finds, which is what is left. The last
    // reading of the output is also the one the guard checks, so the output is read once per
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
    // And for a message whose block list a pass changed, each block's index in the input
    // message `whole` names (a block of an edited message is still the input's block).
    let mut blocks: Vec<Option<Vec<Option<u32>>>> = d.block_origins();
    drop(d);
    // A third pass (rare) writes its body here while it reads `out`, then the two swap.
    let mut spare = String::new();
    let mut pass = 2;
    let mut early_value: Option<Early<R>> = None;
    loop {
        let again = next_pass_options(opts, &report);
        let body: &str = out;
        // This pass: the body read (the second pass reusing the input's reading of the messages
        // the first left alone, later ones reading it all), the pipeline run on it, and what it
        // wrote into `spare` or, when it changed nothing, the guard's verdict and what is left.
        let run = |spare: &mut String| -> Result<PassEnd, PreventError> {
            let (out_t, copies) = if pass == 2 {
                read_reusing_copies(body, t, &kept, opts.input_pages).map(|(o, c)| (o, Some(c)))
            } else {
                read(body, FormatHint::Exactly(t.format)).map(|o| (o, None))
            }
            .map_err(|e| GuardViolation::Unreadable(e.to_string()))?;
            let findings_left = if pass <= MAX_PASSES {
                let (d2, s2, _) = pipeline(&out_t, &again, true);
                let k2 = (d2.kept(), d2.derived(), d2.block_origins());
                if d2.output_into(spare) {
                    return Ok(PassEnd::Changed(s2, k2));
                }
                s2.findings
            } else {
                // Still changing after the last pass: what is left is what `check` finds.
                check(&out_t, &again)
            };
            guard(t, &out_t, copies.as_deref(), &restored, removed)?;
            Ok(PassEnd::Done(findings_left))
        };
        let end = match early.take() {
            // The first pass's body goes to `early` while this pass judges it.
            Some(early) => std::thread::scope(|scope| {
                let handed = scope.spawn(move || early(body));
                let end = run(&mut spare);
                let value = handed
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                early_value = Some(Early {
                    value,
                    is_final: matches!(end, Ok(PassEnd::Done(_))),
                });
                end
            }),
            None => run(&mut spare),
        }?;
        let next = match end {
            PassEnd::Changed(s2, k2) => (s2, k2),
            PassEnd::Done(findings_left) => {
                report.findings_left = findings_left;
                break;
            }
        };
        let (s2, (k2, w2, b2)) = next;
        removed += s2.removed_guarded;
        restored.extend(s2.restored);
        report.changes.extend(s2.changes.into_iter().map(|mut c| {
            c.path = match input_terms(&c.path, &origin, &whole, &blocks) {
                Some(p) => format!("{p} (pass {pass})"),
                None => format!("pass {pass}: {}", c.path),
            };
            c
        }));
        // A block of this pass's output, in the input's terms: through the block maps of the
        // message it comes from (a byte copy of an input message maps each block to itself).
        let old_block = |m: usize, j: u32| -> Option<u32> {
            if origin.get(m).copied().flatten().is_some() {
                return Some(j);
            }
            blocks.get(m)?.as_ref()?.get(j as usize).copied().flatten()
        };
        let new_blocks: Vec<Option<Vec<Option<u32>>>> = w2
            .iter()
            .zip(&b2)
            .zip(&k2)
            .map(|((w, b), k)| {
                let m = w.map(|m| m as usize)?;
                match (k, b) {
                    // Copied whole by this pass: the map it had.
                    (Some(_), _) => blocks.get(m).cloned().flatten(),
                    (None, Some(b)) => {
                        Some(b.iter().map(|j| j.and_then(|j| old_block(m, j))).collect())
                    }
                    (None, None) => None,
                }
            })
            .collect();
        blocks = new_blocks;
        origin = k2
            .iter()
            .map(|k| k.and_then(|i| origin.get(i as usize).copied().flatten()))
            .collect();
        whole = w2
            .iter()
            .map(|k| k.and_then(|i| whole.get(i as usize).copied().flatten()))
            .collect();
        report.request_changes.extend(s2.request);
        std::mem::swap(out, &mut spare);
        pass += 1;
    }
    Ok((
        RepairedInto {
            body: BodyAt::Buffer,
            report,
        },
        early_value,
    ))
}

/// Checks the final body `out_t` against the thinking blocks of the input `t`: none altered or
/// invented (beyond the `restored` texts), none gone beyond the `removed` the rules reported.
///
/// `copies` (from [`read_reusing_copies`]) names the messages of the body that were compared
/// byte for byte with an input message as the body was read, each input message at most once:
/// their thinking blocks are the input's own, on both sides of the count, so the ledger leaves
/// them out and holds only the messages that changed. The verdict is the one a ledger of every
/// block gives (a multiset minus the same copies on both sides).
fn guard(
    t: &Transcript<'_>,
    out_t: &Transcript<'_>,
    copies: Option<&[Option<u32>]>,
    restored: &[String],
    removed: usize,
) -> Result<(), GuardViolation> {
    let copies =
        copies.filter(|c| c.len() == out_t.messages.len() && c.iter().any(Option::is_some));
    let mut ledger = match copies {
        Some(copies) => {
            let mut copied = vec![false; t.messages.len()];
            for k in copies.iter().flatten() {
                if let Some(c) = copied.get_mut(*k as usize) {
                    *c = true;
                }
            }
            Ledger::take_messages(t, (0..t.messages.len()).filter(|&k| !copied[k]))
        }
        None => Ledger::take(t),
    };
    for raw in restored {
        ledger.allow_restored(raw);
    }
    match copies {
        Some(copies) => ledger.verify_messages(
            out_t,
            (0..out_t.messages.len()).filter(|&i| copies[i].is_none()),
            removed,
        ),
        None => ledger.verify(out_t, removed),
    }
}

/// A path into a later pass's input (`messages[3].content[1]`) in the original input's terms:
/// a block's when its message is a byte-for-byte copy of an input message (`origin`) or an
/// edited one whose block came from that message (`blocks`, beside `whole`), a whole message's
/// when it comes from one at all (`whole`); `None` otherwise (a new message, a block made by a
/// repair, or a path outside the messages).
fn input_terms(
    path: &str,
    origin: &[Option<u32>],
    whole: &[Option<u32>],
    blocks: &[Option<Vec<Option<u32>>>],
) -> Option<String> {
    let (head, rest) = ["messages[", "contents["]
        .into_iter()
        .find_map(|h| path.strip_prefix(h).map(|r| (h, r)))?;
    let close = rest.find(']')?;
    let k: usize = rest[..close].parse().ok()?;
    let tail = &rest[close + 1..];
    if tail.is_empty() {
        let i = whole.get(k).copied().flatten()?;
        return Some(format!("{head}{i}]"));
    }
    if let Some(i) = origin.get(k).copied().flatten() {
        return Some(format!("{head}{i}]{tail}"));
    }
    // A block of an edited message: `.content[j]...` (`.parts[j]...` in Gemini).
    let (field, after) = [".content[", ".parts["]
        .into_iter()
        .find_map(|f| tail.strip_prefix(f).map(|r| (f, r)))?;
    let close = after.find(']')?;
    let j: usize = after[..close].parse().ok()?;
    let i = whole.get(k).copied().flatten()?;
    let jj = blocks.get(k)?.as_ref()?.get(j).copied().flatten()?;
    Some(format!("{head}{i}]{field}{jj}{}", &after[close..]))
}

/// How many times `repair` runs the pipeline at most (the first pass and the passes that mop up
/// what it exposed).
const MAX_PASSES: usize = 4;

/// The options for checking a repaired body: its own `thinking` parameter when a repair set it,
/// and the `anthropic-beta` values the caller now sends.
fn next_pass_options<'s>(opts: &Options<'s>, report: &Report) -> Options<'s> {
    let mut again = opts.clone();
    // A later pass reads a body the repair wrote, not the input.
    again.input_pages = None;
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
        let origin = [Some(0), None, Some(5), None];
        let whole = [Some(0), Some(3), Some(6), None];
        let blocks = [None, Some(vec![None, Some(2)]), None, None];
        assert_eq!(
            input_terms(path, &origin, &whole, &blocks).as_deref(),
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
        check_path("messages[1].content[1]", Some("messages[3].content[2]"));
        check_path(
            "messages[1].content[1].content[0]",
            Some("messages[3].content[2].content[0]"),
        );
        check_path("messages[1].content[2]", None);
        check_path("messages[1].tool_calls[0]", None);
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

    /// Three messages, thinking in the second and fourth; a repair that rebuilt the first.
    const INPUT: &str = r#"{"messages":[{"role":"user","content":[{"type":"text","text":" "},{"type":"text","text":"q"}]},{"role":"assistant","content":[{"type":"thinking","thinking":"a","signature":"EqQBabcdefgh"},{"type":"text","text":"x"}]},{"role":"user","content":"r"},{"role":"assistant","content":[{"type":"thinking","thinking":"b","signature":"EqQBijklmnop"},{"type":"text","text":"y"}]}]}"#;

    /// The guard over `out`, read back as a repair reads it: claiming every message but the
    /// first is a copy of the input's.
    fn guard_of(out: &str, removed: usize) -> Result<Vec<Option<u32>>, GuardViolation> {
        let t = read(INPUT, FormatHint::Auto).expect("reads");
        let keep = [None, Some(1), Some(2), Some(3)];
        let (out_t, copies) = read_reusing_copies(out, &t, &keep, None).expect("reads");
        guard(&t, &out_t, Some(&copies), &[], removed)?;
        Ok(copies)
    }

    #[test]
    fn the_guard_leaves_out_compared_copies_and_passes_a_faithful_output() {
        let out = INPUT.replace(r#"{"type":"text","text":" "},"#, "");
        let copies = guard_of(&out, 0).expect("a faithful output passes");
        assert_eq!(copies, vec![None, Some(1), Some(2), Some(3)]);
    }

    #[test]
    fn the_guard_sees_an_altered_thinking_block_in_a_message_said_to_be_kept() {
        // The draft says message 1 is kept, but its thinking changed: the byte comparison fails,
        // the message is scanned, and the ledger counts it.
        let out = INPUT
            .replace(r#"{"type":"text","text":" "},"#, "")
            .replace(r#""thinking":"a""#, r#""thinking":"A""#);
        assert!(matches!(
            guard_of(&out, 0),
            Err(GuardViolation::Altered { .. })
        ));
    }

    #[test]
    fn the_guard_sees_a_copy_twice_and_a_vanished_block() {
        let t = read(INPUT, FormatHint::Auto).expect("reads");
        // Message 1 written twice (once in place of message 3), both claimed as its copy: only
        // one is taken as a copy, and the other one's thinking counts as invented.
        let m1 = &INPUT[t.messages[1].span.start as usize..t.messages[1].span.end as usize];
        let m3 = &INPUT[t.messages[3].span.start as usize..t.messages[3].span.end as usize];
        let twice = INPUT.replace(m3, m1);
        let (out_t, copies) =
            read_reusing_copies(&twice, &t, &[Some(0), Some(1), Some(2), Some(1)], None)
                .expect("reads");
        assert_eq!(copies, vec![Some(0), Some(1), Some(2), None]);
        assert!(matches!(
            guard(&t, &out_t, Some(&copies), &[], 1),
            Err(GuardViolation::Altered { .. })
        ));
        // Message 3 without its thinking block: unreported, it fails; reported, it passes.
        let dropped = INPUT.replace(
            r#"{"type":"thinking","thinking":"b","signature":"EqQBijklmnop"},"#,
            "",
        );
        let keep = [Some(0), Some(1), Some(2), None];
        let (out_t, copies) = read_reusing_copies(&dropped, &t, &keep, None).expect("reads");
        assert!(matches!(
            guard(&t, &out_t, Some(&copies), &[], 0),
            Err(GuardViolation::Unreported { missing: 1, .. })
        ));
        assert_eq!(guard(&t, &out_t, Some(&copies), &[], 1), Ok(()));
    }

    /// Thinking removed in a later pass counts toward what the guard allows, on top of what the
    /// first pass removed: AN-23 removes an empty-signature block in pass 1; AN-10 removes the
    /// orphan result that was the only user message, leaving the prefill first and alone, so
    /// only in pass 2, once AN-01 has put a user message in front, does AN-03 remove the prefill
    /// with its other thinking block. Kills `removed += s2.removed_guarded` turned into `-=` in
    /// `passes`, under which the guard refused the repair.
    #[test]
    fn thinking_removed_in_a_later_pass_counts_for_the_guard() {
        use crate::rules::common::testing::{Expect, MANUAL, body, changes, check_case, thinking};
        let input = body(
            "claude-sonnet-4-5",
            MANUAL,
            &format!(
                r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}}]}},{{"role":"assistant","content":[{{"type":"thinking","thinking":"x","signature":""}},{},{{"type":"text","text":"a"}}]}}"#,
                thinking("t")
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-23", "AN-10", "AN-03"],
                after: Some(&body(
                    "claude-sonnet-4-5",
                    MANUAL,
                    r#"{"role":"user","content":[{"type":"text","text":"Continue."}]}"#,
                )),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &Options::default()),
            [
                "AN-23 removed_block messages[1].content[0]",
                "AN-10 removed_block messages[0].content[0]",
                "AN-10 removed_message messages[0]",
                "AN-01 inserted_message pass 2: output messages[0] (new message)",
                "AN-03 removed_message messages[1] (pass 2)",
            ]
        );
    }

    /// A change made in the third pass is reported as the third pass's: AN-05 passes over the
    /// blank text in front of the prefill's thinking (a lead-in then), removes the blank after
    /// it and the thinking that leaves last; AN-10 removes the orphan result and its message,
    /// so the prefill is the only message and its blank block the only block, which no rule
    /// may remove. In pass 2 AN-01 puts a user message first; only in pass 3 can AN-05 remove
    /// the blank (an empty final assistant message is allowed). Kills `pass += 1` turned into
    /// `*=` in `passes`, under which the pass counter stayed at 2 and the last change
    /// was said to be pass 2's.
    #[test]
    fn a_change_in_the_third_pass_is_reported_as_the_third_passs() {
        use crate::rules::common::testing::{Expect, body, changes, check_case, thinking};
        let input = body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}}]}},{{"role":"assistant","content":[{{"type":"text","text":" "}},{},{{"type":"text","text":" "}}]}}"#,
                thinking("t")
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-05", "AN-10", "AN-20"],
                after: Some(&body(
                    "claude-sonnet-4-5",
                    "",
                    r#"{"role":"user","content":[{"type":"text","text":"Continue."}]},{"role":"assistant","content":[]}"#,
                )),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &Options::default()),
            [
                "AN-05 removed_block messages[1].content[2]",
                "AN-05 removed_block messages[1].content[1]",
                "AN-10 removed_block messages[0].content[0]",
                "AN-10 removed_message messages[0]",
                "AN-01 inserted_message pass 2: output messages[0] (new message)",
                "AN-05 removed_block messages[1].content[0] (pass 3)",
            ]
        );
    }

    /// `repair_into_overlapping` gives the body and report of `repair_into`, and hands `early`
    /// the first pass's body: `expect` is `None` when `early` must not be called (nothing to
    /// change), else whether that body is the final one.
    fn check_overlapping(input: &str, expect: Option<bool>) {
        let t = read(input, FormatHint::Auto).expect("the case reads");
        let opts = Options::default();
        let mut plain = String::new();
        let want = repair_into(&t, &opts, &mut plain).expect("repair_into");
        let mut buf = String::new();
        let (got, early) = repair_into_overlapping(&t, &opts, &mut buf, str::to_owned)
            .expect("repair_into_overlapping");
        assert_eq!(got.body, want.body, "{input}");
        assert_eq!(buf, plain, "{input}");
        assert_eq!(got.report, want.report, "{input}");
        assert_eq!(early.as_ref().map(|e| e.is_final), expect, "{input}");
        if let Some(e) = early {
            // The first pass's body: the final one, or one a later pass changed.
            assert_eq!(e.value == buf, e.is_final, "{input}");
        }
    }

    #[test]
    fn the_first_body_is_handed_over_while_the_next_pass_judges_it() {
        use crate::rules::common::testing::{MANUAL, body, thinking};
        // Valid: nothing to hand over.
        check_overlapping(
            r#"{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#,
            None,
        );
        // One pass: the body handed over is the final one.
        check_overlapping(
            r#"{"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"text","text":""}]}]}"#,
            Some(true),
        );
        // Two passes (AN-01 then AN-03 in pass 2): the first body is not the final one.
        check_overlapping(
            &body(
                "claude-sonnet-4-5",
                MANUAL,
                &format!(
                    r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}}]}},{{"role":"assistant","content":[{{"type":"thinking","thinking":"x","signature":""}},{},{{"type":"text","text":"a"}}]}}"#,
                    thinking("t")
                ),
            ),
            Some(false),
        );
    }

    /// A panic in `early` is carried on to the caller's thread, not lost with its thread.
    #[test]
    fn a_panic_in_early_reaches_the_caller() {
        let input = r#"{"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"text","text":""}]}]}"#;
        let t = read(input, FormatHint::Auto).expect("reads");
        let mut buf = String::new();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            repair_into_overlapping(&t, &Options::default(), &mut buf, |_| {
                panic!("early failed")
            })
        }));
        assert!(caught.is_err());
    }
}

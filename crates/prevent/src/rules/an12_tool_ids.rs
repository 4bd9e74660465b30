//! ## AN-12: a tool id outside `^[a-zA-Z0-9_-]+$`
//!
//! **The API.** `tool_use.id` (and so `tool_result.tool_use_id`) must match
//! `^[a-zA-Z0-9_-]+$`; the empty string is rejected. Error:
//! `messages.N.content.M.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`. Source:
//! api-rules.md AN-12 (maximhq/bifrost#5097; langchain-ai/langchain#37756; QwenLM/qwen-code#8160
//! for the empty id). Invalid ids often come from other providers, such as Kimi's
//! `functions.Bash:0`.
//!
//! **Repair.** Invalid ids are rewritten deterministically (every other character becomes `_`,
//! with a hash suffix on collision), the same way on the call and on its results.
//!
//! **Why it is safe.** Ids from other providers carry no Anthropic signature, and Anthropic ids
//! already match, so a turn the API produced is never rewritten; a call inside a signed turn
//! (signed thinking or redacted thinking beside it) keeps its id, and so do its results: the
//! finding stays, unrepaired.
//!
//! Other targets name other forms (api-rules-2026-11 MS-01: Mistral's exactly 9 characters from
//! `[a-zA-Z0-9]`; OC-06: OpenAI Chat Completions' 40-character cap); the policy's
//! [`ToolIdForm`] says which one applies (recover sets it from the provider's error), and ids
//! that do not fit are rewritten into that form (a hash in the form's alphabet and length).
//!
//! ## AN-46: two tool_use blocks with the same id
//!
//! **The API.** `tool_use` ids must be unique: the API answers a request with two calls of the
//! same id with `` `tool_use` ids must be unique `` (the text peers' test suites check for;
//! LiteLLM's `anthropic_messages_pt` filters duplicate ids for this reason, peers.md). The
//! number is turnkeeper's: api-rules.md and api-rules-2026-11.md (which ends at AN-45) give the
//! rule no id.
//!
//! **Repair.** The repeated call (the second and later `tool_use` with an id) is removed, each
//! removal reported, where no thinking is bound to it: not in a message holding signed or
//! redacted thinking (editing such a turn is what api-rules.md §5.2, AN-08 row, forbids). There
//! it is reported only. Pairing goes by id (AN-08): the first call's result answers the id, so
//! no result is added for the repeat, and a second result for the id is a duplicate (AN-10).
//!
//! The check looks at the calls of each run of consecutive assistant messages that make calls
//! (the API merges consecutive assistant messages), where duplicates come from: merged streams
//! and replayed parallel calls; ids are compared as written. It shares AN-12's one pass over the
//! tool ids, so a valid transcript pays for both once. Corpus:
//! `corpus/damaged/an46_duplicate_tool_use_ids.json`; the valid counterpart is
//! `corpus/anthropic/parallel_tool_calls.json` (parallel calls, distinct ids, accepted).

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};
use turnkeeper_model::edit::object;
use turnkeeper_model::json::write_string;
use turnkeeper_model::{BlockKind, Draft, Format, Kinds, NewBlock};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::policy::ToolIdForm;

/// True for a valid Anthropic client tool id (`^[a-zA-Z0-9_-]+$`, api-rules.md AN-12).
pub fn valid_tool_id(id: &str) -> bool {
    turnkeeper_model::json::is_tool_id(id)
}

fn sanitize(id: &str, taken: &HashSet<String>) -> String {
    let base: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let base = if base.is_empty() {
        "toolu_empty".to_owned()
    } else {
        base
    };
    if !taken.contains(&base) {
        return base;
    }
    let h = Sha256::digest(id.as_bytes());
    let suffix = turnkeeper_guard::hex(h.get(..4).unwrap_or_default());
    format!("{base}_{suffix}")
}

/// One pass over the client tool blocks: whether every id is valid (AN-12), and the calls whose
/// id an earlier call of the same run of calling assistant messages has (AN-46), as (message,
/// block, id).
fn scan(d: &Draft<'_, '_>, from: usize) -> (bool, Vec<(usize, usize, String)>) {
    let mut all_valid = true;
    let mut dups = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let mut last_calling: Option<usize> = None;
    for i in from..d.len() {
        let kinds = d.summary(i).kinds;
        if !kinds.intersects(Kinds::CLIENT_TOOLS) {
            continue;
        }
        // A call in a user message is AN-06's; it counts here like any other.
        let calls = kinds.contains(BlockKind::ToolCall);
        if calls && last_calling.is_none_or(|k| k + 1 != i) {
            seen.clear();
        }
        for (j, b) in d.blocks(i).enumerate() {
            match b.kind() {
                BlockKind::ToolCall => {
                    all_valid &= b.block.tool_id_valid(b.src);
                    if let (true, Some(id)) = (calls, b.block.id.map(|s| s.raw(b.src))) {
                        if seen.contains(&id) {
                            dups.push((i, j, id.to_owned()));
                        } else {
                            seen.push(id);
                        }
                    }
                }
                BlockKind::ToolResult => all_valid &= b.block.tool_id_valid(b.src),
                _ => {}
            }
        }
        if calls {
            last_calling = Some(i);
        }
    }
    (all_valid, dups)
}

/// Whether `id` has the form `form` requires.
pub fn tool_id_fits(form: ToolIdForm, id: &str) -> bool {
    match form {
        ToolIdForm::Alnum9 => id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric()),
        ToolIdForm::MaxLen(n) => valid_tool_id(id) && id.len() <= n,
        _ => valid_tool_id(id),
    }
}

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// `len` base-62 characters drawn from SHA-256 of `id` and a round number.
fn hashed(id: &str, round: u32, len: usize) -> String {
    let mut h = Sha256::new();
    h.update(id.as_bytes());
    h.update(round.to_le_bytes());
    let digest = h.finalize();
    digest
        .iter()
        .take(len)
        .map(|b| char::from(BASE62[usize::from(*b) % BASE62.len()]))
        .collect()
}

/// The id `id` becomes under `form`: deterministic (the same id always maps to the same new id
/// within one request), distinct from every id already `taken`.
fn map_id(form: ToolIdForm, id: &str, taken: &HashSet<String>) -> String {
    match form {
        ToolIdForm::Alnum9 => (0..)
            .map(|round| hashed(id, round, 9))
            .find(|c| !taken.contains(c))
            .unwrap_or_default(),
        ToolIdForm::MaxLen(n) => {
            let s = sanitize(id, taken);
            if s.len() <= n && !taken.contains(&s) {
                return s;
            }
            // Keep a readable head, make the tail unique: head + '_' + 8 hash characters.
            let keep = n.saturating_sub(9);
            let head: String = s.chars().take(keep).collect();
            (0..)
                .map(|round| {
                    let tail = hashed(id, round, 8.min(n));
                    if keep == 0 {
                        tail
                    } else {
                        format!("{head}_{tail}")
                    }
                })
                .find(|c| !taken.contains(c))
                .unwrap_or_default()
        }
        _ => sanitize(id, taken),
    }
}

/// Whether message `i` is a signed turn: it holds redacted thinking or a thinking block with a
/// signature. Nothing inside such a turn is rewritten (prefix binding, AN-25).
fn signed_turn(f: &Fixer<'_, '_>, i: usize) -> bool {
    f.summary(i).kinds.intersects(Kinds::THINKING)
        && f.blocks(i).any(|b| match b.kind() {
            BlockKind::RedactedThinking => true,
            BlockKind::Thinking => b.signature().is_some_and(|s| !s.is_empty()),
            _ => false,
        })
}

/// Rewrites invalid tool ids on calls and results alike (AN-12); reports repeated call ids
/// (AN-46).
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    // The common case, every id valid and none repeated, costs one pass and no allocation.
    let (all_valid, dups) = scan(f.draft(), ctx.horizon);
    // From the end, so the positions of those still to go stay valid.
    for (k, j, id) in dups.into_iter().rev() {
        let why =
            format!("a second `tool_use` with the id `{id}`: \"`tool_use` ids must be unique\"");
        if signed_turn(f, k) {
            f.find(
                RuleId::An46,
                Severity::Error,
                k,
                Some(j),
                format!("{why}; its message holds signed thinking, so it is left as it came"),
                None,
            );
            continue;
        }
        f.find(
            RuleId::An46,
            Severity::Error,
            k,
            Some(j),
            why,
            Some("remove the repeated call (its id is answered by the first call's result)"),
        );
        f.remove_block(
            RuleId::An46,
            k,
            j,
            format!("removed a repeated `tool_use` with the id `{id}`; the first call with that id stays"),
        );
    }
    let form = ctx.policy.tool_ids;
    // Anthropic's pattern is what the reader's facts say; other forms are checked per id.
    if all_valid && form == ToolIdForm::Anthropic {
        return;
    }
    let mut bad: Vec<(usize, usize, String, &'static str)> = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    let mut frozen: HashSet<String> = HashSet::new();
    for i in ctx.horizon..f.len() {
        let signed = f.summary(i).kinds.intersects(Kinds::CLIENT_TOOLS) && signed_turn(f, i);
        for (j, b) in f.blocks(i).enumerate() {
            let (field, id) = match b.kind() {
                BlockKind::ToolCall => ("id", b.id()),
                BlockKind::ToolResult => ("tool_use_id", b.tool_use_id()),
                _ => continue,
            };
            let id = id.map(|x| x.into_owned()).unwrap_or_default();
            if signed && field == "id" {
                frozen.insert(id.clone());
            }
            if tool_id_fits(form, &id) {
                taken.insert(id);
            } else {
                bad.push((i, j, id, field));
            }
        }
    }
    if bad.is_empty() {
        return;
    }
    let rule_text = match form {
        ToolIdForm::Alnum9 => "exactly 9 characters from [a-zA-Z0-9]".to_owned(),
        ToolIdForm::MaxLen(n) => format!("'^[a-zA-Z0-9_-]+$' and at most {n} characters"),
        _ => "'^[a-zA-Z0-9_-]+$'".to_owned(),
    };
    let mut map: HashMap<String, String> = HashMap::new();
    for (i, j, id, field) in bad {
        if frozen.contains(&id) {
            f.find(
                RuleId::An12,
                Severity::Error,
                i,
                Some(j),
                format!(
                    "`{field}` {id:?} does not match {rule_text}, but its call is in a signed turn"
                ),
                None,
            );
            continue;
        }
        let new = map
            .entry(id.clone())
            .or_insert_with(|| {
                let n = map_id(form, &id, &taken);
                taken.insert(n.clone());
                n
            })
            .clone();
        f.find(
            RuleId::An12,
            Severity::Error,
            i,
            Some(j),
            format!("`{field}` {id:?} does not match {rule_text}"),
            Some("rewrite the id on the call and its results"),
        );
        let mut v = String::new();
        write_string(&mut v, &new);
        let edited = f
            .block(i, j)
            .and_then(|b| object::set_key(b.raw(), field, &v))
            .and_then(|json| NewBlock::new(Format::Anthropic, json).ok());
        if let Some(nb) = edited {
            f.edit_block(
                RuleId::An12,
                i,
                j,
                nb,
                format!("rewrote tool id {id:?} as {new:?}"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::{map_id, tool_id_fits};
    use crate::Options;
    use crate::policy::ToolIdForm;
    use crate::rules::common::testing::{Expect, SIG, body, check_case, check_with, findings};

    #[test]
    fn ids_map_deterministically_to_each_form() {
        let taken = HashSet::new();
        for (form, id) in [
            (ToolIdForm::Alnum9, "call_49c89af0"),
            (ToolIdForm::Alnum9, "toolu_01825dXWLSoJwCst1qTsiWdb"),
            (
                ToolIdForm::MaxLen(40),
                "ws_689e2d4880a0819d98acca37694989b00b15d90494fc6b87",
            ),
            (ToolIdForm::MaxLen(40), "functions.Bash:0"),
            (ToolIdForm::Anthropic, "functions.Bash:0"),
        ] {
            let a = map_id(form, id, &taken);
            assert!(tool_id_fits(form, &a), "{form:?} {id} -> {a}");
            assert_eq!(
                a,
                map_id(form, id, &taken),
                "{form:?} {id}: not deterministic"
            );
        }
        // A collision takes the next round, still of the form.
        let first = map_id(ToolIdForm::Alnum9, "x", &taken);
        let taken: HashSet<String> = [first.clone()].into();
        let second = map_id(ToolIdForm::Alnum9, "x", &taken);
        assert_ne!(first, second);
        assert!(tool_id_fits(ToolIdForm::Alnum9, &second));
        // A 40-character cap keeps a readable head.
        let capped = map_id(
            ToolIdForm::MaxLen(40),
            "ws_689e2d4880a0819d98acca37694989b00b15d90494fc6b87",
            &HashSet::new(),
        );
        assert!(
            capped.starts_with("ws_689e2d") && capped.len() == 40,
            "{capped}"
        );
    }

    #[test]
    fn a_kimi_id_is_rewritten_on_both_sides() {
        let msgs = |id: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"Bash","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"ok"}}]}}"#
            )
        };
        let input = body("claude-sonnet-4-5", "", &msgs("functions.Bash:0"));
        let after = body("claude-sonnet-4-5", "", &msgs("functions_Bash_0"));
        check_case(
            &input,
            Expect {
                rules: &["AN-12", "AN-12"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    fn calls(second: &str) -> String {
        body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_1","name":"a","input":{{}}}},{{"type":"tool_use","id":"{second}","name":"b","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}},{{"type":"tool_result","tool_use_id":"{second}","content":"y"}}]}}"#
            ),
        )
    }

    /// `check` reports an invalid `tool_use_id` on a result even when no call has an invalid id
    /// (here an orphan, which `repair` removes under AN-10 before AN-12 runs). Kills the deletion
    /// of the `BlockKind::ToolResult` arm in `scan`, under which only calls' ids were looked at.
    #[test]
    fn an_invalid_id_on_a_result_alone_is_reported() {
        let msgs = |results: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":"a"}},{{"role":"user","content":[{results}{{"type":"text","text":"more"}}]}}"#
            )
        };
        check_case(
            &body(
                "claude-sonnet-4-5",
                "",
                &msgs(r#"{"type":"tool_result","tool_use_id":"call:1","content":"x"},"#),
            ),
            Expect {
                rules: &["AN-10", "AN-12"],
                after: Some(&body("claude-sonnet-4-5", "", &msgs(""))),
                left: &[],
            },
        );
    }

    /// Two calls with one id and a result each: the repeated call goes (AN-46); then, paired by
    /// id, the second result is a duplicate (AN-10, the next pass). Nothing is added.
    #[test]
    fn a_repeated_id_is_dropped_with_its_second_result() {
        let kept = body(
            "claude-sonnet-4-5",
            "",
            r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"a","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]}"#,
        );
        check_case(
            &calls("toolu_1"),
            Expect {
                rules: &["AN-46"],
                after: Some(&kept),
                left: &[],
            },
        );
        assert_eq!(
            crate::rules::common::testing::changes(&calls("toolu_1"), &Options::default()),
            [
                "AN-46 removed_block messages[1].content[1]",
                "AN-10 removed_block messages[2].content[1] (pass 2)"
            ]
        );
    }

    /// The measured class: a call repeated with one result for the id. Pairing goes by id, so
    /// there is no "no `tool_result`" finding and no second result is made up; the repeat goes.
    /// In a message holding signed thinking the repeat is bound to the turn: reported, left.
    #[test]
    fn a_repeated_call_with_one_result_is_not_unanswered() {
        let msgs = |lead: &str, second: bool| {
            let call = r#"{"type":"tool_use","id":"toolu_1","name":"a","input":{}}"#;
            let again = if second {
                format!(",{call}")
            } else {
                String::new()
            };
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{lead}{call}{again}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}}]}}"#
            )
        };
        check_case(
            &body("claude-sonnet-4-5", "", &msgs("", true)),
            Expect {
                rules: &["AN-46"],
                after: Some(&body("claude-sonnet-4-5", "", &msgs("", false))),
                left: &[],
            },
        );
        let th = format!(r#"{{"type":"thinking","thinking":"t","signature":"{SIG}"}},"#);
        check_case(
            &body(
                "claude-sonnet-4-5",
                crate::rules::common::testing::MANUAL,
                &msgs(&th, true),
            ),
            Expect {
                rules: &["AN-46"],
                after: None,
                left: &["AN-46"],
            },
        );
    }

    #[test]
    fn distinct_ids_pass() {
        check_case(
            &calls("toolu_2"),
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }

    /// The AN-12 findings' messages on `calls(id)` under the id form `form`, and the repaired
    /// ids of the call and its result.
    fn under(form: ToolIdForm, id: &str) -> (Vec<String>, Vec<String>) {
        let input = calls(id);
        let t = turnkeeper_model::read(&input, turnkeeper_model::FormatHint::Auto).expect("reads");
        let mut opts = crate::Options::default();
        opts.policy.tool_ids = form;
        let found: Vec<String> = crate::check(&t, &opts)
            .into_iter()
            .filter(|f| f.rule == crate::RuleId::An12)
            .map(|f| f.message)
            .collect();
        let r = crate::repair(&t, &opts).expect("repairs");
        let t2 =
            turnkeeper_model::read(&r.body, turnkeeper_model::FormatHint::Auto).expect("reads");
        let ids = t2
            .blocks
            .iter()
            .filter_map(|b| {
                b.id.or(b.tool_use_id)
                    .map(|s| s.decode(t2.src).into_owned())
            })
            .collect();
        (found, ids)
    }

    #[test]
    fn the_form_the_policy_names_is_the_one_checked() {
        let (found, ids) = under(ToolIdForm::Alnum9, "abc_12345");
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(
            found
                .iter()
                .all(|m| m.contains("exactly 9 characters from [a-zA-Z0-9]")),
            "{found:?}"
        );
        assert!(
            ids.iter().all(|id| tool_id_fits(ToolIdForm::Alnum9, id)),
            "{ids:?}"
        );
        assert_eq!(
            (ids[0] == ids[2], ids[1] == ids[3]),
            (true, true),
            "{ids:?}"
        );
        let (found, _) = under(ToolIdForm::MaxLen(6), "toolu_2");
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(
            found
                .iter()
                .all(|m| m.contains("'^[a-zA-Z0-9_-]+$' and at most 6 characters")),
            "{found:?}"
        );
        let (found, ids) = under(ToolIdForm::Anthropic, "toolu.2");
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found.iter().all(|m| m.contains("'^[a-zA-Z0-9_-]+$'")),
            "{found:?}"
        );
        assert_eq!(ids, ["toolu_1", "toolu_2", "toolu_1", "toolu_2"]);
        assert!(!tool_id_fits(ToolIdForm::Alnum9, "abcd12345x"));
        assert!(tool_id_fits(ToolIdForm::Alnum9, "abcd12345"));
    }

    /// A call, then its result, both with the id `id`.
    fn answered(id: &str, thinking: &str) -> String {
        format!(
            r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{thinking}{{"type":"tool_use","id":"{id}","name":"f","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"x"}}]}},{{"role":"assistant","content":"ok"}},{{"role":"user","content":"more"}}"#
        )
    }

    /// Rewriting an invalid id keeps the characters the pattern allows, `-` as well as `_`: only
    /// the `.` changes. Kills `c == '_' || c == '-'` turned into `c == '_' && c == '-'` in
    /// `sanitize`, under which the hyphen became an underscore too.
    #[test]
    fn a_rewritten_id_keeps_its_hyphens() {
        check_case(
            &body("claude-sonnet-4-5", "", &answered("fc-1.2", "")),
            Expect {
                rules: &["AN-12", "AN-12"],
                after: Some(&body("claude-sonnet-4-5", "", &answered("fc-1_2", ""))),
                left: &[],
            },
        );
    }

    /// A turn whose only thinking block has an empty signature is not a signed turn: `check`
    /// offers to rewrite its invalid call id (and `repair` does, once AN-23 has removed the
    /// block). Kills `&&` turned into `||` in `signed_turn`, under which any thinking block froze
    /// the turn's ids and `check` said the call was in a signed turn.
    #[test]
    fn an_unsigned_thinking_block_does_not_freeze_the_turns_ids() {
        let unsigned = r#"{"type":"thinking","thinking":"x","signature":""},"#;
        let input = body("claude-sonnet-4-5", "", &answered("call:1", unsigned));
        assert_eq!(
            findings(&input, &Options::default()),
            [
                "AN-23 messages[1].content[0]: a thinking block with an empty signature: \"Invalid `signature` in `thinking` block\"",
                "AN-12 messages[1].content[1]: `id` \"call:1\" does not match '^[a-zA-Z0-9_-]+$'",
                "AN-12 messages[2].content[0]: `tool_use_id` \"call:1\" does not match '^[a-zA-Z0-9_-]+$'",
            ]
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-23", "AN-12", "AN-12"],
                after: Some(&body("claude-sonnet-4-5", "", &answered("call_1", ""))),
                left: &[],
            },
        );
    }

    /// A turn that holds redacted thinking is a signed turn, whatever else it holds: its
    /// invalid call id is reported as frozen and left, on the call and on its result. Kills the
    /// deletion of the `BlockKind::RedactedThinking` arm in `signed_turn`, under which only a
    /// signed `thinking` block froze a turn and the ids were rewritten.
    #[test]
    fn redacted_thinking_freezes_the_turns_ids() {
        let redacted = format!(r#"{{"type":"redacted_thinking","data":"{SIG}"}},"#);
        let input = body("claude-sonnet-4-5", "", &answered("call:1", &redacted));
        assert_eq!(
            findings(&input, &Options::default()),
            [
                "AN-12 messages[1].content[1]: `id` \"call:1\" does not match '^[a-zA-Z0-9_-]+$', but its call is in a signed turn",
                "AN-12 messages[2].content[0]: `tool_use_id` \"call:1\" does not match '^[a-zA-Z0-9_-]+$', but its call is in a signed turn",
            ]
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-12", "AN-12"],
                after: None,
                left: &["AN-12", "AN-12"],
            },
        );
    }

    /// Under the 9-character policy an id becomes 9 characters spread over all of base 62: each
    /// byte of SHA-256(id, round 0 as 4 little-endian bytes) taken modulo 62. For `call_1` the
    /// first 9 bytes are `6b 7f dd ee 75 4e f5 73 02`: 107 % 62 = 45 `j`, 127 % 62 = 3 `3`, and
    /// so on. Kills `%` turned into `/` in `hashed`, under which every character was one of
    /// `0`..`4` (`123311310`).
    #[test]
    fn a_nine_character_id_is_drawn_from_all_of_base_62() {
        let mut opts = Options::default();
        opts.policy.tool_ids = ToolIdForm::Alnum9;
        check_with(
            &body("claude-sonnet-4-5", "", &answered("call_1", "")),
            &opts,
            Expect {
                rules: &["AN-12", "AN-12"],
                after: Some(&body("claude-sonnet-4-5", "", &answered("j3ZqtGxr2", ""))),
                left: &[],
            },
        );
    }

    /// Under a length cap, an invalid id whose sanitized form fits the cap and is free becomes
    /// that form, with no hash tail: `functions.Bash:0` becomes `functions_Bash_0` under the
    /// 40-character cap, as under Anthropic's pattern. Kills the deletion of `!` in `map_id`'s
    /// test that the sanitized id is free, under which every such id took the hashed form
    /// (`functions_Bash_0_` and 8 hash characters).
    #[test]
    fn under_a_length_cap_a_sanitized_id_that_fits_is_kept() {
        let mut opts = Options::default();
        opts.policy.tool_ids = ToolIdForm::MaxLen(40);
        check_with(
            &body("claude-sonnet-4-5", "", &answered("functions.Bash:0", "")),
            &opts,
            Expect {
                rules: &["AN-12", "AN-12"],
                after: Some(&body(
                    "claude-sonnet-4-5",
                    "",
                    &answered("functions_Bash_0", ""),
                )),
                left: &[],
            },
        );
    }
}

//! ## AN-07: more than 4 cache_control breakpoints
//!
//! **The API.** A request may mark at most four blocks with `cache_control`, counted over
//! `tools`, `system` and `messages` together. Error: `A maximum of 4 blocks with cache_control
//! may be provided. Found N.` Source: api-rules.md AN-07 (SDK docstring; prompt-caching docs);
//! the error text as the API gives it (issue 22).
//!
//! **Repair.** The surplus breakpoints are removed, each reported: a breakpoint is a cache hint,
//! not content. The four kept are the last four in request order (`tools`, then `system`, then
//! `messages`), the ones that cache the longest prefix. A tool's or a `system` block's
//! `cache_control` is removed from the request's own settings (a request change at
//! `tools[n].cache_control`), a message block's from the block, its other members kept byte for
//! byte. A `cache_control` on a thinking block (never valid there, AN-06) counts, but is never
//! edited: when it is among the surplus, the finding stays.
//!
//! Counted: top-level tools, `system` blocks and message blocks carrying a `cache_control` that
//! is not `null`, from the compaction horizon on. Blocks nested in a `tool_result`'s `content`
//! are not counted: whether the API counts them is not recorded, and a count too high would
//! report a valid request.
//!
//! **Why it is safe.** Removing `cache_control` changes what the API caches, never what the
//! model reads, and keeps prefix-bound thinking valid ("adding, moving or removing
//! `cache_control`" is allowed, api-rules.md AN-25); no thinking block is touched.

use turnkeeper_model::edit::object;
use turnkeeper_model::{NewBlock, Span};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::rules::common::{array_elements, replace_element, top_value};

/// The API's limit.
const MAX_BREAKPOINTS: usize = 4;

/// Where a breakpoint is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Element `n` of the top-level array `key` (`tools` or `system`).
    Top(&'static str, usize),
    /// Block `j` of message `i`; `true` for a thinking block.
    Block(usize, usize, bool),
}

/// True when the object `raw` carries a `cache_control` that is not `null`.
fn marked(raw: &str) -> bool {
    object::get(raw, "cache_control").is_some_and(|v| v.trim() != "null")
}

/// The breakpoints of the top-level array `key`, with the array's text and element spans.
fn top_breakpoints(f: &Fixer<'_, '_>, key: &'static str, out: &mut Vec<Place>) {
    let Some(value) = top_value(f, key) else {
        return;
    };
    if !value.contains("cache_control") {
        return;
    }
    let Some(elements) = array_elements(&value) else {
        return;
    };
    for (n, sp) in elements.iter().enumerate() {
        if marked(sp.get(&value)) {
            out.push(Place::Top(key, n));
        }
    }
}

/// Every breakpoint, in request order.
fn breakpoints(ctx: &Ctx<'_>, f: &Fixer<'_, '_>) -> Vec<Place> {
    let mut out = Vec::new();
    top_breakpoints(f, "tools", &mut out);
    top_breakpoints(f, "system", &mut out);
    for i in ctx.horizon..f.len() {
        for (j, b) in f.blocks(i).enumerate() {
            if b.block
                .cache_control
                .is_some_and(|c| c.get(b.src).trim() != "null")
            {
                out.push(Place::Block(i, j, b.kind().is_thinking()));
            }
        }
    }
    out
}

/// The path of a breakpoint, for findings and changes.
fn path(f: &Fixer<'_, '_>, p: Place) -> String {
    match p {
        Place::Top(key, n) => format!("{key}[{n}].cache_control"),
        Place::Block(i, j, _) => crate::fix::loc(f.draft(), i, Some(j)).path,
    }
}

/// Removes the `cache_control` of element `n` of the top-level array `key`.
fn remove_top(f: &mut Fixer<'_, '_>, key: &'static str, n: usize, reason: &str) -> bool {
    let Some(value) = top_value(f, key) else {
        return false;
    };
    let Some(elements) = array_elements(&value) else {
        return false;
    };
    let Some(new) = elements
        .get(n)
        .and_then(|sp: &Span| object::remove_key(sp.get(&value), "cache_control"))
        .and_then(|el| replace_element(&value, &elements, n, &el))
    else {
        return false;
    };
    f.edit_param(
        RuleId::An07,
        key,
        &new,
        &format!("{key}[{n}].cache_control"),
        reason,
    )
}

/// Finds more than four breakpoints and removes the earliest surplus ones.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    let all = breakpoints(ctx, f);
    if all.len() <= MAX_BREAKPOINTS {
        return;
    }
    let surplus = all.len() - MAX_BREAKPOINTS;
    let found = all.len();
    let where_: Vec<String> = all[..surplus].iter().map(|&p| path(f, p)).collect();
    let on_thinking = all[..surplus]
        .iter()
        .any(|p| matches!(p, Place::Block(_, _, true)));
    let repair = if on_thinking {
        None
    } else {
        Some("remove the earliest breakpoints, keeping the last four (the longest cached prefix)")
    };
    let message = format!(
        "A maximum of 4 blocks with cache_control may be provided. Found {found}. Surplus (earliest): {}{}",
        where_.join(", "),
        if on_thinking {
            "; one is on a thinking block, which turnkeeper never edits"
        } else {
            ""
        }
    );
    match all[0] {
        Place::Block(i, j, _) => f.find(RuleId::An07, Severity::Error, i, Some(j), message, repair),
        Place::Top(..) => {
            let p = path(f, all[0]);
            f.find_param(RuleId::An07, Severity::Error, &p, message, repair);
        }
    }
    if on_thinking {
        return;
    }
    let reason = format!(
        "removed a surplus cache_control breakpoint ({found} found, at most {MAX_BREAKPOINTS}; the last {MAX_BREAKPOINTS} in request order kept)"
    );
    for &p in &all[..surplus] {
        match p {
            Place::Top(key, n) => {
                remove_top(f, key, n, &reason);
            }
            Place::Block(i, j, _) => {
                let edited = f
                    .block(i, j)
                    .and_then(|b| object::remove_key(b.raw(), "cache_control"))
                    .and_then(|json| NewBlock::new(f.transcript().format, json).ok());
                if let Some(nb) = edited {
                    f.edit_cache_hint(RuleId::An07, i, j, nb, reason.clone());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Options;
    use crate::rules::common::testing::{Expect, body, changes, check_case, thinking};

    const CC: &str = r#","cache_control":{"type":"ephemeral"}"#;

    /// A request with `tools` (one breakpoint each where `tool_marks` says) and a user message
    /// of text blocks (one each where `text_marks` says).
    fn request(tool_marks: &[bool], text_marks: &[bool]) -> String {
        let tools: Vec<String> = tool_marks
            .iter()
            .enumerate()
            .map(|(n, &m)| {
                format!(
                    r#"{{"name":"t{n}","input_schema":{{"type":"object"}}{}}}"#,
                    if m { CC } else { "" }
                )
            })
            .collect();
        let texts: Vec<String> = text_marks
            .iter()
            .enumerate()
            .map(|(n, &m)| {
                format!(
                    r#"{{"type":"text","text":"part {n}"{}}}"#,
                    if m { CC } else { "" }
                )
            })
            .collect();
        body(
            "claude-sonnet-4-5",
            "",
            &format!(r#"{{"role":"user","content":[{}]}}"#, texts.join(",")),
        )
        .replacen(
            "\"max_tokens\":8000,",
            &format!("\"max_tokens\":8000,\"tools\":[{}],", tools.join(",")),
            1,
        )
    }

    #[test]
    fn four_breakpoints_pass_untouched() {
        check_case(
            &request(&[true, false, true], &[true, true, false]),
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }

    /// Six breakpoints: the first two in request order (both on tools) go, the last four stay.
    #[test]
    fn the_earliest_surplus_breakpoints_go_and_the_last_four_stay() {
        let input = request(&[true, true, true], &[true, false, true, true]);
        check_case(
            &input,
            Expect {
                rules: &["AN-07"],
                after: Some(&request(&[false, false, true], &[true, false, true, true])),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &Options::default()),
            [
                "AN-07 request tools[0].cache_control",
                "AN-07 request tools[1].cache_control"
            ]
        );
    }

    /// Surplus breakpoints on message blocks are removed from those blocks, reported at them.
    #[test]
    fn surplus_breakpoints_on_message_blocks_are_removed_there() {
        let input = request(&[], &[true, true, true, true, true, true]);
        check_case(
            &input,
            Expect {
                rules: &["AN-07"],
                after: Some(&request(&[], &[false, false, true, true, true, true])),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &Options::default()),
            [
                "AN-07 edited_block messages[0].content[0]",
                "AN-07 edited_block messages[0].content[1]"
            ]
        );
    }

    /// A `system` array counts between tools and messages; `"cache_control": null` is no
    /// breakpoint.
    #[test]
    fn system_blocks_count_between_tools_and_messages() {
        let sys = |first: bool| {
            format!(
                r#""system":[{{"type":"text","text":"s0"{}}},{{"type":"text","text":"s1","cache_control":null}}],"#,
                if first { CC } else { "" }
            )
        };
        let with = |first: bool| {
            request(&[], &[true, true, true, true]).replacen(
                "\"max_tokens\":8000,",
                &format!("\"max_tokens\":8000,{}", sys(first)),
                1,
            )
        };
        check_case(
            &with(true),
            Expect {
                rules: &["AN-07"],
                after: Some(&with(false)),
                left: &[],
            },
        );
    }

    /// A surplus breakpoint on a thinking block is never removed: the finding stays (beside
    /// AN-06's own about the field), and nothing else is edited for it.
    #[test]
    fn a_surplus_breakpoint_on_thinking_is_reported_not_edited() {
        let th = thinking("t").replacen("}", &format!("{CC}}}"), 1);
        let msgs = format!(
            r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{th},{{"type":"text","text":"a"}}]}},{{"role":"user","content":[{{"type":"text","text":"b"{CC}}},{{"type":"text","text":"c"{CC}}},{{"type":"text","text":"d"{CC}}},{{"type":"text","text":"e"{CC}}}]}}"#
        );
        let input = body(
            "claude-sonnet-4-5",
            crate::rules::common::testing::MANUAL,
            &msgs,
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-06", "AN-07"],
                after: None,
                left: &["AN-06", "AN-07"],
            },
        );
    }
}

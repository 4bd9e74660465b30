//! The damage real transcripts suffer, applied to a generated [`Conversation`].
//!
//! Each operation mimics something an agent, gateway or crash does (peers.md, seeds): blocks
//! reordered by a sort, tool results dropped, duplicated or orphaned, empty and whitespace-only
//! text, thinking-only and trailing-thinking messages, foreign, empty and sentinel signatures,
//! consecutive same-role messages, ids from other providers (`functions.Bash:0`), and the aborted
//! turn (a `tool_use` with no result, followed by user text).

use arbitrary::{Result, Unstructured};
use turnkeeper_model::Format;

use crate::generate::{Conversation, is_thinking};
use crate::json::J;
use crate::samples::samples;

/// One kind of damage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Damage {
    /// Two blocks of an assistant message swap (a tool call or text ends up before thinking).
    ReorderBlocks,
    /// A tool result disappears.
    DropToolResult,
    /// A tool result appears twice.
    DuplicateToolResult,
    /// A result for a call that never existed.
    OrphanResult,
    /// An empty or whitespace-only text block.
    EmptyText,
    /// An assistant message keeps only its thinking.
    ThinkingOnly,
    /// An assistant message ends with a thinking block.
    TrailingThinking,
    /// A thinking block's signature is replaced: foreign, empty, a sentinel, or removed.
    BadSignature,
    /// A message is split into two consecutive messages of the same role.
    SameRole,
    /// A tool id (call and results) becomes another provider's spelling.
    OddToolId,
    /// A tool call's results are replaced by a user text (the turn was aborted).
    AbortedTurn,
    /// A message vanishes.
    DropMessage,
    /// A field another SDK leaves on a block (`thoughtSignature`, `providerOptions`).
    ForeignField,
}

/// Every damage kind.
pub const ALL: &[Damage] = &[
    Damage::ReorderBlocks,
    Damage::DropToolResult,
    Damage::DuplicateToolResult,
    Damage::OrphanResult,
    Damage::EmptyText,
    Damage::ThinkingOnly,
    Damage::TrailingThinking,
    Damage::BadSignature,
    Damage::SameRole,
    Damage::OddToolId,
    Damage::AbortedTurn,
    Damage::DropMessage,
    Damage::ForeignField,
];

/// Applies 1 to `knobs.max_damage` (as given to the generator; 3 by default) damage operations,
/// chosen by `u`, recording their names in [`Conversation::damage`]. An operation that does not
/// apply (no thinking block to re-sign, ...) is skipped.
///
/// # Errors
/// Only what [`Unstructured`] reports.
pub fn damage(u: &mut Unstructured<'_>, c: &mut Conversation) -> Result<()> {
    damage_n(u, c, 3)
}

/// Like [`damage`], with at most `max` operations.
///
/// # Errors
/// Only what [`Unstructured`] reports.
pub fn damage_n(u: &mut Unstructured<'_>, c: &mut Conversation, max: u8) -> Result<()> {
    let n = u.int_in_range(1..=max.max(1))?;
    for _ in 0..n {
        let d = *u.choose(ALL)?;
        if apply(u, c, d)? {
            c.damage.push(format!("{d:?}"));
        }
    }
    Ok(())
}

/// Applies one damage operation; `false` when it did not apply.
///
/// # Errors
/// Only what [`Unstructured`] reports.
pub fn apply(u: &mut Unstructured<'_>, c: &mut Conversation, d: Damage) -> Result<bool> {
    match c.format {
        Format::Anthropic => anthropic(u, c, d),
        Format::Gemini => gemini(u, c, d),
        Format::Opencode => opencode(u, c, d),
        // The wire families have their own generators (`crate::wire`).
        _ => Ok(false),
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers over the generic "messages with blocks" shape
// ---------------------------------------------------------------------------------------------

/// Where a format keeps messages, roles and blocks.
struct Shape {
    messages: &'static str,
    blocks: &'static str,
    assistant: &'static str,
}

const ANTHROPIC: Shape = Shape {
    messages: "messages",
    blocks: "content",
    assistant: "assistant",
};
const GEMINI: Shape = Shape {
    messages: "contents",
    blocks: "parts",
    assistant: "model",
};

fn messages_mut<'j>(root: &'j mut J, shape: &Shape) -> Option<&'j mut Vec<J>> {
    match root {
        J::Arr(a) => Some(a),
        r => r.get_mut(shape.messages).and_then(J::as_arr_mut),
    }
}

fn role(m: &J) -> Option<&str> {
    m.get("role").and_then(J::as_str)
}

fn blocks_mut<'j>(m: &'j mut J, shape: &Shape) -> Option<&'j mut Vec<J>> {
    m.get_mut(shape.blocks).and_then(J::as_arr_mut)
}

/// Picks an index among those satisfying `f`.
fn pick_where<T>(
    u: &mut Unstructured<'_>,
    xs: &[T],
    f: impl Fn(&T) -> bool,
) -> Result<Option<usize>> {
    let idx: Vec<usize> = xs
        .iter()
        .enumerate()
        .filter(|(_, x)| f(x))
        .map(|(i, _)| i)
        .collect();
    if idx.is_empty() {
        return Ok(None);
    }
    Ok(Some(*u.choose(&idx)?))
}

fn block_type(b: &J) -> Option<&str> {
    b.get("type").and_then(J::as_str)
}

fn has_block(m: &J, shape: &Shape, f: impl Fn(&J) -> bool) -> bool {
    m.get(shape.blocks)
        .and_then(J::as_arr)
        .is_some_and(|bs| bs.iter().any(f))
}

fn bad_signature(u: &mut Unstructured<'_>) -> Result<Option<J>> {
    let gemini = u.choose(&samples().gemini)?.clone();
    Ok(match u.int_in_range(0..=5u8)? {
        0 => Some(J::s("")),
        1 => Some(J::s("skip_thought_signature_validator")),
        2 => Some(J::s(gemini)),
        3 => Some(J::s("[Continuing from previous reasoning]")),
        4 => Some(J::Null),
        _ => None,
    })
}

// ---------------------------------------------------------------------------------------------
// Anthropic
// ---------------------------------------------------------------------------------------------

fn anthropic(u: &mut Unstructured<'_>, c: &mut Conversation, d: Damage) -> Result<bool> {
    let s = &ANTHROPIC;
    let Some(msgs) = messages_mut(&mut c.root, s) else {
        return Ok(false);
    };
    let is_asst = |m: &J| role(m) == Some("assistant");
    let has_results = |m: &J| has_block(m, s, |b| block_type(b) == Some("tool_result"));
    match d {
        Damage::ReorderBlocks => {
            let Some(i) = pick_where(u, msgs, |m| {
                is_asst(m)
                    && m.get("content")
                        .and_then(J::as_arr)
                        .is_some_and(|b| b.len() >= 2)
            })?
            else {
                return Ok(false);
            };
            let Some(bs) = blocks_mut(&mut msgs[i], s) else {
                return Ok(false);
            };
            let a = u.choose_index(bs.len())?;
            let b = u.choose_index(bs.len())?;
            if a == b {
                let last = bs.len() - 1;
                bs.swap(0, last);
            } else {
                bs.swap(a, b);
            }
            Ok(true)
        }
        Damage::DropToolResult | Damage::DuplicateToolResult => {
            let Some(i) = pick_where(u, msgs, has_results)? else {
                return Ok(false);
            };
            let Some(bs) = blocks_mut(&mut msgs[i], s) else {
                return Ok(false);
            };
            let Some(j) = pick_where(u, bs, |b| block_type(b) == Some("tool_result"))? else {
                return Ok(false);
            };
            if d == Damage::DropToolResult {
                bs.remove(j);
            } else {
                let dup = bs[j].clone();
                let at = u.int_in_range(0..=bs.len())?;
                bs.insert(at, dup);
            }
            Ok(true)
        }
        Damage::OrphanResult => {
            let orphan = J::obj([
                ("type", J::s("tool_result")),
                ("tool_use_id", J::s("toolu_01GoneGoneGone000000001")),
                ("is_error", J::Bool(true)),
                ("content", J::s("Operation cancelled by user (ESC pressed)")),
            ]);
            match pick_where(u, msgs, |m| {
                role(m) == Some("user") && m.get("content").and_then(J::as_arr).is_some()
            })? {
                Some(i) if u.ratio(2u8, 3u8)? => {
                    if let Some(bs) = blocks_mut(&mut msgs[i], s) {
                        let at = u.int_in_range(0..=bs.len())?;
                        bs.insert(at, orphan);
                    }
                }
                _ => {
                    let at = u.int_in_range(0..=msgs.len())?;
                    msgs.insert(
                        at,
                        J::obj([("role", J::s("user")), ("content", J::Arr(vec![orphan]))]),
                    );
                }
            }
            Ok(true)
        }
        Damage::EmptyText => {
            let text = *u.choose(&["", " ", "\n", " \n\t ", "\u{a0}"])?;
            let Some(i) = pick_where(u, msgs, |m| m.get("content").is_some())? else {
                return Ok(false);
            };
            let m = &mut msgs[i];
            match m.get_mut("content") {
                Some(J::Arr(bs)) => {
                    let mut block = J::obj([("type", J::s("text")), ("text", J::s(text))]);
                    if u.ratio(1u8, 5u8)? {
                        block.set("cache_control", J::obj([("type", J::s("ephemeral"))]));
                    }
                    let at = u.int_in_range(0..=bs.len())?;
                    bs.insert(at, block);
                }
                Some(content) => *content = J::s(text),
                None => return Ok(false),
            }
            Ok(true)
        }
        Damage::ThinkingOnly => {
            let Some(i) = pick_where(u, msgs, |m| is_asst(m) && has_block(m, s, is_thinking))?
            else {
                return Ok(false);
            };
            if let Some(bs) = blocks_mut(&mut msgs[i], s) {
                bs.retain(is_thinking);
            }
            Ok(true)
        }
        Damage::TrailingThinking => {
            let Some(i) = pick_where(u, msgs, |m| {
                is_asst(m) && m.get("content").and_then(J::as_arr).is_some()
            })?
            else {
                return Ok(false);
            };
            let sig = u.choose(&samples().signatures)?.clone();
            let block = J::obj([
                ("type", J::s("thinking")),
                ("thinking", J::s("Now I will write the answer.\n")),
                ("signature", J::s(sig)),
            ]);
            if let Some(bs) = blocks_mut(&mut msgs[i], s) {
                bs.push(block);
            }
            Ok(true)
        }
        Damage::BadSignature => {
            let Some(i) = pick_where(u, msgs, |m| {
                has_block(m, s, |b| block_type(b) == Some("thinking"))
            })?
            else {
                return Ok(false);
            };
            let sig = bad_signature(u)?;
            let Some(bs) = blocks_mut(&mut msgs[i], s) else {
                return Ok(false);
            };
            let Some(j) = pick_where(u, bs, |b| block_type(b) == Some("thinking"))? else {
                return Ok(false);
            };
            match sig {
                Some(v) => bs[j].set("signature", v),
                None => {
                    bs[j].remove("signature");
                }
            }
            Ok(true)
        }
        Damage::SameRole => {
            let Some(i) = pick_where(u, msgs, |m| {
                m.get("content")
                    .and_then(J::as_arr)
                    .is_some_and(|b| b.len() >= 2)
            })?
            else {
                return Ok(false);
            };
            let Some(bs) = blocks_mut(&mut msgs[i], s) else {
                return Ok(false);
            };
            let at = u.int_in_range(1..=bs.len() - 1)?;
            let tail = bs.split_off(at);
            let mut second = msgs[i].clone();
            second.set("content", J::Arr(tail));
            msgs.insert(i + 1, second);
            Ok(true)
        }
        Damage::OddToolId => {
            let mut ids = Vec::new();
            for m in msgs.iter() {
                if let Some(bs) = m.get("content").and_then(J::as_arr) {
                    for b in bs {
                        if block_type(b) == Some("tool_use")
                            && let Some(id) = b.get("id").and_then(J::as_str)
                        {
                            ids.push(id.to_owned());
                        }
                    }
                }
            }
            if ids.is_empty() {
                return Ok(false);
            }
            let old = u.choose(&ids)?.clone();
            let n = u.int_in_range(0..=9u8)?;
            let new = match u.int_in_range(0..=3u8)? {
                0 => format!("functions.Bash:{n}"),
                1 => format!("call_{n}|fc_abc"),
                2 => String::new(),
                _ => format!("toolu 0{n} é"),
            };
            for m in msgs.iter_mut() {
                if let Some(bs) = blocks_mut(m, s) {
                    for b in bs {
                        for key in ["id", "tool_use_id"] {
                            if b.get(key).and_then(J::as_str) == Some(old.as_str()) {
                                b.set(key, J::s(new.clone()));
                            }
                        }
                    }
                }
            }
            Ok(true)
        }
        Damage::AbortedTurn => {
            let Some(i) = pick_where(u, msgs, |m| {
                is_asst(m) && has_block(m, s, |b| block_type(b) == Some("tool_use"))
            })?
            else {
                return Ok(false);
            };
            let text = J::obj([
                ("role", J::s("user")),
                ("content", J::s("stop, do something else instead")),
            ]);
            if msgs.get(i + 1).is_some_and(|m| role(m) == Some("user")) {
                msgs[i + 1] = text;
            } else {
                msgs.insert(i + 1, text);
            }
            Ok(true)
        }
        Damage::DropMessage => {
            if msgs.len() < 2 {
                return Ok(false);
            }
            let i = u.choose_index(msgs.len())?;
            msgs.remove(i);
            Ok(true)
        }
        Damage::ForeignField => {
            let Some(i) = pick_where(u, msgs, |m| {
                is_asst(m)
                    && m.get("content")
                        .and_then(J::as_arr)
                        .is_some_and(|b| !b.is_empty())
            })?
            else {
                return Ok(false);
            };
            let Some(bs) = blocks_mut(&mut msgs[i], s) else {
                return Ok(false);
            };
            let Some(j) = pick_where(u, bs, |b| !is_thinking(b))? else {
                return Ok(false);
            };
            if u.arbitrary()? {
                bs[j].set("thoughtSignature", J::s("skip_thought_signature_validator"));
            } else {
                bs[j].set(
                    "providerOptions",
                    J::obj([(
                        "anthropic",
                        J::obj([("cacheControl", J::obj([("type", J::s("ephemeral"))]))]),
                    )]),
                );
            }
            Ok(true)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Gemini
// ---------------------------------------------------------------------------------------------

fn part_is(b: &J, key: &str) -> bool {
    let snake = match key {
        "functionCall" => "function_call",
        "functionResponse" => "function_response",
        "thoughtSignature" => "thought_signature",
        k => k,
    };
    b.get(key).is_some() || b.get(snake).is_some()
}

fn gemini(u: &mut Unstructured<'_>, c: &mut Conversation, d: Damage) -> Result<bool> {
    let s = &GEMINI;
    let Some(msgs) = messages_mut(&mut c.root, s) else {
        return Ok(false);
    };
    let is_model = |m: &J| role(m) == Some(s.assistant);
    match d {
        Damage::ReorderBlocks | Damage::ThinkingOnly | Damage::TrailingThinking => {
            let Some(i) = pick_where(u, msgs, |m| {
                is_model(m)
                    && m.get("parts")
                        .and_then(J::as_arr)
                        .is_some_and(|p| p.len() >= 2)
            })?
            else {
                return Ok(false);
            };
            let Some(ps) = blocks_mut(&mut msgs[i], s) else {
                return Ok(false);
            };
            match d {
                Damage::ReorderBlocks => ps.reverse(),
                Damage::ThinkingOnly => ps.retain(|p| p.get("thought").is_some()),
                _ => ps.push(J::obj([
                    ("text", J::s("thinking…")),
                    ("thought", J::Bool(true)),
                ])),
            }
            Ok(true)
        }
        Damage::DropToolResult | Damage::DuplicateToolResult | Damage::OrphanResult => {
            let Some(i) = pick_where(u, msgs, |m| {
                has_block(m, s, |p| part_is(p, "functionResponse"))
            })?
            else {
                return Ok(false);
            };
            let Some(ps) = blocks_mut(&mut msgs[i], s) else {
                return Ok(false);
            };
            let Some(j) = pick_where(u, ps, |p| part_is(p, "functionResponse"))? else {
                return Ok(false);
            };
            match d {
                Damage::DropToolResult => {
                    ps.remove(j);
                }
                Damage::DuplicateToolResult => {
                    let dup = ps[j].clone();
                    ps.push(dup);
                }
                _ => ps.push(J::obj([(
                    "functionResponse",
                    J::obj([
                        ("name", J::s("never_called")),
                        ("response", J::obj([("result", J::s("x"))])),
                    ]),
                )])),
            }
            Ok(true)
        }
        Damage::EmptyText => {
            let Some(i) = pick_where(u, msgs, |m| m.get("parts").and_then(J::as_arr).is_some())?
            else {
                return Ok(false);
            };
            let text = *u.choose(&["", " ", "\n\n"])?;
            if let Some(ps) = blocks_mut(&mut msgs[i], s) {
                let at = u.int_in_range(0..=ps.len())?;
                ps.insert(at, J::obj([("text", J::s(text))]));
            }
            Ok(true)
        }
        Damage::BadSignature | Damage::ForeignField => {
            let Some(i) = pick_where(u, msgs, |m| has_block(m, s, |p| part_is(p, "functionCall")))?
            else {
                return Ok(false);
            };
            let sig = bad_signature(u)?;
            let Some(ps) = blocks_mut(&mut msgs[i], s) else {
                return Ok(false);
            };
            let Some(j) = pick_where(u, ps, |p| part_is(p, "functionCall"))? else {
                return Ok(false);
            };
            ps[j].remove("thought_signature");
            match sig {
                Some(v) => ps[j].set("thoughtSignature", v),
                None => {
                    ps[j].remove("thoughtSignature");
                }
            }
            Ok(true)
        }
        Damage::SameRole | Damage::AbortedTurn => {
            let Some(i) = pick_where(u, msgs, is_model)? else {
                return Ok(false);
            };
            let user = J::obj([
                ("role", J::s("user")),
                ("parts", J::Arr(vec![J::obj([("text", J::s("stop"))])])),
            ]);
            if d == Damage::SameRole {
                let dup = msgs[i].clone();
                msgs.insert(i + 1, dup);
            } else if msgs.get(i + 1).is_some() {
                msgs[i + 1] = user;
            } else {
                msgs.push(user);
            }
            Ok(true)
        }
        Damage::OddToolId | Damage::DropMessage => {
            if msgs.len() < 2 {
                return Ok(false);
            }
            let i = u.choose_index(msgs.len())?;
            msgs.remove(i);
            Ok(true)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// OpenCode
// ---------------------------------------------------------------------------------------------

fn opencode(u: &mut Unstructured<'_>, c: &mut Conversation, d: Damage) -> Result<bool> {
    let J::Arr(msgs) = &mut c.root else {
        return Ok(false);
    };
    let is_asst = |m: &J| {
        m.get("info")
            .and_then(|i| i.get("role"))
            .and_then(J::as_str)
            == Some("assistant")
    };
    let Some(i) = pick_where(u, msgs, is_asst)? else {
        return Ok(false);
    };
    let (session, mid) = {
        let info = msgs[i].get("info");
        (
            info.and_then(|x| x.get("sessionID"))
                .and_then(J::as_str)
                .unwrap_or("")
                .to_owned(),
            info.and_then(|x| x.get("id"))
                .and_then(J::as_str)
                .unwrap_or("")
                .to_owned(),
        )
    };
    let Some(parts) = msgs[i].get_mut("parts").and_then(J::as_arr_mut) else {
        return Ok(false);
    };
    let ptype = |p: &J| p.get("type").and_then(J::as_str).map(str::to_owned);
    match d {
        Damage::ReorderBlocks => {
            // A late reasoning part sorts after the tool parts of its step (opencode#9364): ids
            // decide order, so swap ids between a reasoning part and a later part.
            let Some(r) = pick_where(u, parts, |p| ptype(p).as_deref() == Some("reasoning"))?
            else {
                return Ok(false);
            };
            if r + 1 >= parts.len() {
                return Ok(false);
            }
            let other = u.int_in_range(r + 1..=parts.len() - 1)?;
            let a = parts[r].get("id").cloned();
            let b = parts[other].get("id").cloned();
            if let (Some(a), Some(b)) = (a, b) {
                parts[r].set("id", b);
                parts[other].set("id", a);
            }
            parts.swap(r, other);
            Ok(true)
        }
        Damage::EmptyText => {
            let Some(j) = pick_where(u, parts, |p| ptype(p).as_deref() == Some("text"))? else {
                return Ok(false);
            };
            let text = *u.choose(&["", " ", "\n"])?;
            parts[j].set("text", J::s(text));
            Ok(true)
        }
        Damage::ThinkingOnly => {
            parts.retain(|p| {
                matches!(
                    ptype(p).as_deref(),
                    Some("reasoning" | "step-start" | "step-finish")
                )
            });
            Ok(true)
        }
        Damage::BadSignature => {
            let Some(j) = pick_where(u, parts, |p| ptype(p).as_deref() == Some("reasoning"))?
            else {
                return Ok(false);
            };
            let sig = bad_signature(u)?.unwrap_or(J::s(""));
            parts[j].set(
                "metadata",
                J::obj([("anthropic", J::obj([("signature", sig)]))]),
            );
            Ok(true)
        }
        Damage::DropToolResult | Damage::AbortedTurn => {
            let Some(j) = pick_where(u, parts, |p| ptype(p).as_deref() == Some("tool"))? else {
                return Ok(false);
            };
            let status = *u.choose(&["running", "pending"])?;
            if let Some(state) = parts[j].get_mut("state") {
                state.set("status", J::s(status));
                state.remove("output");
            }
            Ok(true)
        }
        Damage::OrphanResult | Damage::DuplicateToolResult => {
            parts.push(J::obj([
                (
                    "id",
                    J::s(format!("prt_0000000000_orphan_result{}", parts.len())),
                ),
                ("sessionID", J::s(session)),
                ("messageID", J::s(mid)),
                ("type", J::s("tool_result")),
                ("tool_use_id", J::s("toolu_01GoneGoneGone000000001")),
                ("isError", J::Bool(true)),
                (
                    "content",
                    J::Arr(vec![J::obj([
                        ("type", J::s("text")),
                        ("text", J::s("cancelled")),
                    ])]),
                ),
            ]));
            Ok(true)
        }
        Damage::TrailingThinking | Damage::ForeignField => {
            parts.push(J::obj([
                (
                    "id",
                    J::s(format!("prt_zzzzzzzzzz_synthetic_thinking{}", parts.len())),
                ),
                ("sessionID", J::s(session)),
                ("messageID", J::s(mid)),
                ("type", J::s("thinking")),
                ("thinking", J::s("[Continuing from previous reasoning]")),
                ("synthetic", J::Bool(true)),
            ]));
            Ok(true)
        }
        Damage::OddToolId => {
            let Some(j) = pick_where(u, parts, |p| ptype(p).as_deref() == Some("tool"))? else {
                return Ok(false);
            };
            parts[j].set("callID", J::s("functions.Bash:0"));
            Ok(true)
        }
        Damage::SameRole | Damage::DropMessage => {
            if d == Damage::SameRole {
                let info = msgs[i].get_mut("info");
                if let Some(info) = info {
                    info.set(
                        "error",
                        J::obj([
                            ("name", J::s("APIError")),
                            ("data", J::obj([("message", J::s("Overloaded"))])),
                        ]),
                    );
                }
            } else if msgs.len() > 1 {
                msgs.remove(i);
            }
            Ok(true)
        }
    }
}

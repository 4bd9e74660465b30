//! ## AN-37: a tool_reference naming no tool of the request
//!
//! **The API.** With tool search, every `tool_reference` replayed in the history (inside a
//! `tool_search_tool_result`, or a client `tool_result` of a custom search tool) must name a
//! tool in this request's `tools`, across the whole history. Otherwise every later request
//! fails: `Tool reference '<name>' not found in available tools`. Causes: plugin or MCP tools
//! that left the pool, MCP disconnects, dynamic agent tools. Source: api-rules-2026-11.md
//! AN-37 (anthropics/claude-code#87047 and its cluster; tool-search-tool page).
//!
//! **Repair.** The stale reference is removed from its list (api-rules-2026-11.md AN-37: "drop
//! the stale reference"), each removal reported. A client result left with no content loses its
//! `content` (it may be omitted). A `tool_search_tool_result` left with no reference goes
//! together with its `server_tool_use` (the note's "drop the whole pair", a community fix:
//! mindroom-ai/mindroom PR #1576). Inside an assistant message holding signed thinking nothing
//! is edited: the finding stays. Re-declaring the tool is the caller's to do (turnkeeper does
//! not know its definition).
//!
//! **Not judged** (a finding on a valid request is worse than a miss): a request whose `tools`
//! hold an entry without a `name` (an MCP toolset, whose tools the API names itself), or whose
//! history adds tools mid-conversation (`tool_addition`, api-rules-2026-11.md AN-38).
//!
//! **Why it is safe.** A stale reference can never be accepted and carries no content of its
//! own; edits in an assistant message are reported, and prefix-bound thinking after them is
//! handled by AN-25; a signed turn is never edited.

use std::collections::HashSet;

use turnkeeper_model::edit::{BlockRef, object};
use turnkeeper_model::{BlockKind, Kinds, NewBlock, Role, Span};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::rules::common::{array_elements, top_value};

/// The names of the request's tools; `None` when one has no name (its tools are not known).
fn tool_names(f: &Fixer<'_, '_>) -> Option<HashSet<String>> {
    let tools = top_value(f, "tools").unwrap_or_else(|| "[]".to_owned());
    let mut names = HashSet::new();
    for sp in array_elements(&tools)? {
        let name = object::get(sp.get(&tools), "name")
            .and_then(|n| serde_json::from_str::<String>(n).ok())?;
        names.insert(name);
    }
    Some(names)
}

/// Whether some message adds tools mid-conversation.
fn adds_tools(f: &Fixer<'_, '_>, from: usize) -> bool {
    (from..f.len()).any(|i| {
        f.role(i) == Role::System && f.blocks(i).any(|b| b.raw().contains("tool_addition"))
    })
}

/// Where the references of block `raw` are: the list's text and its place in the block. For a
/// server result, `content.tool_references`; for a client result, `content` itself.
fn reference_list(raw: &str, server: bool) -> Option<String> {
    let content = object::get(raw, "content")?;
    let list = if server {
        object::get(content, "tool_references")?
    } else {
        content
    };
    list.trim_start().starts_with('[').then(|| list.to_owned())
}

/// The name a `tool_reference` element names, if it is one.
fn referenced(el: &str) -> Option<String> {
    let ty = object::get(el, "type").and_then(|t| serde_json::from_str::<String>(t).ok())?;
    if ty != "tool_reference" {
        return None;
    }
    object::get(el, "tool_name")
        .or_else(|| object::get(el, "name"))
        .and_then(|n| serde_json::from_str::<String>(n).ok())
}

/// `list` without the elements `drop` (separators and the others' bytes kept); `None` when
/// nothing is left.
fn without(list: &str, elements: &[Span], drop: &[usize]) -> Option<String> {
    let kept: Vec<&str> = elements
        .iter()
        .enumerate()
        .filter(|(n, _)| !drop.contains(n))
        .map(|(_, sp)| sp.get(list))
        .collect();
    if kept.is_empty() {
        return None;
    }
    let first = elements.first()?;
    let last = elements.last()?;
    let sep = elements
        .get(1)
        .and_then(|second| list.get(first.end as usize..second.start as usize))
        .unwrap_or(",");
    let mut out = String::with_capacity(list.len());
    out.push_str(list.get(..first.start as usize)?);
    out.push_str(&kept.join(sep));
    out.push_str(list.get(last.end as usize..)?);
    Some(out)
}

/// Whether message `i` holds signed thinking (a thinking block with a signature, or redacted
/// thinking).
fn signed(f: &Fixer<'_, '_>, i: usize) -> bool {
    f.summary(i).kinds.intersects(Kinds::THINKING)
        && f.blocks(i).any(|b| match b.kind() {
            BlockKind::RedactedThinking => true,
            BlockKind::Thinking => b.signature().is_some_and(|s| !s.is_empty()),
            _ => false,
        })
}

/// What to do with one result block holding stale references.
enum Fix {
    /// Replace the block with this JSON.
    Edit(String),
    /// Remove the server result and its call (no reference left).
    DropPair,
    /// Leave it (a signed turn, or nothing to write).
    Leave,
}

/// Whether `b` is a tool result that may hold tool references: a `content` string holds none,
/// and the reader says of a `content` list whether an element may be one; otherwise (a server
/// result's object, a block without the reader's facts) its text says.
fn may_reference(b: &BlockRef<'_>) -> bool {
    if !matches!(
        b.kind(),
        BlockKind::ServerToolResult | BlockKind::ToolResult
    ) || b.block.content_str.is_some()
    {
        return false;
    }
    b.block
        .facts
        .nested_refs
        .unwrap_or_else(|| b.raw().contains("tool_reference"))
}

/// Finds stale tool references and removes them.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    let any = (ctx.horizon..f.len()).any(|i| {
        let k = f.summary(i).kinds;
        (k.contains(BlockKind::ServerToolResult) || k.contains(BlockKind::ToolResult))
            && f.blocks(i).any(|b| may_reference(&b))
    });
    if !any || adds_tools(f, ctx.horizon) {
        return;
    }
    let Some(names) = tool_names(f) else { return };
    let mut i = ctx.horizon;
    while i < f.len() {
        let mut j = 0;
        while j < f.block_count(i) {
            let Some(b) = f.block(i, j) else { break };
            if !may_reference(&b) {
                j += 1;
                continue;
            }
            let server = b.kind() == BlockKind::ServerToolResult;
            let raw = b.raw().to_owned();
            let call_id = b.tool_use_id().map(|x| x.into_owned()).unwrap_or_default();
            let Some(list) = reference_list(&raw, server) else {
                j += 1;
                continue;
            };
            let Some(elements) = array_elements(&list) else {
                j += 1;
                continue;
            };
            let stale: Vec<(usize, String)> = elements
                .iter()
                .enumerate()
                .filter_map(|(n, sp)| referenced(sp.get(&list)).map(|name| (n, name)))
                .filter(|(_, name)| !names.contains(name))
                .collect();
            if stale.is_empty() {
                j += 1;
                continue;
            }
            let frozen = f.role(i) == Role::Assistant && signed(f, i);
            for (_, name) in &stale {
                f.find(
                    RuleId::An37,
                    Severity::Error,
                    i,
                    Some(j),
                    format!(
                        "Tool reference '{name}' not found in available tools{}",
                        if frozen {
                            "; its message holds signed thinking, so it is left as it came"
                        } else {
                            ""
                        }
                    ),
                    (!frozen).then_some("remove the stale reference (or declare the tool again)"),
                );
            }
            let drop: Vec<usize> = stale.iter().map(|(n, _)| *n).collect();
            let gone: Vec<&str> = stale.iter().map(|(_, s)| s.as_str()).collect();
            let fix = if frozen {
                Fix::Leave
            } else {
                match without(&list, &elements, &drop) {
                    Some(new_list) if server => object::get(&raw, "content")
                        .and_then(|c| object::set_key(c, "tool_references", &new_list))
                        .and_then(|c| object::set_key(&raw, "content", &c))
                        .map_or(Fix::Leave, Fix::Edit),
                    Some(new_list) => {
                        object::set_key(&raw, "content", &new_list).map_or(Fix::Leave, Fix::Edit)
                    }
                    None if server => Fix::DropPair,
                    None => object::remove_key(&raw, "content").map_or(Fix::Leave, Fix::Edit),
                }
            };
            match fix {
                Fix::Edit(json) => {
                    if let Ok(nb) = NewBlock::new(f.transcript().format, json) {
                        f.edit_block(
                            RuleId::An37,
                            i,
                            j,
                            nb,
                            format!(
                                "removed tool references to tools the request does not declare: {}",
                                gone.join(", ")
                            ),
                        );
                    }
                }
                Fix::DropPair => {
                    let call = (0..j).rev().find(|&k| {
                        f.block(i, k).is_some_and(|c| {
                            c.kind() == BlockKind::ServerToolCall
                                && c.id().is_some_and(|id| id == call_id.as_str())
                        })
                    });
                    let why = format!(
                        "no reference left once the stale ones ({}) went",
                        gone.join(", ")
                    );
                    if f.remove_block(
                        RuleId::An37,
                        i,
                        j,
                        format!("removed a `tool_search_tool_result` with {why}"),
                    ) {
                        if let Some(k) = call {
                            f.remove_block(
                                RuleId::An37,
                                i,
                                k,
                                format!("removed the `server_tool_use` whose tool search result went ({why})"),
                            );
                            j = k;
                        }
                        continue;
                    }
                }
                Fix::Leave => {}
            }
            j += 1;
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::common::testing::{Expect, MANUAL, body, check_case, thinking};

    /// A request declaring `tools` (names) whose assistant turn ran a tool search returning
    /// `refs`, led by `lead`.
    fn search(tools: &[&str], lead: &str, refs: &[&str]) -> String {
        let decl: Vec<String> = tools
            .iter()
            .map(|n| {
                format!(
                    r#"{{"name":"{n}","input_schema":{{"type":"object"}},"defer_loading":true}}"#
                )
            })
            .collect();
        let pair = if refs.is_empty() {
            String::new()
        } else {
            let r: Vec<String> = refs
                .iter()
                .map(|n| format!(r#"{{"type":"tool_reference","tool_name":"{n}"}}"#))
                .collect();
            format!(
                r#"{{"type":"server_tool_use","id":"srvtoolu_1","name":"tool_search_tool_regex","input":{{"query":"w"}}}},{{"type":"tool_search_tool_result","tool_use_id":"srvtoolu_1","content":{{"type":"tool_search_tool_search_result","tool_references":[{}]}}}},"#,
                r.join(", ")
            )
        };
        body(
            "claude-sonnet-4-5",
            if lead.is_empty() { "" } else { MANUAL },
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{lead}{pair}{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#
            ),
        )
        .replacen(
            "\"max_tokens\":8000,",
            &format!(
                "\"max_tokens\":8000,\"tools\":[{{\"type\":\"tool_search_tool_regex_20251119\",\"name\":\"tool_search_tool_regex\"}}{}{}],",
                if decl.is_empty() { "" } else { "," },
                decl.join(",")
            ),
            1,
        )
    }

    #[test]
    fn declared_references_pass_untouched() {
        check_case(
            &search(&["weather", "news"], "", &["weather", "news"]),
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }

    /// A stale reference goes from its list; the others stay, byte for byte.
    #[test]
    fn a_stale_reference_goes_from_its_list() {
        check_case(
            &search(&["weather"], "", &["weather", "gone"]),
            Expect {
                rules: &["AN-37"],
                after: Some(&search(&["weather"], "", &["weather"])),
                left: &[],
            },
        );
    }

    /// With no reference left, the search's call and result go as a pair.
    #[test]
    fn a_search_left_without_references_goes_with_its_call() {
        check_case(
            &search(&["weather"], "", &["gone"]),
            Expect {
                rules: &["AN-37"],
                after: Some(&search(&["weather"], "", &[])),
                left: &[],
            },
        );
    }

    /// In a message holding signed thinking nothing is edited: the finding stays.
    #[test]
    fn a_stale_reference_in_a_signed_turn_is_reported_only() {
        let lead = format!("{},", thinking("t"));
        check_case(
            &search(&["weather"], &lead, &["gone"]),
            Expect {
                rules: &["AN-37"],
                after: None,
                left: &["AN-37"],
            },
        );
    }

    /// An MCP toolset's tools are named by the API: a request holding one is not judged.
    #[test]
    fn a_request_with_an_mcp_toolset_is_not_judged() {
        let input = search(&["weather"], "", &["weather", "mcp_tool"]).replacen(
            "\"tools\":[",
            "\"tools\":[{\"type\":\"mcp_toolset\",\"mcp_server_name\":\"m\"},",
            1,
        );
        check_case(
            &input,
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }

    /// A custom search tool returns references in a client `tool_result`: a stale one goes, and
    /// a result left with none loses its `content`.
    #[test]
    fn stale_references_in_a_client_result() {
        let req = |content: &str| {
            body(
                "claude-sonnet-4-5",
                "",
                &format!(
                    r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_1","name":"find_tools","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1"{content}}}]}}"#
                ),
            )
            .replacen(
                "\"max_tokens\":8000,",
                "\"max_tokens\":8000,\"tools\":[{\"name\":\"find_tools\",\"input_schema\":{\"type\":\"object\"}},{\"name\":\"weather\",\"input_schema\":{\"type\":\"object\"},\"defer_loading\":true}],",
                1,
            )
        };
        let weather = r#"{"type":"tool_reference","tool_name":"weather"}"#;
        let gone = r#"{"type":"tool_reference","tool_name":"gone"}"#;
        check_case(
            &req(&format!(r#","content":[{weather},{gone}]"#)),
            Expect {
                rules: &["AN-37"],
                after: Some(&req(&format!(r#","content":[{weather}]"#))),
                left: &[],
            },
        );
        check_case(
            &req(&format!(r#","content":[{gone}]"#)),
            Expect {
                rules: &["AN-37"],
                after: Some(&req("")),
                left: &[],
            },
        );
    }
}

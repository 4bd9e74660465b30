//! The reuse checks: a body a message shorter, and a reading made against an earlier body that
//! must be the body's own. Shared by the testkit's invariants and by model's own tests, which
//! include this file by path (as they do `shared.rs`: model cannot depend on the testkit).

use turnkeeper_model::Transcript;
use turnkeeper_model::wire::ArrayAt;

/// `text` without the last element of the array at `at` (and the separator before it); `None`
/// for an empty array.
pub fn without_last(text: &str, at: &ArrayAt) -> Option<String> {
    let last = at.elems.last()?;
    let cut = match at.elems.len() {
        1 => at.span.start as usize + 1,
        n => at.elems[n - 2].end as usize,
    };
    Some(format!(
        "{}{}",
        text.get(..cut)?,
        text.get(last.end as usize..)?
    ))
}

/// Reads `t`'s text against `prev` (through `read_reusing_copies`, which reads against what the
/// proxy keeps of a reading: an `Earlier` of its messages and blocks), offering every earlier
/// message, and requires the reading to be `t`'s own (the same `Debug` text) and every message
/// moved over to be byte for byte the earlier message it came from. Returns which earlier
/// message each message was moved over from.
///
/// # Errors
/// What differs, in words.
pub fn blocks_read_as_own(
    t: &Transcript<'_>,
    prev: &Transcript<'_>,
) -> Result<Vec<Option<u32>>, String> {
    let all: Vec<Option<u32>> = (0..prev.messages.len() as u32).map(Some).collect();
    let (again, copies) = turnkeeper_model::read_reusing_copies(t.src, prev, &all, None)
        .map_err(|e| format!("read against an earlier body: {e}"))?;
    if format!("{again:?}") != format!("{t:?}") {
        return Err(format!(
            "read against an earlier body of {} messages, the reading differs from its own",
            prev.messages.len()
        ));
    }
    for (i, c) in copies.iter().enumerate() {
        if let Some(k) = c {
            let mine = t.messages.get(i).map(|m| m.span.get(t.src));
            let theirs = prev.messages.get(*k as usize).map(|m| m.span.get(prev.src));
            if mine != theirs {
                return Err(format!(
                    "message {i} was moved over from message {k}, whose bytes differ"
                ));
            }
        }
    }
    Ok(copies)
}

/// [`blocks_read_as_own`] for a Chat body: `text` read against `prev` must read as `own` (its
/// reading alone). Returns how many messages were moved over.
///
/// # Errors
/// What differs, in words.
pub fn chat_reads_as_own(
    text: &str,
    own: &turnkeeper_model::wire::chat::ChatBody<'_>,
    prev: &turnkeeper_model::wire::chat::ChatBody<'_>,
) -> Result<usize, String> {
    let again = turnkeeper_model::wire::chat::read_reusing(text, prev);
    same_as_own(again, own, prev.messages.len(), "messages")
}

/// [`chat_reads_as_own`] for a Responses body. Returns how many items were moved over.
///
/// # Errors
/// What differs, in words.
pub fn responses_reads_as_own(
    text: &str,
    own: &turnkeeper_model::wire::responses::ResponsesBody<'_>,
    prev: &turnkeeper_model::wire::responses::ResponsesBody<'_>,
) -> Result<usize, String> {
    let again = turnkeeper_model::wire::responses::read_reusing(text, prev);
    same_as_own(again, own, prev.items.len(), "items")
}

/// A reading made against an earlier body of `earlier` messages (or items) is `own`.
fn same_as_own<B: std::fmt::Debug>(
    again: Result<(B, usize), turnkeeper_model::ModelError>,
    own: &B,
    earlier: usize,
    unit: &str,
) -> Result<usize, String> {
    let (again, n) = again.map_err(|e| e.to_string())?;
    if format!("{again:?}") != format!("{own:?}") {
        return Err(format!(
            "read against a body of {earlier} {unit}, the reading differs from its own"
        ));
    }
    Ok(n)
}

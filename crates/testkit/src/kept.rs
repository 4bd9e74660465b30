//! What the proxy keeps of a request's reading, and a body a message shorter: the two things the
//! reuse checks build. Shared by the testkit's invariants and by model's own tests, which include
//! this file by path (as they do `shared.rs`: model cannot depend on the testkit).

use turnkeeper_model::Transcript;
use turnkeeper_model::wire::ArrayAt;

/// `prev` as the proxy keeps it: its messages and blocks over its text, with no root, messages
/// span or settings.
pub fn as_kept<'a>(prev: &Transcript<'a>) -> Transcript<'a> {
    Transcript {
        src: prev.src,
        format: prev.format,
        body: prev.body,
        root: Default::default(),
        messages_span: None,
        messages: prev.messages.clone(),
        blocks: prev.blocks.clone(),
        meta: Default::default(),
    }
}

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
